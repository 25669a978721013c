"""The ``hookgrad`` command line (``hookgrad train`` / ``python -m hookgrad train``)."""

from __future__ import annotations

import sys

from hookgrad.cli.main import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
