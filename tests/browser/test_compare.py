"""The compare panes (trace ↔ check) in a real JupyterLab, at the notebook's default width: the first view is
readable, the divergent node in view in its pane; `fit` shows both pictures whole, every node of both panes in
view, and the panes still move together from there. Light and dark screenshots."""

from __future__ import annotations

import re

import pytest

from .helpers import explorer_in, run_notebook
from .test_explorer import SETUP, open_comparison

pytestmark = pytest.mark.browser

#: a block of layers, then a loop over the batch (unrolled: the check's batch of 6 draws 4 more steps)
MODEL = """\
class LayersThenLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8))

    def forward(self, x):
        x = self.layers(x)
        out = x[0]
        for i in range(x.size(0)):
            out = out + x[i].sigmoid() * 2
        return out

cmp = tj.explore(LayersThenLoop().eval(), (torch.rand(2, 8),), check_inputs=[(torch.rand(6, 8),)])
cmp"""

#: per pane: its nodes wholly inside its canvas, all its nodes, the drawn height of a node label's line (px)
PANES = """(full) => [...full.querySelectorAll('.jp-TraceExplorer-comparePane')].map(pane => {
  const c = pane.querySelector('.jp-TraceExplorer-compareCanvas').getBoundingClientRect();
  const nodes = [...pane.querySelectorAll('svg g.node')];
  const inside = g => {
    const a = g.getBoundingClientRect();
    return a.left >= c.left - 1 && a.right <= c.right + 1 && a.top >= c.top - 1 && a.bottom <= c.bottom + 1;
  };
  const current = pane.querySelector('svg g.node.current');
  const text = pane.querySelector('svg g.node text');
  return {inside: nodes.filter(inside).length, all: nodes.length, current: current ? inside(current) : null,
          text_px: text ? text.getBoundingClientRect().height : 0};
})"""

#: each pane's viewBox
VIEW_BOXES = """(full) => [...full.querySelectorAll('.jp-TraceExplorer-compareCanvas > svg')]
  .map(s => s.getAttribute('viewBox'))"""

#: the tooltips of the panes' nodes
TITLES = """(full) => [...full.querySelectorAll('.jp-TraceExplorer-compareCanvas svg g.node > title')]
  .map(t => t.textContent)"""

#: numbers in the check tab (its table, torch's detail of an output mismatch) that the layout split over two lines
SPLIT_NUMBERS = r"""(root) => {
  const split = [];
  for (const pre of root.querySelectorAll('.jp-TraceExplorer-panel[data-panel="check"]')) {
    if (!pre.offsetParent) continue;
    const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(/\d+\.\d+(e-?\d+)?/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        if (range.getClientRects().length > 1) split.push(m[0]);
      }
    }
  }
  return split;
}"""


def test_compare_panes_open_readable_and_fit_shows_both_pictures_whole(lab):
    run_notebook(lab, "compare.ipynb", [SETUP, MODEL], timeout=90_000)
    explorer = explorer_in(lab, 1)
    explorer.scroll_into_view_if_needed()
    open_comparison(explorer)
    full = explorer.locator(".jp-TraceExplorer-compareFull")
    opened = full.evaluate(PANES)
    lab.screenshot_themes("compare-open", explorer)
    # the first view is readable (labels at their laid-out 9 px: a line's box is 10 px; it was 7 px text), the
    # divergent node in view on the side that has it
    assert all(pane["text_px"] >= 10 for pane in opened), opened
    assert [pane["current"] for pane in opened] == [None, True], opened
    # the check draws 4 more loop steps: at this scale part of each picture is out of view
    assert any(pane["inside"] < pane["all"] for pane in opened), opened
    # a node's tooltip names its line as the panels do (it said 3441435211.py:16 beside "cell [2], line 16")
    titles = full.evaluate(TITLES)
    assert titles and all(re.search(r"^cell \[2\], line \d+$", t, re.M) for t in titles), titles[:3]
    assert not [t for t in titles if re.search(r"\d+\.py:\d+", t)], titles[:3]
    # the check tab beside the panes shows numbers whole (they wrapped mid-number: "4.14582|2286605835", "1.00e-|5")
    assert explorer.locator(".jp-TraceExplorer-detail:visible").count() >= 1
    assert explorer.evaluate(SPLIT_NUMBERS) == []
    before = full.evaluate(VIEW_BOXES)
    full.get_by_role("button", name="fit").click()
    lab.page.wait_for_timeout(450)  # the fit's animation
    fitted = full.evaluate(PANES)
    # fit shows both pictures whole (it did nothing: it kept the readable scale, the check's nodes clipped)
    assert full.evaluate(VIEW_BOXES) != before
    assert [pane["inside"] for pane in fitted] == [pane["all"] for pane in fitted], fitted
    lab.screenshot_themes("compare-fit", explorer)
    # and the panes still move together from there: one zoom, both alike
    widths = [float(v.split()[2]) for v in full.evaluate(VIEW_BOXES)]
    full.get_by_role("button", name="zoom in").click()
    zoomed = [float(v.split()[2]) for v in full.evaluate(VIEW_BOXES)]
    assert zoomed[0] < widths[0] and zoomed[0] / widths[0] == pytest.approx(zoomed[1] / widths[1]), (widths, zoomed)
    assert not lab.extension_errors()
