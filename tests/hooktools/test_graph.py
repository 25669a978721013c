"""``hookgrad.hooktools.to_dot`` / ``render_graph``: the autograd graph as DOT with hook sites."""

from __future__ import annotations

import collections
import re
import shutil

import pytest

import hookgrad
from hookgrad.hooktools import HookTrace, TrainingMonitor, graph, render_graph, to_dot
from tests.hooktools._models import batch, cnn, mlp, pair

_LABEL = re.compile(r'^  (n\d+) \[label="((?:[^"\\]|\\.)*)", (.*)\];$')


def labels(dot):
    """``{node id: label lines}`` parsed from the DOT text (``\\n`` separates label lines)."""
    out = {}
    for line in dot.splitlines():
        m = _LABEL.match(line)
        if m:
            out[m.group(1)] = m.group(2).split("\\n")
    return out


def torch_node_names(root):
    names, seen, stack = [], set(), [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.append(node.name())
        stack.extend(n for n, _ in node.next_functions)
    return names


@pytest.mark.oracle
@pytest.mark.parametrize(("build", "shape"), [(mlp, (3, 4)), (cnn, (2, 1, 6, 6))],
                         ids=["mlp", "cnn"])
def test_to_dot_nodes_match_torch_graph(torch, build, shape):
    tm, hm = pair(torch, build)
    x, y = batch(shape)
    tloss = torch.nn.functional.cross_entropy(tm(torch.tensor(x)), torch.tensor(y))
    hloss = hookgrad.nn.functional.cross_entropy(hm(hookgrad.tensor(x)), hookgrad.tensor(y))
    dot = to_dot(hloss, names=dict(hm.named_parameters()))
    assert dot.startswith('digraph "autograd graph" {') and dot.endswith("}")
    first = [lines[0] for lines in labels(dot).values()]
    leaf_names = {f"{n} {list(p.shape)}" for n, p in hm.named_parameters()}
    ops = [name for name in first if name not in leaf_names]
    expected = [n for n in torch_node_names(tloss) if n != "torch::autograd::AccumulateGrad"]
    assert collections.Counter(ops) == collections.Counter(expected)
    assert leaf_names <= set(first)
    edges = sum(" -> n" in line for line in dot.splitlines())
    assert edges == 1 + sum(n is not None for node in _nodes(hloss) for n, _ in node.next_functions)


def _nodes(root):
    seen, stack, out = set(), [root.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        out.append(node)
        stack.extend(n for n, _ in node.next_functions)
    return out


def test_to_dot_label_lines_use_dot_newlines_and_show_saved_tensors():
    x = hookgrad.ones(2, 3, requires_grad=True)
    y = (x * 2).exp().sum()
    dot = to_dot(y, names={"x": x})
    assert "\\\\n" not in dot  # a doubled backslash would print a literal "\n" in the picture
    by_name = {lines[0]: lines for lines in labels(dot).values()}
    assert by_name["ExpBackward0"] == ["ExpBackward0", "saved: result[2, 3]"]
    assert by_name["x [2, 3]"] == ["x [2, 3]"]
    y.backward()
    assert labels(to_dot(y)).values().__iter__().__next__() == ["SumBackward0"]
    freed = {lines[0]: lines for lines in labels(to_dot(y)).values()}
    assert freed["ExpBackward0"] == ["ExpBackward0", "saved: result (freed)"]


def test_to_dot_hook_sites_numbered_by_firing_order():
    x = hookgrad.ones(2, requires_grad=True)
    x.register_hook(lambda g: None)
    x.register_post_accumulate_grad_hook(lambda p: None)
    with HookTrace(x) as trace:
        y = x * 3
        y.register_hook(lambda g: None)
        y.grad_fn.register_prehook(lambda g: None)
        z = y.sum()
        z.grad_fn.register_hook(lambda gi, go: None)
        z.backward()
        dot = to_dot(z, names={"x": x}, trace=trace)
    by_name = {lines[0]: lines for lines in labels(dot).values()}
    assert by_name["SumBackward0"][-1] == "hooks: post #0"
    assert by_name["MulBackward0"][-1] == "hooks: tensor #1; pre #2"
    assert by_name["x [2]"][-1] == "hooks: tensor #3; post_acc #4"
    assert [e.kind for e in trace.events] == ["node.post", "tensor", "node.pre", "tensor",
                                              "post_accumulate"]


def test_to_dot_without_trace_marks_kinds_and_unfired_hooks():
    x = hookgrad.ones(2, requires_grad=True)
    y = (x * 3).sum()
    y.grad_fn.register_prehook(lambda g: None)
    with HookTrace() as trace:
        dot_traced = to_dot(y, trace=trace)
    dot = to_dot(y)
    assert {tuple(v) for v in labels(dot).values()} >= {("SumBackward0", "hooks: pre")}
    assert ("SumBackward0", "hooks: pre (not fired)") in {
        tuple(v) for v in labels(dot_traced).values()}


def test_to_dot_escapes_quotes_and_takes_several_roots():
    a = hookgrad.ones(2, requires_grad=True)
    dot = to_dot([a * 2, a + 1], title='my "graph"')
    assert dot.startswith('digraph "my \\"graph\\"" {')
    assert "out0 ->" in dot and "out1 ->" in dot
    assert sum(lines[0] == "leaf [2]" for lines in labels(dot).values()) == 1


def test_to_dot_deep_graph_has_no_recursion_limit():
    x = hookgrad.ones(1, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y + 1
    assert len(labels(to_dot(y))) == 3001


def test_to_dot_report_step_shows_monitor_hooks():
    model = mlp(hookgrad)
    with TrainingMonitor(model), HookTrace(model) as trace:
        loss = model(hookgrad.ones(2, 4)).sum()
        loss.backward()
        dot = to_dot(loss, names=dict(model.named_parameters()), trace=trace)
    by_name = {lines[0]: lines for lines in labels(dot).values()}
    assert by_name["0.weight [8, 4]"][-1].startswith("hooks: post_acc #")
    assert len(trace.events) == 5 + 5 + 6  # forward hooks, output-grad hooks, parameters


def test_render_graph_without_graphviz_writes_dot_only(tmp_path, monkeypatch):
    monkeypatch.setattr(graph.shutil, "which", lambda name: None)
    assert render_graph("digraph g {}", str(tmp_path / "g.svg")) is False
    assert (tmp_path / "g.dot").read_text() == "digraph g {}"
    assert not (tmp_path / "g.svg").exists()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' is not installed")
def test_render_graph_with_graphviz_writes_svg(tmp_path):
    x = hookgrad.ones(2, requires_grad=True)
    assert render_graph(to_dot((x * 2).sum()), str(tmp_path / "g.svg")) is True
    assert "<svg" in (tmp_path / "g.svg").read_text()
