"""Linear algebra, indexing, nn, autograd and in-place parts of the bad-input corpus."""

from __future__ import annotations

from tests.fuzz._bad_inputs import INPLACE, _add
from tests.fuzz._bad_ops import _x

_F = lambda lib: lib.nn.functional  # noqa: E731

_LINALG = {
    "matmul_shape": lambda lib: _x(lib, 2, 3) @ _x(lib, 2, 3),
    "matmul_0d": lambda lib: lib.tensor(1.0) @ _x(lib, 2),
    "matmul_dtype": lambda lib: _x(lib, 2, 2) @ _x(lib, 2, 2, dtype="float64"),
    "matmul_int_float": lambda lib: _x(lib, 2, 2, dtype="int64") @ _x(lib, 2, 2),
    "mm_3d": lambda lib: lib.mm(_x(lib, 2, 2, 2), _x(lib, 2, 2)),
    "mm_shape": lambda lib: lib.mm(_x(lib, 2, 3), _x(lib, 2, 3)),
    "bmm_2d": lambda lib: lib.bmm(_x(lib, 2, 2), _x(lib, 2, 2)),
    "bmm_batch": lambda lib: lib.bmm(_x(lib, 2, 2, 2), _x(lib, 3, 2, 2)),
    "dot_2d": lambda lib: lib.dot(_x(lib, 2, 2), _x(lib, 2, 2)),
    "dot_len": lambda lib: lib.dot(_x(lib, 2), _x(lib, 3)),
    "dot_dtype": lambda lib: lib.dot(_x(lib, 2), _x(lib, 2, dtype="float64")),
    "mv_shape": lambda lib: lib.mv(_x(lib, 2, 3), _x(lib, 2)),
    "outer_2d": lambda lib: lib.outer(_x(lib, 2, 2), _x(lib, 2)),
    "addmm_shape": lambda lib: lib.addmm(_x(lib, 3), _x(lib, 2, 2), _x(lib, 2, 2)),
    "einsum_bad": lambda lib: lib.einsum("ij,jk->ik", _x(lib, 2, 3), _x(lib, 2, 3)),
    "einsum_operands": lambda lib: lib.einsum("ij,jk->ik", _x(lib, 2, 3)),
    "inverse_nonsquare": lambda lib: lib.linalg.inv(_x(lib, 2, 3)),
    "det_1d": lambda lib: lib.linalg.det(_x(lib, 3)),
    "cholesky_nonpd": lambda lib: lib.linalg.cholesky(-lib.eye(2)),
    "solve_shape": lambda lib: lib.linalg.solve(lib.eye(2), _x(lib, 3)),
    "cross_dim": lambda lib: lib.linalg.cross(_x(lib, 2), _x(lib, 2)),
    "tensordot_dims": lambda lib: lib.tensordot(_x(lib, 2, 3), _x(lib, 2, 3), dims=([1], [1, 0])),
}
for _k, _f in _LINALG.items():
    _add(f"linalg[{_k}]", _f)

_IDX = {
    "int_range": lambda lib: _x(lib, 3)[3],
    "int_neg_range": lambda lib: _x(lib, 3)[-4],
    "float_index": lambda lib: _x(lib, 3)[1.0],
    "str_index": lambda lib: _x(lib, 3)["a"],
    "too_many": lambda lib: _x(lib, 3)[0, 0],
    "list_range": lambda lib: _x(lib, 3)[[0, 3]],
    "float_tensor_index": lambda lib: _x(lib, 3)[_x(lib, 2)],
    "mask_shape": lambda lib: _x(lib, 3)[lib.tensor([True, False])],
    "broadcast_indices": lambda lib: _x(lib, 3, 3)[[0, 1], [0, 1, 2]],
    "zero_step": lambda lib: _x(lib, 3)[::0],
    "neg_step": lambda lib: _x(lib, 3)[::-1],
    "0d_slice": lambda lib: lib.tensor(1.0)[0:1],
    "setitem_shape": lambda lib: _x(lib, 3).__setitem__(slice(0, 2), _x(lib, 3)),
    "setitem_str": lambda lib: _x(lib, 3).__setitem__(0, "a"),
    "setitem_dtype": lambda lib: _x(lib, 3).__setitem__([0, 1], _x(lib, 2, dtype="float64")),
    "gather_float_index": lambda lib: _x(lib, 3).gather(0, _x(lib, 2)),
    "gather_dims": lambda lib: _x(lib, 3, 2).gather(0, lib.tensor([0, 1])),
    "gather_range": lambda lib: _x(lib, 3).gather(0, lib.tensor([5])),
    "gather_dim": lambda lib: _x(lib, 3).gather(2, lib.tensor([0])),
    "index_select_2d": lambda lib: _x(lib, 3).index_select(0, lib.tensor([[0]])),
    "index_select_float": lambda lib: _x(lib, 3).index_select(0, _x(lib, 1)),
    "index_select_range": lambda lib: _x(lib, 3).index_select(0, lib.tensor([4])),
    "scatter_range": lambda lib: _x(lib, 3).scatter(0, lib.tensor([5]), _x(lib, 1)),
    "scatter_dtype": lambda lib: _x(lib, 3).scatter(0, lib.tensor([0]), _x(lib, 1, dtype="float64")),
    "scatter_add_float_index": lambda lib: _x(lib, 3).scatter_add(0, _x(lib, 1), _x(lib, 1)),
    "take_range": lambda lib: _x(lib, 3).take(lib.tensor([3])),
    "take_float": lambda lib: _x(lib, 3).take(_x(lib, 1)),
    "masked_select_float": lambda lib: _x(lib, 3).masked_select(_x(lib, 3)),
    "masked_select_shape": lambda lib: _x(lib, 3).masked_select(_x(lib, 2) > 0),
    "index_put_dtype": lambda lib: _x(lib, 3).index_put((lib.tensor([0]),), _x(lib, 1, dtype="int64")),
    "index_put_not_tuple": lambda lib: _x(lib, 3).index_put(lib.tensor([0]), _x(lib, 1)),
    "index_add_shape": lambda lib: _x(lib, 3, 2).index_add(0, lib.tensor([0]), _x(lib, 1, 3)),
    "nonzero_kwarg": lambda lib: _x(lib, 3).nonzero(as_tuplee=True),
}
for _k, _f in _IDX.items():
    _add(f"index[{_k}]", _f)

