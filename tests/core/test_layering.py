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
    for line, module in imports_of(path):
        where = f"{path.name}:{line} imports {module}"
        if module.startswith(".."):
            out.append(f"{where}: the core may only import modules of core/ (use a single dot)")
        elif not module.startswith("."):
            top = module.split(".")[0]
            if top in FORBIDDEN_PACKAGES:
                out.append(f"{where}: {FORBIDDEN_PACKAGES[top]}")
    return out


def test_the_core_imports_nothing_of_presentation_widgets_magic_cli_or_ipython() -> None:
    files = sorted(CORE.glob("*.py"))
    assert len(files) > 10
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
