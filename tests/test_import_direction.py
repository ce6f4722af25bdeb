"""Packages of app/ import only downward (CONTRIBUTING.md, "Layers"): the ground floor
(core, models, tokens) knows nothing of the engine, the API or the Inspector above it.
Every import counts, function-level ones included: a lazy import is still a dependency."""

from __future__ import annotations

import ast
from pathlib import Path

import app

# Lowest first; a package may import its own modules and those of any package before it.
LAYERS = (
    "core",
    "models",
    "tokens",
    "engine",
    "summarizers",
    "schemas",
    "repositories",
    "services",
    "api",
    "inspector",
    "main",
    "cli",
)
ROOT = Path(app.__file__).parent


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [(node.lineno, name) for name in names if name.startswith("app.")]
    return found


def upward_imports(root: Path) -> list[str]:
    problems = []
    for path in sorted(root.rglob("*.py")):
        layer = path.relative_to(root).with_suffix("").parts[0]
        if layer == "__init__":
            continue
        for line, module in _imports(path):
            target = module.split(".")[1]
            if LAYERS.index(target) > LAYERS.index(layer):
                problems.append(f"{path.relative_to(root)}:{line} imports {module}")
    return problems


def test_every_package_is_in_a_layer() -> None:
    packages = {p.stem for p in ROOT.iterdir() if p.suffix in ("", ".py")}
    assert packages - {"__init__", "__pycache__", "data"} == set(LAYERS)


def test_no_import_points_up() -> None:
    assert upward_imports(ROOT) == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """A lazy import of the engine from tokens is caught (the check can fail)."""
    (tmp_path / "tokens").mkdir()
    (tmp_path / "tokens" / "probe.py").write_text(
        "from app.core.content import Content\n\n\ndef f():\n    from app.engine import types\n"
    )
    assert upward_imports(tmp_path) == ["tokens/probe.py:5 imports app.engine"]
