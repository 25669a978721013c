"""``torch.compiler``'s marking decorators and predicates, against PyTorch (transformers and
einops use them at import time)."""

from __future__ import annotations

import pytest

import hookgrad


def _marks(lib):
    def f():
        return 3

    g = lib._dynamo.assume_constant_result(f)
    h = lib.compiler.assume_constant_result(f)
    return (g is f, h is f, dict(f.__dict__), lib.compiler.allow_in_graph(f) is f,
            lib.compiler.is_exporting(), lib.compiler.is_dynamo_compiling(),
            lib.compiler.is_compiling())


@pytest.mark.oracle
def test_marks_and_predicates_match_torch(torch):
    assert _marks(hookgrad) == _marks(torch)
    for lib in (hookgrad, torch):
        with pytest.raises(AttributeError):
            lib._dynamo.assume_constant_result(len)  # builtins take no attributes


@pytest.mark.oracle
def test_compiling_predicates_inside_a_compiled_function(torch):
    def seen(lib):
        flags = []

        def fn(x):
            flags.append((lib.compiler.is_compiling(), lib.compiler.is_dynamo_compiling(),
                          lib.compiler.is_exporting()))
            return x + 1

        lib.compile(fn, backend="eager")(lib.ones(2))
        return flags[0]

    assert seen(hookgrad) == seen(torch) == (True, True, False)
