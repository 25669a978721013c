"""``hookgrad trace SCRIPT [ARGS...]``: run a user's script under a `HookTrace` and write a report.

The script runs as ``__main__`` (``sys.argv`` is ``[SCRIPT, *ARGS]``, its folder first on
``sys.path``) inside ``HookTrace(discover=True)``, so every module that runs, every optimizer
that steps and every hook registered (module, tensor, node, global, optimizer) is traced, on
hookgrad and on PyTorch. The report folder gets the firing timeline, the silent hooks with their
reasons and the graph of the last backward pass (`hookgrad.hooktools.trace_report`).

Exit codes: 0 when the script finished; 2 (one line on stderr) for a missing script or bad
arguments; 1 when the script raised (its traceback is printed and put in the report); the
script's own code when it called ``sys.exit(n)``.
"""

from __future__ import annotations

import argparse
import os
import re
import runpy
import sys
import traceback
from typing import Any

from hookgrad.hooktools import HookTrace
from hookgrad.hooktools.trace_report import write_trace_report

__all__ = ["add_trace_parser", "run_trace"]

_IMPORTS_TORCH = re.compile(r"^\s*(import|from)\s+torch\b", re.M)


def add_trace_parser(sub: Any) -> None:
    """Add the ``trace`` subcommand to the ``hookgrad`` parser's subparsers."""
    t = sub.add_parser("trace", help="run a Python script under a trace of every hook",
                       description="Run SCRIPT (PyTorch or hookgrad) with every module, tensor, "
                                   "node, global and optimizer hook traced; write a report "
                                   "folder with the firing timeline, the hooks that did not "
                                   "fire and why, and the graph of the last backward pass.")
    t.add_argument("--out", default="hookgrad-trace", help="report folder (default: %(default)s)")
    t.add_argument("script", help="the Python script to run")
    t.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    t.set_defaults(subparser=t, run=run_trace)


def _script_traceback(exc: BaseException, script: str) -> str:
    """The traceback from the script's first frame on (runpy's and ours left out)."""
    frames = traceback.extract_tb(exc.__traceback__)
    start = next((i for i, f in enumerate(frames) if os.path.abspath(f.filename) == script), 0)
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames[start:]),
             *traceback.format_exception_only(type(exc), exc)]
    return "".join(lines)


def _run_script(script: str, argv: list[str]) -> tuple[int, str | None]:
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [script, *argv]
    sys.path.insert(0, os.path.dirname(script))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return code, None if code == 0 else f"SystemExit: {e.code}"
    except Exception as e:  # noqa: BLE001 - any error of the user's script is reported
        return 1, _script_traceback(e, script)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0, None


def run_trace(args: argparse.Namespace) -> int:
    """Run ``args.script`` under a trace and write the report to ``args.out``."""
    script = os.path.abspath(args.script)
    if not os.path.isfile(script):
        print(f"hookgrad trace: error: no such script: {args.script}", file=sys.stderr)
        return 2
    try:
        with open(script, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError) as e:
        print(f"hookgrad trace: error: cannot read {args.script}: {e}", file=sys.stderr)
        return 2
    if _IMPORTS_TORCH.search(source):
        import torch  # noqa: F401 - imported first so the trace watches PyTorch too
    with HookTrace(discover=True) as trace:
        code, error = _run_script(script, list(args.args))
    try:
        files = write_trace_report(trace, args.out, title=f"hookgrad trace {args.script}",
                                   error=error)
    except OSError as e:
        print(f"hookgrad trace: error: cannot write the report to {args.out}: "
              f"{e.strerror or e}", file=sys.stderr)
        return 2
    if error:
        print(error, file=sys.stderr, end="" if error.endswith("\n") else "\n")
    silent = trace.silent()
    print(f"hookgrad trace: {len(trace.events)} hook firings, {len(silent)} silent hooks; "
          f"wrote {', '.join(os.path.join(args.out, f) for f in files)}")
    return code
