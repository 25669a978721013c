"""The op table: one `Primitive` per differentiable ATen-level operation, declared with `defop`.

Layer 1 (no Tensor import). See architecture.md §4.

NOTE [Rule arguments]
A VJP rule is a function whose parameter *names* say what it needs:
  ``grad``             the gradient w.r.t. the (single) output; ``grads`` for multi-output ops,
                       a tuple with ``None`` where an output got no gradient
  ``ops``              the operations the rule computes with (NOTE [Rule operations] in
                       _rule_ops.py): with it, the rule's values are arrays or tensors, as the
                       engine decided for the pass; without it, always tensors
  ``result``           the op's output (``results`` for multi-output ops); must be in ``saves``
  an input name        that input's forward value (``self``, ``other``...); must be in ``saves``
  ``<input>_shape``    the input's shape, always recorded (PyTorch formulas use sizes freely)
  ``<input>_dtype``    the input's dtype, always recorded
  a param name         a non-tensor argument of the op (``dim``, ``keepdim``, ``exponent``...)
`defop` checks every name at import time, so a typo fails when hookgrad is imported rather
than in the middle of a backward pass. JVP rules take the input's tangent as their first
positional argument, then named values as above.

`saves` is also the pack order of saved-tensor hooks (spec §1.5: ``mul`` packs ``other`` then
``self``). Only the values a rule of an input that needs a gradient uses are saved (PyTorch
saves ``other`` only for ``a * c`` with constant ``c``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

VjpRule = Callable[..., Any]
JvpRule = Callable[..., Any]

PRIMITIVES: dict[str, Primitive] = {}

_ALWAYS = ("grad", "grads", "ops")


@dataclass(frozen=True, slots=True, eq=False)
class Primitive:
    """Everything about one primitive op (architecture.md §4)."""

    name: str
    impl: Callable[..., Any]
    inputs: tuple[str, ...]
    params: tuple[str, ...]
    vjp: Mapping[str, VjpRule]
    jvp: Mapping[str, JvpRule] | str | None
    saves: tuple[str, ...]
    node_name: str
    nondifferentiable: Mapping[str, str]
    num_outputs: int  # 1, or the exact count, or -1 for "a tuple of any length"
    nondifferentiable_outputs: tuple[int, ...]
    view: bool  # outputs are views of input 0 (share memory and version counter)
    diff_inputs: tuple[int, ...]  # positions of inputs with a VJP rule: one graph edge each
    defaults: Mapping[str, Any]  # param defaults read from impl's signature (absent params)
    # derived at registration: rule -> tuple of parameter names, input -> saved names it uses
    rule_args: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    uses: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # how the op runs under vmap: declared in _ops/_batching*.py (None: per-sample fallback)
    batch: Callable[..., Any] | None = None
    # (result, inputs) -> result in PyTorch's layout: set for elementwise ops by _ops/_layout.py
    layout: Callable[..., Any] | None = None
    # per input: the saved values PyTorch's backward op of this node reads (its gradient under
    # create_graph depends on them), and whether their second-order gradient is zeros (NOTE
    # [Double-backward reads] in _double_backward.py)
    double_reads: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    double_zero: bool = False

    @property
    def multi_output(self) -> bool:
        return self.num_outputs != 1

    def __repr__(self) -> str:
        return f"<Primitive {self.name}>"


def camel(name: str) -> str:
    """``log_softmax`` -> ``LogSoftmax`` (PyTorch's node class naming)."""
    return "".join(part[:1].upper() + part[1:] for part in name.strip("_").split("_"))


def _param_names(fn: Callable[..., Any]) -> tuple[str, ...]:
    return tuple(inspect.signature(fn).parameters)


def _param_defaults(impl: Callable[..., Any], params: tuple[str, ...]) -> dict[str, Any]:
    try:
        sig = inspect.signature(impl)
    except (TypeError, ValueError):  # NumPy ufuncs have no signature: they take no params
        return {}
    return {
        p.name: p.default
        for p in sig.parameters.values()
        if p.name in params and p.default is not inspect.Parameter.empty
    }


def _is_output_k(name: str) -> bool:
    """``result0``, ``result1``...: output k alone (PyTorch's ``_saved_result1``)."""
    return name.startswith("result") and name[6:].isdigit()


def _check_names(name: str, inputs: tuple[str, ...], vjp: dict, nondiff: dict,
                 saves: tuple[str, ...]) -> None:
    """Every rule, nondifferentiable entry and saved value refers to a real input."""
    for key in vjp:
        if key not in inputs:
            raise ValueError(f"{name}: vjp rule for unknown input {key!r}")
    for key in nondiff:
        if key not in inputs:
            raise ValueError(f"{name}: nondifferentiable entry for unknown input {key!r}")
        if key in vjp:
            raise ValueError(f"{name}: input {key!r} has a vjp and is marked nondifferentiable")
    for s in saves:
        if s not in inputs and s not in ("result", "results") and not _is_output_k(s):
            raise ValueError(f"{name}: saves unknown value {s!r}")


def _rule_arguments(name: str, inputs: tuple[str, ...], params: tuple[str, ...],
                    saves: tuple[str, ...], vjp: dict, jvp: Any) -> tuple[dict, dict]:
    """Parameter names of every rule (checked against what is available) and saved values used."""
    available = set(_ALWAYS) | set(params) | set(saves)
    available |= {f"{i}_shape" for i in inputs} | {f"{i}_dtype" for i in inputs}
    rule_args: dict[str, tuple[str, ...]] = {}
    uses: dict[str, tuple[str, ...]] = {}
    for key, rule in vjp.items():
        args = _param_names(rule)
        unknown = [a for a in args if a not in available]
        if unknown:
            raise ValueError(f"{name}: vjp rule for {key!r} asks for unavailable {unknown}")
        rule_args[key] = args
        uses[key] = tuple(a for a in saves if a in args)
    if isinstance(jvp, Mapping):
        for key, rule in jvp.items():
            if key not in inputs:
                raise ValueError(f"{name}: jvp rule for unknown input {key!r}")
            args = _param_names(rule)[1:]
            unknown = [a for a in args if a not in available and a not in ("result", "results")
                       and not _is_output_k(a)]
            if unknown:
                raise ValueError(f"{name}: jvp rule for {key!r} asks for unavailable {unknown}")
            rule_args["jvp:" + key] = args
    elif jvp not in (None, "linear", "elementwise"):
        raise ValueError(f"{name}: jvp must be a mapping, 'linear', 'elementwise' or None")
    return rule_args, uses


def defop(
    name: str,
    *,
    impl: Callable[..., Any],
    inputs: tuple[str, ...] = ("self",),
    params: tuple[str, ...] = (),
    vjp: Mapping[str, VjpRule] | None = None,
    jvp: Mapping[str, JvpRule] | str | None = None,
    saves: tuple[str, ...] = (),
    node_name: str = "",
    nondifferentiable: Mapping[str, str] | None = None,
    num_outputs: int = 1,
    nondifferentiable_outputs: tuple[int, ...] = (),
    view: bool = False,
    double_reads: Mapping[str, tuple[str, ...]] | None = None,
    double_zero: bool = False,
) -> Primitive:
    """Validate and register one primitive; returns it (see NOTE [Rule arguments])."""
    if name in PRIMITIVES:
        raise ValueError(f"primitive {name!r} is already registered")
    vjp = dict(vjp or {})
    nondiff = dict(nondifferentiable or {})
    _check_names(name, inputs, vjp, nondiff, saves)
    nd = sorted(nondifferentiable_outputs)
    if nd and (num_outputs < 1 or nd != list(range(num_outputs - len(nd), num_outputs))):
        # The engine gives a node one slot per differentiable output (PyTorch's layout).
        raise ValueError(f"{name}: nondifferentiable outputs must be the last outputs")
    rule_args, uses = _rule_arguments(name, inputs, params, saves, vjp, jvp)
    for key, reads in (double_reads or {}).items():
        if key not in vjp or any(r not in saves for r in reads):
            raise ValueError(f"{name}: double_reads names an input without a rule or an "
                             f"unsaved value: {key!r} -> {reads!r}")
    prim = Primitive(
        name=name,
        impl=impl,
        inputs=tuple(inputs),
        params=tuple(params),
        vjp=vjp,
        jvp=jvp,
        saves=tuple(saves),
        node_name=node_name or f"{camel(name)}Backward0",
        nondifferentiable=nondiff,
        num_outputs=num_outputs,
        nondifferentiable_outputs=tuple(nondifferentiable_outputs),
        view=view,
        diff_inputs=tuple(i for i, n in enumerate(inputs) if n in vjp),
        defaults=_param_defaults(impl, params),
        rule_args=rule_args,
        uses=uses,
        double_reads=dict(double_reads or {}),
        double_zero=double_zero,
    )
    PRIMITIVES[name] = prim
    return prim


def missing_rules() -> list[str]:
    """Inputs with neither a VJP rule nor an explicit "not differentiable: why" entry."""
    out = []
    for prim in PRIMITIVES.values():
        for inp in prim.inputs:
            if inp not in prim.vjp and inp not in prim.nondifferentiable:
                out.append(f"{prim.name}.{inp}")
    return out


def missing_jvp() -> list[str]:
    """Primitives with a differentiable input and no JVP decision."""
    return [p.name for p in PRIMITIVES.values() if p.vjp and p.jvp is None]


__all__ = ["Primitive", "PRIMITIVES", "defop", "camel", "missing_rules", "missing_jvp"]
