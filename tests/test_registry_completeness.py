"""The op table is complete (architecture §7.5): each primitive input has a VJP rule or an explicit
"not differentiable: why", every primitive has a JVP decision, and every primitive is exercised
by at least one OpSpec of the generic tests.
"""

from __future__ import annotations

from hookgrad._ops.registry import PRIMITIVES, missing_jvp, missing_rules
from hookgrad.testing._opspec import all_specs


def test_every_input_has_a_vjp_or_a_reason():
    missing = missing_rules()
    assert not missing, f"inputs with neither a VJP rule nor a nondifferentiable reason: {missing}"


def test_nondifferentiable_reasons_are_explanations():
    empty = [f"{p.name}.{inp}" for p in PRIMITIVES.values()
             for inp, why in p.nondifferentiable.items() if not (isinstance(why, str) and why)]
    assert not empty, f"nondifferentiable entries without a reason: {empty}"


def test_every_primitive_has_a_jvp_decision():
    missing = missing_jvp()
    assert not missing, f"primitives without a JVP decision: {missing}"


def test_opspec_prims_are_registered_primitives():
    unknown = {s.name: [p for p in s.prims if p not in PRIMITIVES]
               for s in all_specs() if any(p not in PRIMITIVES for p in s.prims)}
    assert not unknown, f"OpSpecs naming unknown primitives: {unknown}"


def test_every_primitive_appears_in_an_opspec():
    covered = {p for s in all_specs() for p in s.prims}
    missing = sorted(set(PRIMITIVES) - covered)
    assert not missing, f"{len(missing)} primitives without an OpSpec: {missing}"


def test_every_opspec_has_samples():
    empty = [s.name for s in all_specs() if not s.samples]
    assert not empty, f"OpSpecs without samples: {empty}"
