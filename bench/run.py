"""Run every workload for hookgrad and (when installed) PyTorch; print a ratio table, write JSON.

Usage: ``python -m bench [--quick] [--peers] [--clock {cpu,wall}] [--json PATH] [--only NAME ...]``.
Each library runs in its own worker process (`bench._worker`), one thread each, after a
warm-up; each sample times a loop of steps, samples of the two libraries alternate, and the
reported time is the median over samples. The default clock is the worker's CPU time, which a
machine shared with other work disturbs far less than elapsed time (``--clock wall`` for
elapsed time). A compiled workload (``*_compile``) has three columns: hookgrad compiled,
PyTorch eager (the same step without ``torch.compile``) and PyTorch's default-backend
``torch.compile`` (inductor), plus each compiled library's time for its first two calls (trace, compile,
first runs) with cold caches: a compiled row runs in fresh worker processes whose on-disk
compile caches start empty (wall clock). ``--peers`` also times the installed pure-Python autograd peers
(`bench.peers`), each in its own worker too. Never used by unit tests for timing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import statistics
from typing import Any

from bench import _worker, peers
from bench import workloads as W

WORKLOADS = W.TABLE


class _Worker:
    """The parent's handle on one library's worker process."""

    def __init__(self, lib_name: str) -> None:
        ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: only this library
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker.serve, args=(lib_name, child), daemon=True)
        self.process.start()

    def call(self, *request: Any) -> tuple[bool, Any]:
        self.conn.send(request)
        return self.conn.recv()

    def close(self) -> None:
        self.conn.send(("stop",))
        self.process.join(timeout=30)


def _lib_names(with_peers: bool = False) -> tuple[list[str], list[str]]:
    """(the libraries to time, one-line notes on the peers left out)."""
    names = ["hookgrad"]
    if importlib.util.find_spec("torch") is not None:
        names.append("torch")
    if not with_peers:
        return names, []
    peer_names, notes = peers.installed()
    return names + peer_names, notes


def _first_values_agree(firsts: dict[str, float]) -> bool | None:
    """Every library's first value equals PyTorch's (hookgrad's when torch did not run)."""
    ref = firsts.get("torch", firsts.get("hookgrad"))
    if ref is None or len(firsts) < 2:
        return None
    return all(abs(v - ref) <= 1e-3 * max(1.0, abs(ref)) for v in firsts.values())


def _columns(name: str, workers: dict[str, _Worker]) -> list[tuple[str, str, bool]]:
    """(column, worker, compiled) per timed column of a row. A compiled workload's "torch"
    column is PyTorch eager (the workload built without ``torch.compile``) and its
    "torch_compile" column PyTorch's default-backend ``torch.compile``."""
    columns = [(lib_name, lib_name, True) for lib_name in workers]
    if not name.endswith(W.COMPILED_SUFFIX) or "torch" not in workers:
        return columns
    return [(c, w, c != "torch") for c, w, _ in columns] + [("torch_compile", "torch", True)]


def _row(name: str, workers: dict[str, _Worker], samples: int, min_time: float,
         clock: str) -> dict:
    _, divisor, unit, desc = WORKLOADS[name]
    row: dict = {"unit": unit, "description": desc}
    firsts, loops = {}, {}
    columns = _columns(name, workers)
    for column, lib_name, compiled in columns:
        worker = workers[lib_name]
        ok, value = worker.call("build", name, column, compiled)
        if ok:
            if value[1] is not None:
                row[column + "_first_call_s"] = value[1]
            ok, n = worker.call("calibrate", column, min_time, clock)
            if ok:
                firsts[column], loops[column] = value[0], (worker, n)
                continue
            value = n
        row[column] = None
        row[column + "_error"] = value
    # Alternating samples (hookgrad, torch, hookgrad, torch...): a slow phase of a shared
    # machine hits both libraries alike, so the ratio stays meaningful when times drift.
    times: dict[str, list[float]] = {column: [] for column in loops}
    for _ in range(samples):
        for column, (worker, n) in loops.items():
            ok, t = worker.call("sample", column, n, clock)
            if ok:
                times[column].append(t)
    scale = 1e6 if unit.startswith("us") else 1e3
    for column, ts in times.items():
        row[column] = statistics.median(ts) * scale / divisor if ts else None
    if (agrees := _first_values_agree(firsts)) is not None:
        row["first_value_agrees"] = agrees
    return row


def run(names: list[str], quick: bool, clock: str = "cpu", with_peers: bool = False) -> dict:
    samples, min_time = (3, 0.05) if quick else (7, 0.2)
    lib_names, peer_notes = _lib_names(with_peers)
    workers = {lib_name: _Worker(lib_name) for lib_name in lib_names}
    try:
        results: dict = {"quick": quick, "clock": clock, "samples": samples,
                         "min_sample_s": min_time, "processes": "one per library",
                         "versions": {k: w.call("versions")[1] for k, w in workers.items()},
                         "peers": [k for k in workers if k in peers.PEERS],
                         "peer_notes": peer_notes,
                         "peer_labels": {k: workers[k].call("notes")[1]
                                         for k in workers if k in peers.PEERS},
                         "workloads": {}}
        if "chain_hooks" in names and "chain" not in names:
            names = ["chain", *names]  # chain_hooks is reported relative to chain
        for name in names:
            if name.endswith(W.COMPILED_SUFFIX):  # fresh processes: every compile cache cold
                fresh = {lib_name: _Worker(lib_name) for lib_name in workers}
                try:
                    results["workloads"][name] = _row(name, fresh, samples, min_time, clock)
                finally:
                    for worker in fresh.values():
                        worker.close()
                continue
            results["workloads"][name] = _row(name, workers, samples, min_time, clock)
        results["peak_memory_mb_mlp64_step"] = {
            "hookgrad (tracemalloc)": workers["hookgrad"].call("peak_memory")[1]}
    finally:
        for worker in workers.values():
            worker.close()
    _per_hook(results["workloads"], list(workers))
    for row in results["workloads"].values():
        if row.get("hookgrad") and row.get("torch"):
            row["ratio"] = row["hookgrad"] / row["torch"]
        if row.get("hookgrad") and row.get("torch_compile"):
            row["ratio_compile"] = row["hookgrad"] / row["torch_compile"]
        for peer in results["peers"]:
            if row.get(peer) and row.get("torch"):
                row[peer + "_ratio"] = row[peer] / row["torch"]
    return results


def _per_hook(rows: dict, lib_names: list[str]) -> None:
    """chain_hooks reports the *extra* cost per hook: subtract the plain chain per hook."""
    if "chain_hooks" not in rows:
        return
    base, hooked = rows["chain"], rows["chain_hooks"]
    hooks = W.CHAIN_OPS // 2
    for lib_name in lib_names:
        if base.get(lib_name) is not None and hooked.get(lib_name) is not None:
            hooked[lib_name] = (hooked[lib_name] * hooks - base[lib_name] * W.CHAIN_OPS) / hooks


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3g}"


