"""The repository stands alone (docs/architecture.md §11): nothing points outside it, and every
"spec §N" a comment cites exists in the contract of that file's subsystem (docs/README.md)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ["README.md", "docs", "hookgrad", "tests", "bench", "examples", ".ci"]
OUTSIDE = re.compile(r"\.\./shared|shared/spec|shared/design|(?<![\w/])spec/\w+\.md")
CITE = re.compile(r"\bspec §(\d+(?:\.\d+)?)")

# Which contract a file's "spec §N" means, by path prefix (longest first wins).
CONTRACTS = {
    "hookgrad/compile": "compile", "hookgrad/_dynamo": "compile", "hookgrad/compiler": "compile",
    "hookgrad/_functorch/aot_autograd": "compile", "hookgrad/_functorch/compile": "compile",
    "tests/compile": "compile",
    "hookgrad/distributed": "distributed", "hookgrad/nn/parallel": "distributed",
    "hookgrad/futures": "distributed", "hookgrad/testing/distributed": "distributed",
    "tests/distributed": "distributed",
    "hookgrad/package": "package", "tests/package": "package",
}


def _files():
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            yield path
        elif path.is_dir():
            for f in sorted(path.rglob("*")):
                if f.suffix in {".py", ".md", ".txt", ".toml", ""} and f.is_file() \
                        and "__pycache__" not in f.parts and f.parent.name != "contracts" \
                        and f.name != Path(__file__).name:
                    yield f


def _contract_of(rel: str) -> str:
    best = max((p for p in CONTRACTS if rel.startswith(p)), key=len, default=None)
    return CONTRACTS[best] if best else "hooks"


def _sections(contract: str) -> set[str]:
    text = (ROOT / "docs" / "contracts" / f"{contract}.md").read_text()
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, flags=re.M))


def test_no_file_points_outside_the_repository():
    bad = [f"{f.relative_to(ROOT)}:{i}" for f in _files()
           for i, line in enumerate(f.read_text(errors="replace").splitlines(), 1)
           if OUTSIDE.search(line)]
    assert not bad, "references to files outside the repository:\n" + "\n".join(bad)


def test_every_cited_spec_section_exists_in_its_contract():
    sections = {c: _sections(c) for c in {"hooks", "compile", "distributed", "package"}}
    missing = []
    for f in _files():
        rel = str(f.relative_to(ROOT))
        contract = _contract_of(rel)
        for n in CITE.findall(f.read_text(errors="replace")):
            if n not in sections[contract]:
                missing.append(f"{rel}: spec §{n} (docs/contracts/{contract}.md)")
    assert not missing, "cited sections missing from their contract:\n" + "\n".join(missing)


def test_the_check_sees_a_dangling_reference(tmp_path):
    # The two checks above must be able to fail: a made-up section is not among the headings.
    assert "99.9" not in _sections("hooks") and "3.1" in _sections("hooks")
    assert OUTSIDE.search("see ../shared/spec/hooks.md") and not OUTSIDE.search("docs/x.md")
