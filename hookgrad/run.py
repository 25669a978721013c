"""``python -m hookgrad.run script.py args...``: run an unmodified PyTorch script on hookgrad.

Mirrors: ``python script.py args...`` with ``import torch`` (and every ``import torch.<sub>``)
resolving to hookgrad for the whole process, via ``sys.modules`` aliasing
(`hookgrad.testing._as_torch.install`). ``-m module args...`` runs a module the same way.
``sys.argv`` and ``sys.path[0]`` are what the script would see when run by ``python``.
"""

from __future__ import annotations

import os
import runpy
import sys

from hookgrad.testing._as_torch import install

USAGE = "usage: python -m hookgrad.run (script.py | -m module) [args ...]"


def main(argv: list[str] | None = None) -> None:
    """Install the alias and run the script or module named by `argv` as ``__main__``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not args else sys.stdout)
        raise SystemExit(0 if args else 2)
    install()
    if args[0] == "-m":
        if len(args) < 2:
            print(USAGE, file=sys.stderr)
            raise SystemExit(2)
        sys.argv = [args[1], *args[2:]]  # sys.path[0] is already the working directory
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        return
    script = args[0]
    sys.argv = [script, *args[1:]]
    # as ``python script.py``: the script's directory replaces the working directory on the path
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
