"""The explorer on a torch.compile run of a real model in JupyterLab: a BERT (transformers, from a config) with a
debugging hook that prints after each layer, run by ``%compile`` with two further calls of other lengths. It opens on
the Graph breaks tab: the first call's graphs in order with the breaks between them, a stepper through the breaks
(torch's registry code and hints), each step showing the graph before and the graph after the break side by side
with the op on each side marked. The Recompilations tab says per call which guard failed, in the inputs' terms; the
options bar's dynamic menu re-compiles on a click, and with every size dynamic nothing recompiles. Light and dark
screenshots."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit._dev.browser import SCREENSHOTS

from .helpers import explorer_in
from .test_report import ROOT as REPORT_ROOT
from .test_report import STATIC_JS, offline  # noqa: F401  (offline: a fixture)

pytestmark = pytest.mark.browser

MODEL = """\
%load_ext jupyter_tracejit
import os
os.environ["HF_HUB_OFFLINE"] = "1"
import torch
from transformers import BertConfig, BertModel

torch.manual_seed(0)
config = BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=2, intermediate_size=128,
                    vocab_size=500, max_position_embeddings=64)
bert = BertModel(config).eval()

def show(layer, inputs, output):
    print("layer out", output[0].shape)  # a debugging hook: a graph break

for layer in bert.encoder.layer:
    layer.register_forward_hook(show)

def ids(n):
    return torch.randint(0, 500, (1, n))
"""

COMPILE = "%compile --calls [(ids(7),), (ids(9),)] bert(ids(5))"


def test_a_compiled_bert_walks_its_breaks_and_recompilations(lab):
    lab.write_notebook("compile_views.ipynb", [MODEL, COMPILE])
    lab.open_notebook("compile_views.ipynb")
    lab.run_all(timeout=240_000)
    explorer = explorer_in(lab, 1)
    assert explorer.locator(".jp-TraceExplorer-backend").inner_text() == "torch.compile"
    # it opens on the Graph breaks tab, which counts the breaks
    tab = explorer.locator('.jp-TraceExplorer-tab[data-tab="graphBreaks"]')
    assert re.fullmatch(r"Graph breaks \(\d+\)", tab.inner_text()), tab.inner_text()
    panel = explorer.locator('.jp-TraceExplorer-panel[data-panel="graphBreaks"]')
    panel.wait_for()
    # the first call's graphs in order, the hook's print between two of them, at the hook's line
    program = panel.locator('[data-section="program"]')
    assert program.locator("[data-program-graph]").count() >= 2
    hook = program.locator("[data-program-break]").first
    assert hook.locator(".jp-TraceExplorer-loc").inner_text() == "cell [1], line 13"
    assert 'print("layer out", output[0].shape)' in hook.inner_text()
    # the stepper's card: the line, torch's registry code and type, its hints, the ops around it
    card = panel.locator(".jp-TraceExplorer-lineStep")
    assert card.get_attribute("data-gb-code") == "GB0059"
    assert "GB0059 · Failed to trace builtin operator" in card.inner_text()
    assert card.locator(".jp-TraceExplorer-hint").count() >= 1
    assert "hit 2 times per call" in card.inner_text()  # the hook runs after each of the two layers
    # a step opens the graphs before and after the break side by side, the op on each side marked
    panel.locator('button[aria-label="next break"]').click()
    panel.locator('button[aria-label="previous break"]').click()
    panes = explorer.locator(".jp-TraceExplorer-compareFull")
    panes.wait_for()
    labels = panes.locator(".jp-TraceExplorer-paneLabel").all_inner_texts()
    assert any("ends at the break" in t for t in labels) and any("resumes after it" in t for t in labels), labels
    panes.locator("g.node.step").first.wait_for()
    assert panes.locator("g.node.step").count() == 2
    lab.screenshot_themes("compile-graph-breaks", explorer)
    panes.locator('[data-action="close-compare"]').click()
    # the op before the break, marked in the graph view (its graph opened there)
    card.locator('[data-op="before"]').click()
    explorer.locator(
        ".jp-TraceExplorer-canvas svg g.node.guard, .jp-TraceExplorer-canvas svg g.node.has-guard"
    ).first.wait_for()
    # the Recompilations tab: the second call's new length failed a size guard of the first call's graphs
    explorer.locator('.jp-TraceExplorer-tab[data-tab="recompilations"]').click()
    recompiles = explorer.locator('.jp-TraceExplorer-panel[data-panel="recompilations"]')
    second = recompiles.locator('[data-call="1"]')
    assert "call 1 (calls[0]): Long(1, 7)" in second.locator("h4").inner_text()
    first_guard = second.locator(".jp-TraceExplorer-guardExpr").first.inner_text()
    assert first_guard == "input_ids.size()[1] was 5, now 7", first_guard
    assert "mark the dim dynamic" in second.locator(".jp-TraceExplorer-hint").first.inner_text()
    third = recompiles.locator('[data-call="2"]')
    assert "compiled nothing" in third.inner_text()  # the length became dynamic: the third call reuses the graphs
    lab.screenshot_themes("compile-recompilations", explorer)
    # the options bar: every size dynamic from the start, re-compiled on the click; then nothing recompiles
    dynamic = explorer.locator('.jp-TraceExplorer-options select[data-option="dynamic"]')
    assert dynamic.input_value() == "null"
    dynamic.select_option(label="dynamic: all sizes")
    tab = explorer.locator('.jp-TraceExplorer-tab[data-tab="recompilations"]')
    lab.page.wait_for_function("el => el.textContent === 'Recompilations'", arg=tab.element_handle(), timeout=240_000)
    assert "no recompilation" in recompiles.inner_text()
    assert lab.extension_errors() == []


class Printing(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc(x))
        print("h", h.shape)  # the break
        return h * 2


def test_a_compiled_runs_offline_report_shows_its_breaks_and_recompilations(offline, tmp_path):  # noqa: F811
    """Kernel-free: the saved HTML report, opened from disk with the network cut off, has the same tabs."""
    if not STATIC_JS.exists():
        pytest.skip("the report bundle is not built (npm run build, or pip install -e .)")
    with contextlib.redirect_stdout(io.StringIO()):
        run = tj.compile(Printing(), (torch.ones(2, 8),), calls=[(torch.ones(3, 8),)], dynamic=False)
    path = run.save_html(tmp_path / "compiled.html")
    op = offline()
    page = op.open(path)
    explorer = page.locator(REPORT_ROOT)
    explorer.locator(".jp-TraceExplorer-canvas svg").wait_for()
    assert explorer.locator(".jp-TraceExplorer-backend").inner_text() == "torch.compile"
    breaks = explorer.locator('.jp-TraceExplorer-panel[data-panel="graphBreaks"]')
    breaks.wait_for()  # it opens on the breaks
    assert 'print("h", h.shape)' in breaks.locator(".jp-TraceExplorer-lineStep pre").first.inner_text()
    breaks.locator('[data-action="graph-break-panes"]').click()
    explorer.locator(".jp-TraceExplorer-compareFull g.node.step").first.wait_for()
    explorer.locator('.jp-TraceExplorer-tab[data-tab="recompilations"]').click()
    recompiles = explorer.locator('.jp-TraceExplorer-panel[data-panel="recompilations"]')
    assert recompiles.locator(".jp-TraceExplorer-guardExpr").first.inner_text() == "x.size()[0] was 2, now 3"
    assert "dynamic=False compiles again for every new size" in recompiles.inner_text()
    page.screenshot(path=str(SCREENSHOTS / "compile-report-offline.png"))
    assert op.blocked == [] and op.errors == []
