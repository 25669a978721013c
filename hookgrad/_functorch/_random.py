"""vmap's rules for random draws (NOTE [vmap randomness]).

NOTE [vmap randomness]
hookgrad's samplers (``rand``, ``bernoulli``, ``uniform_``...) are not primitives: they fill
arrays from a generator. While a vmap level is open each public sampler hands its call to
`run_random`, which walks the open levels from the innermost out, as PyTorch's vmap-mode
random rules do, and applies the level's ``randomness``:

- ``"error"``: PyTorch's RuntimeError (eval-mode dropout draws nothing, so it passes);
- ``"same"``: the call goes on unchanged, so one draw is shared by every sample of the level;
  a tensor argument batched at the level (``bernoulli(p)`` with a per-sample ``p``) raises
  PyTorch's error, since the draw would not be one value for all samples;
- ``"different"``: the call goes on with the level's batch size prepended to the drawn shape
  (factories), with the batched arguments aligned and the unbatched one expanded (``bernoulli``,
  ``normal``, ``multinomial``), or on the physical tensor (in-place fills), and the result is
  wrapped at the level: every sample gets its own draw. ``randperm`` draws one permutation per
  sample, as PyTorch does.

Once every level is handled the sampler runs on plain tensors (``_local.raw`` lets the samplers
it calls run directly). The ``*_like`` samplers have PyTorch's rule of their own: they draw
like the physical value, so their values follow its memory order (`_like`); composites built on the samplers
(dropout, alpha_dropout, gumbel_softmax, ``nn.init``) follow from the same rules. One departure:
``rrelu`` in training mode works under vmap (its slopes follow ``rand``'s rule) where PyTorch
has no batching rule and raises.
"""

from __future__ import annotations

import threading
from typing import Any

from hookgrad._functorch._batched import current_levels, unwrap, wrap
from hookgrad._tensor import Tensor

__all__ = ["run_random", "in_raw_draw", "RANDOM_ERROR"]

RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either "
                "use the 'same' or 'different' randomness flags on vmap or perform the "
                "randomness operation out of vmap")
_SAME = ("Vmap does not currently support same randomness with a batched tensor input. Please "
         "file an issue with functorch")
_UNBATCHED_INPLACE = ("vmap: Cannot ask for different inplace randomness on an unbatched "
                      "tensor. This will appear like same randomness. If this is necessary for "
                      "your usage, please file an issue with functorch.")
_INPLACE_OTHER = ("vmap: inplace {name}(self, *extra_args) is not possible because there exists "
                  "a Tensor `other` in extra_args that has more elements than `self`. This "
                  "happened due to `other` being vmapped over but `self` not being vmapped over "
                  "in a vmap. Please try to use out-of-place operators instead of inplace {name}. "
                  "If said operator is being called inside the PyTorch framework, please file a "
                  "bug report instead.")

_local = threading.local()


def in_raw_draw() -> bool:
    """Whether the sampler now running has had every vmap level applied already."""
    return getattr(_local, "raw", 0) > 0


def run_random(kind: str, fn: Any, args: tuple, kwargs: dict) -> Any:
    """Run the public sampler `fn` under the open vmap levels' randomness modes."""
    levels = current_levels()
    if not levels or in_raw_draw():
        return fn(*args, **kwargs)
    return _at(len(levels) - 1, kind, fn, args, kwargs)


def _at(idx: int, kind: str, fn: Any, args: tuple, kwargs: dict) -> Any:
    """Apply level `idx` (0 = outermost) of the open vmap levels, then the ones outside it."""
    if idx < 0:
        _local.raw = getattr(_local, "raw", 0) + 1
        try:
            return fn(*args, **kwargs)
        finally:
            _local.raw -= 1
    level, size, mode = current_levels()[idx]
    if kind == "normal":  # normal(float, float, size) draws like a factory
        kind = "tensor" if any(isinstance(a, Tensor) for a in _tensor_args(args, kwargs)) \
            else "normal_size"
    return _RULES[kind](idx, kind, level, size, mode, fn, args, kwargs)


def _tensor_args(args: tuple, kwargs: dict) -> list:
    return [a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]


def _check(mode: str, any_batched: bool) -> None:
    if mode == "error":
        raise RuntimeError(RANDOM_ERROR)
    if mode == "same" and any_batched:
        raise RuntimeError(_SAME)


