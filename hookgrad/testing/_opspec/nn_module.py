"""OpSpecs: the nn-only primitives of ``_ops/nn_module_ops.py`` through their public functions
(``embedding``, the fused losses, ``bilinear``, ``prelu``, and the Scalar-overload arithmetic of
the cross-entropy composites)."""

from __future__ import annotations

from typing import Any

from hookgrad.testing._opspec import Arg, OpSpec, Sample

REDUCTIONS = ("mean", "sum", "none")


def _F(lib: Any) -> Any:
    return lib.nn.functional


def _idx(shape: tuple[int, ...], high: int) -> Arg:
    return Arg(shape, dtype="int64", low=0, high=high, requires_grad=False)


def _pair(name: str, **extra: Any) -> list[Sample]:
    return [Sample((Arg((3, 4)), Arg((3, 4))), {"reduction": r, **extra}, f"{name}_{r}")
            for r in REDUCTIONS]


def _embedding(lib: Any, w: Any, idx: Any, **kw: Any) -> Any:
    return _F(lib).embedding(idx, w, **kw)


def _nll(lib: Any, x: Any, t: Any, w: Any = None, **kw: Any) -> Any:
    return _F(lib).nll_loss(x, t, weight=w, **kw)


def _bce(lib: Any, x: Any, t: Any, w: Any = None, **kw: Any) -> Any:
    return _F(lib).binary_cross_entropy(x, t, weight=w, **kw)


def _bcel(lib: Any, x: Any, t: Any, w: Any = None, pw: Any = None, **kw: Any) -> Any:
    return _F(lib).binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw, **kw)


def _unit(shape: tuple[int, ...], requires_grad: bool = True) -> Arg:
    return Arg(shape, low=0.1, high=0.9, requires_grad=requires_grad)


def _const(shape: tuple[int, ...]) -> Arg:
    return Arg(shape, low=0.5, high=2.0, requires_grad=False)


SPECS = [
    OpSpec("glu", lambda lib, x, **kw: _F(lib).glu(x, **kw), prims=("glu",), samples=[
        Sample((Arg((3, 4)),), {}, "last_dim"), Sample((Arg((4, 3)),), {"dim": 0}, "dim0"),
        Sample((Arg((2, 6, 2)),), {"dim": -2}, "neg_dim")]),
    OpSpec("embedding", _embedding, prims=("embedding", "embedding_dense_backward"), samples=[
        Sample((Arg((5, 3)), _idx((2, 3), 5)), {}, "plain"),
        Sample((Arg((5, 3)), _idx((4,), 5)), {"padding_idx": 1}, "padding"),
    ]),
    # scale_grad_by_freq scales the gradient on purpose: it is not the Jacobian, so only the
    # comparisons with PyTorch apply.
    OpSpec("embedding_freq", _embedding, prims=("embedding", "embedding_dense_backward"),
           gradcheck=False, gradgradcheck=False, forward_ad=False, samples=[
               Sample((Arg((4, 2)), _idx((6,), 4)), {"scale_grad_by_freq": True}, "freq"),
           ]),
    OpSpec("mse_loss", lambda lib, x, t, **kw: _F(lib).mse_loss(x, t, **kw),
           prims=("mse_loss",), samples=_pair("mse")),
    OpSpec("smooth_l1_loss", lambda lib, x, t, **kw: _F(lib).smooth_l1_loss(x, t, **kw),
           prims=("smooth_l1_loss",), samples=_pair("beta", beta=0.5)),
    OpSpec("huber_loss", lambda lib, x, t, **kw: _F(lib).huber_loss(x, t, **kw),
           prims=("huber_loss",), samples=_pair("delta", delta=0.7)),
    # (_backward_tie: its double backward ties the gradient to `self`, as PyTorch's zeros_like)
    OpSpec("nll_loss", _nll, prims=("nll_loss", "_backward_tie"), samples=[
        *[Sample((Arg((4, 3)), _idx((4,), 3)), {"reduction": r}, r) for r in REDUCTIONS],
        Sample((Arg((4, 3)), _idx((4,), 3), _const((3,))), {"ignore_index": 1}, "weight_ignore"),
        Sample((Arg((3,)), _idx((), 3)), {}, "unbatched"),
    ]),
    OpSpec("nll_loss2d", _nll, prims=("nll_loss2d",), samples=[
        Sample((Arg((2, 3, 2, 2)), _idx((2, 2, 2), 3)), {"reduction": r}, r) for r in REDUCTIONS
    ]),
    OpSpec("binary_cross_entropy", _bce, prims=("binary_cross_entropy",), samples=[
        *[Sample((_unit((3, 4)), _unit((3, 4))), {"reduction": r}, r) for r in REDUCTIONS],
        Sample((_unit((3, 4)), _unit((3, 4), False), _const((4,))), {}, "weight"),
    ]),
    OpSpec("binary_cross_entropy_with_logits", _bcel,
           prims=("binary_cross_entropy_with_logits",), samples=[
               *[Sample((Arg((3, 4)), _unit((3, 4))), {"reduction": r}, r) for r in REDUCTIONS],
               Sample((Arg((3, 4)), _unit((3, 4)), _const((3, 4)), _const((4,))), {},
                      "weight_pos_weight"),
               Sample((Arg((3, 4)), _unit((3, 4)), Arg(None, None), _const((4,))),
                      {"reduction": "sum"}, "pos_weight"),
           ]),
    OpSpec("bilinear", lambda lib, a, b, w, bias=None: _F(lib).bilinear(a, b, w, bias),
           prims=("_trilinear",), samples=[
               Sample((Arg((3, 2)), Arg((3, 4)), Arg((5, 2, 4)), Arg((5,))), {}, "bias"),
               Sample((Arg((2, 3, 2)), Arg((2, 3, 2)), Arg((1, 2, 2))), {}, "batch_dims"),
           ]),
    OpSpec("prelu", lambda lib, x, w: _F(lib).prelu(x, w), prims=("_prelu_kernel",), samples=[
        Sample((Arg((3, 4)), Arg((1,), low=0.1, high=0.5)), {}, "shared"),
        Sample((Arg((2, 3, 2)), Arg((3,), low=0.1, high=0.5)), {}, "per_channel"),
    ]),
    OpSpec("cross_entropy", lambda lib, x, t, **kw: _F(lib).cross_entropy(x, t, **kw),
           prims=("_nn_mul_scalar", "_nn_div_scalar", "_nn_add_scalar"), samples=[
               Sample((Arg((4, 3)), _idx((4,), 3)), {"label_smoothing": 0.2}, "smoothing"),
               Sample((Arg((4, 3)), _unit((4, 3))), {}, "probabilities"),
               Sample((Arg((4, 3)), _unit((4, 3))), {"label_smoothing": 0.1,
                                                      "reduction": "sum"}, "probs_smoothing"),
           ]),
]
