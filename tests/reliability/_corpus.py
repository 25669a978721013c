"""A generated corpus of bad inputs at the public API, run on PyTorch and on hookgrad.

Each case is ``(name, fn)`` where ``fn(lib)`` builds its inputs with `lib` (``torch`` or
``hookgrad``) and makes one call that PyTorch rejects (or, for a few near-misses, accepts).
`outcome` reduces a run to the exception *type* name (or ``"ok"``), which is what ported code
catching ``RuntimeError`` / ``TypeError`` / ``IndexError`` depends on.

Cases come from small tables crossed with each other (ops x shape pairs, functions x bad
argument values) so adding a row adds many cases.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

Case = tuple[str, Callable[[Any], Any]]


def outcome(fn: Callable[[Any], Any], lib: Any) -> str:
    """``"ok"`` or the name of the exception type `fn(lib)` raises (warnings silenced)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            return type(e).__name__
    return "ok"


def _t(L: Any, shape: tuple, dtype: str = "float32") -> Any:
    n = int(np.prod(shape)) if shape else 1
    return L.arange(n, dtype=getattr(L, dtype)).reshape(shape) + 1


# ------------------------------------------------------------------ broadcasting
BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "atan2",
    "maximum",
    "minimum",
    "fmod",
    "remainder",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_xor",
    "floor_divide",
    "fmax",
    "fmin",
    "float_power",
    "true_divide",
]
OPERATORS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "**": lambda a, b: a**b,
    "<": lambda a, b: a < b,
    "==": lambda a, b: a == b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
}
INPLACE = ["add_", "sub_", "mul_", "div_", "pow_", "clamp_min_"]
BAD_PAIRS = [
    ((2, 3), (2, 2)),
    ((3,), (4,)),
    ((2, 3, 4), (3, 3)),
    ((5, 1, 3), (4, 2)),
    ((0,), (2,)),
    ((2, 0), (2, 3)),
]
GOOD_PAIRS = [((2, 3), (3,)), ((5, 1, 3), (4, 1)), ((0,), (1,)), ((), (2, 2))]


def _broadcast_cases() -> list[Case]:
    cases: list[Case] = []
    for op in BINARY:
        for sa, sb in BAD_PAIRS + GOOD_PAIRS:
            cases.append(
                (
                    f"{op}{sa}{sb}",
                    lambda L, op=op, sa=sa, sb=sb: getattr(L, op)(_t(L, sa), _t(L, sb)),
                )
            )
    for sym, f in OPERATORS.items():
        for sa, sb in BAD_PAIRS:
            cases.append((f"a{sym}b{sa}{sb}", lambda L, f=f, sa=sa, sb=sb: f(_t(L, sa), _t(L, sb))))
    for op in ["add_", "sub_", "mul_", "div_", "pow_"]:
        for sa, sb in BAD_PAIRS + [((3,), (2, 3)), ((1, 3), (2, 3))]:
            cases.append(
                (f"{op}{sa}{sb}", lambda L, op=op, sa=sa, sb=sb: getattr(_t(L, sa), op)(_t(L, sb)))
            )
    for sa, sb, sc in [
        ((2, 3), (2, 2), (2, 3)),
        ((3,), (3,), (4,)),
        ((2, 1), (3,), (4,)),
        ((5,), (5,), (5,)),
    ]:
        cases += [
            (
                f"where{sa}{sb}{sc}",
                lambda L, sa=sa, sb=sb, sc=sc: L.where(_t(L, sa) > 2, _t(L, sb), _t(L, sc)),
            ),
            (
                f"masked_fill{sa}{sb}",
                lambda L, sa=sa, sb=sb: _t(L, sa).masked_fill(_t(L, sb) > 2, 0.0),
            ),
            (
                f"lerp{sa}{sb}{sc}",
                lambda L, sa=sa, sb=sb, sc=sc: L.lerp(_t(L, sa), _t(L, sb), _t(L, sc)),
            ),
            (
                f"addcmul{sa}{sb}{sc}",
                lambda L, sa=sa, sb=sb, sc=sc: L.addcmul(_t(L, sa), _t(L, sb), _t(L, sc)),
            ),
            (
                f"addcdiv{sa}{sb}{sc}",
                lambda L, sa=sa, sb=sb, sc=sc: L.addcdiv(_t(L, sa), _t(L, sb), _t(L, sc)),
            ),
            (f"clamp_t{sa}{sb}", lambda L, sa=sa, sb=sb: L.clamp(_t(L, sa), min=_t(L, sb))),
            (
                f"masked_fill_{sa}{sb}",
                lambda L, sa=sa, sb=sb: _t(L, sa).masked_fill_(_t(L, sb) > 2, 0.0),
            ),
        ]
    return cases


# ------------------------------------------------------------------ wrong argument types
UNARY = [
    "relu",
    "sigmoid",
    "tanh",
    "exp",
    "log",
    "abs",
    "neg",
    "sqrt",
    "sin",
    "cos",
    "sum",
    "mean",
    "flatten",
    "clone",
    "argmax",
    "cumsum_0",
    "softmax_0",
    "squeeze",
    "numel",
]
FUNCTIONAL = [
    "relu",
    "gelu",
    "silu",
    "softplus",
    "elu",
    "leaky_relu",
    "hardtanh",
    "sigmoid",
    "tanh",
    "logsigmoid",
    "softsign",
    "selu",
    "celu",
    "mish",
    "hardswish",
    "softmax_0",
    "log_softmax_0",
    "dropout",
    "relu6",
    "hardsigmoid",
    "tanhshrink",
    "softmin_0",
    "glu",
]
BAD_VALUES = {
    "str": "a",
    "none": None,
    "list": [1.0, 2.0],
    "float": 3.0,
    "object": object(),
    "dict": {"a": 1},
}


