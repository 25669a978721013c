"""Forward-mode AD for every op of the OpSpec table (architecture.md §7.1).

Two checks per sample: tangents equal PyTorch's forward AD (oracle), and the adjoint identity
<u, J v> (forward) == <Jᵀ u, v> (reverse) holds in hookgrad with no finite differences, so a
wrong JVP or VJP rule shows up at a tight tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad.autograd import forward_ad as fwad
from hookgrad.testing._opspec import all_specs, make_arrays, to_lib

CASES = [
    pytest.param(spec, sample, id=f"{spec.name}-{sample.name or i}")
    for spec in all_specs()
    if spec.forward_ad
    for i, sample in enumerate(spec.samples)
]


def _float_outputs(out):
    outs = out if isinstance(out, tuple) else (out,)
    return [o for o in outs if o.is_floating_point()]


def _tangents(sample, arrays, seed=1):
    rng = np.random.default_rng(seed)
    tans = []
    for a, v in zip(sample.args, arrays):
        if a.shape is not None and a.requires_grad and a.dtype.startswith("float"):
            tans.append(rng.uniform(-1, 1, size=np.shape(v)).astype(np.asarray(v).dtype))
        else:
            tans.append(None)
    return tans


def _run_forward(lib, fw, spec, sample, arrays, tans):
    args = to_lib(lib, sample, arrays, requires_grad=False)
    with fw.dual_level():
        duals = [
            fw.make_dual(x, lib.tensor(t)) if t is not None else x for x, t in zip(args, tans)
        ]
        out = spec.fn(lib, *duals, **sample.kwargs)
        return [
            (None if fw.unpack_dual(o).tangent is None else fw.unpack_dual(o).tangent.tolist())
            for o in _float_outputs(out)
        ]


@pytest.mark.oracle
@pytest.mark.parametrize("spec,sample", CASES)
def test_jvp_vs_torch(torch, spec, sample):
    import torch.autograd.forward_ad as tfw

    arrays = make_arrays(sample)
    tans = _tangents(sample, arrays)
    expected = _run_forward(torch, tfw, spec, sample, arrays, tans)
    got = _run_forward(hookgrad, fwad, spec, sample, arrays, tans)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if e is None:
            assert g is None or not np.any(np.asarray(g))
            continue
        np.testing.assert_allclose(np.asarray(g, dtype=float), np.asarray(e, dtype=float),
                                   rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("spec,sample", CASES)
def test_vjp_jvp_adjoint(spec, sample):
    arrays = [
        np.asarray(v, dtype=np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
        else v for v in make_arrays(sample)
    ]
    tans = _tangents(sample, arrays)
    args = to_lib(hookgrad, sample, arrays, requires_grad=True)
    outs = _float_outputs(spec.fn(hookgrad, *args, **sample.kwargs))
    diff = [x for x, t in zip(args, tans) if t is not None]
    outs = [o for o in outs if o.requires_grad]
    if not outs or not diff:
        pytest.skip("no differentiable float output/input in this sample")
    rng = np.random.default_rng(2)
    us = [rng.uniform(-1, 1, size=tuple(o.shape)) for o in outs]
    grads = hookgrad.autograd.grad(outs, diff, [hookgrad.tensor(u) for u in us],
                                   allow_unused=True)
    reverse = sum(
        float(np.sum(g.detach().numpy() * t)) for g, t in zip(grads, [t for t in tans if t is not None])
        if g is not None
    )
    plain = to_lib(hookgrad, sample, arrays, requires_grad=False)
    with fwad.dual_level():
        duals = [
            fwad.make_dual(x, hookgrad.tensor(t)) if t is not None else x
            for x, t in zip(plain, tans)
        ]
        fouts = [o for o in _float_outputs(spec.fn(hookgrad, *duals, **sample.kwargs))]
        forward = 0.0
        for o, u in zip(fouts[: len(us)], us):
            t = fwad.unpack_dual(o).tangent
            if t is not None:
                forward += float(np.sum(t.numpy() * u))
    assert forward == pytest.approx(reverse, rel=1e-7, abs=1e-9)
