"""Package-level contracts: the core's import hygiene, lint and types."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_core_never_imports_widget_or_ipython_modules():
    code = (
        "import sys, jupyter_tracejit, jupyter_tracejit.render.dot, jupyter_tracejit.core.torchscript.probe\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('ipywidgets', 'traitlets', 'IPython'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_public_api_names():
    import jupyter_tracejit as tj

    for name in ("trace", "trace_module", "TraceRun", "TraceWarning", "CheckReport", "TraceError", "Graph"):
        assert hasattr(tj, name), name
    assert tj.__version__


def _tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def test_ruff_is_clean():
    result = subprocess.run([_tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    result = subprocess.run([_tool("ruff"), "format", "--check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean_on_the_whole_package():
    result = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_traced_run_displays_as_the_explorer_in_ipython_without_load_ext():
    code = (
        # a kernel's kind of shell (the terminal's prints the text report instead: tests/test_terminal.py)
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "ip = InteractiveShell.instance()\n"
        "import sys, torch, jupyter_tracejit as tj\n"
        "print('ipywidgets' in sys.modules)\n"
        "run = tj.trace(lambda x: x * 2, (torch.rand(2),))\n"
        "print(sorted(ip.display_formatter.format(run)[0]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "False"  # registering the formatter imports no widgets
    assert lines[1] == str(
        sorted(
            [
                "application/vnd.jupyter.tracejit+json",
                "application/vnd.jupyter.widget-view+json",
                "text/html",
                "text/plain",
            ]
        )
    )
