"""The explorer's trace-versus-export view and a failed export, in a real JupyterLab and in the offline report.

- ``tj.export(model, (x,), compare_trace=True)`` on a model whose trace computes a size, keeps a ``contiguous``
  export leaves out and freezes a size into a constant: the "Trace vs export" tab says the coverage and the counts
  per reason, steps through the lines that differ, and shows the two graphs side by side, each step marking its
  ops in both panes (in view) and a click on an op marking its partner;
- an export refused at ``if h.sum() > 0:``: the error at the user's line with the hint (``torch.cond`` /
  ``torch._check``), and the draft's graph marked as the draft's;
- a re-export by clicking an option of the live explorer (the history grows, the option is the run's, the open
  panes show the new run), and two runs compared in the check tab taking the graph area over from them;
- the same view in the saved notebook without a kernel, and in the saved HTML report offline (light and dark).

Light and dark screenshots of each.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit._dev.browser import SCREENSHOTS
from jupyter_tracejit.core.export.options import export_support_problem

from ..frontend_fixtures import ShapeAndFrozen
from ..models import Dropped, Gate, line_in, source_of
from .helpers import close_comparison, explorer_in, reopened_without_kernel, run_notebook
from .test_report import STATIC_JS, offline  # noqa: F401 (the offline page fixture)

pytestmark = [
    pytest.mark.browser,
    # torch.export as tj.export uses it (CI also runs torch 2.4.1)
    pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem())),
]

IMPORTS = "import torch, torch.nn as nn\nimport jupyter_tracejit as tj\n\n"

#: the trace-versus-export fixture's model (tests/frontend_fixtures.py): a size the trace computes, a contiguous
#: export leaves out, and a size the trace freezes
MODEL = IMPORTS + source_of(ShapeAndFrozen)

COMPARE = """\
run = tj.export(ShapeAndFrozen(), (torch.ones(4, 8),), compare_trace=True)
tj.explore(run)
"""

GATE = IMPORTS + source_of(Gate)


def open_trace_vs_export(explorer):
    """Show the tab and open the panes; returns (panel, panes)."""
    tab = explorer.locator('.jp-TraceExplorer-tab[data-tab="traceVsExport"]')
    assert tab.is_visible() and tab.inner_text() == "Trace vs export"
    tab.click()
    panel = explorer.locator('.jp-TraceExplorer-panel[data-panel="traceVsExport"]')
    toggle = panel.locator('[data-action="trace-vs-export"]')
    toggle.click()
    assert panel.locator('[data-action="trace-vs-export"]').get_attribute("aria-pressed") == "true"
    panes = explorer.locator(".jp-TraceExplorer-graph > .jp-TraceExplorer-compareFull .jp-TraceExplorer-comparePane")
    panes.nth(0).locator("svg g.node.step").first.wait_for()
    return panel, panes


def step_ids(pane) -> list[str]:
    return pane.locator("g.node.step").evaluate_all("els => els.map(e => e.id)")


def in_view(page, pane) -> bool:
    """Whether every marked node of `pane` lies inside the pane's canvas."""
    return page.evaluate(
        """(pane) => {
            const canvas = pane.querySelector('.jp-TraceExplorer-compareCanvas').getBoundingClientRect();
            return [...pane.querySelectorAll('g.node.step')].every(g => {
                const r = g.getBoundingClientRect();
                return r.left >= canvas.left - 1 && r.right <= canvas.right + 1
                    && r.top >= canvas.top - 1 && r.bottom <= canvas.bottom + 1;
            });
        }""",
        pane.element_handle(),
    )


def numbers_not_at_first_lines(panel) -> list[str]:
    """Whether each item of the list of lines, made narrow so that its text wraps, has its number at its first line
    (GPT-2's wrapped items had theirs at their last): a character put before the item's text is on the line box
    the number is on. Returns the items whose number is elsewhere."""
    return panel.locator(".jp-TraceExplorer-lineSteps").evaluate(
        """(list) => {
            list.style.width = '120px';
            try {
                return [...list.querySelectorAll('li')].flatMap(li => {
                    const text = li.querySelector('.jp-TraceExplorer-link');
                    const mark = document.createTextNode('\u200b');
                    li.insertBefore(mark, li.firstChild);
                    const range = document.createRange();
                    range.selectNodeContents(mark);
                    const at = range.getBoundingClientRect();
                    mark.remove();
                    const box = text.getBoundingClientRect();
                    const wrapped = box.height > 1.5 * at.height;
                    const first = at.top < box.top + at.height / 2;
                    const below = at.top - box.top;
                    return wrapped && first ? [] : [`${text.textContent}: wrapped ${wrapped}, number ${below}px down`];
                });
            } finally {
                list.style.width = '';
            }
        }"""
    )


