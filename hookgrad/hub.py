"""``hookgrad.hub``: load models from a ``hubconf.py`` and weights from the hub cache.

Mirrors: ``torch.hub`` with PyTorch's cache layout: ``get_dir()`` is ``$TORCH_HOME/hub``
(``$XDG_CACHE_HOME/torch/hub``, default ``~/.cache/torch/hub``), a GitHub repository
``owner/name:ref`` lives in ``<hub>/owner_name_ref``, weights in ``<hub>/checkpoints/<file>``,
and trusted repositories are listed in ``<hub>/trusted_list``.

hookgrad never downloads: ``source="local"`` loads from any directory holding ``hubconf.py``;
a GitHub repository or a weights URL is served from the cache when PyTorch's download put it
there (PyTorch's offline path); otherwise the download raises ``urllib.error.URLError``, the
error PyTorch raises on a machine without network.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sys
import zipfile
from pathlib import Path
from typing import Any, Iterator
from urllib.error import URLError
from urllib.parse import urlparse

from hookgrad.serialization import load as _torch_load

try:  # PyTorch shows download progress with tqdm when it is installed (torch.hub.tqdm)
    from tqdm import tqdm
except ImportError:  # a silent stand-in with tqdm's context-manager and update() interface

    class tqdm:  # type: ignore[no-redef]  # noqa: N801 - PyTorch's name
        """Mirrors ``torch.hub.tqdm`` without the tqdm package: counts, prints nothing."""

        def __init__(self, total: Any = None, disable: bool = False, unit: Any = None,
                     unit_scale: Any = None, unit_divisor: Any = None) -> None:
            self.total, self.disable, self.n = total, disable, 0

        def update(self, n: int) -> None:
            self.n += n

        def close(self) -> None:
            self.disable = True

        def __enter__(self) -> tqdm:
            return self

        def __exit__(self, *exc: Any) -> None:
            self.close()


__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url",
           "set_dir"]

ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_hub_dir: str | None = None


def _get_torch_home() -> str:
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, default))


def get_dir() -> str:
    """The hub cache directory. Mirrors: ``torch.hub.get_dir``."""
    return _hub_dir if _hub_dir is not None else os.path.join(_get_torch_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Set the hub cache directory. Mirrors: ``torch.hub.set_dir``."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


@contextlib.contextmanager
def _on_sys_path(path: str) -> Iterator[None]:
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir: str) -> Any:
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    if spec is None or spec.loader is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _entry(module: Any, model: Any) -> Any:
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [p for p in getattr(module, VAR_DEPENDENCY, None) or ()
               if importlib.util.find_spec(p) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _parse_repo_info(github: str) -> tuple[str, str, str]:
    repo_info, _, ref = github.partition(":")
    owner, name = repo_info.split("/")
    if ref:
        return owner, name, ref
    # PyTorch asks GitHub for the default branch; offline it looks for main, then master
    for guess in ("main", "master"):
        if os.path.exists(f"{get_dir()}/{owner}_{name}_{guess}"):
            return owner, name, guess
    raise RuntimeError("It looks like there is no internet connection and the repo could not "
                       f"be found in the cache ({get_dir()})")


def _check_trusted(owner: str, name: str, owner_name_branch: str, trust_repo: Any) -> None:
    hub_dir = get_dir()
    path = os.path.join(hub_dir, "trusted_list")
    Path(path).touch()
    trusted = tuple(line.strip() for line in Path(path).read_text().splitlines())
    owner_name = f"{owner}_{name}"
    # a repository already in the cache counts as trusted, as in PyTorch
    ok = (owner_name in trusted or owner_name_branch in next(os.walk(hub_dir))[1]
          or owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not ok):
        answer = input(f"The repository {owner_name} does not belong to the list of trusted "
                       "repositories and as such cannot be downloaded. Do you trust this "
                       "repository and wish to add it to the trusted list of repositories (y/N)?")
        if answer.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002 - PyTorch's type
        if answer.lower() not in ("y", "yes"):
            raise ValueError(f"Unrecognized response {answer}.")
    if not ok:
        with open(path, "a") as f:
            f.write(owner_name + "\n")


def _get_cache_or_reload(github: str, force_reload: bool, trust_repo: Any,
                         verbose: bool = True) -> str:
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    owner_name_branch = "_".join([owner, name, ref.replace("/", "_")])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_trusted(owner, name, owner_name_branch, trust_repo)
    if force_reload or not os.path.exists(repo_dir):
        raise URLError(f"hookgrad.hub does not download: {github} is not in the hub cache "
                       f"({repo_dir}); clone it there or load it with source='local'")
    if verbose:
        sys.stderr.write(f"Using cache found in {repo_dir}\n")
    return repo_dir


def list(github: str, force_reload: bool = False, skip_validation: bool = False,  # noqa: A001
         trust_repo: Any = "check", verbose: bool = True) -> list:
    """Callable entry points of a cached GitHub repo's hubconf. Mirrors: ``torch.hub.list``."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github: str, model: str, force_reload: bool = False,  # noqa: A001
         skip_validation: bool = False, trust_repo: Any = None) -> str | None:
    """The docstring of an entry point. Mirrors: ``torch.hub.help``."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=True)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return _entry(module, model).__doc__


def load(repo_or_dir: str, model: str, *args: Any, source: str = "github", trust_repo: Any = None,
         force_reload: bool = False, verbose: bool = True, skip_validation: bool = False,
         **kwargs: Any) -> Any:
    """Call entry point `model` of a hubconf with ``*args, **kwargs``.

    Example:
        >>> import hookgrad as torch
        >>> net = torch.hub.load("path/to/repo", "resnet", source="local")  # doctest: +SKIP

    Mirrors: ``torch.hub.load``.
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose)
    with _on_sys_path(repo_or_dir):
        module = _import_hubconf(repo_or_dir)
        return _entry(module, model)(*args, **kwargs)


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Raises: hookgrad has no network access. Mirrors: ``torch.hub.download_url_to_file``
    offline (urlopen's ``URLError``)."""
    raise URLError(f"hookgrad.hub does not download {url}: place the file at {dst}")


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location: Any = None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None, weights_only: bool = False) -> Any:
    """Load the checkpoint cached for `url` (``<hub>/checkpoints/<file>``).

    Mirrors: ``torch.hub.load_state_dict_from_url``; a file not in the cache would be
    downloaded, which raises (`download_url_to_file`).
    """
    model_dir = os.path.join(get_dir(), "checkpoints") if model_dir is None else model_dir
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        download_url_to_file(url, cached, None, progress=progress)
    if zipfile.is_zipfile(cached):
        with zipfile.ZipFile(cached) as zf:
            members = zf.infolist()
        if len(members) == 1 and not members[0].is_dir():  # the pre-1.6 zipped checkpoint
            with zipfile.ZipFile(cached) as zf:
                zf.extract(members[0], model_dir)
            cached = os.path.join(model_dir, members[0].filename)
    return _torch_load(cached, map_location=map_location, weights_only=weights_only)
