"""``python -m bench``: see `bench/run.py`."""

from bench.run import main

if __name__ == "__main__":  # not when a worker process re-imports this module (spawn)
    raise SystemExit(main())