def check_steps(page, panel, panes) -> None:
    """The header, the first two steps (each marking its ops in view, in both panes where both have some), and a
    matched op marking its partner: shared by the live explorer and the report."""
    coverage = panel.locator(".jp-TraceExplorer-coverageText").inner_text()
    assert coverage == "5 of 5 trace ops matched (100%)", coverage
    counts = panel.locator(".jp-TraceExplorer-reasonCounts li").all_inner_texts()
    assert counts == [
        "shape arithmetic: 8 ops at 3 lines",
        "no-op export leaves out: 1 op at 1 line",
        "value the trace froze: 2 ops at 1 line",
    ], counts
    assert panes.locator(".jp-TraceExplorer-paneLabel").all_inner_texts() == ["trace", "export"]
    label = panel.locator(".jp-TraceExplorer-stepLabel")
    assert label.inner_text() == "line 1 of 3"
    card = panel.locator(".jp-TraceExplorer-lineStep")
    view_line = line_in(MODEL, "h = h.view(h.size(0), -1).contiguous()")
    assert card.locator(".jp-TraceExplorer-loc").inner_text() == f"cell [1], line {view_line}"
    assert "h.view(h.size(0), -1).contiguous()" in card.locator("pre").inner_text()
    reasons = card.locator(".jp-TraceExplorer-because strong").all_inner_texts()
    assert reasons == ["shape arithmetic", "no-op export leaves out"]
    assert "export leaves out" in card.locator(".jp-TraceExplorer-message").nth(1).inner_text()
    # the first line's ops are the trace's only (a size and the contiguous): marked there, in view
    trace_pane, export_pane = panes.nth(0), panes.nth(1)
    first = step_ids(trace_pane)
    assert len(first) == 2 and step_ids(export_pane) == []
    assert in_view(page, trace_pane)
    # the next line (the frozen size): the highlight moves in both panes
    panel.get_by_role("button", name="next line").click()
    label.filter(has_text="line 2 of 3").wait_for()
    export_pane.locator("g.node.step").first.wait_for()
    assert step_ids(trace_pane) != first and len(step_ids(trace_pane)) == 4
    assert len(step_ids(export_pane)) == 2
    assert in_view(page, trace_pane) and in_view(page, export_pane)
    assert panel.locator(".jp-TraceExplorer-lineStep strong").all_inner_texts() == [
        "shape arithmetic",
        "value the trace froze",
    ]
    # a matched op clicked on the trace side: its partner is marked on the export side (one name in both)
    # (the add the frozen line feeds: in view with the step's ops)
    trace_pane.locator("g.node.matched.kind-aten-add").click()
    picked = trace_pane.locator("g.node.selected")
    assert picked.count() == 1
    partner = export_pane.locator("g.node.selected")
    assert partner.count() == 1 and partner.get_attribute("id") == picked.get_attribute("id")
    assert "kind-aten-add-Tensor" in partner.get_attribute("class")


def test_trace_vs_export_steps_through_the_lines_in_both_graphs(lab):
    run_notebook(lab, "export_compare.ipynb", [MODEL, COMPARE], timeout=120_000)
    explorer = explorer_in(lab, 1)
    panel, panes = open_trace_vs_export(explorer)
    check_steps(lab.page, panel, panes)
    lab.screenshot_themes("export-compare", explorer)
    assert numbers_not_at_first_lines(panel) == []
    # the keyboard walks on; close gives the graph back
    panel.locator(".jp-TraceExplorer-traceVsExport").focus()
    lab.page.keyboard.press("End")
    panel.locator(".jp-TraceExplorer-stepLabel").filter(has_text="line 3 of 3").wait_for()
    assert "no source line" in panel.locator(".jp-TraceExplorer-lineStep").inner_text()
    close_comparison(explorer, panel)
    # saved, the kernel stopped, reloaded: the kernel-free renderer of the saved run shows the same view
    saved = reopened_without_kernel(lab)
    saved_panel, saved_panes = open_trace_vs_export(saved)
    assert saved_panel.locator(".jp-TraceExplorer-coverageText").inner_text() == "5 of 5 trace ops matched (100%)"
    saved_panel.get_by_role("button", name="next line").click()
    saved_panes.nth(1).locator("g.node.step").first.wait_for()
    assert len(step_ids(saved_panes.nth(0))) == 4 and len(step_ids(saved_panes.nth(1))) == 2
    lab.screenshot("export-compare-saved-no-kernel", saved)
    assert not lab.extension_errors()


