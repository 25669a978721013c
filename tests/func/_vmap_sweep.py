"""One case of the vmap sweep (docs/func.md, "The vmap sweep"): an op of the OpSpec table run
under ``vmap`` with random batch sizes, ``in_dims``/``out_dims``, a nested level, a ``grad``
or a ``jvp`` inside, against PyTorch's per-sample loop and ``torch.func.vmap``.

A case is a pure function of its number `k`, so a failure is replayed by its number.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import hookgrad
from hookgrad.testing._opspec import all_specs, make_arrays

PAIRS = [(spec, sample) for spec in all_specs() for sample in spec.samples]
ORDER = np.random.default_rng(12345).permutation(len(PAIRS))  # CI's prefix spreads over ops


class Skip(Exception):
    """The case cannot be built or PyTorch rejects the samples themselves."""


def _tensor_positions(sample: Any) -> list[int]:
    return [i for i, a in enumerate(sample.args) if a.shape is not None]


def build(k: int) -> dict:
    """The case: op, per-sample arrays, which args are batched at which dim, the mode."""
    spec, sample = PAIRS[ORDER[k % len(PAIRS)]]
    rng = np.random.default_rng(k)
    pos = _tensor_positions(sample)
    if not pos:
        raise Skip("no tensor argument")
    floats = [i for i in pos if sample.args[i].dtype.startswith("float")
              and sample.args[i].requires_grad]
    mode = rng.choice(["flat", "flat", "nested", "grad", "jvp"])
    if mode == "grad" and not (spec.gradcheck and floats and not spec.name.endswith("_")):
        mode = "flat"
    if mode == "jvp" and not (spec.forward_ad and floats and not spec.name.endswith("_")):
        mode = "flat"
    if mode == "jvp" and spec.name == "as_strided":
        # its tangent maps by logical position: memory outside the input's own elements (under
        # vmap, another sample's) has none (docs/func.md, departures)
        mode = "flat"
    sizes = (int(rng.integers(1, 4)),) if mode != "nested" else (int(rng.integers(1, 3)),
                                                                 int(rng.integers(1, 3)))
    count = int(np.prod(sizes))
    per = [make_arrays(sample, seed=1000 * k + j) for j in range(count)]
    batched = [i for i in pos if rng.random() < 0.7] or [int(rng.choice(pos))]
    if mode in ("grad", "jvp") and floats[0] not in batched:
        batched.append(floats[0])
    for i in batched:
        if any(np.shape(p[i]) != np.shape(per[0][i]) for p in per):
            raise Skip("sample shapes vary with the seed")
    dims = {}
    for i in batched:
        nd = np.ndim(per[0][i])
        if mode == "nested":  # both levels map dimension 0
            dims[i] = 0
            continue
        d = int(rng.integers(0, nd + 1))
        dims[i] = d if rng.random() < 0.5 else d - nd - 1
    out_dim = int(rng.choice([0, -1])) if mode == "flat" else 0
    return {"k": k, "spec": spec, "sample": sample, "mode": str(mode), "sizes": sizes,
            "per": per, "dims": dims, "out_dim": out_dim, "grad_arg": floats[0] if floats
            else None}


def _inputs(lib: Any, case: dict) -> list:
    """The vmap inputs: batched args stacked (mapped dim moved to its in_dim)."""
    per, sizes, out = case["per"], case["sizes"], []
    for i, v in enumerate(per[0]):
        if i not in case["dims"]:
            out.append(lib.tensor(v) if case["sample"].args[i].shape is not None else v)
            continue
        stacked = np.stack([p[i] for p in per]).reshape(sizes + np.shape(v))
        d = case["dims"][i]
        if len(sizes) == 1:
            stacked = np.moveaxis(stacked, 0, d % (np.ndim(v) + 1))
        out.append(lib.tensor(np.ascontiguousarray(stacked)))
    return out


def _body(lib: Any, case: dict) -> Any:
    spec, kwargs = case["spec"], case["sample"].kwargs
    if case["mode"] not in ("grad", "jvp"):
        return lambda *a: spec.fn(lib, *a, **kwargs)
    i = case["grad_arg"]
    if case["mode"] == "jvp":  # the directional derivative along a fixed tangent
        def tangent_out(*a: Any) -> Any:
            def at(x: Any) -> Any:
                return spec.fn(lib, *a[:i], x, *a[i + 1:], **kwargs)

            x = a[i]
            return lib.func.jvp(at, (x,), (lib.ones_like(x) * 0.5 + x * 0.25,))[1]

        return tangent_out

    def scalar(*a: Any) -> Any:
        out = spec.fn(lib, *a, **kwargs)
        first = out[0] if isinstance(out, (tuple, list)) else out
        if not first.dtype.is_floating_point:
            raise Skip("integer output")
        return first.sum()

    return lib.func.grad(scalar, argnums=i)


def run_vmap(lib: Any, case: dict) -> Any:
    """The op under vmap (nested levels for "nested")."""
    f = _body(lib, case)
    n = len(case["per"][0])
    in_dims = tuple(case["dims"].get(i) for i in range(n))
    if case["mode"] == "nested":
        inner = lib.func.vmap(f, in_dims=in_dims)
        return lib.func.vmap(inner, in_dims=in_dims)(*_inputs(lib, case))
    return lib.func.vmap(f, in_dims=in_dims, out_dims=case["out_dim"])(*_inputs(lib, case))


def run_loop(torch: Any, case: dict) -> Any:
    """PyTorch's per-sample loop, stacked like the vmap output."""
    f = _body(torch, case)
    outs = []
    for p in case["per"]:
        args = [torch.tensor(p[i]) if i in case["dims"] else
                (torch.tensor(v) if case["sample"].args[i].shape is not None else v)
                for i, v in enumerate(case["per"][0])]
        outs.append(f(*args))
    return _stack(torch, outs, case["sizes"], case["out_dim"])


