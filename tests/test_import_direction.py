"""Packages of app/ import only downward (CONTRIBUTING.md, "Layers"): the ground floor
(core, models, tokens) knows nothing of the engine, the API or the Inspector above it.
Every import counts, function-level ones included: a lazy import is still a dependency. The
Inspector's ES modules import one another without a cycle."""

from __future__ import annotations

import ast
import re
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
    "data_cli",
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


def import_cycles(root: Path) -> list[list[str]]:
    """Groups of app modules that import one another, directly or through others (every
    import counts: a function-level import only hides a cycle)."""
    modules = {
        ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(
            ".__init__"
        ): path
        for path in root.rglob("*.py")
    }
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            graph[name] |= {t for t in targets if t in modules and t != name}
    return _strongly_connected(graph)


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    assert import_cycles(ROOT) == []


def test_the_check_sees_a_hidden_cycle(tmp_path: Path) -> None:
    package = tmp_path / "app" / "engine"
    package.mkdir(parents=True)
    (package / "render.py").write_text("def f():\n    from app.engine import responses\n")
    (package / "responses.py").write_text("from app.engine.render import f\n")
    (package / "text.py").write_text("from app.engine.render import f\n")
    assert import_cycles(tmp_path / "app") == [["app.engine.render", "app.engine.responses"]]


# The Inspector's ES modules: `import … from "./x.js"`, `export … from "./x.js"`, a bare
# `import "./x.js"` and a dynamic `import("./x.js")` all count. app.js is the entry that
# composes the views: no module imports it, and none imports another in a cycle.
INSPECTOR = ROOT / "inspector" / "static"
JS_IMPORT = re.compile(r"""(?:\bfrom|\bimport\s*\(?)\s*["']\./([\w.-]+\.js)["']""")


def inspector_imports(static: Path) -> dict[str, set[str]]:
    """Each module of `static` → the modules it imports."""
    return {
        path.name: set(JS_IMPORT.findall(path.read_text(encoding="utf-8")))
        for path in sorted(static.glob("*.js"))
    }


def test_the_inspector_modules_import_without_a_cycle() -> None:
    graph = inspector_imports(INSPECTOR)
    assert "app.js" in graph and len(graph) > 10
    assert set().union(*graph.values()) <= set(graph)  # every import is a module there
    assert [name for name, targets in graph.items() if "app.js" in targets] == []
    assert _strongly_connected(graph) == []


def test_the_check_sees_a_cycle_of_inspector_modules(tmp_path: Path) -> None:
    (tmp_path / "app.js").write_text('import { view } from "./view.js";\n')
    (tmp_path / "view.js").write_text(
        "import {\n  h,\n} from \"./dom.js\";\nexport { note } from './panel.js';\n"
    )
    (tmp_path / "panel.js").write_text('export const note = () => import("./view.js");\n')
    (tmp_path / "dom.js").write_text('import "./app.js";\nexport const h = 1;\n')
    graph = inspector_imports(tmp_path)
    assert graph == {
        "app.js": {"view.js"},
        "dom.js": {"app.js"},
        "panel.js": {"view.js"},
        "view.js": {"dom.js", "panel.js"},
    }
    assert _strongly_connected(graph) == [["app.js", "dom.js", "panel.js", "view.js"]]


TESTS = Path(__file__).parent


def _names_a_test(name: str) -> bool:
    return any(part.startswith("test_") for part in name.split("."))


def imports_of_test_modules(root: Path) -> list[str]:
    """Imports of a `test_*` module (or of a `test_*` name, which pytest would collect again)
    by any module under `root`; relative and function-level imports count too."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                joiner = "" if module.endswith(".") else "."
                names = (
                    [module]
                    if _names_a_test(module)
                    else [f"{module}{joiner}{alias.name}" for alias in node.names]
                )
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            where = f"{path.relative_to(root)}:{node.lineno}"
            problems += [f"{where} imports {n}" for n in names if _names_a_test(n)]
    return problems


def test_no_test_module_imports_another() -> None:
    """What two test modules share lives in tests/support/ (CONTRIBUTING.md, "Tests")."""
    assert imports_of_test_modules(TESTS) == []


def test_the_check_sees_a_test_module_import(tmp_path: Path) -> None:
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "test_b.py").write_text(
        "from tests.engine.test_a import PROPERTY\nfrom . import strategies, test_c\n\n\n"
        "def f():\n    from .test_d import requests\n"
    )
    (tmp_path / "engine" / "helpers.py").write_text("import tests.api.test_e as e\n")
    assert imports_of_test_modules(tmp_path) == [
        "engine/helpers.py:1 imports tests.api.test_e",
        "engine/test_b.py:1 imports tests.engine.test_a",
        "engine/test_b.py:2 imports .test_c",
        "engine/test_b.py:6 imports .test_d",
    ]


def test_the_ground_truth_does_not_import_what_it_measures() -> None:
    """evals/ reads the facts of a transcript on its own: a ground truth that shared the
    summarizers' parsers would score the extractor against itself."""
    evals = ROOT.parent / "evals"
    truth = [evals / "real_facts.py", evals / "next_step.py"]
    assert all(path.exists() for path in truth)
    assert [f"{p.name}:{line} {m}" for p in truth for line, m in _imports(p)] == []