def test_a_refused_export_shows_its_line_the_hint_and_the_draft_graph(lab):
    run_notebook(
        lab,
        "export_refused.ipynb",
        # the draft at once (the default offers it: tests/browser/test_export_loop.py runs it from the button)
        [GATE, "run = tj.export(Gate(), (torch.ones(2, 4),), draft='on_failure')\ntj.explore(run)"],
        timeout=120_000,
    )
    explorer = explorer_in(lab, 1)  # the draft's graph is drawn
    assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "failed"
    assert "not exported" in explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-fact").all_inner_texts()
    error = explorer.locator(".jp-TraceExplorer-error")
    text = error.inner_text()
    line = line_in(GATE, "if h.sum() > 0:")
    assert "GuardOnDataDependentSymNode" in text
    assert f"(cell [1], line {line})" in text, text
    hint = error.locator(".jp-TraceExplorer-hint").inner_text()
    assert "torch.cond" in hint and "torch._check" in hint, hint
    # the graph is the draft's, and says so
    assert "draft_export's" in error.locator(".jp-TraceExplorer-draftNote").inner_text()
    assert "jp-mod-draft" in explorer.locator(".jp-TraceExplorer-graph").get_attribute("class")
    # the draft's report at the same line, in the Guards tab
    explorer.locator('.jp-TraceExplorer-tab[data-tab="guards"]').click()
    draft = explorer.locator(".jp-TraceExplorer-guard.jp-mod-draft").first
    assert f"cell [1], line {line}" in draft.inner_text()
    assert explorer.locator('.jp-TraceExplorer-tab[data-tab="traceVsExport"]').is_hidden()
    lab.screenshot_themes("export-refused", explorer)
    assert not lab.extension_errors()


DROPPED = IMPORTS + source_of(Dropped)


def test_an_option_clicked_re_exports(lab):
    export = "run = tj.export(Dropped(), (torch.ones(4, 8),), compare_trace=True)\ntj.explore(run)\n"
    run_notebook(lab, "export_again.ipynb", [DROPPED, export], timeout=120_000)
    explorer = explorer_in(lab, 1)
    history = explorer.locator(".jp-TraceExplorer-history select option")
    assert history.count() == 0  # one run: no history to pick from yet
    # the comparison open on its second line, its panes marked as the first run's
    panel, _ = open_trace_vs_export(explorer)
    panel.get_by_role("button", name="next line").click()
    panel.locator(".jp-TraceExplorer-stepLabel").filter(has_text="line 2 of 3").wait_for()
    explorer.locator(".jp-TraceExplorer-compareFull").evaluate("el => el.dataset.firstRun = 'yes'")
    mode = explorer.locator('select[data-option="module_mode"]')
    assert mode.input_value() == "as_is"
    mode.select_option("eval")
    # re-exported in the kernel: a second run in the history, the run on screen exported in eval mode
    history.nth(1).wait_for(state="attached", timeout=90_000)
    explorer.locator(".jp-TraceExplorer-options .jp-mod-pending").first.wait_for(state="detached", timeout=90_000)
    assert explorer.locator('select[data-option="module_mode"]').input_value() == "eval"
    assert history.count() == 2
    assert 'module_mode="eval"' in history.nth(1).inner_text(), history.nth(1).inner_text()
    assert explorer.locator(".jp-TraceExplorer-backend").inner_text() == "torch.export"
    # the re-export compared again: the panes show the new run's pictures, from its first line
    fresh = explorer.locator(".jp-TraceExplorer-compareFull:not([data-first-run])")
    fresh.locator("g.node.step").first.wait_for()
    assert explorer.locator(".jp-TraceExplorer-compareFull").count() == 1
    assert panel.locator(".jp-TraceExplorer-stepLabel").inner_text() == "line 1 of 3"
    lab.screenshot_themes("export-reexported", explorer)
    # the two runs compared in the check tab (the dropout is gone): their panes replace trace vs export's
    explorer.locator('.jp-TraceExplorer-tab[data-tab="check"]').click()
    explorer.locator(".jp-TraceExplorer-compare").get_by_role("button", name="compare", exact=True).click()
    runs = explorer.locator(".jp-TraceExplorer-compareFull .jp-TraceExplorer-paneLabel")
    runs.filter(has_text="run 1").wait_for()
    assert explorer.locator(".jp-TraceExplorer-compareFull").count() == 1
    assert panel.locator('[data-action="trace-vs-export"]').get_attribute("aria-pressed") == "false"
    assert not lab.extension_errors()


