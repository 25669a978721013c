"""Random numbers: generators, sampling factories and in-place random fills.

Layer 4. NOTE [Random streams]
Every generator reproduces PyTorch's CPU generator bit for bit (`_mt_engine`, NOTE [PyTorch's
random stream]): the same seed gives the same values as PyTorch for ``rand``, ``randn``,
``randint``, ``randperm``, ``uniform_``/``normal_``/``random_``/``bernoulli_``/``exponential_``/
``cauchy_``/``log_normal_``/``geometric_``, ``normal``, ``bernoulli``, ``multinomial`` and so for
everything built on them (``nn.init``, dropout, ``DataLoader`` shuffling), and
``get_state``/``set_state`` use PyTorch's 5056-byte layout; Gamma, Poisson and binomial draws
follow PyTorch's samplers too (`_random_kernels`).
Values are drawn on the host and copied to the tensor's device.

In-place fills (``uniform_``, ``normal_``...) check PyTorch's leaf rules and bump the version
counter, but record no autograd node: PyTorch gives a non-leaf ``UniformBackward0`` (whose
gradient is zero); here the tensor keeps its previous ``grad_fn``.
"""

from __future__ import annotations

import math

import functools
import os
from typing import Any

import ml_dtypes
import numpy as np

from hookgrad._ops.complex_ops import view_as_complex_array
from hookgrad import _backend
from hookgrad._config import GLOBAL, STATE
from hookgrad._dispatch import note_write
from hookgrad._dtypes import dtype as _dtype
from hookgrad._dtypes import int64, to_dtype, uint8

from hookgrad._functional import _random_kernels as K
from hookgrad._functional._mt_engine import STATE_BYTES, MTEngine
from hookgrad._functional.creation import (_finish, _like_device, _shape, _size_arg, _xp,
                                           check_factory_kwargs, meta_factory)
from hookgrad._tensor import Tensor

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
    "set_rng_state", "rand", "randn", "randint", "randperm", "rand_like", "randn_like",
    "randint_like", "normal", "bernoulli", "multinomial",
]

_DEFAULT_SEED = 67280421310721  # PyTorch's seed for a fresh ``torch.Generator()``
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long",
              "int32": "int", "int16": "short", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool"}


def _check_seed(seed: Any, who: str) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"{who} expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError("Overflow when unpacking long long")
    return seed % 2**64  # negative seeds wrap like PyTorch's uint64 cast


