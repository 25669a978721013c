"""Render the autograd graph as DOT: nodes, edges, saved tensors, leaves and hook sites.

With a `HookTrace`, every hook site is numbered in firing order (``#3 tensor``); without one,
hook sites are marked with their kind. DOT text is always produced; `render_graph` turns it into
SVG/PNG when Graphviz's ``dot`` program is installed.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

__all__ = ["to_dot", "render_graph"]


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _hook_marks(hooks: list, trace: Any) -> list[str]:
    marks = []
    for kind, fn in hooks:
        if trace is not None:
            idx = trace.firing_indices(fn)
            marks.append(f"{kind} #{','.join(map(str, idx))}" if idx else f"{kind} (not fired)")
        else:
            marks.append(kind)
    return marks


def _node_hooks(node: Any) -> list:
    hooks = []
    for _, reg in getattr(node, "_tensor_hooks", None) or []:
        hooks += [("tensor", fn) for fn in reg.values()]
    var = getattr(node, "variable", None)
    if var is not None:
        hooks += [("tensor", fn) for fn in (var._backward_hooks or {}).values()]
        hooks += [("post_acc", fn) for fn in (var._post_accumulate_grad_hooks or {}).values()]
    hooks += [("pre", fn) for fn in (getattr(node, "_pre_hooks", None) or {}).values()]
    hooks += [("post", fn) for fn in (getattr(node, "_post_hooks", None) or {}).values()]
    if getattr(node, "_retain_hooks", None):
        hooks += [("retain_grad", None)]
    return hooks


def _saved_label(node: Any) -> str:
    saved = getattr(node, "_saved", None) or {}
    parts = []
    for name, s in saved.items():
        items = s if isinstance(s, tuple) else (s,)
        for st in items:
            data = getattr(st, "_data", None)
            t = getattr(st, "_tensor", None)
            shape = data.shape if data is not None else (t._data.shape if t is not None else None)
            parts.append(f"{name}{list(shape)}" if shape is not None else f"{name} (freed)")
    return ", ".join(parts)


def to_dot(roots: Any, *, names: dict | None = None, trace: Any = None,
           title: str = "autograd graph") -> str:
    """DOT text of the graph behind `roots` (a tensor or a sequence of tensors).

    Args:
        roots: output tensor(s) whose ``grad_fn`` graph is drawn.
        names: optional ``{name: tensor}`` (e.g. ``dict(model.named_parameters())``) to label
            leaves.
        trace: optional `HookTrace` to number hook sites by firing order.

    Mirrors: no PyTorch counterpart (torchviz draws similar graphs).
    """
    roots = [roots] if hasattr(roots, "grad_fn") else list(roots)
    leaf_names = {id(t): n for n, t in (names or {}).items()}
    lines = [f'digraph "{_esc(title)}" {{', "  rankdir=BT;", '  node [fontname="Helvetica"];']
    ids: dict[int, str] = {}
    stack = []
    for i, r in enumerate(roots):
        rid = f"out{i}"
        lines.append(f'  {rid} [label="output {list(r.shape)}", shape=box, style=filled, '
                     'fillcolor="#d0e8ff"];')
        if r.grad_fn is not None:
            stack.append(r.grad_fn)
            lines.append(f"  {rid} -> n{id(r.grad_fn)} [dir=back];")
    while stack:  # iterative walk: graphs can be deep
        node = stack.pop()
        if id(node) in ids:
            continue
        nid = f"n{id(node)}"
        ids[id(node)] = nid
        var = getattr(node, "variable", None)
        if var is not None:
            label = _esc(f"{leaf_names.get(id(var), 'leaf')} {list(var.shape)}")
            style = 'shape=box, style=filled, fillcolor="#e8f5d0"'
        else:
            label = _esc(node.name())  # escape the parts: "\\n" joins lines in DOT
            saved = _saved_label(node)
            if saved:
                label += f"\\nsaved: {_esc(saved)}"
            style = "shape=ellipse"
        marks = _hook_marks(_node_hooks(node), trace)
        if trace is not None and not hasattr(node, "_tensor_hooks"):  # PyTorch: hooks in C++
            marks += [f"{k} #{i}" for k, i in getattr(trace, "node_marks", lambda n: [])(node)]
        if marks:
            label += "\\nhooks: " + _esc("; ".join(marks))
            style += ', color="#d04000", penwidth=2'
        lines.append(f'  {nid} [label="{label}", {style}];')
        for nxt, _slot in node.next_functions:
            if nxt is not None:
                lines.append(f"  {nid} -> n{id(nxt)} [dir=back];")
                stack.append(nxt)
    lines.append("}")
    return "\n".join(lines)


def render_graph(dot_text: str, path: str) -> bool:
    """Write `dot_text` to ``path`` as SVG/PNG (by extension) if Graphviz is installed.

    Always writes the DOT text next to it (``path`` with ``.dot``); returns whether the picture
    was made.
    """
    base = path.rsplit(".", 1)[0]
    with open(base + ".dot", "w") as f:
        f.write(dot_text)
    exe = shutil.which("dot")
    if exe is None:
        return False
    fmt = path.rsplit(".", 1)[-1] if "." in path else "svg"
    subprocess.run([exe, f"-T{fmt}", "-o", path, base + ".dot"], check=True,
                   capture_output=True, timeout=60)
    return True