def _call(ns: Any, name: str, x: Any) -> Any:
    if name.endswith("_0"):
        return getattr(ns, name[:-2])(x, 0)
    return getattr(ns, name)(x)


def _type_cases() -> list[Case]:
    cases: list[Case] = []
    for name in UNARY:
        for vname, v in BAD_VALUES.items():
            cases.append((f"torch.{name}({vname})", lambda L, n=name, v=v: _call(L, n, v)))
    for name in FUNCTIONAL:
        for vname, v in BAD_VALUES.items():
            cases.append(
                (f"F.{name}({vname})", lambda L, n=name, v=v: _call(L.nn.functional, n, v))
            )
    for name in ["add", "mul", "sub", "maximum", "eq", "matmul", "where_x"]:
        for vname, v in [("str", "a"), ("none", None), ("list", [1.0]), ("object", object())]:
            if name == "where_x":
                cases.append(
                    (f"where(x={vname})", lambda L, v=v: L.where(_t(L, (2,)) > 1, v, _t(L, (2,))))
                )
            else:
                cases.append(
                    (f"{name}(t, {vname})", lambda L, n=name, v=v: getattr(L, n)(_t(L, (2,)), v))
                )
    return cases


# ------------------------------------------------------------------ conv / pool arguments
def _conv(L: Any, **kw: Any) -> Any:
    x = kw.pop("x", (1, 2, 6, 6))
    w = kw.pop("w", (4, 2, 3, 3))
    return L.nn.functional.conv2d(_t(L, x), _t(L, w), **kw)


def _conv1(L: Any, **kw: Any) -> Any:
    return L.nn.functional.conv1d(
        _t(L, kw.pop("x", (1, 2, 8))), _t(L, kw.pop("w", (3, 2, 3))), **kw
    )


CONV_ARGS = [
    {"stride": 0},
    {"stride": -1},
    {"stride": (1, 0)},
    {"padding": -1},
    {"padding": (0, -2)},
    {"dilation": 0},
    {"dilation": -1},
    {"groups": 0},
    {"groups": 3},
    {"groups": -1},
    {"padding": "bogus"},
    {"padding": "same", "stride": 2},
    {"padding": "valid"},
    {"padding": "same"},
    {"w": (4, 3, 3, 3)},
    {"w": (4, 2, 7, 7)},
    {"w": (4, 2, 0, 0)},
    {"w": (4, 2, 3)},
    {"x": (2, 6, 6)},
    {"x": (1, 1, 2, 6, 6)},
    {"bias_shape": (3,)},
    {"stride": 2.5},
    {"padding": 1.5},
    {"stride": (1, 1, 1)},
    {"x": (1, 2, 2, 2)},
    {"stride": "a"},
    {"groups": 1.0},
]
POOL_ARGS = [
    {"kernel_size": 0},
    {"kernel_size": -1},
    {"kernel_size": 2, "stride": 0},
    {"kernel_size": 2, "padding": 2},
    {"kernel_size": 2, "padding": -1},
    {"kernel_size": 3, "dilation": 0},
    {"kernel_size": 9},
    {"kernel_size": (2, 2, 2)},
    {"kernel_size": 2.5},
    {"kernel_size": 2, "stride": -2},
    {"kernel_size": 2},
    {"kernel_size": 3, "padding": 1},
    {"kernel_size": (2, 0)},
]


def _conv_cases() -> list[Case]:
    cases: list[Case] = []
    for kw in CONV_ARGS:

        def fn(L, kw=kw):
            kw = dict(kw)
            if "bias_shape" in kw:
                kw["bias"] = _t(L, kw.pop("bias_shape"))
            return _conv(L, **kw)

        cases.append((f"conv2d{kw}", fn))
        if "x" not in kw and "w" not in kw and "bias_shape" not in kw:
            cases.append((f"conv1d{kw}", lambda L, kw=kw: _conv1(L, **kw)))
    for kw in POOL_ARGS:
        cases.append(
            (
                f"max_pool2d{kw}",
                lambda L, kw=kw: L.nn.functional.max_pool2d(_t(L, (1, 1, 6, 6)), **kw),
            )
        )
        if "dilation" not in kw:
            cases.append(
                (
                    f"avg_pool2d{kw}",
                    lambda L, kw=kw: L.nn.functional.avg_pool2d(_t(L, (1, 1, 6, 6)), **kw),
                )
            )
        cases.append((f"MaxPool2d{kw}", lambda L, kw=kw: L.nn.MaxPool2d(**kw)(_t(L, (1, 1, 6, 6)))))
    for size in [-1, 0, (2, -1), "a", (2, 2, 2)]:
        cases.append(
            (
                f"adaptive_avg_pool2d({size})",
                lambda L, s=size: L.nn.functional.adaptive_avg_pool2d(_t(L, (1, 1, 6, 6)), s),
            )
        )
    for args in [
        (1, 1, 0),
        (0, 1, 3),
        (1, 0, 3),
        (1, 1, 3, 0),
        (-1, 1, 3),
        (2, 2, 3, 1, 0, 1, 3),
        (1, 1, -1),
        (1, 1, (3, 0)),
    ]:
        cases.append((f"Conv2d{args}(x)", lambda L, a=args: L.nn.Conv2d(*a)(_t(L, (1, 1, 6, 6)))))
    for kw in [
        {"padding_mode": "bogus"},
        {"padding": "same", "stride": 2},
        {"groups": 2},
        {"padding": "bogus"},
        {"stride": 0},
        {"dilation": 0},
        {"padding": -1},
    ]:
        cases.append(
            (
                f"Conv2d(2, 3, 3, {kw})",
                lambda L, kw=kw: L.nn.Conv2d(2, 3, 3, **kw)(_t(L, (1, 2, 6, 6))),
            )
        )
    return cases