_NN = {
    "linear_shape": lambda lib: _F(lib).linear(_x(lib, 2, 3), _x(lib, 4, 2)),
    "linear_bias": lambda lib: _F(lib).linear(_x(lib, 2, 3), _x(lib, 4, 3), _x(lib, 3)),
    "linear_dtype": lambda lib: _F(lib).linear(_x(lib, 2, 3), _x(lib, 4, 3, dtype="float64")),
    "conv2d_dims": lambda lib: _F(lib).conv2d(_x(lib, 2, 3), _x(lib, 1, 1, 1, 1)),
    "conv2d_channels": lambda lib: _F(lib).conv2d(_x(lib, 1, 2, 4, 4), _x(lib, 1, 3, 2, 2)),
    "conv2d_kernel_big": lambda lib: _F(lib).conv2d(_x(lib, 1, 1, 2, 2), _x(lib, 1, 1, 3, 3)),
    "conv2d_stride0": lambda lib: _F(lib).conv2d(_x(lib, 1, 1, 4, 4), _x(lib, 1, 1, 2, 2), stride=0),
    "conv2d_groups": lambda lib: _F(lib).conv2d(_x(lib, 1, 3, 4, 4), _x(lib, 2, 1, 2, 2), groups=2),
    "conv1d_pad_neg": lambda lib: _F(lib).conv1d(_x(lib, 1, 1, 4), _x(lib, 1, 1, 2), padding=-1),
    "max_pool_big": lambda lib: _F(lib).max_pool2d(_x(lib, 1, 1, 2, 2), 3),
    "max_pool_pad": lambda lib: _F(lib).max_pool2d(_x(lib, 1, 1, 4, 4), 2, padding=2),
    "avg_pool_1d_input": lambda lib: _F(lib).avg_pool2d(_x(lib, 4), 2),
    "layer_norm_shape": lambda lib: _F(lib).layer_norm(_x(lib, 2, 3), (2,)),
    "layer_norm_weight": lambda lib: _F(lib).layer_norm(_x(lib, 2, 3), (3,), _x(lib, 2)),
    "layer_norm_int_shape": lambda lib: _F(lib).layer_norm(_x(lib, 2, 3), 3),
    "batch_norm_channels": lambda lib: _F(lib).batch_norm(_x(lib, 2, 3), _x(lib, 2), _x(lib, 2)),
    "batch_norm_single": lambda lib: _F(lib).batch_norm(_x(lib, 1, 3), None, None, training=True),
    "group_norm_groups": lambda lib: _F(lib).group_norm(_x(lib, 2, 3, 2), 2),
    "embedding_float": lambda lib: _F(lib).embedding(_x(lib, 2), _x(lib, 4, 3)),
    "embedding_range": lambda lib: _F(lib).embedding(lib.tensor([5]), _x(lib, 4, 3)),
    "cross_entropy_shape": lambda lib: _F(lib).cross_entropy(_x(lib, 2, 3), lib.tensor([0, 1, 2])),
    "cross_entropy_range": lambda lib: _F(lib).cross_entropy(_x(lib, 2, 3), lib.tensor([0, 3])),
    "cross_entropy_float_target": lambda lib: _F(lib).cross_entropy(_x(lib, 2, 3), _x(lib, 2)),
    "nll_loss_dtype": lambda lib: _F(lib).nll_loss(_x(lib, 2, 3), _x(lib, 2)),
    "nll_loss_reduction": lambda lib: _F(lib).nll_loss(_x(lib, 2, 3), lib.tensor([0, 1]),
                                                       reduction="x"),
    "mse_reduction": lambda lib: _F(lib).mse_loss(_x(lib, 2), _x(lib, 2), reduction="x"),
    "bce_range": lambda lib: _F(lib).binary_cross_entropy(_x(lib, 2) + 5, _x(lib, 2)),
    "bce_shape": lambda lib: _F(lib).binary_cross_entropy(_x(lib, 2).sigmoid(), _x(lib, 3)),
    "dropout_p": lambda lib: _F(lib).dropout(_x(lib, 2), p=1.5),
    "dropout_p_neg": lambda lib: _F(lib).dropout(_x(lib, 2), p=-0.1),
    "softmax_dim": lambda lib: _F(lib).softmax(_x(lib, 2), dim=2),
    "pad_odd": lambda lib: _F(lib).pad(_x(lib, 2, 2), (1,)),
    "pad_mode": lambda lib: _F(lib).pad(_x(lib, 2, 2), (1, 1), mode="nope"),
    "pad_reflect_big": lambda lib: _F(lib).pad(_x(lib, 1, 2), (3, 3), mode="reflect"),
    "interpolate_none": lambda lib: _F(lib).interpolate(_x(lib, 1, 1, 2)),
    "interpolate_mode": lambda lib: _F(lib).interpolate(_x(lib, 1, 1, 2), size=4, mode="nope"),
    "one_hot_float": lambda lib: _F(lib).one_hot(_x(lib, 2)),
    "one_hot_small": lambda lib: _F(lib).one_hot(lib.tensor([3]), 2),
    "module_linear_shape": lambda lib: lib.nn.Linear(3, 2)(_x(lib, 2, 4)),
    "module_conv_neg": lambda lib: lib.nn.Conv2d(1, -1, 2),
    "module_linear_neg": lambda lib: lib.nn.Linear(-1, 2),
    "module_bad_kwarg": lambda lib: lib.nn.Linear(2, 2, biass=False),
    "module_dropout_p": lambda lib: lib.nn.Dropout(2.0),
    "module_embedding_padding": lambda lib: lib.nn.Embedding(3, 2, padding_idx=5),
    "sequential_bad": lambda lib: lib.nn.Sequential(1)(_x(lib, 2)),
    "register_param_bad": lambda lib: lib.nn.Module().register_parameter("a", _x(lib, 2)),
    "register_param_dot": lambda lib: lib.nn.Module().register_parameter(
        "a.b", lib.nn.Parameter(_x(lib, 2))),
    "register_buffer_bad": lambda lib: lib.nn.Module().register_buffer("a", 3),
    "load_state_missing": lambda lib: lib.nn.Linear(2, 2).load_state_dict({}),
    "load_state_shape": lambda lib: lib.nn.Linear(2, 2).load_state_dict(
        {"weight": _x(lib, 3, 2), "bias": _x(lib, 2)}),
    "optim_empty": lambda lib: lib.optim.SGD([], lr=0.1),
    "optim_lr_neg": lambda lib: lib.optim.SGD([lib.nn.Parameter(_x(lib, 2))], lr=-1),
    "optim_adam_betas": lambda lib: lib.optim.Adam([lib.nn.Parameter(_x(lib, 2))], betas=(1.5, 0.9)),
    "optim_tensor_params": lambda lib: lib.optim.SGD(lib.nn.Parameter(_x(lib, 2)), lr=0.1),
}
for _k, _f in _NN.items():
    _add(f"nn[{_k}]", _f)


