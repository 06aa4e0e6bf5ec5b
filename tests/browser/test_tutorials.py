"""A tutorial as a learner opens it: the saved explorers render before anything runs (from the notebook's
`application/vnd.jupyter.tracejit+json` outputs, no kernel involved), and live ones replace them after Run All."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect

from .helpers import ROOT
from .test_explorer import open_comparison

pytestmark = pytest.mark.browser

BADGE = ".jp-TraceExplorer-header .jp-TraceExplorer-badge"
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TUTORIAL = NOTEBOOKS / "02-control-flow-and-shapes.ipynb"
REAL_MODEL = NOTEBOOKS / "06-real-model-bert-gpt2.ipynb"
TO_EXPORT = NOTEBOOKS / "08-from-trace-to-export.ipynb"


def open_saved(lab, notebook: Path, *source_starts: str) -> list[int]:
    """Copy ``notebook`` into the server's root and open it without starting a kernel; the indices of the cells whose
    sources start with ``source_starts``."""
    shutil.copy(notebook, lab.server.root / notebook.name)
    nb = nbformat.read(notebook, as_version=4)
    cells = [next(i for i, c in enumerate(nb.cells) if c.source.startswith(start)) for start in source_starts]
    lab.open_notebook(notebook.name, wait_for_kernel=False)
    return cells


def _check_tab(explorer) -> str:
    explorer.locator('.jp-TraceExplorer-tab[data-tab="check"]').click()
    return explorer.locator(".jp-TraceExplorer-check").inner_text()


def test_tutorial_explorers_render_saved_and_after_running(lab):
    # opened, nothing run: the saved outputs render as read-only explorers with their graphs
    branch, checked, loop = open_saved(
        lab, TUTORIAL, "def branchy(x):", "%trace --check-inputs [(negative,)]", "loop_run = tj.trace("
    )
    saved = lab.outputs(branch).locator(ROOT).first
    saved.wait_for(timeout=30_000)
    saved.locator(".jp-TraceExplorer-canvas svg").wait_for()
    assert "read-only" in saved.locator(".jp-TraceExplorer-options").inner_text()
    saved.locator(BADGE, has_text=re.compile("^warnings$")).wait_for(timeout=30_000)
    saved_check = lab.outputs(checked).locator(ROOT).first
    saved_check.scroll_into_view_if_needed()
    saved_check.locator(".jp-TraceExplorer-canvas svg").wait_for()
    saved_check.locator(BADGE, has_text=re.compile("^check failed$")).wait_for(timeout=30_000)
    assert "aten::sub" in _check_tab(saved_check)  # the divergence the tutorial's text talks about
    lab.screenshot_themes("tutorial-02-saved", saved_check)

    # the docs' loop, still without a kernel: the stepper goes to the real change (an extra aten::select), shown
    # in the trace and the check trace side by side, as the tutorial's text says
    saved_loop = lab.outputs(loop).locator(ROOT).first
    saved_loop.scroll_into_view_if_needed()
    saved_loop.locator(".jp-TraceExplorer-canvas svg").wait_for()
    _check_tab(saved_loop)
    check = saved_loop.locator(".jp-TraceExplorer-check")
    # a failed check opens on its first root
    check.locator(".jp-TraceExplorer-stepLabel").filter(has_text=re.compile(r"^root 1 of \d+$")).wait_for()
    sides = open_comparison(saved_loop)
    assert "kind-aten-select" in sides.nth(1).locator("g.node.current").get_attribute("class")
    assert "only in the check trace: aten::select" in check.locator(".jp-TraceExplorer-reason").inner_text()
    lab.screenshot_themes("tutorial-02-saved-stepper", saved_loop)

    # Run All: the kernel traces again and live explorers (with their option controls) replace the saved ones
    lab.wait_for_idle(120_000)
    lab.run_all(timeout=180_000)
    live = lab.outputs(branch).locator(ROOT).first
    live.scroll_into_view_if_needed()  # Run All left the page at the end; off-screen cells are not painted
    live.locator("input[data-option]").first.wait_for(timeout=30_000)
    live.locator(".jp-TraceExplorer-canvas svg").wait_for()
    live.locator(BADGE, has_text=re.compile("^warnings$")).wait_for(timeout=30_000)
    live_check = lab.outputs(checked).locator(ROOT).first
    live_check.scroll_into_view_if_needed()
    live_check.locator("input[data-option]").first.wait_for(timeout=30_000)
    live_check.locator(BADGE, has_text=re.compile("^check failed$")).wait_for(timeout=30_000)
    assert "aten::sub" in _check_tab(live_check)
    lab.screenshot_themes("tutorial-02-live", live_check)
    assert not lab.extension_errors()


def test_real_model_tutorial_renders_its_saved_explorers(lab):
    """Notebook 6 as GitHub readers get it, in JupyterLab: BERT's and GPT-2's saved explorers (a few hundred nodes
    each) render from the notebook alone; the GPT-2 one that the text discusses opens on its divergence."""
    bert, one_token = open_saved(lab, REAL_MODEL, "bert = BertModel(BertConfig(return_dict=False", "one_token = ")
    saved_bert = lab.outputs(bert).locator(ROOT).first
    saved_bert.scroll_into_view_if_needed()
    saved_bert.locator(".jp-TraceExplorer-canvas svg").wait_for(timeout=60_000)
    saved_bert.locator(BADGE, has_text=re.compile("^warnings$")).wait_for(timeout=30_000)
    saved_bert.locator('.jp-TraceExplorer-tab[data-tab="warnings"]').click()
    assert "sdpa_attention.py" in saved_bert.locator(".jp-TraceExplorer-warnings").inner_text()
    lab.screenshot_themes("tutorial-06-bert-saved", saved_bert)
    saved_gpt2 = lab.outputs(one_token).locator(ROOT).first
    saved_gpt2.scroll_into_view_if_needed()
    saved_gpt2.locator(".jp-TraceExplorer-canvas svg").wait_for(timeout=60_000)
    saved_gpt2.locator(BADGE, has_text=re.compile("^check failed$")).wait_for(timeout=30_000)
    assert "scaled_dot_product_attention" in _check_tab(saved_gpt2)
    lab.screenshot_themes("tutorial-06-gpt2-saved", saved_gpt2)
    assert not lab.extension_errors()


def test_export_tutorial_renders_its_saved_explorers(lab):
    """Notebook 8 before anything runs: the saved explorers are exports (torch.export in the header); BERT's Guards
    tab lists the sequence length's symbol with its range, the refused branch shows its error with the torch.cond hint,
    and the Dim.AUTO loop is amber with its dim_specialized finding, as the text says."""
    bert, branch, auto = open_saved(
        lab, TO_EXPORT, 'seq = Dim("seq"', "class Branchy(nn.Module):", "auto_loop = tj.export("
    )

    saved_bert = lab.outputs(bert).locator(ROOT).first
    saved_bert.scroll_into_view_if_needed()
    saved_bert.locator(".jp-TraceExplorer-canvas svg").wait_for(timeout=60_000)
    assert saved_bert.locator(".jp-TraceExplorer-backend").inner_text() == "torch.export"
    saved_bert.locator(BADGE, has_text=re.compile("^ok$")).wait_for(timeout=30_000)
    saved_bert.locator('.jp-TraceExplorer-tab[data-tab="guards"]').click()
    guards = saved_bert.locator('.jp-TraceExplorer-panel[data-panel="guards"]')
    symbols = guards.locator(".jp-TraceExplorer-symbols tbody tr").all_inner_texts()
    assert any(re.search(r"2 ≤ s\d+ ≤ 64\s+input_ids\.size\(\)\[1\]", row) for row in symbols), symbols
    # a saved export's options: those given, the dynamic shapes among them; none left out reads "null"
    options = saved_bert.locator(".jp-TraceExplorer-options").inner_text()
    assert "dynamic_shapes=" in options and "null" not in options, options
    lab.screenshot_themes("tutorial-08-bert-export-saved", saved_bert)

    saved_branch = lab.outputs(branch).locator(ROOT).first
    saved_branch.scroll_into_view_if_needed()
    saved_branch.locator(BADGE, has_text=re.compile("^failed$")).wait_for(timeout=30_000)
    # expect() reads textContent and retries: inner_text() read '' once in CI, when the BERT explorer above grew
    # and pushed this cell off screen, where JupyterLab's windowing skips rendering it (content-visibility)
    error = saved_branch.locator(".jp-TraceExplorer-error")
    expect(error).to_contain_text("GuardOnDataDependentSymNode", timeout=30_000)
    expect(error).to_contain_text("torch.cond")
    lab.screenshot_themes("tutorial-08-branch-refused-saved", saved_branch)

    saved_auto = lab.outputs(auto).locator(ROOT).first
    saved_auto.scroll_into_view_if_needed()
    saved_auto.locator(".jp-TraceExplorer-canvas svg").wait_for(timeout=30_000)
    saved_auto.locator(BADGE, has_text=re.compile("^warnings$")).wait_for(timeout=30_000)
    saved_auto.locator('.jp-TraceExplorer-tab[data-tab="warnings"]').click()
    finding = saved_auto.locator('.jp-TraceExplorer-finding[data-kind="dim_specialized"]')
    expect(finding).to_contain_text("became the constant 3", timeout=30_000)
    lab.screenshot_themes("tutorial-08-auto-loop-saved", saved_auto)
    assert not lab.extension_errors()
