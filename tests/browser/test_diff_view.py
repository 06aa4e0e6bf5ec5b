"""The explorer's Diff view of ``tj.diff(old, new)`` in a real JupyterLab: a cell computes the diff of two traced
versions of a small convnet (the block's activation changed, the stem widened) as its last expression; the explorer
opens on the new run's "Diff" tab, which names the changed module and the parameters that changed shape, and the
stepper marks the changed op in the old graph and the new side by side. Saved and reloaded without a kernel, the
same view renders from the saved output; ``tracejit diff old.pt new.pt -o diff.html`` writes it as an offline
page. Light and dark screenshots of each.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from jupyter_tracejit import cli
from jupyter_tracejit._dev.browser import SCREENSHOTS

from ..frontend_fixtures import DiffConvNet
from ..models import source_of
from .helpers import close_comparison, explorer_in, reopened_without_kernel, run_notebook
from .test_report import STATIC_JS, offline  # noqa: F401 (the offline page fixture)

pytestmark = pytest.mark.browser

#: the Diff view fixture's convnet (tests/frontend_fixtures.py) at two versions: the block's activation changed,
#: the stem widened
MODELS = (
    "import torch, torch.nn as nn\nimport jupyter_tracejit as tj\n\n"
    + source_of(DiffConvNet)
    + """
images = torch.randn(2, 3, 10, 10)
v1 = tj.trace(DiffConvNet(), (images,))
v2 = tj.trace(DiffConvNet(act=nn.GELU, width=16), (images,))
"""
)

DIFF = "tj.diff(v1, v2)"


def step_kinds(pane) -> list[str]:
    """The op kinds of the nodes a step marks in `pane` (each node is classed `kind-aten-gelu`)."""
    return pane.locator("g.node.step").evaluate_all(
        "els => els.map(e => [...e.classList].find(c => c.startsWith('kind-')))"
    )


def open_diff(explorer):
    """The Diff tab (the explorer opens on it) with the panes open on the first change; returns (panel, panes)."""
    tab = explorer.locator('.jp-TraceExplorer-tab[data-tab="diff"]')
    assert tab.is_visible() and tab.inner_text() == "Diff"
    assert tab.get_attribute("aria-selected") == "true"  # a displayed diff opens on what changed
    panel = explorer.locator('.jp-TraceExplorer-panel[data-panel="diff"]')
    panel.locator('[data-action="diff-panes"]').click()
    panes = explorer.locator(".jp-TraceExplorer-graph > .jp-TraceExplorer-compareFull .jp-TraceExplorer-comparePane")
    panes.nth(0).locator("svg g.node.step").first.wait_for()
    panes.nth(1).locator("svg g.node.step").first.wait_for()
    return panel, panes


def check_diff(panel, panes) -> None:
    """The verdict, the changed module, the parameters, and the change marked in both panes."""
    assert panel.locator(".jp-TraceExplorer-verdict .jp-TraceExplorer-badge").inner_text() == "different"
    changes = panel.locator(".jp-TraceExplorer-scopeSteps li").all_inner_texts()
    assert changes == ["block.1: 1 op changed (aten::relu -> aten::gelu)"], changes
    assert panel.locator(".jp-TraceExplorer-stepLabel").inner_text() == "change 1 of 1"
    assert "block.1" in panel.locator(".jp-TraceExplorer-scopeStep").inner_text()
    rows = panel.locator(".jp-TraceExplorer-diffParameters tr[data-change]").all_inner_texts()
    assert [r.split("\t")[0] for r in rows] == ["stem.0.weight", "stem.0.bias", "block.0.weight"], rows
    assert "Float(8, 3, 3, 3) → Float(16, 3, 3, 3)" in rows[0], rows
    assert panes.locator(".jp-TraceExplorer-paneLabel").all_inner_texts() == ["old", "new"]
    old, new = panes.nth(0), panes.nth(1)
    # the changed op is marked on each side, and has no partner (its own name per side)
    assert step_kinds(old) == ["kind-aten-relu"] and step_kinds(new) == ["kind-aten-gelu"]
    assert old.locator("g.node.step").get_attribute("id") != new.locator("g.node.step").get_attribute("id")
    # the unchanged ops are paired: a conv clicked on the old side marks its partner on the new side
    old.locator("g.node.matched.kind-aten-_convolution").first.click()
    picked = old.locator("g.node.selected")
    assert picked.count() == 1
    assert new.locator("g.node.selected").get_attribute("id") == picked.get_attribute("id")


def test_a_displayed_diff_shows_the_changed_module_and_steps_in_both_graphs(lab):
    run_notebook(lab, "diff_view.ipynb", [MODELS, DIFF], timeout=120_000)
    explorer = explorer_in(lab, 1)
    panel, panes = open_diff(explorer)
    check_diff(panel, panes)
    lab.screenshot_themes("diff-view", explorer)
    # stepping (the keyboard, then the button) keeps the change marked; close gives the graph back
    panel.locator(".jp-TraceExplorer-diff").focus()
    lab.page.keyboard.press("Home")
    assert step_kinds(panes.nth(1)) == ["kind-aten-gelu"]
    close_comparison(explorer, panel)
    # saved, the kernel stopped, reloaded: the kernel-free renderer shows the same view from the saved output
    saved = reopened_without_kernel(lab)
    saved_panel, saved_panes = open_diff(saved)
    check_diff(saved_panel, saved_panes)
    lab.screenshot_themes("diff-view-saved-no-kernel", saved)
    assert not lab.extension_errors()


@pytest.fixture(scope="module")
def diff_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not STATIC_JS.exists():
        pytest.skip("the report bundle is not built (npm run build, or pip install -e .)")
    root = tmp_path_factory.mktemp("diff")
    images = torch.randn(2, 3, 10, 10)
    for name, model in (("v1.pt", DiffConvNet()), ("v2.pt", DiffConvNet(act=nn.GELU, width=16))):
        with torch.no_grad():
            torch.jit.save(torch.jit.trace(model.eval(), images), str(root / name))
    page = root / "diff.html"
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["diff", str(root / "v1.pt"), str(root / "v2.pt"), "-o", str(page)])
    assert code == 1  # different
    return page


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_tracejit_diff_writes_the_diff_view_as_an_offline_page(offline, diff_page, scheme):  # noqa: F811
    op = offline(color_scheme=scheme)
    explorer = op.explorer(diff_page)
    assert op.page.title().endswith(": different · jupyter-tracejit")
    panel, panes = open_diff(explorer)
    check_diff(panel, panes)
    assert "v1.pt" in panel.locator(".jp-TraceExplorer-verdict").inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    op.page.screenshot(path=str(SCREENSHOTS / f"report-diff-view-{scheme}.png"))
    assert op.errors == [] and op.blocked == []
