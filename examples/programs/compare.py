"""Run a program from this folder on PyTorch and on hookgrad, in one process, and compare.

    python examples/programs/compare.py mnist.py --epochs 1

runs ``python mnist.py --epochs 1`` twice in a scratch directory, first with the real ``torch``
and then with ``torch`` aliased to hookgrad (what ``python -m hookgrad.run mnist.py`` does for a
whole interpreter), and compares what the two runs print: the text must be the same and every
number must agree to float32 rounding (``rtol``/``atol``).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import runpy
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def run_program(script: str, args: list[str], workdir: str, alias: bool) -> str:
    """What `script` prints when run as ``__main__`` in `workdir` (``torch`` = hookgrad when
    `alias`)."""
    path = str(HERE / script)
    saved_argv, saved_path, saved_cwd = sys.argv, list(sys.path), os.getcwd()
    out = io.StringIO()
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(path))
    os.chdir(workdir)
    # programs made of several files (model.py, data.py) import them fresh for each library
    local = {p.stem for p in Path(path).parent.glob("*.py")}
    for name in local:
        sys.modules.pop(name, None)
    # programs set process-wide state (``set_default_dtype(float64)``, grad mode); restore it
    # so that what runs after a program in this process sees the library as it was
    import importlib
    lib = importlib.import_module("hookgrad" if alias else "torch")
    saved_state = (lib.get_default_dtype(), lib.is_grad_enabled(),
                   lib.are_deterministic_algorithms_enabled())
    threads = None
    if not alias:
        # one thread: faster for these small programs on a busy machine, and a fixed order of
        # PyTorch's parallel reductions
        import torch
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
    try:
        with contextlib.redirect_stdout(out):
            if alias:
                from hookgrad.testing._as_torch import as_torch
                with as_torch():
                    runpy.run_path(path, run_name="__main__")
            else:
                runpy.run_path(path, run_name="__main__")
    finally:
        lib.set_default_dtype(saved_state[0])
        lib.set_grad_enabled(saved_state[1])
        lib.use_deterministic_algorithms(saved_state[2])
        lib.set_default_device(None)  # (PyTorch's default device is a function mode until unset)
        if threads is not None:
            import torch
            torch.set_num_threads(threads)
        for name in local:
            sys.modules.pop(name, None)
        sys.argv, sys.path[:] = saved_argv, saved_path
        os.chdir(saved_cwd)
    return out.getvalue()


def differences(want: str, got: str, rtol: float = 1e-4, atol: float = 1e-5) -> list[str]:
    """Lines where `got` departs from `want`: other text, or a number outside tolerance."""
    problems = []
    want_lines, got_lines = want.splitlines(), got.splitlines()
    if len(want_lines) != len(got_lines):
        problems.append(f"{len(got_lines)} lines printed, PyTorch printed {len(want_lines)}")
    for i, (w, g) in enumerate(zip(want_lines, got_lines)):
        if _NUMBER.sub("#", w) != _NUMBER.sub("#", g):
            problems.append(f"line {i + 1}: {g!r} != {w!r}")
            continue
        for a, b in zip(_NUMBER.findall(w), _NUMBER.findall(g)):
            x, y = float(a), float(b)
            if math.isnan(x) and math.isnan(y):
                continue
            # a printed value is rounded: allow one unit in its last printed digit
            decimals = len(a.split(".")[1].split("e")[0].split("E")[0]) if "." in a else 0
            slack = 0.5 * 10.0 ** -decimals if "e" not in a.lower() else 0.0
            if not abs(x - y) <= atol + rtol * abs(x) + slack * 1.01:
                problems.append(f"line {i + 1}: {g!r} != {w!r}")
                break
    return problems


def main() -> None:
    script, args = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        want = run_program(script, args, a, alias=False)
        got = run_program(script, args, b, alias=True)
    print(got, end="")
    problems = differences(want, got)
    print("\n".join(problems) if problems else f"{script}: same output as PyTorch")
    raise SystemExit(1 if problems else 0)


if __name__ == "__main__":
    main()
