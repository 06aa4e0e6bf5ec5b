"""The core is data and analysis only: it imports torch, numpy and itself, never presentation, widgets, the magic,
the CLI or IPython — checked by reading every import statement of core/, those inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "jupyter_tracejit" / "core"

#: top-level packages the core must never import, with why
FORBIDDEN_PACKAGES = {
    "IPython": "the notebook shell belongs to the magic",
    "ipywidgets": "widgets belong to jupyter_tracejit.widgets",
    "traitlets": "widgets belong to jupyter_tracejit.widgets",
    "graphviz": "drawing belongs to jupyter_tracejit.render",
    "jupyter_tracejit": "the core imports its own modules relatively, and nothing outside core/",
}


def imports_of(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every import in a file, relative ones spelled with their leading dots."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, "." * node.level + (node.module or "")))
    return found


def violations(path: Path) -> list[str]:
    out = []
    # a back end's package (core/torchscript/) reaches the core with one more dot
    depth = len(path.relative_to(CORE).parts) - 1 if path.is_relative_to(CORE) else 0
    for line, module in imports_of(path):
        where = f"{path.name}:{line} imports {module}"
        if module.startswith("." * (depth + 2)):
            out.append(f"{where}: the core may only import modules of core/ (use a single dot)")
        elif not module.startswith("."):
            top = module.split(".")[0]
            if top in FORBIDDEN_PACKAGES:
                out.append(f"{where}: {FORBIDDEN_PACKAGES[top]}")
    return out


def test_the_core_imports_nothing_of_presentation_widgets_magic_cli_or_ipython() -> None:
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 10 and any(f.parent.name == "torchscript" for f in files)
    problems = [v for f in files for v in violations(f)]
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f():\n    from IPython import get_ipython\n", "the notebook shell"),
        ("import ipywidgets\n", "widgets belong"),
        ("from ..render import page\n", "only import modules of core/"),
        ("def f():\n    from ..widgets import explore\n", "only import modules of core/"),
        ("import jupyter_tracejit.cli\n", "imports its own modules relatively"),
        ("from graphviz import Digraph\n", "drawing belongs"),
    ],
)
def test_the_rule_catches_imports_anywhere_in_a_file(tmp_path: Path, source: str, expected: str) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(source)
    found = violations(bad)
    assert len(found) == 1 and expected in found[0], found


def test_the_rule_allows_torch_and_the_core_itself(tmp_path: Path) -> None:
    ok = tmp_path / "ok.py"
    ok.write_text("import torch\nfrom .graph import Graph\nfrom torch.jit._trace import TracerWarning\n")
    assert violations(ok) == []


def test_a_back_end_package_reaches_the_core_but_nothing_outside_it() -> None:
    inside = CORE / "torchscript" / "check.py"
    assert any(module.startswith("..") for _, module in imports_of(inside))
    assert violations(inside) == []


#: a saved run is read, summarized and drawn with torch unimportable (``sys.modules["torch"] = None``)
_WITHOUT_TORCH = """
import sys
sys.modules["torch"] = None
import jupyter_tracejit as tj
from jupyter_tracejit.core.run import TraceRun
for path in sys.argv[1:]:
    run = TraceRun.load(path)
    assert run.check is not None and run.check.cases, path
    print(run.summary(), len(run.to_html()), len(run.to_dot()))
try:
    tj.trace
except ImportError as e:
    print("trace needs torch:", e)
"""


def test_a_saved_run_and_its_check_load_without_torch(tmp_path: Path) -> None:
    import gzip
    import json
    import subprocess
    import sys

    fixtures = CORE.parents[1] / "labextension" / "test" / "fixtures"
    with gzip.open(CORE.parents[1] / "tests" / "data" / "v1-runs.json.gz", "rt", encoding="utf-8") as f:
        old = json.load(f)["loop.run.json"]
    saved_v1 = tmp_path / "v1.json"
    saved_v1.write_text(json.dumps(old), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_TORCH, str(fixtures / "net.run.json"), str(saved_v1)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Net: problems") and lines[1].startswith("loop")
    assert lines[2].startswith("trace needs torch"), lines


# -- the package's layers: a neutral core below, back ends side by side above it, no cycle -----------------------

PACKAGE = CORE.parent
#: modules of core/ that sit above the back ends by design: the lazy public names and the registry itself
ABOVE_THE_BACK_ENDS = {"jupyter_tracejit.core", "jupyter_tracejit.core.registry"}


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def package_imports(path: Path, root: Path = PACKAGE) -> set[str]:
    """Every module of the package ``path`` imports, at module level or inside functions (a lazy import is still a
    dependency), ``if TYPE_CHECKING:`` blocks aside (they never run). ``from . import x`` counts as ``x``."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    modules = {module_name(p, root) for p in root.rglob("*.py")}
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            return
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in modules and m != name}


def import_cycles(root: Path = PACKAGE) -> list[list[str]]:
    """The package's import cycles (strongly connected modules, Tarjan's algorithm), each sorted."""
    graph = {module_name(p, root): package_imports(p, root) for p in sorted(root.rglob("*.py"))}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            connect(v)
    return cycles


def test_no_import_cycle_among_the_package_files() -> None:
    assert import_cycles() == []


def test_the_cycle_check_finds_a_cycle_through_a_lazy_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import g\n")
    (package / "b.py").write_text("def g():\n    from . import a\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    assert import_cycles(package) == [["pkg.a", "pkg.b"]]


def back_end_of(module: str) -> str | None:
    """The back end a module of core/ belongs to (its package, as the registry lists them), or None."""
    from jupyter_tracejit.core.registry import PACKAGES

    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["jupyter_tracejit", "core"] and parts[2] in PACKAGES else None


def test_the_neutral_core_imports_no_back_end_and_a_back_end_no_other() -> None:
    problems = []
    for path in sorted(CORE.rglob("*.py")):
        name = module_name(path)
        if name in ABOVE_THE_BACK_ENDS:
            continue
        own = back_end_of(name)
        for imported in sorted(package_imports(path)):
            other = back_end_of(imported)
            if other is not None and other != own:
                who = f"the back end {own}" if own else "the neutral core"
                problems.append(f"{name} imports {imported}: {who} must not import the back end {other}")
    assert problems == [], "\n".join(problems)


def test_every_back_end_the_registry_lists_is_a_package_of_the_core() -> None:
    from jupyter_tracejit.core.registry import PACKAGES, backends

    assert [b.package for b in backends()] == list(PACKAGES)
    for package in PACKAGES:
        assert (CORE / package / "backend.py").is_file() and (CORE / package / "schema.json").is_file(), package