# ------------------------------------------------------------------ indexing
def _index_cases() -> list[Case]:
    cases: list[Case] = []
    idx_bad = {"oob": [5], "neg_oob": [-4], "float": [1.0], "empty_ok": []}
    for name, idx in idx_bad.items():

        def fn(L, idx=idx):
            i = L.tensor(idx) if idx else L.tensor([], dtype=L.int64)
            return L.index_select(_t(L, (3,)), 0, i)

        cases.append((f"index_select({name})", fn))
        cases.append(
            (
                f"gather({name})",
                lambda L, idx=idx: L.gather(
                    _t(L, (3,)), 0, L.tensor(idx) if idx else L.tensor([], dtype=L.int64)
                ),
            )
        )
        cases.append(
            (
                f"t[tensor {name}]",
                lambda L, idx=idx: _t(L, (3,))[
                    L.tensor(idx) if idx else L.tensor([], dtype=L.int64)
                ],
            )
        )
        cases.append(
            (
                f"embedding({name})",
                lambda L, idx=idx: L.nn.functional.embedding(
                    L.tensor(idx) if idx else L.tensor([], dtype=L.int64), _t(L, (3, 2))
                ),
            )
        )
    for key in [
        5,
        -4,
        (0, 0),
        (slice(None), 3),
        "a",
        1.5,
        None,
        (0, 0, 0),
        [0, 5],
        ...,
        (..., ...),
        [True, False],
        [True, False, True, True],
    ]:
        cases.append((f"t[{key!r}]", lambda L, k=key: _t(L, (3,))[k]))
        cases.append((f"t[{key!r}] = 0", lambda L, k=key: _t(L, (3,)).__setitem__(k, 0.0)))
    for dim in [1, -2, 5, 1.5, "a"]:
        cases.append(
            (
                f"index_select(dim={dim})",
                lambda L, d=dim: L.index_select(_t(L, (3,)), d, L.tensor([0])),
            )
        )
        cases.append((f"select(dim={dim})", lambda L, d=dim: _t(L, (3,)).select(d, 0)))
    for start, length in [(2, 2), (-5, 1), (0, -1), (4, 0), (1.5, 1)]:
        cases.append(
            (f"narrow({start},{length})", lambda L, s=start, n=length: _t(L, (3,)).narrow(0, s, n))
        )
    cases.append(
        ("index_select(2d index)", lambda L: L.index_select(_t(L, (3,)), 0, L.tensor([[0]])))
    )
    cases.append(("gather(dims mismatch)", lambda L: L.gather(_t(L, (3, 2)), 0, L.tensor([0]))))
    cases.append(("scatter(oob)", lambda L: L.zeros(3).scatter(0, L.tensor([7]), 1.0)))
    cases.append(("take_along_dim(oob)", lambda L: L.take_along_dim(_t(L, (3,)), L.tensor([9]), 0)))
    return cases


# ------------------------------------------------------------------ creation / dtype / device
DEEP = [1]
for _ in range(2000):
    DEEP = [DEEP]


def _creation_cases() -> list[Case]:
    cases: list[Case] = []
    for fac in ["zeros", "ones", "empty", "rand", "randn"]:
        for size in [10**20, -1, 2.5, "a", None, (2, -3), (2, 2.0), [10**20], (2**63,)]:
            cases.append((f"{fac}({size!r})", lambda L, f=fac, s=size: getattr(L, f)(s)))
    data_cases = {
        "2**63": [2**63],
        "-2**63-1": [-(2**63) - 1],
        "nested 2**63": [[2**63]],
        "2**64 scalar": 2**64,
        "str": "abc",
        "list str": [1, "a"],
        "none": None,
        "list none": [None],
        "ragged": [[1, 2], [3]],
        "ragged2": [[1], [[2]]],
        "deep": DEEP,
        "set": {1, 2},
        "dict": {1: 2},
        "object": object(),
        "bytes": b"ab",
        "complex-in-list": [1, "x"],
    }
    for name, data in data_cases.items():
        cases.append((f"tensor({name})", lambda L, d=data: L.tensor(d)))
        cases.append((f"as_tensor({name})", lambda L, d=data: L.as_tensor(d)))
    for data, dt in [
        ([float("nan")], "int64"),
        ([float("inf")], "int32"),
        ([1e19], "int64"),
        ([300], "uint8"),
        ([-129], "int8"),
        ([2**63], "uint8"),
        ([1.5], "bool"),
        (float("nan"), "int16"),
        ([[]], "int64"),
        ([1e40], "float32"),
    ]:
        cases.append(
            (f"tensor({data}, {dt})", lambda L, d=data, dt=dt: L.tensor(d, dtype=getattr(L, dt)))
        )
    for dt in ["float32", 5, "bogus", np.float32, float, int, bool, complex, str, object]:
        cases.append((f"tensor(1, dtype={dt!r})", lambda L, dt=dt: L.tensor([1.5], dtype=dt)))
        cases.append((f"zeros(2, dtype={dt!r})", lambda L, dt=dt: L.zeros(2, dtype=dt)))
    for target in [5, "bogus", "cuda:x", None, 1.5, "meta?", (1,), "cpu:-1"]:
        cases.append((f"to({target!r})", lambda L, t=target: _t(L, (2,)).to(t)))
    for args in [
        (0, 10, 0),
        (10, 0, 1),
        (0, 1, float("nan")),
        (0, float("inf")),
        ("a",),
        (0, 10**20, 1),
        (0, 5, -1),
    ]:
        cases.append((f"arange{args}", lambda L, a=args: L.arange(*a)))
    for args in [(0, 1, -1), (0, 1, 2.5), (0, 1, "a"), (0, "b", 3)]:
        cases.append((f"linspace{args}", lambda L, a=args: L.linspace(*a)))
    for args in [(-1,), (2, -1), (2.5,), ("a",)]:
        cases.append((f"eye{args}", lambda L, a=args: L.eye(*a)))
    for args in [((2,), "a"), ((2,), None), (-1, 1.0), ((2,), [1, 2]), ((-2,), 1.0)]:
        cases.append((f"full{args}", lambda L, a=args: L.full(*a)))
    for args in [(5, (2,)), (5, 2, (2,)), (0, (2,)), (2, 1, (2,)), (0, 5, (-1,))]:
        cases.append((f"randint{args}", lambda L, a=args: L.randint(*a)))
    cases.append(("requires_grad int", lambda L: L.tensor([1], requires_grad=True)))
    cases.append(("requires_grad_ int", lambda L: L.tensor([1]).requires_grad_()))
    return cases