class Generator:
    """A random number generator: PyTorch's CPU Mersenne Twister (NOTE [Random streams]).

    Args:
        device: Only ``"cpu"`` generators exist; values for other devices are copied over.

    Example:
        >>> import hookgrad as torch
        >>> g = torch.Generator().manual_seed(0)
        >>> torch.rand(2, generator=g).tolist()
        [0.49625658988952637, 0.7682217955589294]

    Mirrors: ``torch.Generator``.
    """

    def __init__(self, device: Any = "cpu") -> None:
        dev = _backend.device(device)
        if dev.type != "cpu":
            raise RuntimeError(f"hookgrad: no {dev.type} generator (random values are drawn "
                               "on the host)")
        self.device = dev
        self._engine = MTEngine(_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Reseed; negative seeds wrap to ``seed + 2**64``. Mirrors: ``Generator.manual_seed``."""
        self._engine.reseed(_check_seed(seed, "manual_seed"))
        return self

    def seed(self) -> int:
        """Reseed from OS entropy and return the seed. Mirrors: ``Generator.seed``."""
        value = int.from_bytes(os.urandom(8), "little") >> 1
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed last set. Mirrors: ``Generator.initial_seed``."""
        return self._engine.seed

    def get_state(self) -> Tensor:
        """The full state as PyTorch's 5056-byte ``uint8`` tensor. Mirrors: ``Generator.get_state``."""
        raw = self._engine.get_state()
        return Tensor._make(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from `get_state` (either library's). Mirrors: ``Generator.set_state``."""
        if not isinstance(new_state, Tensor) or new_state.dtype is not uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = _backend.to_numpy(new_state._data).tobytes()
        if len(raw) != STATE_BYTES:
            raise RuntimeError(f"Expected either a CPUGeneratorImplStateLegacy of size 5048 or "
                               f"a CPUGeneratorImplState of size {STATE_BYTES} but found the "
                               f"input RNG state size to be {len(raw)}")
        self._engine.set_state(raw)
        return self

    def clone_state(self) -> Generator:
        """A new generator in this one's state. Mirrors: ``Generator.clone_state``."""
        return Generator(self.device).set_state(self.get_state())

    def get_offset(self) -> int:
        """Mirrors: ``Generator.get_offset`` (CPU generators have no Philox offset)."""
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset: int) -> Generator:
        """Mirrors: ``Generator.set_offset`` (CPU generators have no Philox offset)."""
        raise RuntimeError("CPU Generator does not use offset")

    def graphsafe_get_state(self) -> Generator:
        """Mirrors: ``Generator.graphsafe_get_state`` (CUDA graphs only)."""
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state: Generator) -> Generator:
        """Mirrors: ``Generator.graphsafe_set_state`` (CUDA graphs only)."""
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def __reduce__(self) -> tuple:
        # PyTorch's pickle: (class, (device,), (initial seed, offset, state bytes))
        return (Generator, (self.device,), (self.initial_seed(), None, self.get_state()))

    def __setstate__(self, state: tuple) -> None:
        seed, _offset, bytes_state = state
        self.manual_seed(seed)
        self.set_state(bytes_state)

    def __repr__(self) -> str:
        return f"<hookgrad.Generator object at {hex(id(self))}>"


default_generator = Generator()
default_generator.seed()  # PyTorch seeds its default generator non-deterministically


def manual_seed(seed: int) -> Generator:
    """Seed the default generator and return it.

    Example:
        >>> import hookgrad as torch
        >>> _ = torch.manual_seed(0); a = torch.rand(3)
        >>> _ = torch.manual_seed(0); bool((a == torch.rand(3)).all())
        True

    Mirrors: ``torch.manual_seed`` (accepts what ``int()`` accepts).
    """
    try:
        seed = int(seed)
    except (TypeError, ValueError) as exc:
        raise type(exc)(*exc.args) from None
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator non-deterministically. Mirrors: ``torch.seed``."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed. Mirrors: ``torch.initial_seed``."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (PyTorch's 5056 bytes). Mirrors: ``torch.get_rng_state``."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state. Mirrors: ``torch.set_rng_state``."""
    default_generator.set_state(new_state)


# Set by vmap while a level is open: raises PyTorch's error in randomness="error" mode.
VMAP_RANDOM_CHECK: list = [None]
# Set by vmap while a level is open: ``rule(kind, fn, args, kwargs)`` runs one public draw under
# the levels' randomness modes (hookgrad/_functorch/_random.py; draws are not primitives).
VMAP_RANDOM: list = [None]


def _vmap_aware(kind: str) -> Any:
    """Route a public sampler through vmap's randomness rule while a vmap level is open."""
    def deco(fn: Any) -> Any:
        @functools.wraps(fn)
        def sampler(*args: Any, **kwargs: Any) -> Any:
            if kind == "inplace" and args[0].is_meta:  # no data; PyTorch's draw nothing too
                return args[0]
            rule = VMAP_RANDOM[0]
            if rule is None:
                return fn(*args, **kwargs)
            return rule(kind, fn, args, kwargs)
        return sampler
    return deco


def _generator(generator: Generator | None) -> Generator:
    """The generator a draw uses (the default one for None), after vmap's randomness check."""
    if VMAP_RANDOM_CHECK[0] is not None:
        VMAP_RANDOM_CHECK[0]()
    return default_generator if generator is None else generator


def _gen(generator: Generator | None) -> MTEngine:
    """The engine PyTorch's kernels draw from (`_random_kernels`)."""
    return _generator(generator)._engine


def _not_implemented(kernel: str, d: _dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{d.scalar_type}\'')


def _g(x: float) -> str:
    """A double as C++'s ``ostream`` prints it in PyTorch's messages (``%g``)."""
    return f"{x:g}"


# ---------------------------------------------------------------- raw samplers (NumPy arrays)
def _uniform(eng: MTEngine, shape: tuple, d: _dtype, low: float, high: float) -> np.ndarray:
    return K.uniform(eng, shape, d.np, low, high)


def _normal(eng: MTEngine, shape: tuple, d: _dtype, mean: Any, std: Any) -> np.ndarray:
    return K.normal(eng, shape, d.np, mean, std)


_WIDE_RANGE = ("int64", "float64", "float32", "bfloat16")  # dtypes drawing 64-bit words


def _integers(eng: MTEngine, shape: tuple, d: _dtype, low: int, high: int) -> np.ndarray:
    return K.integers(eng, shape, d.np, low, high, wide_ok=d.name in _WIDE_RANGE)


def _fill(t: Tensor, values: np.ndarray) -> Tensor:
    """Write drawn values into `t` in PyTorch's visiting order (address order on a view)."""
    host = t._data if type(t._data) is np.ndarray else _backend.to_numpy(t._data)
    return _put(t, K.in_memory_order(host, np.asarray(values)))


def _put(t: Tensor, values: np.ndarray) -> Tensor:
    """Write `values` into `t` in place and bump its version counter (no autograd record)."""
    xp = _backend.namespace_of(t._data)
    t._data[...] = values if xp is np else xp.asarray(values)
    note_write(t)
    return t


def _check_inplace(t: Tensor) -> None:
    if not STATE.grad_enabled or not t._requires_grad:
        return
    if t._base is None and t._grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    base = t._base
    if base is not None and base._grad_fn is None and (base._requires_grad or t.requires_grad):
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


# ---------------------------------------------------------------- in-place fills
@_vmap_aware("inplace")
def uniform_(self: Tensor, from_: float = 0, to: float = 1, *, generator: Generator | None = None,
             **kwargs: Any) -> Tensor:
    """Fill with samples of U[from, to). Mirrors: ``torch.Tensor.uniform_``."""
    from_ = kwargs.pop("from", from_)
    d = self.dtype
    if not d.is_floating_point:
        raise _not_implemented("check_uniform_bounds", d)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_g(from_)} > to={_g(to)}")
    limit = float(ml_dtypes.finfo(d.np).max)
    for name, value in (("from", from_), ("to", to)):
        if not -limit <= value <= limit:
            raise RuntimeError(f"{name} is out of bounds for {_CPP_NAMES[d.name]}")
    if abs(to - from_) > limit:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{_CPP_NAMES[d.name]}>::max(), but found to={_g(to)} and "
                           f"from={_g(from_)} which result in to-from to exceed the limit")
    _check_inplace(self)
    return _fill(self, _uniform(_gen(generator), self._data.shape, d, from_, to))


