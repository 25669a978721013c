"""Reductions against PyTorch: dtypes, empty inputs, errors, warnings, saved tensors.

Every scenario takes the library (``torch`` or ``hookgrad``) and runs unchanged on both; the
results (values, dtypes, gradients, exception types, pack-hook logs) must be equal.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def _same(a, b):
    """Values, dtype name and shape of two tensors (torch vs hookgrad) agree."""
    assert str(a.dtype).replace("torch.", "") == str(b.dtype).replace("torch.", "")
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(_np(a).astype(float), _np(b).astype(float), rtol=1e-6,
                               atol=1e-6, equal_nan=True)


def _outcome(fn, lib):
    try:
        return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception type is what we compare
        return "raised", type(e)


def _compare(torch, fn):
    kt, vt = _outcome(fn, torch)
    kh, vh = _outcome(fn, hookgrad)
    assert kt == kh, f"torch {kt} {vt!r} vs hookgrad {kh} {vh!r}"
    if kt == "raised":
        assert vt.__name__ == vh.__name__
        return
    outs_t = vt if isinstance(vt, tuple) else (vt,)
    outs_h = vh if isinstance(vh, tuple) else (vh,)
    for a, b in zip(outs_t, outs_h):
        _same(a, b)


# ----------------------------------------------------------------- dtypes
_DTYPE_CASES = {
    "sum_int": lambda lib: lib.arange(12).reshape(3, 4).sum(),
    "sum_bool": lambda lib: (lib.arange(6) > 2).sum(0),
    "sum_uint8": lambda lib: lib.tensor([1, 2, 250], dtype=lib.uint8).sum(),
    "sum_dtype": lambda lib: lib.arange(6).sum(dtype=lib.float32),
    "sum_dim_list_empty": lambda lib: lib.ones(2, 3).sum(dim=[]),
    "sum_dim_none_keepdim": lambda lib: lib.ones(2, 3).sum(None, True),
    "mean_dtype_int": lambda lib: lib.arange(6).mean(dtype=lib.float64),
    "mean_int": lambda lib: lib.arange(6).mean(),
    "mean_bool": lambda lib: lib.ones(3, dtype=lib.bool).mean(),
    "prod_int": lambda lib: lib.arange(1, 6).prod(),
    "prod_bool": lambda lib: lib.ones(3, dtype=lib.bool).prod(),
    "prod_dim_dtype": lambda lib: lib.arange(1, 7).reshape(2, 3).prod(1, dtype=lib.float32),
    "prod_tuple_dim": lambda lib: lib.ones(2, 3).prod((0, 1)),
    "var_int": lambda lib: lib.arange(6).var(),
    "amax_int": lambda lib: lib.arange(6).reshape(2, 3).amax(1),
    "max_bool": lambda lib: (lib.arange(4) > 1).max(),
    "max_int_dim": lambda lib: tuple(lib.arange(6).reshape(2, 3).max(1)),
    "argmax_keepdim_full": lambda lib: lib.arange(6.0).reshape(2, 3).argmax(keepdim=True),
    "all_uint8": lambda lib: lib.tensor([1, 0, 2], dtype=lib.uint8).all(),
    "any_uint8_dim": lambda lib: lib.tensor([[1, 0], [0, 0]], dtype=lib.uint8).any(1),
    "all_float_dims": lambda lib: lib.ones(2, 3, 4).all(dim=(0, 2)),
    "any_empty_dims": lambda lib: lib.tensor([[0.0, 1.0]]).any(dim=()),
    "logsumexp_int": lambda lib: lib.arange(6).reshape(2, 3).logsumexp(1),
    "cumsum_bool": lambda lib: lib.tensor([True, False, True]).cumsum(0),
    "cumsum_int_dtype": lambda lib: lib.arange(4).cumsum(0, dtype=lib.float64),
    "cumprod_int": lambda lib: lib.arange(1, 5).cumprod(0),
    "sort_int_desc": lambda lib: tuple(lib.tensor([3, 1, 2]).sort(descending=True)),
    "topk_int": lambda lib: tuple(lib.tensor([3, 1, 2, 5]).topk(2)),
    "nansum_int": lambda lib: lib.nansum(lib.arange(5)),
    "nanmean_int": lambda lib: lib.nanmean(lib.arange(5)),
    "nanmean_all_nan_row": lambda lib: lib.nanmean(lib.tensor([[float("nan")], [1.0]]), 1),
    "count_nonzero_dims": lambda lib: lib.count_nonzero(lib.eye(3), (0, 1)),
    "count_nonzero_bool": lambda lib: (lib.arange(4) > 1).count_nonzero(),
    "var_mean_tuple": lambda lib: lib.var_mean(lib.arange(6.0).reshape(2, 3), 1, keepdim=True),
    "std_mean_unbiased": lambda lib: lib.std_mean(lib.arange(6.0), False),
}


@pytest.mark.parametrize("name", sorted(_DTYPE_CASES))
def test_dtype_rules_match_torch(torch, name):
    _compare(torch, _DTYPE_CASES[name])


_ALIAS_CASES = {
    "sum_axis_keepdims": lambda lib: lib.ones(2, 3).sum(axis=1, keepdims=True),
    "mean_axis": lambda lib: lib.arange(6.0).reshape(2, 3).mean(axis=0),
    "amax_axis": lambda lib: lib.arange(6.0).reshape(2, 3).amax(axis=(0, 1)),
    "max_axis": lambda lib: tuple(lib.arange(6.0).reshape(2, 3).max(axis=1)),
    "argmax_axis": lambda lib: lib.arange(6.0).reshape(2, 3).argmax(axis=0, keepdims=True),
    "softmax_axis": lambda lib: lib.softmax(lib.arange(6.0).reshape(2, 3), axis=1),
    "cumsum_axis": lambda lib: lib.arange(6.0).reshape(2, 3).cumsum(axis=1),
    "sort_axis": lambda lib: tuple(lib.arange(6.0).reshape(2, 3).sort(axis=0)),
    "both_dim_and_axis": lambda lib: lib.ones(2, 3).sum(1, axis=1),
}


@pytest.mark.parametrize("name", sorted(_ALIAS_CASES))
def test_numpy_argument_aliases_match_torch(torch, name):
    _compare(torch, _ALIAS_CASES[name])


# ----------------------------------------------------------------- empty inputs and 0-d
_EMPTY_CASES = {
    "sum": lambda lib: lib.zeros(0, 3).sum(),
    "sum_dim": lambda lib: lib.zeros(0, 3).sum(0),
    "mean": lambda lib: lib.zeros(0, 3).mean(),
    "mean_dim": lambda lib: lib.zeros(0, 3).mean(0),
    "prod": lambda lib: lib.zeros(0, 3).prod(),
    "logsumexp_empty_dim": lambda lib: lib.zeros(0, 3).logsumexp(0),
    "logsumexp_other_dim": lambda lib: lib.zeros(0, 3).logsumexp(1),
    "amax_full": lambda lib: lib.zeros(0, 3).amax(),
    "amax_empty_dim": lambda lib: lib.zeros(0, 3).amax(0),
    "amax_other_dim": lambda lib: lib.zeros(0, 3).amax(1),
    "max_full": lambda lib: lib.zeros(0, 3).max(),
    "max_empty_dim": lambda lib: lib.zeros(0, 3).max(0),
    "max_other_dim": lambda lib: tuple(lib.zeros(0, 3).max(1)),
    "argmax_full": lambda lib: lib.zeros(0, 3).argmax(),
    "argmin_empty_dim": lambda lib: lib.zeros(0, 3).argmin(0),
    "norm_empty": lambda lib: lib.zeros(0, 3).norm(),
    "norm_inf_empty": lambda lib: lib.zeros(0, 3).norm(float("inf")),
    "norm_neg_empty": lambda lib: lib.zeros(0).norm(-1),
    "cumsum_empty": lambda lib: lib.zeros(0, 3).cumsum(0),
    "sort_empty": lambda lib: tuple(lib.zeros(0, 3).sort(0)),
    "zero_d_sum_dim0": lambda lib: lib.tensor(3.0).sum(0),
    "zero_d_amax": lambda lib: lib.tensor(3.0).amax(0, True),
    "zero_d_max_dim": lambda lib: tuple(lib.tensor(3.0).max(0)),
    "zero_d_argmax": lambda lib: lib.tensor(3.0).argmax(0),
    "zero_d_sort": lambda lib: tuple(lib.tensor(3.0).sort()),
    "zero_d_topk": lambda lib: tuple(lib.tensor(3.0).topk(1)),
    "zero_d_cumprod": lambda lib: lib.tensor(3.0).cumprod(-1),
    "zero_d_logsumexp": lambda lib: lib.tensor(3.0).logsumexp(0),
}


@pytest.mark.parametrize("name", sorted(_EMPTY_CASES))
def test_empty_and_zero_d_match_torch(torch, name):
    _compare(torch, _EMPTY_CASES[name])


# ----------------------------------------------------------------- errors
_ERROR_CASES = {
    "dim_out_of_range": lambda lib: lib.ones(2, 3).sum(2),
    "zero_d_dim_1": lambda lib: lib.tensor(1.0).sum(1),
    "duplicate_dims": lambda lib: lib.ones(2, 3).sum((0, 0)),
    "duplicate_neg_dims": lambda lib: lib.ones(2, 3).amax((1, -1)),
    "var_duplicate": lambda lib: lib.ones(2, 3).var((0, -2)),
    "topk_k_too_big": lambda lib: lib.ones(3).topk(4),
    "topk_k_negative": lambda lib: lib.ones(3).topk(-1),
    "cumsum_bad_dim": lambda lib: lib.ones(3).cumsum(1),
    "sort_bad_dim": lambda lib: lib.ones(3).sort(2),
    "max_dim_bad": lambda lib: lib.ones(3).max(-2),
    "norm_int": lambda lib: lib.arange(3).norm(),
    "argmax_bool": lambda lib: lib.ones(3, dtype=lib.bool).argmax(),
    "std_int": lambda lib: lib.arange(3).std(0),
}


@pytest.mark.parametrize("name", sorted(_ERROR_CASES))
def test_errors_match_torch(torch, name):
    _compare(torch, _ERROR_CASES[name])


def test_error_messages_match_torch(torch):
    cases = [
        lambda lib: lib.zeros(0, 2).max(),
        lambda lib: lib.zeros(0, 2).amax(0),
        lambda lib: lib.arange(3).mean(),
        lambda lib: lib.ones(2, 2).sum((1, 1)),
        lambda lib: lib.zeros(0).norm(float("inf")),
        lambda lib: lib.ones(2).topk(3),
    ]
    for fn in cases:
        with pytest.raises(Exception) as et:
            fn(torch)
        with pytest.raises(Exception) as eh:
            fn(hookgrad)
        assert str(eh.value) == str(et.value)


# ----------------------------------------------------------------- warnings
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_dof_warning_matches_torch(torch, op):
    def run(lib):
        x = lib.tensor([1.5], requires_grad=True)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            y = getattr(x, op)()
        y.backward()
        return [str(w.message).split(" (Triggered")[0] for w in rec], _np(y), _np(x.grad)

    (wt, yt, gt), (wh, yh, gh) = run(torch), run(hookgrad)
    assert wt == wh
    np.testing.assert_equal(yt, yh)
    np.testing.assert_equal(gt, gh)


def test_mean_of_empty_is_silent_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(hookgrad.zeros(0).mean().item())


# ----------------------------------------------------------------- legacy var/std signatures
_VAR_FORMS = {
    "unbiased_positional": lambda lib, x: x.var(False),
    "dim_unbiased_keepdim": lambda lib, x: x.var(1, False, True),
    "correction_kw": lambda lib, x: lib.std(x, dim=0, correction=0, keepdim=True),
    "unbiased_kw": lambda lib, x: lib.var(x, unbiased=False),
    "dim_none_correction": lambda lib, x: x.std(None, correction=2),
}


@pytest.mark.parametrize("name", sorted(_VAR_FORMS))
def test_var_std_argument_forms(torch, name):
    arr = np.random.default_rng(0).normal(size=(3, 4))

    def run(lib):
        x = lib.tensor(arr, requires_grad=True)
        y = _VAR_FORMS[name](lib, x)
        y.sum().backward()
        return y, x.grad, y.grad_fn._saved_correction

    (yt, gt, ct), (yh, gh, ch) = run(torch), run(hookgrad)
    _same(yt, yh)
    _same(gt, gh)
    assert ct == ch


# ----------------------------------------------------------------- saved tensors and hooks
def _pack_log(lib, fn, shapes):
    """Run `fn` under pack hooks; log which tensor (input i, or shape/dtype) was packed."""
    rng = np.random.default_rng(1)
    xs = [lib.tensor(rng.uniform(0.5, 1.5, size=s), requires_grad=True) for s in shapes]
    log = []

    def pack(t):
        for i, x in enumerate(xs):
            if t is x:
                log.append(f"in{i}")
                return t
        log.append((tuple(t.shape), str(t.dtype).replace("torch.", "")))
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(lib, *xs)
    out = out[0] if isinstance(out, tuple) else out
    out.sum().backward()
    return log, [_np(x.grad) for x in xs]


_PACK_CASES = {
    "sum": (lambda lib, x: x.sum(1), [(3, 4)]),
    "mean": (lambda lib, x: x.mean(), [(3, 4)]),
    "prod": (lambda lib, x: x.prod(), [(3, 4)]),
    "prod_dim": (lambda lib, x: x.prod(1), [(3, 4)]),
    "var": (lambda lib, x: x.var(0), [(3, 4)]),
    "std": (lambda lib, x: x.std(), [(3, 4)]),
    "amax": (lambda lib, x: x.amax(1), [(3, 4)]),
    "max": (lambda lib, x: x.max(), [(3, 4)]),
    "max_dim": (lambda lib, x: x.max(1), [(3, 4)]),
    "min_dim_keepdim": (lambda lib, x: x.min(0, keepdim=True), [(3, 4)]),
    "sort": (lambda lib, x: x.sort(1), [(3, 4)]),
    "topk": (lambda lib, x: x.topk(2), [(3, 4)]),
    "logsumexp": (lambda lib, x: x.logsumexp(1), [(3, 4)]),
    "cumsum": (lambda lib, x: x.cumsum(1), [(3, 4)]),
    "cumprod": (lambda lib, x: x.cumprod(1), [(3, 4)]),
    "norm": (lambda lib, x: x.norm(dim=1), [(3, 4)]),
    "var_mean": (lambda lib, x: lib.var_mean(x, 1)[0] + lib.var_mean(x, 1)[1], [(3, 4)]),
    "std_mean": (lambda lib, x: sum(lib.std_mean(x, 0, correction=0)), [(3, 4)]),
    "nansum": (lambda lib, x: lib.nansum(x, 1), [(3, 4)]),
    "nanmean": (lambda lib, x: lib.nanmean(x, 1), [(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(_PACK_CASES))
def test_saved_tensors_and_pack_order_match_torch(torch, name):
    fn, shapes = _PACK_CASES[name]
    log_t, grads_t = _pack_log(torch, fn, shapes)
    log_h, grads_h = _pack_log(hookgrad, fn, shapes)
    assert log_h == log_t
    for a, b in zip(grads_t, grads_h):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op", ["max", "min", "sort", "topk"])
def test_saved_indices_are_the_returned_indices(op):
    x = hookgrad.tensor([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]], requires_grad=True)
    packed = []
    with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t,
                                                     lambda t: t):
        res = getattr(x, op)(1) if op != "sort" else x.sort(1)
    assert len(packed) == 1 and packed[0] is res.indices
    assert res.values.grad_fn._saved_indices.tolist() == res.indices.tolist()


def test_saved_attributes_match_torch(torch):
    def run(lib):
        x = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        return [
            tuple(x.sum((0, 1)).grad_fn._saved_dim),
            x.max(1).values.grad_fn._saved_dim,
            x.max(1, keepdim=True).values.grad_fn._saved_keepdim,
            tuple(x.max(1).values.grad_fn._saved_self_sym_sizes),
            x.prod(1).grad_fn._saved_dim,
            x.var().grad_fn._saved_correction,
            x.std(unbiased=False).grad_fn._saved_correction,
            x.softmax(1).grad_fn._saved_dim,
            x.cumsum(0).grad_fn._saved_dim,
            x.sort(0).values.grad_fn._saved_dim,
        ]

    assert run(hookgrad) == run(torch)


def test_backward_twice_needs_saved_values(torch):
    """sum/mean save nothing (a second backward works); prod and amax save and then fail."""

    def run(lib, op):
        x = lib.ones(3, requires_grad=True)
        y = getattr(x, op)()
        y.backward()
        try:
            y.backward()
        except RuntimeError:
            return "freed"
        return "ok"

    for op in ("sum", "mean", "prod", "amax", "max", "std"):
        assert run(hookgrad, op) == run(torch, op), op


def _modified_saved_value(lib, which):
    x = lib.tensor([[1.0, 3.0, 2.0], [0.0, 5.0, 4.0]], requires_grad=True)
    if which == "softmax_result":
        out = x.softmax(1)
        out.mul_(2)
    elif which == "max_indices":
        r = x.max(1)
        r.indices.add_(1)
        out = r.values
    elif which == "sort_indices":
        r = x.sort(1)
        r.indices.zero_()
        out = r.values
    elif which == "mm_input":
        w = lib.ones(3, 2, requires_grad=True)
        out = x.mm(w)
        with lib.no_grad():
            w.mul_(2)
    else:
        y = x * 1
        out = y.prod(1)
        y.add_(1)
    with pytest.raises(RuntimeError) as err:
        out.sum().backward()
    return str(err.value)


@pytest.mark.parametrize("which", ["softmax_result", "max_indices", "sort_indices", "mm_input",
                                   "prod_input"])
def test_inplace_change_of_saved_value_raises_like_torch(torch, which):
    assert _modified_saved_value(hookgrad, which) == _modified_saved_value(torch, which)
