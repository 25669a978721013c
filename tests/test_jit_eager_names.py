"""``torch.jit``'s eager-visible names against PyTorch: container refinement by
``torch.jit.isinstance``, ``Attribute``, warnings and errors classes, ``_fork``/``_wait``,
the fuser context managers, and the errors for TorchScript-only operations on plain modules."""

from __future__ import annotations

import typing
import warnings
from typing import Any

import pytest

import hookgrad

_CASES = [
    ([1, 2], typing.List[int]), ([1, "a"], typing.List[int]), ({"a": [1.0]}, typing.Dict[str, typing.List[float]]),  # noqa: UP006
    ((1, "x"), typing.Tuple[int, str]), ((1,), typing.Tuple[int, str]), (None, typing.Optional[int]),  # noqa: UP006
    (3, typing.Optional[int]), ("s", (int, str)), (2.0, int), ([], typing.List[str]),  # noqa: UP006
]


def _scenario(lib: Any) -> list:
    jit = lib.jit
    out: list = [jit.isinstance(obj, target) for obj, target in _CASES]
    for bad in (typing.List, [int]):  # noqa: UP006
        with pytest.raises(RuntimeError):
            jit.isinstance([1], bad)
    attr = jit.Attribute(3, int)
    out += [attr.value, attr.type is int, tuple(attr)]
    out += [issubclass(jit.TracerWarning, Warning), issubclass(jit.Error, Exception),
            issubclass(jit.ScriptWarning, Warning), issubclass(jit.TracingCheckError, Exception)]
    fut = jit._fork(lambda a, b: a + b, 2, b=3)
    out += [jit._wait(fut), jit._unwrap_optional(4)]
    with pytest.raises(AssertionError):
        jit._unwrap_optional(None)
    with jit.fuser("fuser1"), jit.optimized_execution(False), jit.strict_fusion():
        pass
    with pytest.raises(Exception, match="unrecognized fuser option"):
        with jit.fuser("nope"):
            pass
    out.append(jit.set_fusion_strategy([("STATIC", 3)]))
    out.append(jit.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)]))
    out.append(jit.onednn_fusion_enabled())
    out.append(jit.script_if_tracing(len)([1, 2]))
    lin = lib.nn.Linear(2, 2).eval()
    for call, kind in ((lambda: jit.freeze(lin), RuntimeError),
                       (lambda: jit.save(lin, "/nonexistent/x.pt"), AttributeError),
                       (lambda: jit.load("/nonexistent/x.pt"), ValueError)):
        with pytest.raises(kind):
            call()
    return out


def test_eager_jit_names_behave_as_torch(torch: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _scenario(hookgrad) == _scenario(torch)


def test_tracer_warning_filters(torch: Any) -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=hookgrad.jit.TracerWarning)
        warnings.warn("traced", hookgrad.jit.TracerWarning, stacklevel=1)
        warnings.warn("other", UserWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["other"]


def test_overload_declarations(torch: Any) -> None:
    def scenario(lib: Any) -> list:
        @lib.jit._overload
        def f(x: int) -> int:
            ...

        @lib.jit._overload
        def f(x: float) -> float:  # noqa: F811 - overloads redeclare
            pass

        def f(x: Any) -> Any:  # noqa: F811
            return x

        with pytest.raises(RuntimeError, match="Only `pass` statement or `...`"):
            @lib.jit._overload
            def g(x: int) -> int:
                return x
        return [f(3)]

    assert scenario(hookgrad) == scenario(torch)