# ------------------------------------------------------------------------------- factories
def _shape_of(args: tuple) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _prefix_size(kind: str, b: int, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The factory call drawing `b` samples of what (`args`, `kwargs`) draws."""
    kwargs = dict(kwargs)
    if kind == "size":  # rand(*size) / rand(size) / rand(size=...)
        if "size" in kwargs and not args:
            kwargs["size"] = (b,) + _shape_of((kwargs["size"],))
            return args, kwargs
        return (b,) + _shape_of(args), kwargs
    if kind == "randint":  # randint([low,] high, size)
        if "size" in kwargs:
            kwargs["size"] = (b,) + tuple(kwargs["size"])
            return args, kwargs
        return args[:-1] + ((b,) + tuple(args[-1]),), kwargs
    if "size" in kwargs:  # normal(mean, std, size)
        kwargs["size"] = (b,) + tuple(kwargs["size"])
        return args, kwargs
    return args[:2] + ((b,) + tuple(args[2]),) + args[3:], kwargs


def _factory(idx: int, kind: str, level: int, size: int, mode: str, fn: Any, args: tuple,
             kwargs: dict) -> Any:
    _check(mode, False)
    if mode == "same":
        return _at(idx - 1, kind, fn, args, kwargs)
    args, kwargs = _prefix_size(kind, size, args, kwargs)
    return wrap(_at(idx - 1, kind, fn, args, kwargs), level)


def _randperm(idx: int, kind: str, level: int, size: int, mode: str, fn: Any, args: tuple,
              kwargs: dict) -> Any:
    _check(mode, False)
    if mode == "same":
        return _at(idx - 1, kind, fn, args, kwargs)
    from hookgrad._functional.shape import stack

    return wrap(stack([_at(idx - 1, kind, fn, args, kwargs) for _ in range(size)]), level)


def _like(idx: int, kind: str, level: int, size: int, mode: str, fn: Any, args: tuple,
          kwargs: dict) -> Any:
    """``rand_like``/``randn_like``/``randint_like``: PyTorch's rule draws like the *physical*
    value (batch moved to the front), so the values fill its memory order: sample 0's layout
    under ``"same"``, the whole batch's (an unbatched input expanded) under ``"different"``."""
    _check(mode, False)
    kwargs = dict(kwargs)
    x = args[0] if args else kwargs.pop("input")
    rest = args[1:]
    p, batched = unwrap(x, level)
    if mode == "same":
        return _at(idx - 1, kind, fn, (p.select(0, 0) if batched else x,) + rest, kwargs)
    if not batched:
        p = x.unsqueeze(0).expand((size,) + tuple(x.shape))
    return wrap(_at(idx - 1, kind, fn, (p,) + rest, kwargs), level)


# ------------------------------------------------------------------------ tensor arguments
def _physical(args: tuple, kwargs: dict, level: int, size: int) -> tuple[tuple, dict, bool]:
    """Batched tensors unwrapped (padded to the largest logical rank), the first tensor
    expanded over the batch when none is batched."""
    ts = _tensor_args(args, kwargs)
    rank = max(t.dim() for t in ts)
    any_b = any(unwrap(t, level)[1] for t in ts)

    def phys(a: Any, first: list) -> Any:
        if not isinstance(a, Tensor):
            return a
        p, b = unwrap(a, level)
        if b:
            return p.reshape((size,) + (1,) * (rank - a.dim()) + tuple(a.shape))
        if not any_b and not first:
            first.append(a)
            return a.unsqueeze(0).expand((size,) + tuple(a.shape))
        return a

    first: list = []
    new_args = tuple(phys(a, first) for a in args)
    new_kwargs = {k: phys(v, first) for k, v in kwargs.items()}
    return new_args, new_kwargs, any_b


def _tensor(idx: int, kind: str, level: int, size: int, mode: str, fn: Any, args: tuple,
            kwargs: dict) -> Any:
    any_b = any(unwrap(t, level)[1] for t in _tensor_args(args, kwargs))
    _check(mode, any_b)
    if mode == "same":
        return _at(idx - 1, kind, fn, args, kwargs)
    args, kwargs, _ = _physical(args, kwargs, level, size)
    return wrap(_at(idx - 1, kind, fn, args, kwargs), level)


def _multinomial(idx: int, kind: str, level: int, size: int, mode: str, fn: Any, args: tuple,
                 kwargs: dict) -> Any:
    probs = args[0] if args else kwargs["input"]
    p, batched = unwrap(probs, level)
    _check(mode, batched)
    if mode == "same":
        return _at(idx - 1, kind, fn, args, kwargs)
    if not batched:
        p = probs.unsqueeze(0).expand((size,) + tuple(probs.shape))
    rest = args[1:] if args else ()
    kwargs = {k: v for k, v in kwargs.items() if k != "input"}
    if probs.dim() == 2:  # (B, M, S) rows drawn as B*M rows, then split again
        out = _at(idx - 1, kind, fn, (p.reshape(-1, probs.shape[-1]),) + rest, kwargs)
        return wrap(out.reshape(size, probs.shape[0], -1), level)
    return wrap(_at(idx - 1, kind, fn, (p,) + rest, kwargs), level)


def _inplace(idx: int, kind: str, level: int, size: int, mode: str, fn: Any, args: tuple,
             kwargs: dict) -> Any:
    self, rest = args[0], args[1:]
    phys_self, self_b = unwrap(self, level)
    others = _tensor_args(rest, kwargs)
    other_b = any(unwrap(t, level)[1] for t in others)
    _check(mode, other_b)
    if other_b and not self_b:
        raise RuntimeError(_INPLACE_OTHER.format(name=fn.__name__.rstrip("_")))
    if mode == "different" and not self_b:
        raise RuntimeError(_UNBATCHED_INPLACE)
    if mode == "same" and self_b:  # one draw of the logical shape, written to every sample
        from hookgrad._functional.creation import empty

        tmp = empty(tuple(self.shape), dtype=self.dtype)
        _at(idx - 1, kind, fn, (tmp,) + rest, kwargs)
        self.copy_(tmp)  # type: ignore[attr-defined]
        return self
    if self_b:
        rank = self.dim()

        def pad(a: Any) -> Any:
            p, b = unwrap(a, level) if isinstance(a, Tensor) else (a, False)
            if not b:
                return a
            return p.reshape((size,) + (1,) * (rank - a.dim()) + tuple(a.shape))

        rest = tuple(pad(a) for a in rest)
        kwargs = {k: pad(v) for k, v in kwargs.items()}
    _at(idx - 1, kind, fn, (phys_self,) + rest, kwargs)
    return self


_RULES = {"size": _factory, "randint": _factory, "normal_size": _factory,
          "randperm": _randperm, "like": _like, "tensor": _tensor, "multinomial": _multinomial,
          "inplace": _inplace}
