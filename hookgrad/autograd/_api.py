"""`backward` and `grad`: argument handling and validation around `engine.execute` (spec §5).

Mirrors: ``torch.autograd.backward`` and ``torch.autograd.grad``; errors and their order follow
PyTorch 2.13 (spec §13, E13-E21, E43).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, NamedTuple

from hookgrad._backend import namespace_of
from hookgrad._tensor import Tensor
from hookgrad.autograd import engine
from hookgrad.autograd._edges import gradient_edge, sync_view
from hookgrad.autograd._node import GradientEdge
from hookgrad.autograd._nodes import warn_create_graph_backward

__all__ = ["backward", "grad", "add_backward_observer", "remove_backward_observer",
           "BackwardCall", "BACKWARD_EXECUTORS"]

# NOTE [Backward observers]
# Tools that watch or take over backward passes (``hooktools.HookTrace``, compiled autograd)
# register an observer ``observer(call) -> result``. It is called instead of the pass with a
# `BackwardCall` (``api`` "backward" or "grad", the roots, the ``inputs=`` argument,
# ``create_graph``) and must return ``call.run()`` (the pass itself, after any further
# observers) or what stands in for it. With no observer a pass costs one truth test of the list.
_OBSERVERS: list = []


class BackwardCall(NamedTuple):
    """One ``backward()``/``grad()`` call as observers see it (NOTE [Backward observers])."""

    api: str
    roots: Any
    inputs: Any
    create_graph: bool
    run: Any


# NOTE [Backward executors]
# Compiled autograd runs a validated ``backward()`` itself: ``executor(roots, seeds,
# retain_graph, targets) -> bool`` is asked (innermost last) right before `engine.execute`, with
# the root edges and seeds `_backward` has checked; True means it ran the pass. Empty: one truth
# test per pass.
BACKWARD_EXECUTORS: list = []


def add_backward_observer(observer: Any) -> None:
    """Watch every backward pass (NOTE [Backward observers]); idempotent."""
    if observer not in _OBSERVERS:
        _OBSERVERS.append(observer)


def remove_backward_observer(observer: Any) -> None:
    """Stop watching (a no-op for an observer not registered)."""
    if observer in _OBSERVERS:
        _OBSERVERS.remove(observer)


def _observed(api: str, roots: Any, inputs: Any, create_graph: bool, run: Any,
              depth: int = 0) -> Any:
    if depth >= len(_OBSERVERS):
        return run()
    return _OBSERVERS[depth](BackwardCall(
        api, roots, inputs, create_graph,
        lambda: _observed(api, roots, inputs, create_graph, run, depth + 1)))


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _inputs_tuple(inputs: Any, who: str) -> tuple[tuple, list | None]:
    """Normalise ``inputs=``; returns the tensors and the dict keys (when a dict was given)."""
    keys = None
    if isinstance(inputs, (Tensor, GradientEdge)):
        inputs = (inputs,)
    elif type(inputs) is dict:
        keys = list(inputs.keys())
        inputs = tuple(inputs.values())
    elif isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{who}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    else:
        inputs = tuple(inputs)
    if len(inputs) == 0:
        raise RuntimeError(f"`inputs` argument to `{who}()` cannot be empty.")
    return inputs, keys


def _seed_tuple(grads: Any, n: int) -> tuple:
    """PyTorch's ``_tensor_or_tensors_to_tuple`` (a bare non-tensor fails in ``tuple()``)."""
    if grads is None:
        return (None,) * n
    if isinstance(grads, Tensor):
        return (grads,)
    return tuple(grads)


def _check_seed_count(outputs: tuple, seeds: list) -> None:
    # Checked after the seeds were validated pairwise (zip), as PyTorch's engine does; extra
    # seeds are ignored.
    if len(seeds) < len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(seeds)} gradients")


def make_seeds(outputs: tuple, grads: list) -> list:
    """PyTorch's ``_make_grads``: validate or create one seed per root."""
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(out, GradientEdge):
            # No output metadata to check against: the seed must be given explicitly.
            if not isinstance(g, Tensor):
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            seeds.append(g)
        elif isinstance(g, Tensor):
            if g._data.shape != out._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {out.shape}."
                )
            seeds.append(g)
        elif g is None:
            if _needs_grad(out):
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out._data.dtype.kind not in "fV":
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype}"
                    )
                seeds.append(Tensor._make(namespace_of(out._data).ones_like(out._data)))
            else:
                seeds.append(None)
        else:
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(g).__name__}"
            )
    return seeds


def _needs_grad(t: Tensor) -> bool:
    # a view of a constant requires grad once its base does (an in-place op with an operand
    # that requires grad): the public property's rule, without its Python overhead for others
    return t._requires_grad or (t._base is not None and sync_view(t))


