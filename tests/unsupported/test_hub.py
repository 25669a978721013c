"""``hookgrad.hub``: local hubconf loading and PyTorch's cache layout, compared with torch.hub."""

from __future__ import annotations

from urllib.error import URLError

import pytest

import hookgrad

pytestmark = pytest.mark.oracle

HUBCONF = '''
dependencies = ["math"]


def double(x, scale=1):
    """Doubles x (times scale)."""
    return {"value": 2 * x * scale}


def _helper():
    return None


CONSTANT = 3
'''


@pytest.fixture
def hub_dirs(torch, tmp_path):
    """Both hubs pointed at one cache directory for the test, restored afterwards."""
    before = (hookgrad.hub._hub_dir, torch.hub._hub_dir)
    cache = tmp_path / "hub"
    hookgrad.hub.set_dir(str(cache))
    torch.hub.set_dir(str(cache))
    yield cache
    hookgrad.hub._hub_dir, torch.hub._hub_dir = before


def test_get_dir_follows_torch_home_and_xdg(torch, monkeypatch):
    before = (hookgrad.hub._hub_dir, torch.hub._hub_dir)
    hookgrad.hub._hub_dir = torch.hub._hub_dir = None
    try:
        for env in ({"TORCH_HOME": "/tmp/th"}, {"XDG_CACHE_HOME": "/tmp/xdg"}, {}):
            monkeypatch.delenv("TORCH_HOME", raising=False)
            monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
            for k, v in env.items():
                monkeypatch.setenv(k, v)
            assert hookgrad.hub.get_dir() == torch.hub.get_dir()
        hookgrad.hub.set_dir("~/x")
        torch.hub.set_dir("~/x")
        assert hookgrad.hub.get_dir() == torch.hub.get_dir()
    finally:
        hookgrad.hub._hub_dir, torch.hub._hub_dir = before


def test_load_local_hubconf(torch, tmp_path):
    (tmp_path / "hubconf.py").write_text(HUBCONF)
    for lib in (hookgrad, torch):
        assert lib.hub.load(str(tmp_path), "double", 4, source="local", scale=2) == {"value": 16}
    for call in (lambda L: L.hub.load(str(tmp_path), "missing", source="local"),
                 lambda L: L.hub.load(str(tmp_path), "CONSTANT", source="local"),
                 lambda L: L.hub.load(str(tmp_path), 3, source="local"),
                 lambda L: L.hub.load(str(tmp_path), "double", source="ftp")):
        with pytest.raises(Exception) as got:
            call(hookgrad)
        with pytest.raises(Exception) as want:
            call(torch)
        assert (type(got.value), str(got.value)) == (type(want.value), str(want.value))


def test_missing_dependency_is_reported(torch, tmp_path):
    (tmp_path / "hubconf.py").write_text(HUBCONF.replace('["math"]', '["math", "no_such_pkg_x"]'))
    msgs = []
    for lib in (hookgrad, torch):
        with pytest.raises(RuntimeError) as info:
            lib.hub.load(str(tmp_path), "double", 1, source="local")
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_cached_github_repo_list_help_load(torch, hub_dirs):
    repo = hub_dirs / "someone_models_main"
    repo.mkdir(parents=True)
    (repo / "hubconf.py").write_text(HUBCONF)
    for fn in (lambda L: L.hub.list("someone/models:main"),
               lambda L: L.hub.help("someone/models:main", "double"),
               lambda L: L.hub.load("someone/models:main", "double", 5),
               lambda L: L.hub.load("someone/models", "double", 5, trust_repo=True, verbose=False)):
        assert fn(hookgrad) == fn(torch)
    # a repository already in the cache counts as trusted (PyTorch's legacy rule): none added
    assert (hub_dirs / "trusted_list").read_text().splitlines() == []


def test_uncached_repo_and_url_raise_urlerror(hub_dirs):
    with pytest.raises(URLError):
        hookgrad.hub.load("someone/other:main", "double", trust_repo=True)
    # trusting happens before the download, as in PyTorch
    assert (hub_dirs / "trusted_list").read_text().splitlines() == ["someone_other"]
    with pytest.raises(URLError):
        hookgrad.hub.load_state_dict_from_url("https://example.com/w/missing.pth")
    with pytest.raises(URLError):
        hookgrad.hub.download_url_to_file("https://example.com/a", str(hub_dirs / "a"))


def test_load_state_dict_from_cache(torch, hub_dirs):
    ckpt = hub_dirs / "checkpoints"
    ckpt.mkdir(parents=True)
    torch.save({"w": torch.arange(6.0).reshape(2, 3), "b": torch.tensor([1, 2])},
               str(ckpt / "net-abc123.pth"))
    url = "https://download.example.com/models/net-abc123.pth"
    got = hookgrad.hub.load_state_dict_from_url(url, map_location="cpu")
    want = torch.hub.load_state_dict_from_url(url, map_location="cpu")
    assert {k: (v.tolist(), str(v.dtype)) for k, v in got.items()} == \
        {k: (v.tolist(), str(v.dtype)) for k, v in want.items()}
    other = hub_dirs / "elsewhere"
    other.mkdir()
    torch.save({"x": torch.ones(2)}, str(other / "named.bin"))
    got = hookgrad.hub.load_state_dict_from_url("https://x/y", model_dir=str(other),
                                                file_name="named.bin")
    assert got["x"].tolist() == [1.0, 1.0] and isinstance(got["x"], hookgrad.Tensor)
