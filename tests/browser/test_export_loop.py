"""The migration loop in a real JupyterLab (#28): an export torch refuses (a view that needs its dynamic length to
be a multiple of 8, torch suggesting ``seq = 8*_seq``) shows the draft's offer, and the Guards tab the dim that
failed with its fixes; the draft runs from the button and its graph joins the run; the Dims tab shows torch's fix,
applies it, takes an edit of another dim, and re-exports: the history holds each try, and the flags to paste follow
the run on screen. Light and dark screenshots of each step."""

from __future__ import annotations

import pytest

from ..models import line_in
from .helpers import explorer_in, run_notebook

pytestmark = pytest.mark.browser

MODEL = """\
import torch, torch.nn as nn
%load_ext jupyter_tracejit

class Windows(nn.Module):
    def forward(self, x, mask):
        return x.view(x.size(0), -1, 8).sum(-1) + mask.sum()  # needs x.size(1) a multiple of 8

m, x, mask = Windows(), torch.randn(2, 16), torch.randn(2, 16)
"""

EXPORT = '%export --dynamic "x:1=seq[2,64]" --dynamic mask:1=seq m(x, mask)'


def test_a_refused_export_drafts_advises_and_re_exports_with_torchs_fix(lab):
    run_notebook(lab, "export_loop.ipynb", [MODEL, EXPORT], timeout=120_000)
    explorer = explorer_in(lab, 1, graph=False)
    # refused at once; the draft offered with what it adds, the dims as the flags that export them
    assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "failed"
    banner = explorer.locator(".jp-TraceExplorer-draftOffer")
    assert banner.get_attribute("data-state") == "offered"
    assert "A draft is available" in banner.inner_text()
    assert banner.locator(".jp-TraceExplorer-draftAdds li").count() >= 2
    flags = explorer.locator('.jp-TraceExplorer-dimsBanner [data-flags="banner"] code')
    assert flags.inner_text() == '--dynamic "x:1=seq[2,64]" --dynamic mask:1=seq'
    # the Guards tab opens with the dim that failed: the user's line, torch's fix in dynamic_shapes terms
    explorer.locator('.jp-TraceExplorer-tab[data-tab="guards"]').click()
    advice = explorer.locator('.jp-TraceExplorer-advice[data-dim="x:1"]')
    advice.wait_for()
    assert advice.locator(".jp-TraceExplorer-loc").first.inner_text() == f"cell [1], line {line_in(MODEL, '.view(')}"
    assert "8*Dim('_seq'" in advice.inner_text()
    assert advice.locator(".jp-TraceExplorer-adviceFixes li").count() >= 1
    lab.screenshot_themes("export-loop-refused", explorer)

    # the draft from the button: its phase in the status while it runs, then its graph joins the run
    banner.locator('[data-action="draft"]').click()
    explorer.locator('.jp-TraceExplorer-draftOffer[data-state="ran"]').wait_for(timeout=120_000)
    explorer.locator(".jp-TraceExplorer-canvas svg").wait_for(timeout=60_000)
    assert "The draft ran" in banner.inner_text()
    assert explorer.locator(".jp-TraceExplorer-history select option").count() == 0  # the same run, drafted
    assert explorer.locator(".jp-TraceExplorer-status").inner_text() == ""  # the draft worked: no failure said
    lab.screenshot_themes("export-loop-drafted", explorer)

    # the Dims tab: torch's fix applied, then dim 0 of x made Dim.AUTO; the edited flags say what will run
    explorer.locator('.jp-TraceExplorer-tab[data-tab="dims"]').click()
    dims = explorer.locator('.jp-TraceExplorer-panel[data-panel="dims"]')
    # a range torch cannot take is said in the status, by the spec and the form; what was typed stays
    high = dims.locator('input[aria-label="x:1 max"]')
    high.fill("1")
    high.press("Tab")
    dims.locator('[data-action="export-dims"]').click()
    status = explorer.locator(".jp-TraceExplorer-status")
    status.filter(has_text="the range [2,1] is empty").wait_for(timeout=30_000)
    assert dims.locator('input[aria-label="x:1 max"]').input_value() == "1"
    assert explorer.locator(".jp-TraceExplorer-history select option").count() == 0  # nothing ran
    suggestion = dims.locator('.jp-TraceExplorer-dimsSuggestion[data-source="torch"]')
    assert "seq = 8*_seq" in suggestion.inner_text()
    suggestion.locator('[data-action="apply-suggestion"]').click()
    dims.locator('select[data-dim="x:0"]').select_option("auto")
    edited = dims.locator('[data-flags="edited"] code')
    assert edited.inner_text() == '--dynamic x:0 --dynamic "x:1=8*_seq[1,8]" --dynamic "mask:1=8*_seq"'
    assert dims.locator('select[data-dim="x:1"]').input_value() == "multiple"
    # the multiple's fields (k * name [min, max]) fit the side panel: its closing bracket is not cut off
    fields, panel = (
        dims.locator('[data-dim-fields="x:1"] .jp-TraceExplorer-dimsFields').bounding_box(),
        dims.bounding_box(),
    )
    assert fields is not None and panel is not None
    assert fields["x"] + fields["width"] <= panel["x"] + panel["width"]
    lab.screenshot_themes("export-loop-dims-edited", explorer.locator(".jp-TraceExplorer-main"))

    # re-export: accepted; the history holds both tries, the flags follow the run on screen
    dims.locator('[data-action="export-dims"]').click()
    explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge", has_text="ok").wait_for(timeout=120_000)
    history = explorer.locator(".jp-TraceExplorer-history select option")
    assert history.count() == 2
    assert flags.inner_text() == '--dynamic x:0 --dynamic "x:1=8*_seq[1,8]" --dynamic "mask:1=8*_seq"'
    assert not explorer.locator(".jp-TraceExplorer-draftOffer").is_visible()
    lab.screenshot_themes("export-loop-re-exported", explorer)
