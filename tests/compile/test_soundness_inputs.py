"""Soundness of compiled calls whose *arguments* change in ways tensor metadata alone does not
show (issue 25, "fuzzer stays clean"; docs/compile.md, soundness rule 2): strides, identity and
aliasing, settings objects (``dtype``, ``range``, ``slice``), nested containers, iterators,
NumPy arrays, leaf-ness, and operations whose output shape depends on values. Each case was
found by the state-change probes of the compile fuzzer and returned a stale result before;
every call is compared with eager under every backend (`_state_harness`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hookgrad as torch
from tests.compile._state_harness import check_every_backend, nothing


def dtype_argument() -> Any:
    def fn(x: Any, d: Any) -> Any:
        return x.to(d) * 2
    return fn, nothing, lambda i: (torch.ones(2), torch.float64 if i % 2 else torch.float32)


def range_and_slice_arguments() -> Any:
    def fn(x: Any, r: Any, s: Any) -> Any:
        return x[s] * len(r)
    return fn, nothing, lambda i: (torch.arange(6.0), range(i + 1), slice(0, i + 1))


def contiguity_decides_a_branch() -> Any:
    def fn(x: Any) -> Any:
        return x * 2 if x.is_contiguous() else x * 3
    base = torch.arange(6.0)
    return fn, nothing, lambda i: (base.reshape(2, 3) if i % 2 == 0 else base.reshape(3, 2).t(),)


def stride_read_as_a_number() -> Any:
    def fn(x: Any) -> Any:
        return x * x.stride(0)
    base = torch.arange(6.0)
    return fn, nothing, lambda i: (base.reshape(2, 3) if i % 2 == 0 else base.reshape(3, 2).t(),)


def expanded_argument() -> Any:
    def fn(x: Any) -> Any:
        return x.view(-1) * 2 if x.is_contiguous() else x.reshape(-1) * 3
    return fn, nothing, lambda i: (torch.ones(1, 3).expand(2, 3) if i % 2 else torch.ones(2, 3),)


def same_tensor_passed_twice() -> Any:
    def fn(x: Any, y: Any) -> Any:
        return x * 2 if x is y else x * 3

    def args(i: int) -> tuple:
        t = torch.ones(2)
        return (t, t if i % 2 else torch.ones(2))
    return fn, nothing, args


def parameter_passed_as_the_argument() -> Any:
    m = torch.nn.Linear(2, 2)

    def fn(x: Any) -> Any:
        return x * 2 if x is m.weight else x * 3
    return fn, nothing, lambda i: (m.weight if i % 2 == 0 else torch.ones(2, 2),)


def memory_address_read() -> Any:
    def fn(x: Any, y: Any) -> Any:
        return x * 2 if x.data_ptr() == y.data_ptr() else x * 3

    def args(i: int) -> tuple:
        t = torch.ones(4)
        return (t, t.view(4) if i % 2 else t.clone())
    return fn, nothing, args


def storage_offset_read() -> Any:
    def fn(x: Any) -> Any:
        return x * x.storage_offset()
    base = torch.arange(6.0)
    return fn, nothing, lambda i: (base[i % 3: i % 3 + 2],)


def version_counter_read() -> Any:
    def fn(x: Any) -> Any:
        return x * x._version

    def args(i: int) -> tuple:
        t = torch.ones(2)
        for _ in range(i):
            t.add_(0)
        return (t,)
    return fn, nothing, args


def leaf_or_not() -> Any:
    def fn(x: Any) -> Any:
        return x * 2 if x.is_leaf and x.grad_fn is None else x * 3
    base = torch.ones(2, requires_grad=True)
    return fn, nothing, lambda i: (base * 1 if i % 2 else torch.ones(2, requires_grad=True),)


def container_nested_deeper_than_two() -> Any:
    def fn(d: Any) -> Any:
        return d["a"][0]["b"][0] * d["a"][0]["b"][1]
    return fn, nothing, lambda i: ({"a": [{"b": [torch.ones(2), float(i)]}]},)


def dict_argument_key_order() -> Any:
    def fn(d: Any) -> Any:
        return torch.cat(list(d.values()))
    return fn, nothing, lambda i: ({"a": torch.zeros(1), "b": torch.ones(1)} if i % 2
                                   else {"b": torch.ones(1), "a": torch.zeros(1)},)


def iterator_argument() -> Any:
    def fn(x: Any, it: Any) -> Any:
        return x * next(it)
    return fn, nothing, lambda i: (torch.ones(2), iter([float(i), 0.0]))


def generator_argument() -> Any:
    def fn(x: Any, gen: Any) -> Any:
        return x * sum(gen)
    return fn, nothing, lambda i: (torch.ones(2), (j for j in range(i + 1)))


def numpy_array_argument() -> Any:
    def fn(x: Any, a: Any) -> Any:
        return x * float(a[0])
    return fn, nothing, lambda i: (torch.ones(2), np.array([float(i)]))


def default_argument_changed_with_dynamic_sizes() -> Any:
    def fn(x: Any, k: float = 1.0) -> Any:
        return x * k

    def mutate(i: int) -> None:
        fn.__defaults__ = (float(i + 1),)
    return fn, mutate, lambda i: (torch.ones(2 + i),)


def count_of_nonzero() -> Any:
    def fn(x: Any) -> Any:
        return x * len(x.nonzero())
    return fn, nothing, lambda i: (torch.tensor([1.0, -1.0, float(i) - 1, 2.0]),)


def count_of_unique() -> Any:
    def fn(x: Any) -> Any:
        return torch.unique(x).sum() + torch.unique(x).numel()
    return fn, nothing, lambda i: (torch.tensor([1.0, 1.0, float(i), 2.0]),)


def count_of_a_boolean_mask() -> Any:
    def fn(x: Any) -> Any:
        return x[x > 0].sum() * x[x > 0].shape[0] + len(x.masked_select(x > 1))
    return fn, nothing, lambda i: (torch.tensor([1.0, -1.0, float(i) - 1, 2.0]),)


def repeat_interleave_by_a_tensor() -> Any:
    def fn(x: Any, r: Any) -> Any:
        return x.repeat_interleave(r).sum() * 2 + x
    return fn, nothing, lambda i: (torch.ones(3), torch.tensor([1, i, 2]))


def where_of_a_condition_alone() -> Any:
    def fn(x: Any) -> Any:
        return x * len(torch.where(x > 0)[0])
    return fn, nothing, lambda i: (torch.tensor([1.0, -1.0, float(i) - 1]),)


def float_argument_checked_with_isinstance() -> Any:
    def fn(x: Any, k: Any) -> Any:
        return x * k if isinstance(k, float) else x + k
    return fn, nothing, lambda i: (torch.ones(2), [1.0, 2.0, 3, 4.0][i])


def module_and_builtin_arguments_swapped() -> Any:
    import math  # noqa: PLC0415
    acts = [torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.Sigmoid(), torch.nn.ReLU()]
    funcs = [math.sqrt, math.exp, math.log1p, math.sqrt]

    def fn(m: Any, g: Any, x: Any) -> Any:
        return m(x - 0.5) * g(2.0)
    return fn, nothing, lambda i: (acts[i], funcs[i], torch.ones(2))


SCENARIOS = {f.__name__: f for f in (
    dtype_argument, range_and_slice_arguments, contiguity_decides_a_branch,
    stride_read_as_a_number, expanded_argument, same_tensor_passed_twice,
    parameter_passed_as_the_argument, memory_address_read, storage_offset_read,
    version_counter_read, leaf_or_not, container_nested_deeper_than_two,
    dict_argument_key_order, iterator_argument, generator_argument, numpy_array_argument,
    default_argument_changed_with_dynamic_sizes, count_of_nonzero, count_of_unique,
    count_of_a_boolean_mask, repeat_interleave_by_a_tensor, where_of_a_condition_alone,
    float_argument_checked_with_isinstance, module_and_builtin_arguments_swapped)}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_compiled_calls_see_the_new_arguments(name: str) -> None:
    check_every_backend(SCENARIOS[name], 4)


def test_a_compiled_layer_fed_a_leaf_then_non_leaves_does_not_recompile() -> None:
    """Leaf-ness is guarded only when the region reads it (PyTorch does not recompile here)."""
    from hookgrad._dynamo.testing import CompileCounter  # noqa: PLC0415
    cnt = CompileCounter()
    layer = torch.compile(torch.nn.Linear(3, 3), backend=cnt)
    x = torch.ones(2, 3, requires_grad=True)
    for _ in range(3):
        x = layer(x)
    assert cnt.frame_count == 1
