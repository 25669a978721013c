"""PyTorch's CPU tie order for ``sort``/``topk``: a port of libstdc++'s sort and selection.

NOTE [Tie order]
Among equal values the order of ``sort``'s and ``topk``'s indices is whatever the C++ algorithm
PyTorch calls leaves behind: ``std::sort`` (introsort, not stable beyond 16 elements) for
``sort(stable=False)``, ``std::nth_element`` then ``std::sort`` (or ``std::partial_sort`` when
``64 * k <= n``) for ``topk``. Without ties every algorithm gives the same order, so NumPy's
``argsort`` is used; rows *with* ties are replayed here, step for step, on Python lists, which
is slow, so only rows up to `MAX_EMULATED` elements, and at most `MAX_EMULATED_TOTAL` elements
per call, are replayed (beyond that NumPy's stable order is kept and may differ from PyTorch's
among tied values).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MAX_EMULATED = 4096  # longest row whose tie order is replayed exactly
MAX_EMULATED_TOTAL = 1 << 18  # most elements replayed in one call (about 1 s of Python)
_THRESHOLD = 16  # libstdc++'s _S_threshold

Less = Callable[[Any, Any], bool]


def _lg(n: int) -> int:
    """``std::__lg``: floor(log2(n))."""
    return n.bit_length() - 1


def less_for(descending: bool) -> Less:
    """PyTorch's ``KeyValueCompAsc``/``Desc``: NaN is larger than every number."""
    if descending:
        return lambda a, b: (a != a and b == b) or a > b
    return lambda a, b: (a == a and b != b) or a < b


class _Seq:
    """Values and their original indices, permuted together (the composite iterator)."""

    __slots__ = ("v", "i", "less")

    def __init__(self, values: list, less: Less) -> None:
        self.v, self.i, self.less = values, list(range(len(values))), less

    def lt(self, a: int, b: int) -> bool:
        return self.less(self.v[a], self.v[b])

    def swap(self, a: int, b: int) -> None:
        v, i = self.v, self.i
        v[a], v[b] = v[b], v[a]
        i[a], i[b] = i[b], i[a]

    def get(self, k: int) -> tuple:
        return self.v[k], self.i[k]

    def put(self, k: int, item: tuple) -> None:
        self.v[k], self.i[k] = item


# ---------------------------------------------------------------- insertion sorts
def _linear_insert(s: _Seq, last: int) -> None:
    val = s.get(last)
    nxt = last - 1
    while s.less(val[0], s.v[nxt]):
        s.put(last, s.get(nxt))
        last, nxt = nxt, nxt - 1
    s.put(last, val)


def _insertion_sort(s: _Seq, first: int, last: int) -> None:
    for i in range(first + 1, last):
        if s.lt(i, first):
            val = s.get(i)
            for k in range(i, first, -1):  # move_backward
                s.put(k, s.get(k - 1))
            s.put(first, val)
        else:
            _linear_insert(s, i)


# ---------------------------------------------------------------- heaps
def _push_heap(s: _Seq, first: int, hole: int, top: int, val: tuple) -> None:
    parent = (hole - 1) // 2
    while hole > top and s.less(s.v[first + parent], val[0]):
        s.put(first + hole, s.get(first + parent))
        hole = parent
        parent = (hole - 1) // 2
    s.put(first + hole, val)


def _adjust_heap(s: _Seq, first: int, hole: int, n: int, val: tuple) -> None:
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if s.lt(first + child, first + child - 1):
            child -= 1
        s.put(first + hole, s.get(first + child))
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        s.put(first + hole, s.get(first + child - 1))
        hole = child - 1
    _push_heap(s, first, hole, top, val)


def _make_heap(s: _Seq, first: int, last: int) -> None:
    n = last - first
    if n < 2:
        return
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(s, first, parent, n, s.get(first + parent))


