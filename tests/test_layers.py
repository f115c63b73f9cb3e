"""The house's layering, read from the source: dependencies point one way, no module circles, and SQL
lives in ``reviewer/store`` only (ARCHITECTURE.md draws the same picture).

Layers, bottom to top (a module may import its own layer's package and anything below):

0. ``models``, ``record`` (the trial record codec), ``text``, ``config``: plain data, no I/O
1. ``ingest`` (pure parsing) and ``store`` (the only SQL): neither imports the other
2. ``metrics``, ``clustering``, ``judge``, ``calibration``, ``labeling``, ``export``
3. ``workflows``: one function per user job
4. ``cli``, ``commands``, ``tui``: parse arguments, present results

The faces (``cli``, ``commands``, ``tui``) import only ``workflows``, ``models``, ``text`` and
``config`` of the core: each feature has one path, so the CLI and the app cannot glue it together
twice (what a face needs of a lower layer, a workflows module re-exports or wraps).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "reviewer"

LAYERS: dict[str, int] = {
    "reviewer": 0,
    "models": 0,
    "record": 0,
    "text": 0,
    "config": 0,
    "ingest": 1,
    "store": 1,
    "metrics": 2,
    "clustering": 2,
    "judge": 2,
    "calibration": 2,
    "labeling": 2,
    "export": 2,
    "workflows": 3,
    "cli": 4,
    "commands": 4,
    "tui": 4,
    "__main__": 4,
}
# The faces reach the core through these packages only (and each other).
FACES = {"cli", "commands", "tui", "__main__"}
FACE_MAY_IMPORT = {"reviewer", "workflows", "models", "text", "config"} | FACES
# Within layer 1 the two packages stay apart: parsing never writes, the store never parses.
SEPARATE = {frozenset({"ingest", "store"})}

_SQL = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|ROLLBACK|WITH|"
    r"REPLACE|VACUUM)\b"
)
_SQL_CALLS = {"execute", "executemany", "executescript", "conn"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, ast.Module]:
    return {_module_name(p): ast.parse(p.read_text(encoding="utf-8")) for p in ROOT.rglob("*.py")}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "reviewer"


def _imports(module: str, tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every reviewer module this one imports, anywhere in it (deferred imports count)."""
    is_pkg = (ROOT.parent / Path(*module.split("."))).is_dir()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("reviewer"):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("reviewer"):
                yield node.lineno, target
                for alias in node.names:  # `from reviewer.store import labels` imports a module
                    yield node.lineno, f"{target}.{alias.name}"


def _resolve(name: str, known: set[str]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def test_the_layer_table_names_every_package() -> None:
    packages = {_package(m) for m in _modules()}
    assert packages <= set(LAYERS), f"give these a layer: {sorted(packages - set(LAYERS))}"


def test_dependencies_point_down() -> None:
    modules = _modules()
    known = set(modules)
    bad = []
    for module, tree in modules.items():
        src = _package(module)
        for line, target in _imports(module, tree):
            resolved = _resolve(target, known)
            if resolved is None:
                continue
            dst = _package(resolved)
            if dst == src:
                continue
            if LAYERS[dst] > LAYERS[src] or frozenset({src, dst}) in SEPARATE:
                bad.append(f"{module}:{line} imports {resolved}")
    assert not sorted(set(bad)), "upward or sideways imports:\n" + "\n".join(sorted(set(bad)))


def _face_imports_past_workflows(modules: dict[str, ast.Module]) -> list[str]:
    known = set(modules)
    bad = []
    for module, tree in modules.items():
        if _package(module) not in FACES:
            continue
        for line, target in _imports(module, tree):
            resolved = _resolve(target, known)
            if resolved is not None and _package(resolved) not in FACE_MAY_IMPORT:
                bad.append(f"{module}:{line} imports {resolved}")
    return sorted(set(bad))


def test_the_faces_import_only_workflows_models_text_and_config() -> None:
    bad = _face_imports_past_workflows(_modules())
    assert not bad, (
        "the CLI and the app import only reviewer.workflows, models, text and config; call (or "
        "re-export from) a workflows module instead:\n" + "\n".join(bad)
    )


def test_the_face_rule_finds_a_face_importing_the_store() -> None:
    modules = {
        "reviewer.store.queries": ast.parse("x = 1"),
        "reviewer.workflows.report": ast.parse("x = 1"),
        "reviewer.tui.screens.runs": ast.parse(
            "def f():\n    from reviewer.store.queries import x\n"
            "    from reviewer.workflows.report import x\n"
        ),
        "reviewer.commands.report": ast.parse("from reviewer import text\n"),
    }
    assert _face_imports_past_workflows(modules) == [
        "reviewer.tui.screens.runs:2 imports reviewer.store.queries"
    ]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles_outside_the_app() -> None:
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for module, tree in modules.items():
        if _package(module) == "tui":
            continue
        for _, target in _imports(module, tree):
            resolved = _resolve(target, known)
            # a package's __init__ is imported on the way to its modules; it is not a dependency
            if (
                resolved
                and resolved != module
                and not module.startswith(resolved + ".")
                and _package(resolved) != "tui"
            ):
                graph.setdefault(module, set()).add(resolved)
    assert _cycles(graph) == [], f"import circles: {_cycles(graph)}"


def _sql_sites(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _SQL.match(node.value):
                yield node.lineno, node.value.strip().split("\n")[0][:60]
        elif isinstance(node, ast.Attribute) and node.attr in _SQL_CALLS:
            yield node.lineno, f".{node.attr}"


def test_sql_lives_in_the_store() -> None:
    bad = []
    for module, tree in _modules().items():
        if _package(module) == "store":
            continue
        bad += [f"{module}:{line}: {what}" for line, what in _sql_sites(tree)]
    assert not bad, "SQL outside reviewer/store:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "source, found",
    [
        ("db.execute('x')", True),
        ("q = 'SELECT id FROM trials'", True),
        ("q = f'  DELETE FROM t WHERE {x}'", True),
        ("c = db.conn", True),
        ("s = 'Select the trials to judge'", False),
        ("s = 'selected'", False),
    ],
)
def test_the_sql_detector_finds_what_it_should(source: str, found: bool) -> None:
    assert bool(list(_sql_sites(ast.parse(source)))) is found


def test_the_import_reader_resolves_relative_and_deferred_imports() -> None:
    tree = ast.parse("def f():\n    from reviewer.store import labels\n    from . import x\n")
    got = {t for _, t in _imports("reviewer.ingest.native", tree)}
    assert {"reviewer.store", "reviewer.store.labels", "reviewer.ingest.x"} <= got
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def _config_readers(modules: dict[str, ast.Module]) -> list[str]:
    """Modules that read reviewer.toml themselves (call ``load_config``) but the Settings of
    reviewer.config: a job is given its settings by the entry point that made them."""
    out = []
    for name, tree in modules.items():
        if name == "reviewer.config":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                called = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                if called == "load_config":
                    out.append(f"{name}:{node.lineno}")
    return out


def test_settings_are_read_once_at_the_entry_points() -> None:
    bad = _config_readers(_modules())
    assert not bad, (
        "reviewer.toml is read by the entry points' Settings (cli.py, tui/app.py) and passed down; "
        "take a cfg / settings argument instead:\n" + "\n".join(bad)
    )


def test_the_settings_rule_finds_a_module_that_reads_the_config() -> None:
    tree = ast.parse(
        "from reviewer.config import load_config\n\ndef f():\n    return load_config()\n"
    )
    assert _config_readers({"reviewer.workflows.x": tree}) == ["reviewer.workflows.x:4"]