# ------------------------------------------------------------------ shapes and reductions
def _shape_cases() -> list[Case]:
    cases: list[Case] = []
    x = (2, 3)
    calls = {
        "view(-1,-1)": lambda t: t.view(-1, -1),
        "view(7)": lambda t: t.view(7),
        "reshape(4,2)": lambda t: t.reshape(4, 2),
        "reshape(-2)": lambda t: t.reshape(-2),
        "reshape(2.5)": lambda t: t.reshape(2.5),
        "permute(0)": lambda t: t.permute(0),
        "permute(0,0)": lambda t: t.permute(0, 0),
        "permute(0,5)": lambda t: t.permute(0, 5),
        "transpose(0,5)": lambda t: t.transpose(0, 5),
        "squeeze(5)": lambda t: t.squeeze(5),
        "unsqueeze(4)": lambda t: t.unsqueeze(4),
        "unsqueeze(-4)": lambda t: t.unsqueeze(-4),
        "expand(1,3)": lambda t: t.expand(1, 3),
        "expand(3)": lambda t: t.expand(3),
        "expand(2,3,-1)": lambda t: t.expand(-1, 2, 3),
        "flatten(1,0)": lambda t: t.flatten(1, 0),
        "flatten(0,5)": lambda t: t.flatten(0, 5),
        "sum(5)": lambda t: t.sum(5),
        "sum('a')": lambda t: t.sum("a"),
        "mean(5)": lambda t: t.mean(5),
        "softmax(5)": lambda t: t.softmax(5),
        "argmax(5)": lambda t: t.argmax(5),
        "max(5)": lambda t: t.max(5),
        "std(5)": lambda t: t.std(5),
        "cumsum(5)": lambda t: t.cumsum(5),
        "topk(9)": lambda t: t.topk(9),
        "topk(-1)": lambda t: t.topk(-1),
        "sort(5)": lambda t: t.sort(5),
        "split(0)": lambda t: t.split(0),
        "chunk(0)": lambda t: t.chunk(0),
        "chunk(-1)": lambda t: t.chunk(-1),
        "repeat(2)": lambda t: t.repeat(2),
        "repeat(-1,1)": lambda t: t.repeat(-1, 1),
        "tile(-1)": lambda t: t.tile(-1),
        "flip(5)": lambda t: t.flip(5),
        "roll(1,5)": lambda t: t.roll(1, 5),
        "tril(diag=1.5)": lambda t: t.tril(1.5),
        "unflatten(1,(2,2))": lambda t: t.unflatten(1, (2, 2)),
        "item()": lambda t: t.item(),
        "int()": lambda t: int(t),
        "float()": lambda t: float(t),
        "bool()": lambda t: bool(t),
        "len(scalar)": lambda t: len(t.sum()),
        "iter(scalar)": lambda t: iter(t.sum()),
        "movedim(0,5)": lambda t: t.movedim(0, 5),
        "diag 3d": lambda t: t.reshape(1, 2, 3).diag(),
        "trace 1d": lambda t: t.reshape(6).trace(),
        "t 3d": lambda t: t.reshape(1, 2, 3).t(),
        "mean int": lambda t: t.long().mean(),
        "std int": lambda t: t.long().std(),
        "var(correction=7)": lambda t: t.var(correction=1.5),
        "prod(dim=(0,1))": lambda t: t.prod(dim=(0, 1)),
        "amax(dim=())": lambda t: t.amax(dim=5),
        "logsumexp(5)": lambda t: t.logsumexp(5),
        "norm(p='fro', dim=5)": lambda t: t.norm(p="fro", dim=5),
        "all(5)": lambda t: t.all(5),
        "unbind(5)": lambda t: t.unbind(5),
        "split([1,1])": lambda t: t.split([1, 1], 1),
        "numpy requires_grad": lambda t: t.requires_grad_().numpy(),
        "view dtype bad": lambda t: t.view("a"),
        "type('bogus')": lambda t: t.type("bogus"),
        "new_zeros(-1)": lambda t: t.new_zeros(-1),
        "fill_('a')": lambda t: t.fill_("a"),
        "clamp()": lambda t: t.clamp(),
        "clamp(min='a')": lambda t: t.clamp(min="a"),
    }
    for name, f in calls.items():
        cases.append((name, lambda L, f=f: f(_t(L, x))))
    cat_inputs = {
        "mismatch": [(2, 3), (2, 4)],
        "ndim": [(2, 3), (3,)],
        "empty": [],
        "dim5": [(2, 3), (2, 3)],
    }
    for name, shapes in cat_inputs.items():
        cases.append(
            (
                f"cat({name})",
                lambda L, s=shapes, n=name: L.cat(
                    [_t(L, sh) for sh in s], dim=5 if n == "dim5" else 1
                ),
            )
        )
        cases.append(
            (
                f"stack({name})",
                lambda L, s=shapes, n=name: L.stack(
                    [_t(L, sh) for sh in s], dim=5 if n == "dim5" else 0
                ),
            )
        )
    cases.append(("cat(tensor)", lambda L: L.cat(_t(L, (2, 3)))))
    cases.append(("cat([t, 'a'])", lambda L: L.cat([_t(L, (2,)), "a"])))
    cases.append(("stack(generator)", lambda L: L.stack(t for t in [_t(L, (2,))])))
    return cases


