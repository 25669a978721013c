"""The ecosystem examples in examples/ run (each needs its tool installed)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from tests.ecosystem._tools import require_tool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(("script", "tool"), [("torchinfo_summary.py", "torchinfo"),
                                              ("torchviz_graph.py", "torchviz")])
@pytest.mark.filterwarnings("ignore:distutils Version classes are deprecated:DeprecationWarning")
def test_example_runs(script, tool, capsys):
    require_tool(tool)
    runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    assert capsys.readouterr().out.strip()
