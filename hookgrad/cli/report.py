"""``--report DIR``: metrics.json, training curves, per-layer hook statistics, the hooked graph."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from typing import Any

from hookgrad import nn
from hookgrad.cli.data import UserError
from hookgrad.hooktools import HookTrace, TrainingMonitor, render_graph, to_dot


def write_report(result: Any, directory: str) -> list[str]:
    """Write the report files; returns messages for the user (what was written, what was not).

    Raises:
        UserError: the directory or a file in it cannot be written.
    """
    try:
        return _write_report(result, directory)
    except OSError as e:
        raise UserError(f"cannot write the report to {directory}: {e.strerror or e}") from None


def _write_report(result: Any, directory: str) -> list[str]:
    os.makedirs(directory, exist_ok=True)
    notes = []
    trace_events, dot = _traced_step(result)
    payload = {
        "config": result.config, "data": result.data, "test_accuracy": result.test_accuracy,
        "epochs": result.epochs, "layers": result.layers,
        "hook_trace_one_step": [asdict(e) for e in trace_events],
    }
    if getattr(result, "compile_timing", None) is not None:
        payload["compile_timing"] = result.compile_timing
    path = os.path.join(directory, "metrics.json")
    with open(path, "w") as f:
        json.dump(payload, f, indent=2)
    notes.append(f"wrote {path}")
    picture = os.path.join(directory, "graph.svg")
    if render_graph(dot, picture):
        notes.append(f"wrote {picture} (autograd graph, hook sites numbered in firing order)")
    else:
        notes.append(f"wrote {os.path.join(directory, 'graph.dot')} (install Graphviz 'dot' "
                     "for an SVG picture)")
    try:
        import matplotlib
    except ImportError:
        notes.append("matplotlib is not installed: no PNG plots (pip install 'hookgrad[viz]')")
        return notes
    matplotlib.use("Agg")
    notes += _plots(result, directory)
    return notes


def _traced_step(result: Any) -> tuple[list, str]:
    """One forward/backward on a few test samples with a monitor attached, under a HookTrace.

    The graph is drawn after backward: saved tensors are freed by then (shown as such) but the
    nodes, edges and hook sites remain, and the trace knows which hook fired when.
    """
    model = result.model
    with TrainingMonitor(model), HookTrace(model) as trace:
        out = model(result.sample)
        loss = nn.functional.cross_entropy(out, out.argmax(1))
        loss.backward()
        # drawn while the monitor's parameter hooks are still registered (and traced)
        dot = to_dot(loss, names=dict(model.named_parameters()), trace=trace,
                     title="one training step: autograd graph with hook sites")
    model.zero_grad()
    return trace.events, dot


def _plots(result: Any, directory: str) -> list[str]:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    epochs = [e["epoch"] for e in result.epochs]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epochs, [e["loss"] for e in result.epochs], marker="o")
    ax1.set(title="training loss", xlabel="epoch", ylabel="cross-entropy")
    ax2.plot(epochs, [e["train_acc"] for e in result.epochs], marker="o", label="train")
    ax2.plot(epochs, [e["test_acc"] for e in result.epochs], marker="o", label="held-out test")
    ax2.set(title="accuracy", xlabel="epoch", ylim=(0, 1.01))
    for ax in (ax1, ax2):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax2.legend()
    fig.tight_layout()
    curves = os.path.join(directory, "training.png")
    fig.savefig(curves, dpi=110)
    plt.close(fig)
    keys = [("grad_norm", "gradient norm (post-accumulate hooks)"),
            ("act_mean", "activation mean (forward hooks)"),
            ("act_std", "activation std (forward hooks)"),
            ("dead_frac", "dead ReLU fraction (forward hooks)")]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (key, title) in zip(axes.flat, keys):
        for i, (layer, stats) in enumerate(result.layers.items()):
            if key in stats:  # one colour per layer across all panels
                ax.plot(range(1, len(stats[key]) + 1), stats[key], marker=".", label=layer,
                        color=colors[i % len(colors)])
        ax.set(title=title, xlabel="epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, title="layer")
    axes.flat[0].set_yscale("log")
    fig.tight_layout()
    layers = os.path.join(directory, "layers.png")
    fig.savefig(layers, dpi=110)
    plt.close(fig)
    return [f"wrote {curves}", f"wrote {layers}"]


__all__ = ["write_report"]