# ------------------------------------------------------------------ linear algebra and nn
def _nn_cases() -> list[Case]:
    cases: list[Case] = []
    for name, sa, sb in [
        ("mm", (2, 3), (2, 3)),
        ("mm", (2, 3, 1), (3, 2)),
        ("bmm", (2, 3), (3, 2)),
        ("bmm", (2, 2, 3), (3, 3, 2)),
        ("matmul", (2, 3), (2, 3)),
        ("matmul", (), (3,)),
        ("dot", (2, 3), (2, 3)),
        ("dot", (3,), (4,)),
        ("mv", (2, 3), (2,)),
        ("outer", (2, 2), (3,)),
        ("matmul", (4, 2, 3), (5, 3, 2)),
    ]:
        cases.append(
            (f"{name}{sa}{sb}", lambda L, n=name, sa=sa, sb=sb: getattr(L, n)(_t(L, sa), _t(L, sb)))
        )
    F = "nn.functional"
    loss_cases = {
        "cross_entropy oob": lambda L: L.nn.functional.cross_entropy(
            _t(L, (2, 3)), L.tensor([0, 5])
        ),
        "cross_entropy neg": lambda L: L.nn.functional.cross_entropy(
            _t(L, (2, 3)), L.tensor([0, -3])
        ),
        "cross_entropy float target shape": lambda L: L.nn.functional.cross_entropy(
            _t(L, (2, 3)), _t(L, (2,))
        ),
        "cross_entropy batch": lambda L: L.nn.functional.cross_entropy(
            _t(L, (2, 3)), L.tensor([0, 1, 2])
        ),
        "cross_entropy int input": lambda L: L.nn.functional.cross_entropy(
            _t(L, (2, 3), "int64"), L.tensor([0, 1])
        ),
        "nll_loss 3-dim target": lambda L: L.nn.functional.nll_loss(
            _t(L, (2, 3)), L.tensor([[0, 1]])
        ),
        "nll_loss oob": lambda L: L.nn.functional.nll_loss(_t(L, (2, 3)), L.tensor([0, 3])),
        "mse shape": lambda L: L.nn.functional.mse_loss(_t(L, (2, 3)), _t(L, (2, 2))),
        "mse reduction": lambda L: L.nn.functional.mse_loss(
            _t(L, (2,)), _t(L, (2,)), reduction="bogus"
        ),
        "l1 shape": lambda L: L.nn.functional.l1_loss(_t(L, (3,)), _t(L, (4,))),
        "bce range": lambda L: L.nn.functional.binary_cross_entropy(_t(L, (3,)), _t(L, (3,))),
        "bce shape": lambda L: L.nn.functional.binary_cross_entropy(
            L.full((3,), 0.5), L.full((4,), 0.5)
        ),
        "bce_logits shape": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
            _t(L, (3,)), _t(L, (4,))
        ),
        "kl_div shape": lambda L: L.nn.functional.kl_div(_t(L, (3,)), _t(L, (4,))),
        "smooth_l1 beta<0": lambda L: L.nn.functional.smooth_l1_loss(
            _t(L, (3,)), _t(L, (3,)), beta=-1.0
        ),
        "huber delta<=0": lambda L: L.nn.functional.huber_loss(_t(L, (3,)), _t(L, (3,)), delta=0.0),
        "linear shape": lambda L: L.nn.functional.linear(_t(L, (2, 3)), _t(L, (4, 2))),
        "linear bias": lambda L: L.nn.functional.linear(_t(L, (2, 3)), _t(L, (4, 3)), _t(L, (3,))),
        "batch_norm mean size": lambda L: L.nn.functional.batch_norm(
            _t(L, (2, 3)), L.zeros(2), L.ones(2)
        ),
        "batch_norm weight size": lambda L: L.nn.functional.batch_norm(
            _t(L, (2, 3)), L.zeros(3), L.ones(3), weight=L.ones(4)
        ),
        "batch_norm 1 value": lambda L: L.nn.functional.batch_norm(
            _t(L, (1, 3)), None, None, training=True
        ),
        "layer_norm shape": lambda L: L.nn.functional.layer_norm(_t(L, (2, 3)), (4,)),
        "layer_norm weight": lambda L: L.nn.functional.layer_norm(
            _t(L, (2, 3)), (3,), weight=L.ones(2)
        ),
        "group_norm groups": lambda L: L.nn.functional.group_norm(_t(L, (2, 4, 3)), 3),
        "embedding 2d weight idx float": lambda L: L.nn.functional.embedding(
            L.tensor([0.0]), _t(L, (3, 2))
        ),
        "softmax no dim 3d": lambda L: L.nn.functional.softmax(_t(L, (2, 3)), dim=7),
        "dropout p": lambda L: L.nn.functional.dropout(_t(L, (3,)), p=1.5),
        "dropout p neg": lambda L: L.nn.functional.dropout(_t(L, (3,)), p=-0.1),
        "leaky_relu str slope": lambda L: L.nn.functional.leaky_relu(_t(L, (3,)), "a"),
        "glu odd": lambda L: L.nn.functional.glu(_t(L, (3,))),
        "max_pool1d 2d weird": lambda L: L.nn.functional.max_pool1d(_t(L, (2,)), 2),
    }
    for name, f in loss_cases.items():
        cases.append((f"{F}.{name}", f))
    module_cases = {
        "Linear(-1,3)": lambda L: L.nn.Linear(-1, 3),
        "Linear(2.5,3)": lambda L: L.nn.Linear(2.5, 3),
        "Linear('a',3)": lambda L: L.nn.Linear("a", 3),
        "Linear fwd shape": lambda L: L.nn.Linear(3, 2)(_t(L, (2, 4))),
        "Linear fwd int": lambda L: L.nn.Linear(3, 2)(_t(L, (2, 3), "int64")),
        "BatchNorm1d fwd": lambda L: L.nn.BatchNorm1d(3)(_t(L, (2, 4))),
        "BatchNorm2d 3d": lambda L: L.nn.BatchNorm2d(3)(_t(L, (2, 3, 4))),
        "BatchNorm1d(-1)": lambda L: L.nn.BatchNorm1d(-1),
        "Embedding(-1,3)": lambda L: L.nn.Embedding(-1, 3),
        "Embedding padding_idx": lambda L: L.nn.Embedding(3, 2, padding_idx=5),
        "Dropout(1.5)": lambda L: L.nn.Dropout(1.5),
        "Dropout(-1)": lambda L: L.nn.Dropout(-1),
        "LayerNorm fwd": lambda L: L.nn.LayerNorm(4)(_t(L, (2, 3))),
        "GroupNorm(3,4)": lambda L: L.nn.GroupNorm(3, 4),
        "Sequential(1)": lambda L: L.nn.Sequential(1),
        "ModuleList([1])": lambda L: L.nn.ModuleList([1]),
        "register_buffer('a.b')": lambda L: L.nn.Module().register_buffer("a.b", None),
        "register_buffer('')": lambda L: L.nn.Module().register_buffer("", None),
        "register_buffer(1)": lambda L: L.nn.Module().register_buffer(1, None),
        "register_parameter tensor": lambda L: L.nn.Module().register_parameter("w", L.ones(1)),
        "add_module('a.b')": lambda L: L.nn.Module().add_module("a.b", L.nn.ReLU()),
        "add_module(int)": lambda L: L.nn.Module().add_module("x", 3),
        "load_state_dict shape": lambda L: L.nn.Linear(2, 2).load_state_dict(
            {"weight": L.ones(3, 3), "bias": L.ones(2)}
        ),
        "load_state_dict missing": lambda L: L.nn.Linear(2, 2).load_state_dict({}),
        "load_state_dict not dict": lambda L: L.nn.Linear(2, 2).load_state_dict([1]),
        "Flatten fwd dims": lambda L: L.nn.Flatten(3)(_t(L, (2, 3))),
        "Softmax dim": lambda L: L.nn.Softmax(5)(_t(L, (2, 3))),
        "MaxPool2d 2d in": lambda L: L.nn.MaxPool2d(2)(_t(L, (3,))),
        "Conv1d fwd 4d": lambda L: L.nn.Conv1d(1, 1, 2)(_t(L, (1, 1, 4, 4))),
        "Module call no forward": lambda L: L.nn.Module()(1),
        "CrossEntropyLoss oob": lambda L: L.nn.CrossEntropyLoss()(_t(L, (2, 3)), L.tensor([3, 0])),
        "LSTM fwd dims": lambda L: L.nn.LSTM(3, 2)(_t(L, (2, 4, 5))),
        "Unflatten bad": lambda L: L.nn.Unflatten(1, (2, 2))(_t(L, (2, 3))),
    }
    for name, f in module_cases.items():
        cases.append((f"nn.{name}", f))
    return cases


