"""Flatten parameters into one vector and back. Mirrors: ``torch.nn.utils.convert_parameters``."""

from __future__ import annotations

from collections.abc import Iterable

from hookgrad._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Concatenate the flattened parameters (differentiable: ``CatBackward0``).

    Mirrors: ``torch.nn.utils.parameters_to_vector``.
    """
    from hookgrad._functional.shape import cat

    return cat([p.view(-1) for p in parameters])  # type: ignore[attr-defined]


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of `vec` into the parameters' data.

    Raises:
        TypeError: if `vec` is not a Tensor.

    Mirrors: ``torch.nn.utils.vector_to_parameters``.
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        num = param.numel()
        param.data = vec[pointer:pointer + num].view_as(param).data  # type: ignore[attr-defined]
        pointer += num