def _pop_heap(s: _Seq, first: int, last: int, result: int) -> None:
    val = s.get(result)
    s.put(result, s.get(first))
    _adjust_heap(s, first, 0, last - first, val)


def _heap_select(s: _Seq, first: int, middle: int, last: int) -> None:
    _make_heap(s, first, middle)
    for i in range(middle, last):
        if s.lt(i, first):
            _pop_heap(s, first, middle, i)


def partial_sort(s: _Seq, first: int, middle: int, last: int) -> None:
    """``std::partial_sort``: heap-select the smallest, then sort the heap."""
    _heap_select(s, first, middle, last)
    while middle - first > 1:
        middle -= 1
        _pop_heap(s, first, middle, middle)


# ---------------------------------------------------------------- introsort / introselect
def _median_to_first(s: _Seq, result: int, a: int, b: int, c: int) -> None:
    if s.lt(a, b):
        if s.lt(b, c):
            s.swap(result, b)
        elif s.lt(a, c):
            s.swap(result, c)
        else:
            s.swap(result, a)
    elif s.lt(a, c):
        s.swap(result, a)
    elif s.lt(b, c):
        s.swap(result, c)
    else:
        s.swap(result, b)


def _partition_pivot(s: _Seq, first: int, last: int) -> int:
    _median_to_first(s, first, first + 1, first + (last - first) // 2, last - 1)
    lo, hi = first + 1, last
    while True:
        while s.lt(lo, first):
            lo += 1
        hi -= 1
        while s.lt(first, hi):
            hi -= 1
        if lo >= hi:
            return lo
        s.swap(lo, hi)
        lo += 1


def _introsort_loop(s: _Seq, first: int, last: int, depth: int) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            partial_sort(s, first, last, last)
            return
        depth -= 1
        cut = _partition_pivot(s, first, last)
        _introsort_loop(s, cut, last, depth)
        last = cut


def std_sort(s: _Seq, first: int, last: int) -> None:
    """``std::sort``: introsort, then a final insertion sort."""
    if last - first < 2:
        return
    _introsort_loop(s, first, last, 2 * _lg(last - first))
    if last - first > _THRESHOLD:
        _insertion_sort(s, first, first + _THRESHOLD)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(s, i)
    else:
        _insertion_sort(s, first, last)


def nth_element(s: _Seq, first: int, nth: int, last: int) -> None:
    """``std::nth_element``: introselect."""
    if first == last or nth == last:
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(s, first, nth + 1, last)
            s.swap(first, nth)
            return
        depth -= 1
        cut = _partition_pivot(s, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(s, first, last)


# ---------------------------------------------------------------- what PyTorch calls
def sort_row(values: list, descending: bool) -> list[int]:
    """Indices of ``sort(stable=False)`` on one row, as PyTorch's CPU kernel orders them."""
    s = _Seq(values, less_for(descending))
    std_sort(s, 0, len(values))
    return s.i


def topk_row(values: list, k: int, largest: bool, sorted: bool) -> list[int]:  # noqa: A002
    """Indices of ``topk`` on one row, as PyTorch's CPU kernel (``topk_impl_loop``) picks them."""
    n = len(values)
    s = _Seq(values, less_for(largest))
    if k == 0:
        return []
    if k * 64 <= n:
        partial_sort(s, 0, k, n)
    else:
        nth_element(s, 0, k - 1, n)
        if sorted:
            std_sort(s, 0, k - 1)
    return s.i[:k]


__all__ = ["sort_row", "topk_row", "MAX_EMULATED", "MAX_EMULATED_TOTAL", "less_for"]


def sort_by_less(values: list) -> tuple[list, list[int]]:
    """``std::sort`` of (value, index) pairs compared by value with a plain ``<`` (ATen's
    ``mode``, where NaN compares false both ways): the values and indices in that order."""
    s = _Seq(values, lambda a, b: a < b)
    std_sort(s, 0, len(values))
    return s.v, s.i
