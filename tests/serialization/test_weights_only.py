"""``load(weights_only=True)``: PyTorch's allowlist rules, messages and API, verified on torch."""

from __future__ import annotations

import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import hookgrad
from hookgrad import serialization
from tests.serialization._helpers import loaded, saved


class Evil:
    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


class Point:
    def __init__(self, x=0):
        self.x = x


class Slotted:
    __slots__ = ("a",)

    def __init__(self, a=0):
        self.a = a


@pytest.fixture(autouse=True)
def _clean_allowlists(torch):
    yield
    serialization.clear_safe_globals()
    torch.serialization.clear_safe_globals()


def _errors(torch, data, **kwargs):
    """The exception each library raises loading `data` (type, message)."""
    out = []
    for lib in (torch, hookgrad):
        with pytest.raises(Exception) as info:
            loaded(lib, data, **kwargs)
        out.append((type(info.value), str(info.value)))
    return out


PAYLOADS = {
    "os.system": lambda marker: Evil(os.system, f"touch {marker}"),
    "eval": lambda marker: Evil(eval, f"open({str(marker)!r}, 'w')"),
    "exec": lambda marker: Evil(exec, f"open({str(marker)!r}, 'w')"),
    "open": lambda marker: Evil(open, str(marker), "w"),
    "getattr": lambda marker: Evil(getattr, "abc", "upper"),
    "unlisted class": lambda marker: Point(3),
    "subprocess": lambda marker: Evil(__import__("subprocess").call, ["touch", str(marker)]),
    "nested in a state dict": lambda marker: {"w": [1, {"x": Evil(os.system, "true")}]},
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_code_payloads_are_refused_with_torchs_exact_error(torch, tmp_path, name):
    marker = tmp_path / "pwned"
    data = saved(torch, PAYLOADS[name](marker))
    (t_type, t_msg), (h_type, h_msg) = _errors(torch, data)
    assert h_type is pickle.UnpicklingError and t_type is pickle.UnpicklingError
    assert h_msg == t_msg
    assert not marker.exists()
    assert sorted(serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))) == \
        sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data)))


@pytest.mark.oracle
def test_add_safe_globals_admits_a_class_as_in_torch(torch):
    data = saved(torch, {"p": Point(4), "s": Slotted(5)})
    assert _errors(torch, data)[0][1] == _errors(torch, data)[1][1]
    for lib in (torch, hookgrad):
        lib.serialization.add_safe_globals([Point, Slotted])
        assert set(lib.serialization.get_safe_globals()) == {Point, Slotted}
        out = loaded(lib, data)
        assert (type(out["p"]), out["p"].x, out["s"].a) == (Point, 4, 5)
        lib.serialization.clear_safe_globals()
        assert lib.serialization.get_safe_globals() == []


@pytest.mark.oracle
def test_safe_globals_context_manager_and_named_pairs(torch):
    data = saved(torch, Point(1))
    for lib in (torch, hookgrad):
        with lib.serialization.safe_globals([(Point, f"{__name__}.Point")]):
            assert loaded(lib, data).x == 1
        with pytest.raises(pickle.UnpicklingError):
            loaded(lib, data)
        lib.serialization.add_safe_globals([(Point, 1)])
        with pytest.raises(TypeError, match="Expected second item"):
            loaded(lib, data)
        lib.serialization.clear_safe_globals()
        lib.serialization.add_safe_globals([(Point, "a", "b")])
        with pytest.raises(ValueError, match="Expected tuple of length 2"):
            loaded(lib, data)
        lib.serialization.clear_safe_globals()


@pytest.mark.oracle
def test_numpy_arrays_need_their_globals_allowlisted_as_in_torch(torch):
    arr = np.arange(6.0).reshape(2, 3)
    data = saved(torch, {"a": arr, "s": np.int64(3)})
    (_, t_msg), (h_type, h_msg) = _errors(torch, data)
    assert h_msg == t_msg and h_type is pickle.UnpicklingError
    unsafe = torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))
    assert sorted(serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))) == \
        sorted(unsafe)
    allowed = [np._core.multiarray._reconstruct, np.ndarray, np.dtype,
               type(np.dtype(np.float64)), type(np.dtype(np.int64)),
               np._core.multiarray.scalar]
    with serialization.safe_globals(allowed), torch.serialization.safe_globals(allowed):
        ours, theirs = loaded(hookgrad, data), loaded(torch, data)
    np.testing.assert_array_equal(ours["a"], theirs["a"])
    assert ours["s"] == theirs["s"] == 3