def _backward_twice(lib):
    y = (_x(lib, 2, rg=True) * 2).exp().sum()
    y.backward()
    y.backward()


_AUTOGRAD = {
    "backward_nonscalar": lambda lib: (_x(lib, 2, rg=True) * 2).backward(),
    "backward_no_grad": lambda lib: _x(lib, 2).sum().backward(),
    "backward_twice": _backward_twice,
    "backward_grad_shape": lambda lib: (_x(lib, 2, rg=True) * 2).backward(_x(lib, 3)),
    "grad_not_rg": lambda lib: lib.autograd.grad(_x(lib, 2, rg=True).sum(), _x(lib, 2)),
    "grad_unused": lambda lib: lib.autograd.grad(_x(lib, 2, rg=True).sum(), _x(lib, 2, rg=True)),
    "grad_outputs_len": lambda lib: lib.autograd.grad([_x(lib, 2, rg=True).sum()],
                                                      [_x(lib, 2, rg=True)], [None, None]),
    "requires_grad_int": lambda lib: _x(lib, 2, dtype="int64").requires_grad_(),
    "requires_grad_nonleaf_false": lambda lib: (_x(lib, 2, rg=True) * 2).requires_grad_(False),
    "requires_grad_str": lambda lib: _x(lib, 2).requires_grad_("yes"),
    "grad_assign_shape": lambda lib: setattr(_x(lib, 2, rg=True), "grad", _x(lib, 3)),
    "grad_assign_dtype": lambda lib: setattr(_x(lib, 2, rg=True), "grad",
                                             _x(lib, 2, dtype="float64")),
    "grad_assign_list": lambda lib: setattr(_x(lib, 2, rg=True), "grad", [1.0, 2.0]),
    "retain_grad_no_rg": lambda lib: _x(lib, 2).retain_grad(),
    "register_hook_no_rg": lambda lib: _x(lib, 2).register_hook(lambda g: g),
    "post_acc_hook_nonleaf": lambda lib: (_x(lib, 2, rg=True) * 2)
    .register_post_accumulate_grad_hook(lambda t: None),
    "inplace_leaf": lambda lib: _x(lib, 2, rg=True).add_(1),
    "inplace_leaf_view": lambda lib: _x(lib, 2, rg=True)[0].add_(1),
    "detach_view_inplace": lambda lib: _x(lib, 2, rg=True).unbind()[0].detach_(),
    "unbind_view_inplace": lambda lib: (_x(lib, 2, rg=True) * 1).unbind()[0].mul_(2),
    "saved_hooks_not_callable": lambda lib: lib.autograd.graph.saved_tensors_hooks(1, 2)
    .__enter__() and (_x(lib, 2, rg=True) * _x(lib, 2, rg=True)),
    "function_apply_no_forward": lambda lib: type("F", (lib.autograd.Function,), {}).apply(
        _x(lib, 2)),
    "jacobian_non_tensor": lambda lib: lib.autograd.functional.jacobian(lambda x: 3, _x(lib, 2)),
    "node_register_hook_bad": lambda lib: (_x(lib, 2, rg=True) * 2).grad_fn.register_hook(3),
    "set_grad_enabled_str": lambda lib: lib.set_grad_enabled("a"),
}
for _k, _f in _AUTOGRAD.items():
    _add(f"autograd[{_k}]", _f)

