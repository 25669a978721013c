"""``einsum``: Einstein summation as a composite of diagonal, sum, permute, reshape and bmm.

Like ATen's implementation it takes diagonals for repeated labels, sums out labels no other
operand or the output needs, then contracts operands left to right with one ``bmm`` per pair,
so memory stays proportional to the operands, never to the full outer product.
Mirrors: ``torch.einsum``; the gradient is the same, the intermediate node names differ.
"""

from __future__ import annotations

import math
from typing import Any

from hookgrad._tensor import Tensor

__all__ = ["einsum"]

_ELL = "..."


def _parse_term(term: str, ndim: int, index: int, ell_dims: int) -> list:
    """Labels of one operand; ellipsis dims become ints counted from the right (broadcasting)."""
    if term.count(_ELL) > 1 or "." in term.replace(_ELL, ""):
        raise RuntimeError(
            f"einsum(): found '.' for operand {index} that is not part of any ellipsis"
        )
    letters = term.replace(_ELL, "")
    for c in letters:
        if not c.isalpha():
            raise RuntimeError(f"einsum(): invalid subscript given at index {term.index(c)} in "
                               f"the equation string, subscripts must be in [a-zA-Z]")
    if _ELL not in term:
        if len(letters) != ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(letters)}) does not "
                f"match the number of dimensions ({ndim}) for operand {index} and no ellipsis "
                "was given"
            )
        return list(letters)
    n_ell = ndim - len(letters)
    if n_ell < 0:
        raise RuntimeError(
            f"einsum(): the number of subscripts in the equation ({len(letters)}) is more than "
            f"the number of dimensions ({ndim}) for operand {index}"
        )
    head, tail = term.split(_ELL)
    return list(head) + list(range(ell_dims - n_ell, ell_dims)) + list(tail)


def _output_labels(rhs: str | None, inputs: list[list], ell_dims: int) -> list:
    if rhs is None:  # implicit: ellipsis dims, then labels seen once, alphabetically
        counts: dict = {}
        for labels in inputs:
            for lab in labels:
                if isinstance(lab, str):
                    counts[lab] = counts.get(lab, 0) + 1
        singles = sorted(lab for lab, n in counts.items() if n == 1)  # ASCII: A-Z then a-z
        return list(range(ell_dims)) + singles
    out = list(range(ell_dims)) if _ELL in rhs else []
    head, _, tail = rhs.partition(_ELL)
    seen = set()
    for c in rhs.replace(_ELL, ""):
        if c in seen:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the "
                               "output")
        if not any(c in labels for labels in inputs):
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation "
                               "for any input operand")
        seen.add(c)
    return list(head) + out + list(tail)


def _take_diagonals(t: Tensor, labels: list) -> tuple[Tensor, list]:
    """Repeated labels in one operand select a diagonal (moved to the last dim)."""
    while True:
        dup = next((lab for i, lab in enumerate(labels) if lab in labels[i + 1:]), None)
        if dup is None:
            return t, labels
        i = labels.index(dup)
        j = labels.index(dup, i + 1)
        t = t.diagonal(0, i, j)  # type: ignore[attr-defined]
        labels = [lab for k, lab in enumerate(labels) if k not in (i, j)] + [dup]


def _sum_out(t: Tensor, labels: list, keep: set) -> tuple[Tensor, list]:
    dims = [i for i, lab in enumerate(labels) if lab not in keep]
    if not dims:
        return t, labels
    return t.sum(dims), [lab for lab in labels if lab in keep]  # type: ignore[attr-defined]


def _sizes(t: Tensor, labels: list) -> dict:
    return dict(zip(labels, t._data.shape))


def _arrange(t: Tensor, labels: list, order: list, sizes: dict) -> Tensor:
    """Permute `t` to `order` (broadcasting size-1 dims to `sizes`)."""
    perm = [labels.index(lab) for lab in order]
    if perm != list(range(len(perm))):
        t = t.permute(*perm)  # type: ignore[attr-defined]
    target = [sizes[lab] for lab in order]
    if list(t._data.shape) != target:
        t = t.expand(*target)  # type: ignore[attr-defined]
    return t


