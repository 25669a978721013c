"""Write a `HookTrace` as a report folder: the firing timeline, the silent hooks with their
reasons, and the autograd graph of the last backward pass with hook sites numbered in firing
order.

Files: ``index.html`` (timeline and silent-hook tables, the graph inlined when Graphviz made
an SVG), ``trace.json`` (the same rows), ``graph.dot`` always and ``graph.svg`` when Graphviz's
``dot`` program is installed.
"""

from __future__ import annotations

import html
import json
import os
from collections import Counter
from dataclasses import asdict
from typing import Any

from hookgrad.hooktools.graph import render_graph, to_dot

__all__ = ["write_trace_report", "grouped_silent"]

MAX_ROWS = 5000  # timeline rows in the HTML page (trace.json keeps every row)
_STYLE = """body{font-family:Helvetica,Arial,sans-serif;margin:1.5em}table{border-collapse:
collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;
vertical-align:top}th{background:#eef}tr.replaced td{background:#fff3d6}code{font-size:12px}
.err{color:#a00;white-space:pre-wrap}"""


def grouped_silent(silent: list) -> list[tuple[Any, int]]:
    """Silent hooks with identical rows merged (a hook registered every step): (row, count).

    Mirrors: no PyTorch counterpart (hookgrad tool).
    """
    counts = Counter(silent)
    seen: dict = {}
    for s in silent:
        seen.setdefault(s, counts[s])
    return list(seen.items())


def _table(header: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) +
                    "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _timeline(events: list) -> str:
    rows, classes = [], []
    for e in events[:MAX_ROWS]:
        rows.append([e.index, e.kind, e.target, e.hook, f"{e.seconds * 1e3:.3f}", e.args,
                     e.result + (" (replaced)" if e.replaced else ""), e.registered_at])
        classes.append("replaced" if e.replaced else "")
    note = (f"<p>first {MAX_ROWS} of {len(events)} firings (trace.json has all)</p>"
            if len(events) > MAX_ROWS else "")
    return note + _table(["#", "kind", "for", "hook", "ms", "args", "result", "registered at"],
                         rows, classes)


def _silent(silent: list) -> str:
    if not silent:
        return "<p>Every traced hook fired.</p>"
    rows = [[s.kind, s.owner, s.hook, n, s.reason, s.detail, s.registered_at]
            for s, n in grouped_silent(silent)]
    return _table(["kind", "on", "hook", "times", "reason", "why", "registered at"], rows)


def _graph(trace: Any, directory: str) -> tuple[str, list[str]]:
    roots = trace.last_roots
    if roots is None:
        return "<p>No backward pass ran: no graph.</p>", []
    dot = to_dot(roots, names=trace.leaf_names(), trace=trace,
                 title="last backward pass: hook sites numbered in firing order")
    picture = os.path.join(directory, "graph.svg")
    if render_graph(dot, picture):
        with open(picture) as f:
            svg = f.read()
        return svg[svg.find("<svg"):], ["graph.svg", "graph.dot"]
    return ('<p>Graph: <a href="graph.dot">graph.dot</a> (install Graphviz <code>dot</code> '
            "for a picture).</p>"), ["graph.dot"]


def write_trace_report(trace: Any, directory: str, *, title: str = "hook trace",
                       error: str | None = None) -> list[str]:
    """Write the report of `trace` into `directory`; returns the names of the files written.

    Args:
        trace: a `HookTrace` (closed or still open; open keeps hook-site numbers on PyTorch
            module hooks, which are restored to the unwrapped functions on exit).
        directory: created if missing.
        title: the page title (e.g. the script that ran).
        error: a traceback to show at the top (the traced script raised).

    Mirrors: no PyTorch counterpart (hookgrad tool).
    """
    os.makedirs(directory, exist_ok=True)
    silent = trace.silent()
    graph_html, graph_files = _graph(trace, directory)
    with open(os.path.join(directory, "trace.json"), "w") as f:
        json.dump({"events": [asdict(e) for e in trace.events],
                   "silent": [dict(asdict(s), times=n) for s, n in grouped_silent(silent)],
                   "compiled": [asdict(n) for n in trace.compiled], "error": error}, f, indent=1)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"]
    if error:
        parts.append(f"<h2>The script raised</h2><pre class='err'>{html.escape(error)}</pre>")
    parts.append(f"<p>{len(trace.events)} hook firings, {len(silent)} silent hooks, "
                 f"{len(trace.runs)} backward passes, {len(trace.modules)} modules ran.</p>")
    if trace.compiled:
        parts += ["<h2>Hooks in compiled regions</h2>", _table(
            ["kind", "hook", "region", "placement", "why"],
            [[n.kind, n.hook, n.region, n.placement, n.reason] for n in trace.compiled])]
    parts += ["<h2>Silent hooks: why didn't my hook fire?</h2>", _silent(silent),
              "<h2>Autograd graph of the last backward pass</h2>", graph_html,
              "<h2>Firing timeline</h2>", _timeline(trace.events), "</body></html>"]
    with open(os.path.join(directory, "index.html"), "w") as f:
        f.write("\n".join(parts))
    return ["index.html", "trace.json", *graph_files]