def _stack(torch: Any, outs: list, sizes: tuple, out_dim: int) -> Any:
    first = outs[0]
    if isinstance(first, (tuple, list)):
        return [_stack(torch, [o[j] for o in outs], sizes, out_dim) for j in range(len(first))]
    if not isinstance(first, torch.Tensor):
        raise Skip("non-tensor output")
    s = torch.stack(outs).reshape(sizes + tuple(first.shape))
    return s.movedim(0, out_dim) if len(sizes) == 1 else s


def arrays(out: Any) -> list:
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in arrays(o)]
    if not hasattr(out, "detach"):
        raise Skip("non-tensor output")
    return [np.asarray(out.detach().numpy())]


def compare(got: list, want: list, spec: Any) -> str | None:
    if len(got) != len(want):
        return f"{len(got)} outputs, PyTorch {len(want)}"
    for a, b in zip(got, want):
        if a.shape != b.shape:
            return f"shape {a.shape}, PyTorch {b.shape}"
        if a.dtype != b.dtype:
            return f"dtype {a.dtype}, PyTorch {b.dtype}"
        tol = 1e-4 if a.dtype in (np.float32, np.complex64) else max(spec.atol, 1e-6)
        if a.dtype.kind in "fc" and not np.allclose(a, b, atol=tol, rtol=max(spec.rtol, 1e-5),
                                                    equal_nan=True):
            return f"values differ by {np.nanmax(np.abs(a - b))}"
        if a.dtype.kind not in "fc" and not np.array_equal(a, b):
            return "values differ"
    return None


def check(k: int, torch: Any) -> str | None:
    """None when case `k` agrees with PyTorch (or is skipped), else what differs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fallback and deprecation warnings of either library
        try:
            case = build(k)
            loop = arrays(run_loop(torch, case))
        except Exception:  # noqa: BLE001 - a case PyTorch cannot run per sample is no case
            return None
        try:
            want = arrays(run_vmap(torch, case))
            torch_err = None
        except Exception as exc:  # noqa: BLE001
            want, torch_err = None, type(exc)
        try:
            got = arrays(run_vmap(hookgrad, case))
        except Skip:
            return None
        except Exception as exc:  # noqa: BLE001
            if torch_err is not None and type(exc) is torch_err:
                return None  # both refuse, with the same exception type
            return f"{_name(case)}: hookgrad raised {type(exc).__name__}: {exc}; " \
                   f"torch.func.vmap: {torch_err}"
    # torch.func.vmap's result, or PyTorch's own loop: vmap may see storage the loop does not
    # (as_strided), and where torch.func.vmap refuses or disagrees with its own eager results
    # (an implementation limit), hookgrad follows the loop (docs/func.md, departures)
    diff = compare(got, want, case["spec"]) if want is not None else "no torch.func result"
    if diff and compare(got, loop, case["spec"]) is None:
        diff = None
    if diff:
        return f"{_name(case)}: {diff}"
    return None


def _name(case: dict) -> str:
    return (f"case {case['k']}: {case['spec'].name}[{case['sample'].name}] mode={case['mode']} "
            f"sizes={case['sizes']} in_dims={case['dims']} out_dim={case['out_dim']}")
