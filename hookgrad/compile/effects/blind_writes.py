"""Which containers a trace only *wrote* (appended to, stored into) without reading them.

NOTE [Blind writes]
A list or dict held by a global or a closure cell that the region mutates has its changes
replayed after the graph runs (`effects`). Leaving it unguarded is only sound when nothing the
trace computed depended on its contents: ``LOG.append(y)`` is a blind write, but
``S.append(len(S))`` or ``D["n"] = D["n"] + 1`` read the container, and the value read was baked
into the replay (the issue's ``[0, 0, 0]`` instead of ``[0, 1, 2]``). The tracer executes the
user's code and cannot see a ``len()`` of a plain list, so the code is read instead: every load
of a name bound to the container, in every function the trace called, must be immediately used
by a blind write (``name.append``/``extend``/``insert``, ``name.update``, or
``name[key] = value`` with a constant or local key). Anything else (a ``len()``, an item read,
passing the container on, a second name for it, reaching it through an attribute or another
container) counts as a read, and the container is guarded on its state before the trace like
any other (so the next call recompiles, as PyTorch's guard on it does).
"""

from __future__ import annotations

import dis
import os
import types
from typing import Any

__all__ = ["written_blindly", "OWN_DIR"]

_LIST_WRITES = frozenset({"append", "extend", "insert"})
_DICT_WRITES = frozenset({"update"})
_NAME_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_CELL_LOADS = frozenset({"LOAD_DEREF", "LOAD_CLASSDEREF"})
_KEY_LOADS = frozenset({"LOAD_CONST", "LOAD_FAST"})
OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INSTRUCTIONS: dict[Any, list] = {}


def _instructions(code: types.CodeType) -> list:
    hit = _INSTRUCTIONS.get(code)
    if hit is None:
        if len(_INSTRUCTIONS) > 4096:
            _INSTRUCTIONS.clear()
        hit = _INSTRUCTIONS[code] = [i for i in dis.get_instructions(code)
                                     if i.opname not in ("CACHE", "EXTENDED_ARG")]
    return hit


def _names(trace: Any, container: Any) -> tuple[set[str], set[str]] | None:
    """(global names, cell names) bound to `container`; None when it is reachable another way
    (an argument, an attribute, an item of another container)."""
    if any(v is container for v in trace.ctx.args.values()):
        return None
    snap = trace.snapshot
    for owner, old in (*snap.lists, *snap.dicts):
        items = old.values() if isinstance(old, dict) else old
        if owner is not container and any(v is container for v in items):
            return None
    for _obj, old in snap.objs:
        if any(v is container for v in old.values()):
            return None
    gnames = {k for _g, old in snap.globals for k, v in old.items() if v is container}
    cnames: set[str] = set()
    fns = [trace.fn, *(v for _s, v in trace.index.by_id.values()
                       if isinstance(v, types.FunctionType))]
    for fn in fns:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                if cell.cell_contents is container:
                    cnames.add(name)
            except ValueError:  # an empty cell
                continue
    return gnames, cnames


def _blind_use(ins: list, i: int, is_list: bool) -> bool:
    nxt = ins[i + 1] if i + 1 < len(ins) else None
    if nxt is None:
        return False
    if nxt.opname in ("LOAD_METHOD", "LOAD_ATTR"):
        return nxt.argval in (_LIST_WRITES if is_list else _DICT_WRITES)
    after = ins[i + 2] if i + 2 < len(ins) else None
    return (not is_list and nxt.opname in _KEY_LOADS and after is not None
            and after.opname == "STORE_SUBSCR")


def written_blindly(trace: Any, container: Any) -> bool:
    """True when every use of `container` by the traced code was a blind write (the NOTE)."""
    names = _names(trace, container)
    if names is None:
        return False
    gnames, cnames = names
    is_list = type(container) is list
    for code in trace.called_codes:
        if code.co_filename.startswith(OWN_DIR):
            continue  # hookgrad's own code reaches user containers only through arguments
        if not (gnames & set(code.co_names) or cnames & set(code.co_freevars + code.co_cellvars)):
            continue
        ins = _instructions(code)
        for i, instr in enumerate(ins):
            if (instr.opname in _NAME_LOADS and instr.argval in gnames) or (
                    instr.opname in _CELL_LOADS and instr.argval in cnames):
                if not _blind_use(ins, i, is_list):
                    return False
    return True