@_vmap_aware("inplace")
def normal_(self: Tensor, mean: float = 0, std: float = 1, *,
            generator: Generator | None = None) -> Tensor:
    """Fill with samples of N(mean, std²). Mirrors: ``torch.Tensor.normal_``."""
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    if not self.dtype.is_floating_point:
        raise _not_implemented("normal_kernel_cpu", self.dtype)
    _check_inplace(self)
    contiguous = type(self._data) is not np.ndarray or self._data.flags.c_contiguous
    return _fill(self, K.normal(_gen(generator), self._data.shape, self.dtype.np, mean, std,
                                contiguous))


@_vmap_aware("inplace")
def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Fill with 0/1 draws of probability `p` (float or broadcastable tensor).

    Mirrors: ``torch.Tensor.bernoulli_``.
    """
    if isinstance(p, Tensor):
        probs = _backend.to_numpy(p._data)
        if probs.size and not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError(_P_IN_ERROR)
        probs = _broadcast_to_self(probs, self._data.shape)
        _check_inplace(self)
        draws = K.bernoulli_tensor(_gen(generator), probs)
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_g(p)}")
        _check_inplace(self)
        draws = K.bernoulli_scalar(_gen(generator), self._data.shape, p)
    return _fill(self, draws.astype(self._data.dtype))


_P_IN_ERROR = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
               "message be improved?  If so, please report an enhancement request to PyTorch.)")


def _broadcast_to_self(arr: np.ndarray, shape: tuple) -> np.ndarray:
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        lead = len(shape) - arr.ndim
        for i, s in enumerate(arr.shape):
            if s != 1 and (i + lead < 0 or shape[i + lead] != s):
                raise RuntimeError(
                    f"The expanded size of the tensor ({shape[i + lead]}) must match the "
                    f"existing size ({s}) at non-singleton dimension {i + lead}.  Target sizes: "
                    f"{list(shape)}.  Tensor sizes: {list(arr.shape)}"
                ) from None
        raise


def _digits_max(d: _dtype) -> int:
    """Largest value ``random_()`` draws: the dtype max, or 2**digits for floats."""
    if d.is_floating_point:
        return 2 ** (ml_dtypes.finfo(d.np).nmant + 1)
    return 1 if d.name == "bool" else int(np.iinfo(d.np).max)


def _check_bound(value: int, d: _dtype, what: str) -> None:
    if not -(2**63) <= value < 2**63:
        raise ValueError("Overflow when unpacking long long")
    if d.is_floating_point:
        lo, hi = -float(ml_dtypes.finfo(d.np).max), float(ml_dtypes.finfo(d.np).max)
    elif d.name == "bool":
        lo, hi = 0, 1
    else:
        lo, hi = int(np.iinfo(d.np).min), int(np.iinfo(d.np).max)
    if not lo <= value <= hi:
        raise RuntimeError(f"{what} is out of bounds for {_CPP_NAMES[d.name]}")
    digits = _digits_max(d)
    if d.is_floating_point and not -digits <= value <= digits:
        import warnings

        bits = ml_dtypes.finfo(d.np).nmant + 1
        warnings.warn(f"{what} is out of bounds [-(2^{bits}), 2^{bits}]. Due to precision "
                      f"limitations {_CPP_NAMES[d.name]} can support discrete uniform "
                      "distribution only within this range. This warning will become an error "
                      "in version 1.7 release, please fix the code in advance", UserWarning,
                      stacklevel=4)


_MISSING: Any = object()


def _random_range(d: _dtype, from_: Any, to: Any) -> tuple[int, int]:
    """[low, high) for the overloads ``random_()``, ``random_(to)``, ``random_(from, to)``."""
    if from_ is _MISSING and to is _MISSING:
        return 0, _digits_max(d) + 1
    if from_ is _MISSING or to is _MISSING:  # random_(to)
        high = int(to if from_ is _MISSING else from_)
        _check_bound(high - 1, d, "to - 1")
        low = 0
    else:
        low = int(from_)
        _check_bound(low, d, "from")
        if to is None:
            high = _digits_max(d) + 1
            if low > high - 1:
                raise RuntimeError(
                    "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                    f"casted to dtype, but got from={low} > to_inc={high - 1}")
        else:
            high = int(to)
            _check_bound(high - 1, d, "to - 1")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    return low, high


@_vmap_aware("inplace")
def random_(self: Tensor, from_: Any = _MISSING, to: Any = _MISSING, *,
            generator: Generator | None = None, **kwargs: Any) -> Tensor:
    """Fill with integers from [from, to); ``random_(to)``; ``random_()`` spans the dtype.

    ``random_(from, None)`` draws up to the dtype's largest value (2**digits for floats).

    Mirrors: ``torch.Tensor.random_``.
    """
    from_ = kwargs.pop("from", from_)
    low, high = _random_range(self.dtype, from_, to)
    _check_inplace(self)
    return _fill(self, _integers(_gen(generator), self._data.shape, self.dtype, low, high))


@_vmap_aware("inplace")
def exponential_(self: Tensor, lambd: float = 1.0, *,
                 generator: Generator | None = None) -> Tensor:
    """Fill with Exp(lambd) samples. Mirrors: ``torch.Tensor.exponential_``."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_g(lambd)}")
    _check_inplace(self)
    return _fill(self, K.exponential(_gen(generator), self._data.shape, lambd))