# ------------------------------------------------------------------ autograd and optim
def _autograd_cases() -> list[Case]:
    def leaf(L: Any) -> Any:
        return L.ones(3, requires_grad=True)

    return [
        ("backward non-scalar", lambda L: (leaf(L) * 2).backward()),
        ("backward no grad", lambda L: L.ones(3).sum().backward()),
        ("backward twice", lambda L: [y.backward() for y in [(leaf(L) * leaf(L)).sum().exp()] * 2]),
        ("grad non-scalar", lambda L: L.autograd.grad(leaf(L) * 2, leaf(L))),
        ("grad unrelated", lambda L: L.autograd.grad(leaf(L).sum(), leaf(L))),
        (
            "grad_outputs shape",
            lambda L: (lambda x: L.autograd.grad(x * 2, x, grad_outputs=L.ones(2)))(leaf(L)),
        ),
        ("backward gradient shape", lambda L: (leaf(L) * 2).backward(L.ones(4))),
        ("inplace on leaf", lambda L: leaf(L).add_(1)),
        ("register_hook no grad", lambda L: L.ones(2).register_hook(lambda g: g)),
        ("register_hook not callable", lambda L: leaf(L).register_hook(5)),
        ("requires_grad_ non-leaf false", lambda L: (leaf(L) * 2).requires_grad_(False)),
        ("grad setter shape", lambda L: setattr(leaf(L), "grad", L.ones(4))),
        ("grad setter type", lambda L: setattr(leaf(L), "grad", 5)),
        ("detach_ view", lambda L: leaf(L)[:2].detach_()),
        ("numpy of grad tensor", lambda L: leaf(L).numpy()),
        ("no_grad(1)", lambda L: L.no_grad(1)),
        ("set_grad_enabled('a')", lambda L: L.set_grad_enabled("a")),
    ]


