"""The census: every name of PyTorch's scoped surface is in hookgrad or listed as absent.

Reads ``surface.json`` (generated from the oracle by ``python3 -m tests.census.generate``) and
``absent.txt``; needs no torch except for the regeneration check. ``python3 -m tests.census``
prints the coverage per namespace.
"""

from __future__ import annotations

import pytest

from tests.census import check


@pytest.fixture(scope="module")
def rows():
    return check.census()


def test_every_scoped_name_is_present_or_listed_absent(rows):
    missing = {r.namespace: r.missing for r in rows if r.missing}
    assert not missing, (
        "names of PyTorch's surface that hookgrad neither has nor lists in "
        f"tests/census/absent.txt: {missing}")


def test_absent_lines_name_a_namespace_of_the_census_and_give_a_reason():
    surface = check.load_surface()
    for rule in check.load_rules():
        assert rule.namespace in surface, f"absent.txt:{rule.line}: unknown {rule.namespace}"
        assert rule.patterns and len(rule.reason) > 10, f"absent.txt:{rule.line}: no reason"


def test_report_totals_add_up(rows):
    text = check.report(rows)
    total = text.splitlines()[-1].split()
    assert total[0] == "TOTAL"
    names, present, absent, missing = map(int, total[1:5])
    assert names == present + absent + missing == sum(
        len(v) for v in check.load_surface().values())
    assert 0 < check.coverage(rows) <= 100


def test_checker_classifies_present_absent_and_missing(tmp_path):
    rules_file = tmp_path / "absent.txt"
    rules_file.write_text("# comment\ntorch: no_such_*, other -- a reason long enough\n")
    rules = check.load_rules(rules_file)
    assert rules[0].patterns == ["no_such_*", "other"]
    bad = tmp_path / "bad.txt"
    bad.write_text("torch: x\n")
    with pytest.raises(ValueError, match="expected"):
        check.load_rules(bad)
    assert check.resolve("torch.nn.functional") is not None
    assert check.resolve("torch.Tensor").__name__ == "Tensor"
    assert check.resolve("torch.no_such_module") is None


@pytest.mark.oracle
def test_checked_in_census_matches_the_installed_oracle(torch, tmp_path):
    """A fresh interpreter regenerates the census (``dir()`` of a module grows as other code
    imports its submodules, so it is not generated inside this test process)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    if not torch.__version__.startswith("2.13."):
        pytest.skip("the census is generated from torch 2.13")
    root = Path(__file__).resolve().parents[2]
    code = ("import json, sys, warnings; warnings.simplefilter('ignore');"
            "from tests.census import generate; json.dump(generate.build(), sys.stdout)")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                         text=True, timeout=300, check=True)
    stored = json.loads(check.SURFACE.read_text())
    assert json.loads(out.stdout) == stored, "regenerate: python3 -m tests.census.generate"
