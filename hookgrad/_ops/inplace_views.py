"""The in-place view primitives: ``squeeze_``, ``unsqueeze_``, ``transpose_``, ``t_``,
``as_strided_``.

Mirrors: the ``torch.Tensor`` methods of those names. Each is its out-of-place view primitive
under PyTorch's node name for the in-place overload (``SqueezeBackward3/4/5``,
``UnsqueezeBackward1``, ``TransposeBackward1``, ``TBackward1``, ``AsStridedBackward1``): same
forward, same rules. ``hookgrad._surface.cfuncs_views`` then gives the tensor itself the view's
geometry and node.
"""

from __future__ import annotations

from hookgrad._ops.registry import PRIMITIVES, defop

NAMES = {
    "squeeze": ("squeeze_", "SqueezeBackward3"),
    "squeeze_dim": ("squeeze_dim_", "SqueezeBackward4"),
    "squeeze_dims": ("squeeze_dims_", "SqueezeBackward5"),
    "unsqueeze": ("unsqueeze_", "UnsqueezeBackward1"),
    "transpose": ("transpose_", "TransposeBackward1"),
    "t": ("t_", "TBackward1"),
    "as_strided": ("as_strided_", "AsStridedBackward1"),
}

for _src, (_name, _node) in NAMES.items():
    _p = PRIMITIVES[_src]
    defop(_name, impl=_p.impl, inputs=_p.inputs, params=_p.params, vjp=_p.vjp, jvp=_p.jvp,
          saves=_p.saves, node_name=_node, nondifferentiable=_p.nondifferentiable,
          num_outputs=_p.num_outputs, nondifferentiable_outputs=_p.nondifferentiable_outputs,
          view=True)
    if _p.batch is not None:  # the out-of-place view's batching rule serves as well
        object.__setattr__(PRIMITIVES[_name], "batch", _p.batch)