def _optim_cases() -> list[Case]:
    def params(L: Any) -> list:
        return [L.nn.Parameter(L.ones(2))]

    specs = [
        ("SGD", {"lr": -1.0}),
        ("SGD", {"lr": 0.1, "momentum": -1}),
        ("SGD", {"lr": 0.1, "weight_decay": -1}),
        ("SGD", {"lr": 0.1, "nesterov": True}),
        ("SGD", {"lr": "a"}),
        ("Adam", {"lr": -1.0}),
        ("Adam", {"betas": (1.5, 0.9)}),
        ("Adam", {"betas": (0.9, -0.1)}),
        ("Adam", {"eps": -1.0}),
        ("Adam", {"weight_decay": -1.0}),
        ("AdamW", {"lr": -1e-3}),
        ("AdamW", {"betas": (0.9, 1.0)}),
        ("RMSprop", {"alpha": -1.0}),
        ("RMSprop", {"momentum": -1.0}),
        ("Adagrad", {"lr_decay": -1.0}),
        ("Adagrad", {"initial_accumulator_value": -1.0}),
        ("SGD", {"lr": 0.1, "bogus": 1}),
    ]
    cases: list[Case] = [
        (f"{n}({kw})", lambda L, n=n, kw=kw: getattr(L.optim, n)(params(L), **kw))
        for n, kw in specs
    ]
    cases += [
        ("SGD([])", lambda L: L.optim.SGD([], lr=0.1)),
        ("SGD(tensor)", lambda L: L.optim.SGD(L.nn.Parameter(L.ones(2)), lr=0.1)),
        ("SGD([1])", lambda L: L.optim.SGD([1], lr=0.1)),
        ("SGD dup params", lambda L: (lambda p: L.optim.SGD([p, p], lr=0.1))(params(L)[0])),
        ("SGD non-leaf", lambda L: L.optim.SGD([L.ones(2, requires_grad=True) * 2], lr=0.1)),
        (
            "add_param_group overlap",
            lambda L: (lambda p: L.optim.SGD([p], lr=0.1).add_param_group({"params": [p]}))(
                params(L)[0]
            ),
        ),
        (
            "load_state_dict groups",
            lambda L: L.optim.SGD(params(L), lr=0.1).load_state_dict(
                {"state": {}, "param_groups": []}
            ),
        ),
        ("StepLR not optim", lambda L: L.optim.lr_scheduler.StepLR(5, 1)),
    ]
    return cases


