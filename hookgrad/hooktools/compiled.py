"""Extension point for compiled code: where each hook in a compiled region went, and why.

`hookgrad.compile` (built separately) is expected to call `note_compiled_hook` once per hook it
meets while compiling a region: ``placement`` is ``"inlined"`` (traced into the compiled graph
as an operator), ``"compiled_autograd"`` (deferred to compiled autograd), ``"eager"`` (left to
the eager engine: registered on an input or parameter, the registration is replayed after the
graph runs) or ``"graph_break"`` (run eagerly after a graph break), with the reason in words. Every open
`HookTrace` gets the note in ``trace.compiled`` and its report lists them; with no trace open
the call does nothing. Nothing here imports the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CompiledHookNote", "note_compiled_hook", "PLACEMENTS"]

PLACEMENTS = ("inlined", "compiled_autograd", "eager", "graph_break")
_OPEN_TRACES: list = []  # appended/removed by HookTrace.__enter__/__exit__


@dataclass(frozen=True)
class CompiledHookNote:
    """One hook met by the compiler: its kind, name, the region, where it went and why.

    Mirrors: no PyTorch counterpart (torch._dynamo explains graph breaks, not hook placement).
    """

    kind: str
    hook: str
    region: str
    placement: str
    reason: str


def note_compiled_hook(kind: str, hook: Any, region: str, placement: str, reason: str) -> None:
    """Tell every open trace where a hook of a compiled region went (see module docstring).

    Raises:
        ValueError: `placement` is not one of `PLACEMENTS`.

    Mirrors: no PyTorch counterpart (hookgrad extension point).
    """
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")
    if not _OPEN_TRACES:
        return
    name = getattr(hook, "__name__", "<unknown>") if not isinstance(hook, str) else hook
    note = CompiledHookNote(kind, name, region, placement, reason)
    for trace in _OPEN_TRACES:
        trace.compiled.append(note)