@pytest.mark.oracle
def test_hookgrad_classes_are_allowlisted_under_their_torch_names(torch):
    data = saved(hookgrad, hookgrad.nn.Linear(2, 3))
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.linear.Linear"):
        loaded(hookgrad, data)
    with serialization.safe_globals([hookgrad.nn.Linear]):
        m = loaded(hookgrad, data)
    assert type(m) is hookgrad.nn.Linear and m(hookgrad.ones(1, 2)).shape == (1, 3)


@pytest.mark.oracle
def test_pickle_module_and_load_args_follow_torch(torch):
    data = saved(torch, {"x": 1})
    (t_type, t_msg), (h_type, h_msg) = _errors(torch, data, pickle_module=pickle,
                                               weights_only=True)
    assert (h_type, h_msg) == (t_type, t_msg) == (RuntimeError, t_msg)
    for lib in (torch, hookgrad):
        assert loaded(lib, data, pickle_module=pickle) == {"x": 1}  # implies weights_only=False
        with pytest.warns(UserWarning, match="pickle_load_args only works"):
            assert loaded(lib, data, encoding="utf-8") == {"x": 1}


@pytest.mark.oracle
def test_force_weights_only_environment_variable(torch, monkeypatch):
    data = saved(torch, Point(1))
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    for lib in (torch, hookgrad):
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
            loaded(lib, data, weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="Only one of"):
            loaded(lib, data)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    for lib in (torch, hookgrad):
        with pytest.warns(UserWarning, match="forcing weights_only=False"):
            assert loaded(lib, data).x == 1


@pytest.mark.oracle
def test_weights_only_false_runs_code_like_torch(torch, tmp_path):
    marker = tmp_path / "ran"
    data = saved(torch, Evil(open, str(marker), "w"))
    loaded(hookgrad, data, weights_only=False).close()  # an explicit, documented opt-in
    assert marker.exists()


@pytest.mark.oracle
def test_get_unsafe_globals_rejects_non_zip_like_torch(torch):
    data = saved(torch, {"x": 1}, _use_new_zipfile_serialization=False)
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError, match="Expected input to be a checkpoint"):
            lib.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))


def _with_pickle(data: bytes, pkl: bytes) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name in src.namelist():
            zf.writestr(name, pkl if name.endswith("/data.pkl") else src.read(name))
    return out.getvalue()


@pytest.mark.oracle
@pytest.mark.parametrize("pkl", [
    b"\x80\x02cbuiltins\ngetattr\nq\x00.",
    b"\x80\x02]q\x00(K\x01K\x02e}q\x01K\x01K\x02sb.",  # BUILD on a list
    b"\x80\x02K\x01K\x02\x86q\x00(K\x01K\x02e.",  # APPENDS to a tuple
    b"\x80\x02K\x01K\x02K\x03s.",  # SETITEM on an int
    b"\x80\x02(X\x03\x00\x00\x00abcK\x01tQ.",  # persistent id that is not a storage
    b"\x80\x02ctorch\nSize\nK\x05\x81.",  # NEWOBJ of an unlisted-for-NEWOBJ argument
    b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(K\x01tR.",
], ids=["getattr", "build-list", "appends-tuple", "setitem-int", "persid",
        "size-newobj", "rebuild-bad-args"])
def test_crafted_pickles_are_refused_never_run(torch, pkl):
    data = _with_pickle(saved(torch, {"x": torch.ones(1)}), pkl)
    with pytest.raises(Exception) as theirs:
        loaded(torch, data)
    with pytest.raises(Exception) as ours:
        loaded(hookgrad, data)
    assert type(ours.value) is type(theirs.value)  # refused by both, with PyTorch's type