@_vmap_aware("inplace")
def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Fill with Cauchy(median, sigma) samples. Mirrors: ``torch.Tensor.cauchy_``."""
    _check_inplace(self)
    return _fill(self, K.cauchy(_gen(generator), self._data.shape, median, sigma))


@_vmap_aware("inplace")
def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Generator | None = None) -> Tensor:
    """Fill with exp(N(mean, std²)) samples. Mirrors: ``torch.Tensor.log_normal_``."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_g(std)}")
    _check_inplace(self)
    return _fill(self, K.log_normal(_gen(generator), self._data.shape, mean, std))


@_vmap_aware("inplace")
def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fill with Geometric(p) trial counts (>= 1). Mirrors: ``torch.Tensor.geometric_``."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_g(p)}")
    _check_inplace(self)
    return _fill(self, K.geometric(_gen(generator), self._data.shape, p))


# ---------------------------------------------------------------- sampling factories
def _float_factory(size: tuple, dtype: Any, device: Any, requires_grad: bool, kernel: str,
                   sample: Any, fn: str = "rand") -> Tensor:
    d = GLOBAL.default_dtype if dtype is None else to_dtype(dtype)
    if not size:
        raise TypeError(f"{fn}() received an invalid combination of arguments - got (), but "
                        "expected one of: (tuple of ints size, ...)")
    shape = _size_arg(size, fn)
    if not (d.is_floating_point or d.is_complex):
        raise _not_implemented(kernel, d)
    if (meta := meta_factory(device, shape, d.np, requires_grad)) is not None:
        return meta
    if d.is_complex:
        # PyTorch fills the real view (real, imaginary pairs); normal samples of a complex
        # dtype have std 1/sqrt(2) per part, so that E|z|^2 = 1
        pairs = sample(tuple(shape) + (2,), d.to_real(), 1 / math.sqrt(2))
        return _finish(_xp(device).asarray(view_as_complex_array(pairs)), requires_grad)
    return _finish(_xp(device).asarray(sample(shape, d)), requires_grad)