@pytest.fixture(scope="module")
def compared_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not STATIC_JS.exists():
        pytest.skip("the report bundle is not built (npm run build, or pip install -e .)")
    torch.manual_seed(0)
    run = tj.export(ShapeAndFrozen(), (torch.ones(4, 8),), compare_trace=True)
    assert run.compared is not None, run.error
    return run.save_html(tmp_path_factory.mktemp("report") / "compared.html")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_report_shows_trace_vs_export_offline(offline, compared_report, scheme):  # noqa: F811
    op = offline(color_scheme=scheme)
    explorer = op.explorer(compared_report)
    panel, panes = open_trace_vs_export(explorer)
    coverage = panel.locator(".jp-TraceExplorer-coverageText").inner_text()
    assert coverage == "5 of 5 trace ops matched (100%)", coverage
    panel.get_by_role("button", name="next line").click()
    panes.nth(1).locator("g.node.step").first.wait_for()
    assert len(step_ids(panes.nth(0))) == 4 and len(step_ids(panes.nth(1))) == 2
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    op.page.screenshot(path=str(SCREENSHOTS / f"report-export-compare-{scheme}.png"))
    assert op.errors == [] and op.blocked == []


def flat(h):
    return h.view(h.size(0), -1)  # a size at the first layer and at the last


class SpreadLine(nn.Module):
    """One line of a helper run at both ends of a deep stack: its ops lie far apart in the trace's picture."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(24))

    def forward(self, x):
        h = flat(self.layers[0](x))
        for layer in self.layers[1:]:
            h = torch.relu(layer(h))
        return flat(h)


def test_a_line_whose_ops_lie_far_apart_opens_on_its_first_ones(offline, tmp_path):  # noqa: F811
    """GPT-2's `q_length = query.shape[2]` runs in each layer: the panes opened between the layers, at the middle
    of the line's ops, and showed none of them."""
    if not STATIC_JS.exists():
        pytest.skip("the report bundle is not built (npm run build, or pip install -e .)")
    run = tj.export(SpreadLine(), (torch.ones(4, 8),), compare_trace=True)
    assert run.compared is not None, run.error
    op = offline()
    explorer = op.explorer(run.save_html(tmp_path / "spread.html"))
    panel, panes = open_trace_vs_export(explorer)
    card = panel.locator(".jp-TraceExplorer-lineStep")
    for _ in range(panel.locator(".jp-TraceExplorer-lineSteps li").count()):
        if "h.size(0)" in card.locator("pre").inner_text():
            break
        panel.get_by_role("button", name="next line").click()
    assert "h.size(0)" in card.locator("pre").inner_text()
    trace_pane = panes.nth(0)
    op.page.wait_for_timeout(300)  # the panes move on the next frame
    marked = step_ids(trace_pane)
    shown = trace_pane.evaluate(
        """(pane) => {
            const canvas = pane.querySelector('.jp-TraceExplorer-compareCanvas').getBoundingClientRect();
            return [...pane.querySelectorAll('g.node.step')].filter(g => {
                const r = g.getBoundingClientRect();
                return r.left >= canvas.left - 1 && r.right <= canvas.right + 1
                    && r.top >= canvas.top - 1 && r.bottom <= canvas.bottom + 1;
            }).map(g => g.id);
        }"""
    )
    assert len(marked) == 2 and shown, (marked, shown)
    op.page.screenshot(path=str(SCREENSHOTS / "export-compare-spread-line.png"))