# ------------------------------------------------------------------ assorted misuse
def _misc_cases() -> list[Case]:
    table = {
        "ce label_smoothing": lambda L: L.nn.functional.cross_entropy(
            _t(L, (2, 3)), L.tensor([0, 1]), label_smoothing=1.5
        ),
        "ce ignore weight shape": lambda L: L.nn.functional.cross_entropy(
            _t(L, (2, 3)), L.tensor([0, 1]), weight=L.ones(2)
        ),
        "ce reduction": lambda L: L.nn.functional.cross_entropy(
            _t(L, (2, 3)), L.tensor([0, 1]), reduction="x"
        ),
        "nll weight": lambda L: L.nn.functional.nll_loss(
            _t(L, (2, 3)), L.tensor([0, 1]), weight=L.ones(4)
        ),
        "einsum bad": lambda L: L.einsum("ij,jk->ik", _t(L, (2, 3)), _t(L, (4, 2))),
        "einsum eq": lambda L: L.einsum("ij->", _t(L, (2, 3)), _t(L, (3,))),
        "einsum char": lambda L: L.einsum("i1->i", _t(L, (2, 3))),
        "permute dup": lambda L: _t(L, (2, 3)).permute(1, 1),
        "expand neg": lambda L: _t(L, (2, 3)).expand(-2, 3),
        "repeat fewer": lambda L: _t(L, (2, 3)).repeat(2),
        "topk big": lambda L: _t(L, (3,)).topk(5),
        "gather dims": lambda L: L.gather(_t(L, (2, 3)), 1, L.tensor([[0, 1, 2, 3]])),
        "gather oob 2d": lambda L: L.gather(_t(L, (2, 3)), 1, L.tensor([[5]])),
        "scatter src shape": lambda L: L.zeros(3).scatter(0, L.tensor([0, 1]), _t(L, (1,))),
        "index_add oob": lambda L: L.zeros(3).index_add(0, L.tensor([5]), _t(L, (1,))),
        "masked_select shape": lambda L: L.masked_select(_t(L, (2, 3)), _t(L, (2, 2)) > 0),
        "masked_fill non-bool": lambda L: _t(L, (3,)).masked_fill(_t(L, (3,)), 1.0),
        "where non-bool": lambda L: L.where(_t(L, (3,)), _t(L, (3,)), _t(L, (3,))),
        "mm dtype": lambda L: L.mm(_t(L, (2, 2)), _t(L, (2, 2), "float64")),
        "matmul int float": lambda L: L.matmul(_t(L, (2, 2), "int64"), _t(L, (2, 2))),
        "cumsum dim": lambda L: _t(L, (2,)).cumsum(dim=3),
        "softmax int": lambda L: L.softmax(_t(L, (2,), "int64"), 0),
        "log int": lambda L: L.log(_t(L, (2,), "int64")),
        "sqrt bool": lambda L: L.sqrt(_t(L, (2,), "bool")),
        "argmax empty": lambda L: L.zeros(0).argmax(),
        "max empty": lambda L: L.zeros(0).max(),
        "min empty dim": lambda L: L.zeros(0, 3).min(0),
        "std empty": lambda L: L.zeros(0).std(),
        "mean empty": lambda L: L.zeros(0).mean(),
        "prod bool": lambda L: _t(L, (2,), "bool").prod(),
        "sum str dim": lambda L: _t(L, (2,)).sum(dim="x"),
        "view non contig": lambda L: _t(L, (2, 3)).t().view(6),
        "item multi": lambda L: _t(L, (2,)).item(),
        "int multi": lambda L: int(_t(L, (2,))),
        "bool ambiguous": lambda L: bool(_t(L, (2,))),
        "numpy grad": lambda L: L.ones(2, requires_grad=True).numpy(),
        "backward int": lambda L: L.ones(2, dtype=L.int64).sum().backward(),
        "Parameter int": lambda L: L.nn.Parameter(L.ones(2, dtype=L.int64)),
        "Linear bias str": lambda L: L.nn.Linear(2, 2, bias="x")(L.ones(2)),
        "Embedding max_norm neg": lambda L: L.nn.Embedding(3, 2, max_norm=-1)(L.tensor([0])),
        "LSTM num_layers 0": lambda L: L.nn.LSTM(2, 2, num_layers=0),
        "LSTM dropout": lambda L: L.nn.LSTM(2, 2, dropout=2.0),
        "GRU hidden 0": lambda L: L.nn.GRU(2, 0),
        "MHA heads": lambda L: L.nn.MultiheadAttention(5, 2),
        "Softmax no dim 4d": lambda L: L.nn.Softmax()(L.ones(1, 1, 1, 1)),
        "clip_grad_norm bad type": lambda L: L.nn.utils.clip_grad_norm_(
            [L.nn.Parameter(L.ones(2))], 1.0, norm_type="x"
        ),
        "manual_seed str": lambda L: L.manual_seed("a"),
        "manual_seed float": lambda L: L.manual_seed(1.5),
        "randint low>high": lambda L: L.randint(5, 2, (2,)),
        "multinomial neg": lambda L: L.multinomial(L.tensor([-1.0, 1.0]), 1),
        "multinomial too many": lambda L: L.multinomial(L.tensor([1.0, 1.0]), 3),
        "bernoulli p": lambda L: L.bernoulli(L.tensor([1.5])),
        "normal std neg": lambda L: L.normal(0.0, -1.0, (2,)),
        "normal_ std neg": lambda L: L.zeros(2).normal_(0, -1),
        "uniform_ from>to": lambda L: L.zeros(2).uniform_(2, 1),
        "dropout2d": lambda L: L.nn.functional.dropout(L.ones(2), p="a"),
        "stack 0d": lambda L: L.stack([]),
        "split sizes sum": lambda L: _t(L, (5,)).split([2, 2]),
        "chunk float": lambda L: _t(L, (5,)).chunk(2.5),
        "flip dup": lambda L: _t(L, (2, 3)).flip(0, 0),
        "roll shifts dims": lambda L: _t(L, (2, 3)).roll((1, 2), (0,)),
        "diag_embed": lambda L: _t(L, (2,)).diag(5.5),
        "clamp min>max": lambda L: _t(L, (3,)).clamp(2, 1),
        "pow neg int": lambda L: L.pow(_t(L, (2,), "int64"), -1),
        "div int0": lambda L: L.div(_t(L, (2,), "int64"), 0, rounding_mode="floor"),
        "fmod int0": lambda L: L.fmod(_t(L, (2,), "int64"), 0),
        "remainder int0": lambda L: L.remainder(_t(L, (2,), "int64"), 0),
        "floor_divide 0": lambda L: L.floor_divide(_t(L, (2,), "int64"), 0),
        "bitwise float": lambda L: L.bitwise_and(_t(L, (2,)), _t(L, (2,))),
        "lshift float": lambda L: _t(L, (2,)) << 1,
        "invert float": lambda L: ~_t(L, (2,)),
        "abs bool": lambda L: L.abs(_t(L, (2,), "bool")),
        "neg bool": lambda L: -_t(L, (2,), "bool"),
        "sub bool": lambda L: _t(L, (2,), "bool") - _t(L, (2,), "bool"),
        "add alpha bool": lambda L: L.add(_t(L, (2,)), _t(L, (2,)), alpha=True),
        "add alpha float int": lambda L: L.add(
            _t(L, (2,), "int64"), _t(L, (2,), "int64"), alpha=1.5
        ),
        "inplace int float": lambda L: _t(L, (2,), "int64").add_(1.5),
        "inplace leaf grad": lambda L: L.ones(2, requires_grad=True).mul_(2),
        "inplace view leaf": lambda L: L.ones(2, requires_grad=True)[0].mul_(2),
        "set_ data shape": lambda L: setattr(L.ones(2), "data", "x"),
        "requires_grad str": lambda L: L.ones(2).requires_grad_("x"),
        "retain_grad nograd": lambda L: L.ones(2).retain_grad(),
        "grad twice": lambda L: (lambda x: [L.autograd.grad(y, x) for y in [x.exp().sum()] * 2])(
            L.ones(2, requires_grad=True)
        ),
        "save object": lambda L: L.save(object(), __import__("io").BytesIO()),
        "load int": lambda L: L.load(5),
    }
    return [(f"misc {name}", fn) for name, fn in table.items()]


def build() -> list[Case]:
    """All cases; names are unique."""
    cases = (
        _broadcast_cases()
        + _type_cases()
        + _conv_cases()
        + _index_cases()
        + _creation_cases()
        + _shape_cases()
        + _nn_cases()
        + _autograd_cases()
        + _optim_cases()
        + _misc_cases()
    )
    names = [n for n, _ in cases]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1][:5]
    return cases