@_vmap_aware("size")
def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None, pin_memory: bool = False,
         layout: Any = None, **kwargs: Any) -> Tensor:
    """Samples of U[0, 1) of the given size (``rand(2, 3)`` or ``rand((2, 3))``).

    Example:
        >>> import hookgrad as torch
        >>> torch.rand(2, 3).shape
        torch.Size([2, 3])

    Mirrors: ``torch.rand``.
    """
    rng = _gen(generator)
    size = size or ((kwargs.pop("size"),) if "size" in kwargs else ())
    _check_kwargs("rand", kwargs, layout, dtype)
    return _float_factory(size, dtype, device, requires_grad, "check_uniform_bounds",
                          lambda shape, d, _std=None: _uniform(rng, shape, d, 0.0, 1.0))


@_vmap_aware("size")
def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, out: Any = None, pin_memory: bool = False,
          layout: Any = None, **kwargs: Any) -> Tensor:
    """Samples of N(0, 1). Mirrors: ``torch.randn``."""
    rng = _gen(generator)
    size = size or ((kwargs.pop("size"),) if "size" in kwargs else ())
    _check_kwargs("randn", kwargs, layout, dtype)
    return _float_factory(size, dtype, device, requires_grad, "normal_kernel_cpu",
                          lambda shape, d, std=1.0: _normal(rng, shape, d, 0.0, std), "randn")


def _check_kwargs(fn: str, kwargs: dict, layout: Any, dtype: Any) -> None:
    check_factory_kwargs(fn, kwargs, layout)
    if dtype is not None and type(dtype).__name__ != "dtype":  # PyTorch's parser: a TypeError
        raise TypeError(f"{fn}() received an invalid combination of arguments - got (..., "
                        f"dtype={type(dtype).__name__}), but expected one of: (tuple of ints "
                        "size, *, torch.dtype dtype = None, ...)")


def _randint_args(args: tuple, kwargs: dict) -> tuple[int, int, tuple]:
    low, high, size = kwargs.pop("low", None), kwargs.pop("high", None), kwargs.pop("size", None)
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    if high is None or size is None or isinstance(size, (int, np.integer)):
        position = 2 if len(args) == 2 else 1
        raise TypeError(f"randint(): argument 'size' (position {position}) must be tuple of "
                        f"ints, not {type(size).__name__ if size is not None else 'NoneType'}")
    for name, value in (("low", low), ("high", high)):
        if value is not None and not isinstance(value, (int, np.integer)):
            raise TypeError(f"randint(): argument '{name}' (position "
                            f"{0 if name == 'low' else 1}) must be int, not "
                            f"{type(value).__name__}")
    if any(not isinstance(s, (int, np.integer)) or isinstance(s, bool) for s in size):
        raise TypeError("randint() received an invalid combination of arguments - got a size "
                        "that is not a tuple of ints")
    return int(low or 0), int(high), tuple(size)


