"""How a TraceRun displays in IPython, and that the core stays free of widget imports."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.widgets import RUN_MIME, register_display, run_from_mime, run_mimebundle

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    from traitlets.config import Config

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path))
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    ip = interactiveshell.InteractiveShell.instance(config=config)
    yield ip
    interactiveshell.InteractiveShell.clear_instance()


def relu(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) + 1


def test_a_run_displays_as_explorer_json_and_text(shell: Any) -> None:
    assert register_display() is True  # finds the running shell
    run = tj.trace(relu, (torch.randn(3),))
    data, _metadata = shell.display_formatter.format(run)
    assert {WIDGET_MIME, RUN_MIME, "text/plain"} <= data.keys()
    assert data[WIDGET_MIME]["model_id"]
    assert isinstance(data[RUN_MIME], str) and run_from_mime(data[RUN_MIME]) == run.to_json()
    assert data["text/plain"] == run.summary()


def gelu(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x) + 1


def test_a_diff_displays_as_the_new_runs_explorer_carrying_the_diff(shell: Any) -> None:
    assert register_display() is True
    result = tj.diff(tj.trace(relu, (torch.randn(3),)), tj.trace(gelu, (torch.randn(3),)))
    data, _metadata = shell.display_formatter.format(result)
    assert data[WIDGET_MIME]["model_id"] and data["text/plain"] == result.summary()
    saved = run_from_mime(data[RUN_MIME])  # what a saved notebook renders without a kernel
    assert saved["graphs"] == result.new_run.to_json()["graphs"]
    view = saved["diff_against"]
    assert view["diff"]["summary_text"] == result.summary() and view["old_graph"] == result.old_run.graph.to_json()
    assert "aten::relu -> aten::gelu" in view["diff"]["scopes"][0]["details"]
    # where neither the explorer nor our renderer runs (nbconvert, GitHub): the diff's summary first
    assert "Diff against" in data["text/html"] and "aten::relu -&gt; aten::gelu" in data["text/html"]
    assert tj.explore(result).run_json["diff_against"] == view  # tj.explore(diff): the same view


def test_a_diff_read_back_from_json_displays_its_page(shell: Any) -> None:
    register_display()
    result = tj.diff(tj.trace(relu, (torch.randn(3),)), tj.trace(gelu, (torch.randn(3),)))
    data, _metadata = shell.display_formatter.format(type(result).from_json(result.to_json()))
    assert RUN_MIME not in data and data["text/html"].startswith("<!DOCTYPE html>")


def test_a_trace_versus_export_comparison_displays_as_the_exports_explorer(shell: Any) -> None:
    register_display()
    conv = torch.nn.Conv2d(3, 4, 3, padding="same")
    x = torch.randn(1, 3, 8, 8)
    exported = tj.export(conv, (x,))
    compared = tj.compare(tj.trace(conv, (x,)), exported)
    data, _metadata = shell.display_formatter.format(compared)
    assert data[WIDGET_MIME]["model_id"] and data["text/plain"].startswith("trace vs export: 1 of 1 trace ops matched")
    saved = run_from_mime(data[RUN_MIME])  # the export run, carrying the comparison its "Trace vs export" tab shows
    assert saved["backend"] == "export" and saved["compared"]["comparison"] == compared.comparison.to_json()
    # read back from JSON, a comparison has no run to show: its summary
    data, _metadata = shell.display_formatter.format(type(compared).from_json(compared.to_json()))
    assert WIDGET_MIME not in data and data["text/plain"].startswith("trace vs export:")


def test_load_ipython_extension_registers_the_display(shell: Any) -> None:
    tj.load_ipython_extension(shell)
    run = tj.trace(relu, (torch.randn(3),))
    assert shell.display_formatter.mimebundle_formatter.lookup(run) is run_mimebundle


def test_register_display_without_ipython_does_nothing() -> None:
    assert register_display() is False


def test_importing_the_package_does_not_import_widgets() -> None:
    code = (
        "import sys, jupyter_tracejit\n"
        "jupyter_tracejit.explore, jupyter_tracejit.load_ipython_extension\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('ipywidgets', 'traitlets', 'IPython', 'comm'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