# ---------------------------------------------------------------------------- in-place: state kept
_TARGETS = {"float": lambda lib: _x(lib, 2, 3), "int": lambda lib: _x(lib, 2, 3, dtype="int64"),
            "expanded": lambda lib: _x(lib, 3).expand(2, 3)}
_INPLACE_OPS = {
    "add_shape": lambda lib, t: t.add_(_x(lib, 4)),
    "add_grow": lambda lib, t: t.add_(_x(lib, 3, 2, 3)),
    "mul_str": lambda lib, t: t.mul_("a"),
    "div_float_into": lambda lib, t: t.div_(_x(lib, 3, dtype="float64") + 5),
    "copy_shape": lambda lib, t: t.copy_(_x(lib, 4)),
    "clamp_none": lambda lib, t: t.clamp_(),
    "pow_neg_int": lambda lib, t: t.pow_(-1),
    "masked_fill_float_mask": lambda lib, t: t.masked_fill_(_x(lib, 2, 3), 1),
    "index_put_dtype": lambda lib, t: t.index_put_((lib.tensor([0]),), _x(lib, 3, dtype="int32")),
    "setitem_shape": lambda lib, t: t.__setitem__(0, _x(lib, 4)),
    "sub_bool": lambda lib, t: t.sub_(True),
    "exp_int": lambda lib, t: t.exp_(),
    "sigmoid_int": lambda lib, t: t.sigmoid_(),
    "add_float_alpha": lambda lib, t: t.add_(t, alpha="a"),
    "scatter_range": lambda lib, t: t.scatter_(0, lib.tensor([[5]]), 1.0),
    "fill_1d": lambda lib, t: t.fill_(_x(lib, 2)),
    "zero_arg": lambda lib, t: t.zero_(1),
    "transpose_range": lambda lib, t: t.transpose_(0, 3),
    "unsqueeze_range": lambda lib, t: t.unsqueeze_(5),
}
for _tk, _mk in _TARGETS.items():
    for _ok, _op in _INPLACE_OPS.items():
        INPLACE[f"inplace[{_tk},{_ok}]"] = (_mk, _op)