def _peer_cells(results: dict, name: str, row: dict) -> str:
    """`` | time | ratio`` per peer: "-" where the peer cannot express the workload."""
    cells = ""
    for peer in results.get("peers", []):
        if _unavailable(row, peer):
            cells += " | - | -"
            continue
        label = results["peer_labels"].get(peer, {}).get(name)
        ratio = _fmt(row.get(peer + "_ratio")) + (f" ({label})" if label else "")
        cells += f" | {_fmt(row.get(peer))} | {ratio}"
    return cells


def _unavailable(row: dict, lib: str) -> bool:
    return str(row.get(lib + "_error", "")).startswith(peers.Unavailable.__name__ + ":")


def format_table(results: dict) -> str:
    """The eager rows' table (with the peers' columns), then the compiled rows' table."""
    titles = [peers.PEERS[p].title for p in results.get("peers", [])]
    head = "".join(f" {t} | {t} ratio |" for t in titles)
    lines = [f"| workload | unit | hookgrad | PyTorch | ratio |{head} same first loss |",
             "|---|---|---|---|---|" + "---|---|" * len(titles) + "---|"]
    compiled = []
    for name, row in results["workloads"].items():
        if name.endswith(W.COMPILED_SUFFIX):
            compiled.append((name, row))
            continue
        lines.append(
            f"| {name} | {row['unit']} | {_fmt(row.get('hookgrad'))} | "
            f"{_fmt(row.get('torch'))} | {_fmt(row.get('ratio'))}"
            f"{_peer_cells(results, name, row)} | {row.get('first_value_agrees', 'n/a')} |"
        )
        lines += _failures(results, row)
    if compiled:
        lines += ["", COMPILED_HEAD, "|---|---|---|---|---|---|---|---|---|---|"]
        for name, row in compiled:
            cells = [row.get(k) for k in ("hookgrad", "torch", "torch_compile", "ratio",
                                          "ratio_compile", "hookgrad_first_call_s",
                                          "torch_compile_first_call_s")]
            lines.append(f"| {name} | {row['unit']} | " + " | ".join(map(_fmt, cells))
                         + f" | {row.get('first_value_agrees', 'n/a')} |")
            lines += _failures(results, row)
    return "\n".join(lines + [f"- {note}" for note in results.get("peer_notes", [])])


COMPILED_HEAD = ("| compiled workload | unit | hookgrad compiled | PyTorch eager | torch.compile | "
                 "ratio to eager | ratio to torch.compile | hookgrad first 2 calls s | "
                 "torch.compile first 2 calls s | same first loss |")


def _failures(results: dict, row: dict) -> list[str]:
    return [f"|  ({lib} failed: {row[lib + '_error'][:80]}) | | | | | |"
            for lib in ("hookgrad", "torch", "torch_compile", *results.get("peers", []))
            if row.get(lib + "_error") and not _unavailable(row, lib)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples (< 2 minutes)")
    parser.add_argument("--json", default="bench_results.json", help="where to write results")
    parser.add_argument("--only", nargs="*", choices=sorted(WORKLOADS), help="subset")
    parser.add_argument("--peers", action="store_true",
                        help="also time the installed pure-Python peers (HIPS autograd, MyGrad)")
    parser.add_argument("--clock", choices=sorted(_worker.CLOCKS), default="cpu",
                        help="cpu: process CPU time (robust on a shared machine; default); "
                             "wall: elapsed time")
    args = parser.parse_args(argv)
    results = run(args.only or list(WORKLOADS), args.quick, args.clock, args.peers)
    print(format_table(results))
    print("peak memory of one MLP step:", results["peak_memory_mb_mlp64_step"])
    with open(args.json, "w") as f:
        json.dump(results, f, indent=2)
    return 0