def _lined_up(t: Tensor, labels: list, order: list) -> Tensor:
    """`t` permuted to `order`'s labels it has, with size-1 dims for the others."""
    own = [lab for lab in order if lab in labels]
    perm = [labels.index(lab) for lab in own]
    if perm != list(range(len(perm))):
        t = t.permute(*perm)  # type: ignore[attr-defined]
    for i, lab in enumerate(order):
        if lab not in labels:
            t = t.unsqueeze(i)  # type: ignore[attr-defined]
    return t


def _broadcast_mul(a: Tensor, la: list, b: Tensor, lb: list, labels: list,
                   out_labels: list) -> tuple[Tensor, list]:
    # in the output's label order (then the labels later operands need), as PyTorch lines the
    # operands up before multiplying: the product is then laid out like the output
    rank = {lab: i for i, lab in enumerate(out_labels)}
    order = sorted(labels, key=lambda lab: rank.get(lab, len(rank)))
    return _lined_up(a, la, order) * _lined_up(b, lb, order), order


def _contract(a: Tensor, la: list, b: Tensor, lb: list, keep: set,
              index: int, out_labels: list) -> tuple[Tensor, list]:
    a, la = _sum_out(a, la, keep | set(lb))
    b, lb = _sum_out(b, lb, keep | set(la))
    sizes = _sizes(a, la)
    for lab, s in _sizes(b, lb).items():
        seen = sizes.get(lab, 1)
        if seen != s and 1 not in (seen, s):
            raise RuntimeError(
                f"einsum(): subscript {lab} has size {s} for operand {index} which does not "
                f"broadcast with previously seen size {seen}"
            )
        sizes[lab] = s if seen == 1 else seen
    batch = [lab for lab in la if lab in lb and lab in keep]
    summed = [lab for lab in la if lab in lb and lab not in keep]
    a_only = [lab for lab in la if lab not in lb]
    b_only = [lab for lab in lb if lab not in la]
    if not summed:  # PyTorch multiplies (broadcasting) when nothing is summed: MulBackward0
        return _broadcast_mul(a, la, b, lb, batch + a_only + b_only, out_labels)
    nb, nm, nk, nn = (math.prod(sizes[lab] for lab in g) for g in (batch, a_only, summed, b_only))
    am = _arrange(a, la, batch + a_only + summed, sizes).reshape(nb, nm, nk)  # type: ignore
    bm = _arrange(b, lb, batch + summed + b_only, sizes).reshape(nb, nk, nn)  # type: ignore
    out = am.bmm(bm)  # type: ignore[attr-defined]
    labels = batch + a_only + b_only
    return out.reshape(*[sizes[lab] for lab in labels]), labels  # type: ignore[attr-defined]


def einsum(equation: str, *operands: Any) -> Tensor:
    """Sum of products over the labels of `equation` (``"ij,jk->ik"``, ``"...ii->...i"``).

    Mirrors: ``torch.einsum`` (equation form; the sublist form is not supported).
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        which = "more" if len(operands) > len(terms) else "fewer"
        raise RuntimeError(f"einsum(): {which} operands were provided than specified in the "
                           "equation")
    ell_dims = max((t._data.ndim - len(term.replace(_ELL, "")) for t, term in
                    zip(operands, terms) if _ELL in term), default=0)
    inputs = [_parse_term(term, t._data.ndim, i, ell_dims)
              for i, (term, t) in enumerate(zip(terms, operands))]
    out_labels = _output_labels(rhs if arrow else None, inputs, ell_dims)
    tensors = []
    for t, labels in zip(operands, inputs):
        tensors.append(_take_diagonals(t, labels))
    keep_after = [set(out_labels)]
    for _, labels in reversed(tensors[1:]):
        keep_after.insert(0, keep_after[0] | set(labels))
    result, labels = _sum_out(*tensors[0], keep_after[0])
    for i, ((t, lt), keep) in enumerate(zip(tensors[1:], keep_after[1:]), start=1):
        result, labels = _contract(result, labels, t, lt, keep, i, out_labels)
    result, labels = _sum_out(result, labels, set(out_labels))
    perm = [labels.index(lab) for lab in out_labels]
    if perm != list(range(len(perm))):
        result = result.permute(*perm)  # type: ignore[attr-defined]
    return result
