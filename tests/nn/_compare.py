"""Run the same module on PyTorch and hookgrad with copied weights and compare everything."""

from __future__ import annotations

import numpy as np

import hookgrad


def to_lib(lib, arr, requires_grad=False):
    arr = np.asarray(arr)
    t = lib.tensor(arr.tolist(), dtype=_dtype(lib, arr.dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _dtype(lib, np_dtype):
    return {"float32": lib.float32, "float64": lib.float64, "int64": lib.int64,
            "int32": lib.int32, "bool": lib.bool}[np.dtype(np_dtype).name]


def copy_state(src, dst, lib_dst):
    """Copy every parameter and buffer of `src` into `dst` (other library)."""
    sd = {k: to_lib(lib_dst, v.detach().numpy()) for k, v in src.state_dict().items()}
    dst.load_state_dict(sd)


def names(t):
    """grad_fn name of a tensor (None for leaves)."""
    return None if t.grad_fn is None else t.grad_fn.name()


def compare_module(torch, make, inputs, *, modes=(True, False), atol=1e-5, rtol=1e-4,
                   grad_seed=None, check_name=True):
    """Build with `make(lib)`, copy torch's weights into hookgrad's, compare forward values,
    grad_fn names, input gradients and parameter gradients in each training mode.

    `inputs`: list of ``(numpy array, requires_grad)``.
    """
    tm, hm = make(torch), make(hookgrad)
    copy_state(tm, hm, hookgrad)
    for training in modes:
        tm.train(training)
        hm.train(training)
        tm.zero_grad()
        hm.zero_grad()
        t_in = [to_lib(torch, a, rg) for a, rg in inputs]
        h_in = [to_lib(hookgrad, a, rg) for a, rg in inputs]
        t_out, h_out = tm(*t_in), hm(*h_in)
        np.testing.assert_allclose(h_out.detach().numpy(), t_out.detach().numpy(),
                                   atol=atol, rtol=rtol)
        if check_name:
            assert names(h_out) == names(t_out)
        if not t_out.requires_grad:
            continue
        g = np.random.default_rng(0 if grad_seed is None else grad_seed).standard_normal(
            tuple(t_out.shape)).astype(t_out.detach().numpy().dtype)
        t_out.backward(to_lib(torch, g))
        h_out.backward(to_lib(hookgrad, g))
        for tt, ht in zip(t_in, h_in):
            if tt.requires_grad:
                np.testing.assert_allclose(ht.grad.numpy(), tt.grad.numpy(), atol=atol,
                                           rtol=rtol)
        tp, hp = dict(tm.named_parameters()), dict(hm.named_parameters())
        assert list(tp) == list(hp)
        for k in tp:
            if tp[k].grad is None:
                assert hp[k].grad is None, k
            else:
                np.testing.assert_allclose(hp[k].grad.numpy(), tp[k].grad.numpy(), atol=atol,
                                           rtol=rtol, err_msg=k)
    return tm, hm
