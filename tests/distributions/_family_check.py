"""The checks every family test runs against torch.distributions: shapes, properties, methods
(values and float64 parameter gradients), ``expand``, sample/rsample shapes and dtypes,
sample statistics, and the exception types of invalid arguments."""

from __future__ import annotations

import numpy as np

import hookgrad

PROPERTIES = ("mean", "mode", "variance", "stddev")
METHODS = ("log_prob", "cdf", "icdf", "entropy")


def t(lib, values, dtype="float64"):
    return lib.tensor(values, dtype=getattr(lib, dtype))


def p(lib, values, dtype="float64"):
    return t(lib, values, dtype).requires_grad_()


def _outcome(fn):
    try:
        return fn()
    except NotImplementedError:
        return "NotImplementedError"


def observe(L, make, value, icdf_at=0.3, dtype="float64", rsample_grad=True):
    """Everything comparable about ``make(L) -> (dist, params)`` at the support point `value`."""
    d, params = make(L)
    v = value(L)
    out = {"batch_shape": tuple(d.batch_shape), "event_shape": tuple(d.event_shape),
           "support": repr(d.support), "has_rsample": d.has_rsample,
           "arg_constraints": sorted(d.arg_constraints)}
    for prop in PROPERTIES:
        out[prop] = _outcome(lambda q=prop: getattr(d, q))
    for meth in METHODS:
        if meth == "entropy":
            out[meth] = _outcome(d.entropy)
        elif meth == "icdf":
            out[meth] = _outcome(lambda: d.icdf(t(L, icdf_at, dtype).expand(d.batch_shape)))
        else:
            out[meth] = _outcome(lambda m=meth: getattr(d, m)(v))
    for key in ("log_prob", "entropy", "mean", "variance", "cdf"):
        val = out[key]
        if isinstance(val, str) or not val.requires_grad:
            continue
        grads = L.autograd.grad(val.sum(), params, allow_unused=True, retain_graph=True)
        out[key + ".grad"] = [g for g in grads if g is not None]
    big = d.expand((4,) + tuple(d.batch_shape))
    one = v.reshape((-1,) + tuple(d.batch_shape) + tuple(d.event_shape))[0]
    out["expand"] = (tuple(big.batch_shape), tuple(big.event_shape), big.log_prob(one))
    draw = d.sample((5,))
    out["sample"] = (tuple(draw.shape), str(draw.dtype).split(".")[-1])
    if d.has_rsample:
        r = d.rsample((3,))
        out["rsample"] = (tuple(r.shape), str(r.dtype).split(".")[-1], r.requires_grad)
        if rsample_grad:
            rg = L.autograd.grad(r.sum(), params, allow_unused=True)
            out["rsample.grad"] = [g is not None for g in rg]
    return out


def same(a, b, key, rtol=1e-9, atol=1e-11):
    if isinstance(b, str):
        assert a == b, (key, a, b)
    elif hasattr(b, "detach"):
        np.testing.assert_allclose(np.asarray(a.detach().tolist(), dtype=float),
                                   np.asarray(b.detach().tolist(), dtype=float),
                                   rtol=rtol, atol=atol, err_msg=key)
    elif isinstance(b, (list, tuple)) and b and any(hasattr(x, "detach") for x in b):
        assert len(a) == len(b), key
        for x, y in zip(a, b):
            same(x, y, key, rtol, atol)
    else:
        assert a == b, (key, a, b)


def check_family(torch, make, value, icdf_at=0.3, rtol=1e-9, atol=1e-11, dtype="float64",
                 rsample_grad=True):
    theirs = observe(torch, make, value, icdf_at, dtype, rsample_grad)
    ours = observe(hookgrad, make, value, icdf_at, dtype, rsample_grad)
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        same(ours[key], theirs[key], key, rtol, atol)


def check_errors(torch, cases):
    """Each case ``L -> None`` raises the same exception type under both libraries."""
    for i, case in enumerate(cases):
        kinds = []
        for L in (torch, hookgrad):
            try:
                case(L)
                kinds.append(None)
            except Exception as e:  # noqa: BLE001 - the type is compared
                # torch.linalg.LinAlgError is named ``_LinAlgError`` in torch._C
                kinds.append(type(e).__name__.lstrip("_"))
        assert kinds[0] == kinds[1], (i, kinds)
        assert kinds[0] is not None, i


def check_sample_stats(make, n=20000, rtol=0.05, atol=0.05):
    hookgrad.manual_seed(0)
    d = make(hookgrad)[0]
    draw = d.sample((n,)).double()
    np.testing.assert_allclose(draw.mean(0).tolist(), d.mean.detach().tolist(), rtol=rtol,
                               atol=atol)
    np.testing.assert_allclose(draw.std(0).tolist(), d.stddev.detach().tolist(), rtol=rtol + 0.01,
                               atol=atol)