@_vmap_aware("randint")
def randint(*args: Any, generator: Generator | None = None, dtype: Any = None,
            device: Any = None, requires_grad: bool = False, out: Any = None,
            **kwargs: Any) -> Tensor:
    """Integers from [low, high): ``randint(high, size)`` or ``randint(low, high, size)``.

    Example:
        >>> import hookgrad as torch
        >>> torch.randint(3, 5, (4,)).dtype
        torch.int64

    Mirrors: ``torch.randint``.
    """
    low, high, size = _randint_args(args, kwargs)
    d = int64 if dtype is None else to_dtype(dtype)
    low, high = _random_range(d, low, high)
    if (meta := meta_factory(device, _shape(size), d.np, requires_grad)) is not None:
        return meta
    arr = _integers(_gen(generator), _shape(size), d, low, high)
    return _finish(_xp(device).asarray(arr), requires_grad)


@_vmap_aware("size")
def bernoulli_noise(*size: Any, p: float, dtype: Any, device: Any = None) -> Tensor:
    """Dropout's 0/1 noise under vmap: ``empty(size).bernoulli_(p)``, one sampler so that a
    vmap level applies the factories' rule to it (functorch draws dropout masks that way)."""
    from hookgrad._functional.creation import empty

    return bernoulli_(empty(size, dtype=dtype, device=device), p)


@_vmap_aware("randperm")
def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, requires_grad: bool = False, out: Any = None,
             pin_memory: bool = False, layout: Any = None) -> Tensor:
    """A random permutation of ``0..n-1``. Mirrors: ``torch.randperm``."""
    n = _shape((n,))[0]
    d = int64 if dtype is None else to_dtype(dtype)
    perm = K.randperm(_gen(generator), n).astype(d.np)
    return _finish(_xp(device).asarray(perm), requires_grad)


def _filled_like(input: Tensor, dtype: Any, layout: Any, device: Any, requires_grad: bool,
                 memory_format: Any, fill: Any) -> Tensor:
    # PyTorch's ``*_like`` samplers are ``empty_like`` + an in-place fill: the values are drawn
    # in the result's memory order (a transposed or channels-last result differs from a
    # row-major draw), and the normal fill of a non-contiguous result takes the serial path
    from hookgrad._functional.creation import empty_like

    out = empty_like(input, dtype=input.dtype if dtype is None else dtype, layout=layout,
                     device=_like_device(input, device), memory_format=memory_format)
    fill(out)
    return out.requires_grad_(True) if requires_grad else out


@_vmap_aware("like")
def rand_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None,
              generator: Generator | None = None) -> Tensor:
    """`rand` with `input`'s shape, dtype and device. Mirrors: ``torch.rand_like``."""
    return _filled_like(input, dtype, layout, device, requires_grad, memory_format,
                        lambda t: uniform_(t, generator=generator))


@_vmap_aware("like")
def randn_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None,
               generator: Generator | None = None) -> Tensor:
    """`randn` with `input`'s shape, dtype and device. Mirrors: ``torch.randn_like``."""
    return _filled_like(input, dtype, layout, device, requires_grad, memory_format,
                        lambda t: normal_(t, generator=generator))


@_vmap_aware("like")
def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, dtype: Any = None,
                 layout: Any = None, device: Any = None, requires_grad: bool = False, memory_format: Any = None,
                 generator: Generator | None = None) -> Tensor:
    """`randint` with `input`'s shape and dtype (``randint_like(x, high)`` or ``(x, low, high)``).

    Mirrors: ``torch.randint_like``.
    """
    if high is None:
        low, high = 0, low
    return _filled_like(input, dtype, layout, device, requires_grad, memory_format,
                        lambda t: random_(t, low, high, generator=generator))


def _broadcast_error(a: tuple, b: tuple) -> RuntimeError:
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            dim = max(len(a), len(b)) - i
            return RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                                f"({y}) at non-singleton dimension {dim}")
    return RuntimeError("shape mismatch")  # pragma: no cover - NumPy agreed it broadcasts


