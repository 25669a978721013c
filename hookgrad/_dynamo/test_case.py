"""Mirrors ``torch._dynamo.test_case`` (``TestCase``, ``run_tests``)."""

from __future__ import annotations

import unittest

from hookgrad.compile.core import config
from hookgrad.compile.core.counters import counters
from hookgrad._dynamo.eval_frame import reset

__all__ = ["TestCase", "run_tests"]


class TestCase(unittest.TestCase):
    """Resets compiled state and counters around each test; internal errors propagate.

    Mirrors: ``torch._dynamo.test_case.TestCase``.
    """

    def setUp(self) -> None:
        super().setUp()
        reset()
        counters.clear()
        self._patch = config.patch(suppress_errors=False)
        self._patch.__enter__()

    def tearDown(self) -> None:
        self._patch.__exit__(None, None, None)
        reset()
        counters.clear()
        super().tearDown()


def run_tests() -> None:
    """Run the calling module's tests.

    Mirrors: ``torch._dynamo.test_case.run_tests``.
    """
    unittest.main()