def _root_edges(outputs: tuple) -> list:
    edges = []
    for i, out in enumerate(outputs):
        if isinstance(out, GradientEdge):
            edges.append((out.node, out.output_nr))
            continue
        if not _needs_grad(out):
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        edges.append(gradient_edge(out))
    return edges


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of `tensors` into the ``.grad`` of leaves (or of `inputs`).

    Args:
        tensors: root tensor(s) to differentiate.
        grad_tensors: one seed per root (a Tensor or None; None means ones for a scalar root).
        retain_graph: keep saved tensors for another pass; defaults to `create_graph`.
        create_graph: record the backward pass itself, for higher-order derivatives.
        grad_variables: deprecated alias of `grad_tensors` (FutureWarning).
        inputs: tensor(s), a dict of them, or gradient edges: only these accumulate (non-leaf
            tensors are made to retain their grad).

    Raises:
        RuntimeError: PyTorch's errors for seeds, roots without grad and empty `inputs`.
        TypeError: a seed that is neither a Tensor nor None; a non-dict Mapping as `inputs`.

    Mirrors: ``torch.autograd.backward``.
    """
    if _OBSERVERS:
        return _observed("backward", tensors, inputs, create_graph, lambda: _backward(
            tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs))
    return _backward(tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs)


def _backward(tensors: Any, grad_tensors: Any, retain_graph: bool | None, create_graph: bool,
              grad_variables: Any, inputs: Any) -> None:
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=3)
        if grad_tensors is not None:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
        grad_tensors = grad_variables
    outputs = _as_tuple(tensors)
    targets = None
    if inputs is not None:
        inputs, _ = _inputs_tuple(inputs, "backward")
    seeds = make_seeds(outputs, _seed_tuple(grad_tensors, len(outputs)))
    _check_seed_count(outputs, seeds)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_edges(outputs)
    if inputs is not None:
        targets = []
        for i, t in enumerate(inputs):
            if isinstance(t, GradientEdge):
                targets.append((t.node, t.output_nr, i))
                continue
            if not _needs_grad(t):
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            if t.grad_fn is not None:
                t.retain_grad()  # type: ignore[attr-defined]
            node, slot = gradient_edge(t)
            targets.append((node, slot, i))
    if create_graph:
        warn_create_graph_backward()
    if BACKWARD_EXECUTORS and not create_graph and BACKWARD_EXECUTORS[-1](
            roots, seeds, retain_graph, targets):
        return
    engine.execute(roots, seeds, create_graph=create_graph, retain_graph=retain_graph,
                   targets=targets, accumulate=True)


def _grad_targets(ins: tuple) -> list:
    """Capture points ``(node, slot, index)`` of ``grad()``'s inputs."""
    targets = []
    for i, t in enumerate(ins):
        if isinstance(t, GradientEdge):
            targets.append((t.node, t.output_nr, i))
            continue
        if not _needs_grad(t):
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        node, slot = gradient_edge(t)
        targets.append((node, slot, i))
    return targets


def _fill_unused(ins: tuple, captured: list, allow_unused: bool, materialize_grads: bool,
                 create_graph: bool) -> list:
    """None, zeros or PyTorch's error for inputs that got no gradient."""
    result = []
    for i, (t, g) in enumerate(zip(ins, captured)):
        if g is None:
            if materialize_grads and isinstance(t, GradientEdge):
                raise RuntimeError(
                    "materialize_grads cannot be used when the given input is a GradientEdge"
                )
            if materialize_grads:
                g = Tensor._make(namespace_of(t._data).zeros_like(t._data))
                if create_graph:
                    g.requires_grad_()
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
        result.append(g)
    return result


# vmap of `_grad` over dim 0 of the grad_outputs (set by hookgrad/_functorch/vmap.py).
BATCHED_GRADS: list = [None]


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> Any:
    """Gradients of `outputs` w.r.t. `inputs`, without touching ``.grad`` (spec §5.3).

    Args:
        outputs: tensor(s) to differentiate. inputs: tensor(s), a dict of them (the result is
            then a dict with the same keys) or gradient edges.
        grad_outputs: one seed per output, as `backward`'s `grad_tensors`.
        retain_graph, create_graph: as in `backward`.
        only_inputs: deprecated and ignored (FutureWarning when False).
        allow_unused: return None for inputs the outputs do not depend on (else raise);
            defaults to `materialize_grads`.
        is_grads_batched: `grad_outputs` carry a batch dimension 0 (computed with vmap).
        materialize_grads: return zeros instead of None for unused inputs.

    Returns:
        A tuple with one gradient per input (or a dict when `inputs` is a dict).

    Raises:
        RuntimeError: PyTorch's errors for seeds, unused inputs and tensors without grad.
        ValueError: ``materialize_grads=True`` with ``allow_unused=False``.

    Example:
        >>> import hookgrad as torch
        >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> torch.autograd.grad((x * x).sum(), x)
        (tensor([2., 4.]),)

    Mirrors: ``torch.autograd.grad``.
    """
    args = (outputs, inputs, grad_outputs, retain_graph, create_graph, only_inputs,
            allow_unused, is_grads_batched, materialize_grads)
    if _OBSERVERS:
        return _observed("grad", outputs, inputs, create_graph, lambda: _grad(*args))
    return _grad(*args)


def _grad(outputs: Any, inputs: Any, grad_outputs: Any, retain_graph: bool | None,
          create_graph: bool, only_inputs: bool, allow_unused: bool | None,
          is_grads_batched: bool, materialize_grads: bool) -> Any:
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        if BATCHED_GRADS[0] is None:  # installed by hookgrad.func (vmap over this function)
            raise NotImplementedError("is_grads_batched needs hookgrad.func")
        return BATCHED_GRADS[0](_grad, outputs, inputs, grad_outputs, retain_graph,
                                create_graph, only_inputs, allow_unused, materialize_grads)
    outs = _as_tuple(outputs)
    ins, keys = _inputs_tuple(inputs, "grad")
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.", FutureWarning, stacklevel=3)
    seeds = make_seeds(outs, _seed_tuple(grad_outputs, len(outs)))
    _check_seed_count(outs, seeds)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_edges(outs)
    captured = engine.execute(roots, seeds, create_graph=create_graph,
                              retain_graph=retain_graph, targets=_grad_targets(ins),
                              accumulate=False)
    result = _fill_unused(ins, captured, allow_unused, materialize_grads, create_graph)
    if keys is not None:
        return dict(zip(keys, result))
    return tuple(result)
