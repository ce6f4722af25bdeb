"""Every path the docs name exists: a file moved or deleted fails here, not in a reader's
hands (README.md, CONTRIBUTING.md and docs/*.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
# A repository path: a top-level folder of the project, then path characters. Globs and
# placeholders (`*`, `{…}`, `<…>`) are patterns, not paths.
PATH = re.compile(
    r"(?<![\w/.-])((?:app|tests|bench|evals|clients|docs|examples|scripts|alembic|\.ci)"
    r"/[\w./-]*[\w/])"
)


# Paths of the made-up projects the docs' examples summarize (never this repository's).
EXAMPLES = frozenset(
    {
        "app/export/csv_writer.py",
        "app/module_1.py",
        "app/module_5.py",
        "app/tax.py",
        "tests/a.py",
        "tests/test_api.py",
        "tests/test_cart.py",
        "tests/test_export.py",
        "tests/api/test_x.py",
    }
)


def named_paths(text: str) -> set[str]:
    return {
        match.group(1).rstrip(".")
        for match in PATH.finditer(text)
        if not re.search(r"[*{<]", text[match.start() : match.end() + 2])
    }


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_path_a_doc_names_exists(doc: Path) -> None:
    named = named_paths(doc.read_text()) - EXAMPLES
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert missing == [], f"{doc.name} names paths that do not exist: {missing}"


def test_the_check_finds_paths_and_skips_patterns() -> None:
    text = "see app/engine/render.py, tests/inspector/ and docs/inspector-*.png."
    assert named_paths(text) == {"app/engine/render.py", "tests/inspector/"}
