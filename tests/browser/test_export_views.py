"""The explorer on a torch.export run in a real JupyterLab: the header names the capture, the options bar offers the
export's options, the Guards tab lists the symbols and the specialisation at its line, and clicking the
specialisation marks its nodes in the graph; a symbolic shape says its range on hover. Light and dark screenshots.
The export back end is internal until ``tj.export`` is public: the notebook imports it from the core."""

from __future__ import annotations

import re

import pytest

from ..frontend_fixtures import ExportMLP
from ..models import line_in, source_of
from .helpers import explorer_in, run_notebook

pytestmark = pytest.mark.browser

#: the export fixture's model (tests/frontend_fixtures.py): a dynamic batch, and a loop over a ``Dim.AUTO`` size
#: that specialises it
MODEL = (
    "import torch, torch.nn as nn\n"
    "import jupyter_tracejit as tj\n"
    "from jupyter_tracejit.core.export.request import export  # internal until tj.export is public\n\n"
    + source_of(ExportMLP)
)

EXPORT = """\
batch = torch.export.Dim("batch", min=2, max=64)
shapes = {"x": {0: batch}, "steps": {0: torch.export.Dim.AUTO}}
run = export(ExportMLP(), (torch.ones(4, 8), torch.ones(3)), dynamic_shapes=shapes)
tj.explore(run)
"""


def test_an_export_run_shows_its_capture_options_and_guards(lab):
    run_notebook(lab, "export_views.ipynb", [MODEL, EXPORT], timeout=120_000)
    explorer = explorer_in(lab, 1)
    # the header names the capture
    assert explorer.locator(".jp-TraceExplorer-backend").inner_text() == "torch.export"
    assert explorer.locator(".jp-TraceExplorer-summary").get_attribute("title").startswith("ExportMLP: ok;")
    # the options bar is the export's: its menus and boxes, what a re-export keeps, and re-export
    bar = explorer.locator(".jp-TraceExplorer-options")
    assert bar.locator('select[data-option="draft"]').input_value() == "on_request"  # the default since #28
    assert bar.locator('select[data-option="module_mode"]').input_value() == "as_is"
    assert bar.locator('input[data-option="strict"]').count() == 1
    assert bar.locator('input[data-option="check_trace"]').count() == 0
    assert "Dim('batch'" in bar.locator('[data-read-only-option="dynamic_shapes"]').inner_text()
    assert bar.locator('[data-action="retrace"]').inner_text() == "re-export"
    # the Guards tab: the symbols, then the specialisation at its line
    guards_tab = explorer.locator('.jp-TraceExplorer-tab[data-tab="guards"]')
    assert guards_tab.is_visible() and guards_tab.inner_text() == "Guards (1)"
    guards_tab.click()
    guards = explorer.locator('.jp-TraceExplorer-panel[data-panel="guards"]')
    symbols = guards.locator(".jp-TraceExplorer-symbols tbody tr").all_inner_texts()
    assert any(re.search(r"2 ≤ s\d+ ≤ 64\s+x\.size\(\)\[0\]", row) for row in symbols), symbols
    assert any(re.search(r"s\d+ = 3\s+steps\.size\(\)\[0\]", row) for row in symbols), symbols
    spec = guards.locator('.jp-TraceExplorer-guard[data-guard-kind="specialization"]')
    assert spec.count() == 1
    assert re.match(r"Eq\(s\d+, 3\)", spec.locator(".jp-TraceExplorer-guardExpr").inner_text())
    line = line_in(MODEL, "range(steps.size(0))")
    assert spec.locator(".jp-TraceExplorer-loc").inner_text() == f"cell [1], line {line}"
    assert "range(steps.size(0))" in spec.locator("pre").inner_text()
    # what it asks of the inputs, in their terms (a guard torch gave no line reads as this alone)
    assert spec.locator(".jp-TraceExplorer-guardInputs").inner_text() == "on the inputs: Eq(steps.size()[0], 3)"
    lab.screenshot_themes("export-guards", explorer)
    # clicking it marks its nodes in the graph and selects its op (not the constant it reads); the list stays in view
    canvas = explorer.locator(".jp-TraceExplorer-canvas svg")
    assert canvas.locator("g.node.guard, g.node.has-guard").count() == 0
    spec.click()
    canvas.locator("g.node.guard, g.node.has-guard").first.wait_for()
    assert canvas.locator("g.node.selected, g.node.has-selected").count() >= 1
    assert "jp-mod-active" in spec.get_attribute("class")
    assert guards.is_visible()
    lab.screenshot_themes("export-guards-marked", explorer)
    # the inspector of the marked node: its shape with the batch symbol, whose range is its tooltip
    explorer.locator('.jp-TraceExplorer-tab[data-tab="inspector"]').click()
    symbolic = explorer.locator('.jp-TraceExplorer-panel[data-panel="inspector"] [data-symbolic="true"]').first
    assert re.match(r"Float\(s\d+, 4\)", symbolic.inner_text()), symbolic.inner_text()
    title = symbolic.get_attribute("title")
    assert re.match(r"s\d+: 2 ≤ s\d+ ≤ 64, from x\.size\(\)\[0\]", title), title
    lab.screenshot_themes("export-inspector", explorer)