def _normal_tensor(mean: Any, std: Any, generator: Generator | None) -> Tensor:
    like = mean if isinstance(mean, Tensor) else std
    if not like.dtype.is_floating_point:
        raise _not_implemented("normal_kernel_cpu", like.dtype)
    m = _backend.to_numpy(mean._data) if isinstance(mean, Tensor) else mean
    s = _backend.to_numpy(std._data) if isinstance(std, Tensor) else std
    if isinstance(std, Tensor):
        if s.size and not (s >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    try:
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
    except ValueError:
        raise _broadcast_error(np.shape(m), np.shape(s)) from None
    # PyTorch fills N(0, 1) and then scales and shifts in the result's dtype
    z = _normal(_gen(generator), tuple(shape), like.dtype, 0.0, 1.0)
    arr = (z * np.asarray(s, dtype=z.dtype)).astype(z.dtype) + np.asarray(m, dtype=z.dtype)
    return Tensor._make(_backend.namespace_of(like._data).asarray(arr.astype(z.dtype)))


@_vmap_aware("normal")
def normal(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Generator | None = None,
           out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
           pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Samples of N(mean, std²): tensor `mean` and/or `std` (broadcast), or floats with `size`.

    With a tensor `mean` the result has its dtype, else the tensor `std`'s dtype.

    Example:
        >>> import hookgrad as torch
        >>> torch.normal(torch.zeros(3), 1.0).shape
        torch.Size([3])
        >>> torch.normal(2.0, 3.0, size=(2, 2)).shape
        torch.Size([2, 2])

    Mirrors: ``torch.normal``(the result never requires grad, where PyTorch
    records ``NormalBackward*`` whose gradient is zero anyway).
    """
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None:
            raise TypeError("normal() received an invalid combination of arguments - got "
                            "(Tensor, Tensor, tuple)")
        return _normal_tensor(mean, std, generator)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got "
                        f"({type(mean).__name__}, {type(std).__name__})")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    rng = _gen(generator)
    return _float_factory((size,), dtype, device, requires_grad, "normal_kernel_cpu",
                          lambda shape, d, scale=1.0: _normal(rng, shape, d, mean, std * scale),
                          "normal")


@_vmap_aware("tensor")
def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None,
              out: Any = None) -> Tensor:
    """0/1 draws with probabilities `input` (or the constant `p`), in `input`'s dtype.

    Mirrors: ``torch.bernoulli``(never records ``BernoulliBackward0``).
    """
    # a contiguous result, whatever input's layout (PyTorch's LEGACY_CONTIGUOUS empty_like)
    xp = _backend.namespace_of(input._data)
    result = Tensor._make(xp.zeros(input._data.shape, dtype=input._data.dtype))
    if p is not None:
        return bernoulli_(result, p, generator=generator)
    if not input.dtype.is_floating_point:
        raise _not_implemented("bernoulli_tensor_cpu_p_", input.dtype)
    return bernoulli_(result, input, generator=generator)


def _check_multinomial(probs: np.ndarray, d: _dtype, num_samples: int,
                       replacement: bool) -> None:
    if not d.is_floating_point:
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           + d.scalar_type)
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > probs.shape[-1]:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if probs.size == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if not (np.isfinite(probs) & (probs >= 0)).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (probs.sum(axis=-1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


@_vmap_aware("multinomial")
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None, out: Any = None) -> Tensor:
    """Category indices drawn from each row of (unnormalised) probabilities `input`.

    Without replacement PyTorch's algorithm is kept: the top ``num_samples`` of
    ``p / Exponential(1)``, so zero-probability categories come last instead of never.

    Mirrors: ``torch.multinomial``.
    """
    probs = _backend.to_numpy(input._data)
    _check_multinomial(probs.astype(np.float64), input.dtype, num_samples, replacement)
    rows = probs.reshape(-1, probs.shape[-1])
    idx = K.multinomial(_gen(generator), rows, num_samples, replacement)
    idx = idx.astype(np.int64).reshape(probs.shape[:-1] + (num_samples,))
    return Tensor._make(_backend.namespace_of(input._data).asarray(idx))


METHODS = {
    "uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_, "random_": random_,
    "exponential_": exponential_, "cauchy_": cauchy_, "log_normal_": log_normal_,
    "geometric_": geometric_,
    "bernoulli": lambda self, p=None, *, generator=None: bernoulli(self, p, generator=generator),
    "multinomial": multinomial,
}
