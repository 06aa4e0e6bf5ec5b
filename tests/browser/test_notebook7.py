"""The same prebuilt extension in Notebook 7 (served by the same Jupyter server under /notebooks/): the explorer, and
gallery models (transformers BERT-base from a config, offline; the frozen branch and loop of test_gallery.py)
opening with the model in view and readable, fit showing every node, the stepper walking the roots, in the
light and the dark theme."""

from __future__ import annotations

import re

import pytest

from .helpers import ROOT
from .test_explorer import SETUP
from .test_gallery import FROZEN
from .test_graph_view import (
    BERT,
    TEXT_PX,
    assert_fit_shows_every_node,
    assert_group_labels_readable,
    inside_canvas,
    settle,
)
from .test_graph_view import SETUP as GALLERY_SETUP

pytestmark = pytest.mark.browser


def run_in_notebook_7(lab, name: str, cells: list[str], timeout: float = 300_000):
    """Write the notebook, open it in Notebook 7, Run All once the kernel is idle; the first explorer."""
    pytest.importorskip("notebook", minversion="7", reason="Notebook 7 is not installed (pip install 'notebook>=7')")
    lab.write_notebook(name, cells)
    page = lab.page
    page.goto(f"{lab.server.url}/notebooks/{name}")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    # Run All before the kernel is connected runs nothing: wait for the toolbar's kernel indicator to say idle
    page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').first.wait_for(timeout=60_000)
    # (the indicator can say idle a moment before the kernel takes requests: Run All again if nothing started)
    started = (
        "() => [...document.querySelectorAll('.jp-InputArea-prompt')].some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))"
    )
    for attempt in range(3):
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        try:
            page.wait_for_function(started, timeout=15_000)
            break
        except Exception:
            if attempt == 2:
                raise
    explorer = page.locator(f".jp-NotebookPanel .jp-OutputArea-output {ROOT}").first
    explorer.wait_for(timeout=timeout)
    explorer.locator(".jp-TraceExplorer-canvas svg g.node").first.wait_for(timeout=60_000)
    explorer.scroll_into_view_if_needed()
    settle(lab)
    return explorer


def test_explorer_in_notebook_7(lab):
    pytest.importorskip("notebook", minversion="7", reason="Notebook 7 is not installed (pip install 'notebook>=7')")
    lab.write_notebook("nb7.ipynb", [SETUP, "e = tj.explore(Net().eval(), (torch.ones(2, 8),))\ne"])
    page = lab.page
    page.goto(f"{lab.server.url}/notebooks/nb7.ipynb")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    # Notebook 7's kernel indicator: wait until the kernel is up before running
    page.wait_for_function("() => window.jupyterapp !== undefined || document.querySelector('.jp-Notebook')")
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    explorer = page.locator(f".jp-NotebookPanel .jp-OutputArea-output {ROOT}").first
    explorer.wait_for(timeout=90_000)
    explorer.locator(".jp-TraceExplorer-canvas svg").wait_for()
    assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "warnings"
    explorer.locator(".jp-TraceExplorer-canvas g.node.kind-aten-relu").first.click()
    inspector = explorer.locator(".jp-TraceExplorer-inspector")
    inspector.wait_for()  # a click in the graph brings the inspector forward
    assert inspector.locator(".jp-TraceExplorer-nodeKind").inner_text().startswith("aten::relu")
    lab.screenshot("notebook7-explorer", explorer)
    assert not lab.extension_errors()


def set_theme(lab, theme: str) -> None:
    """Settings > Theme > ``theme`` from Notebook 7's menu bar (it exposes no ``window.jupyterapp``)."""
    page = lab.page
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Settings$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{theme}$")).click()
    page.wait_for_function("(t) => document.body.dataset.jpThemeName === t", arg=theme)
    page.wait_for_timeout(300)  # let the CSS variables settle before a screenshot


def screenshot_themes(lab, name: str, target) -> None:
    """``<name>-light.png`` and ``<name>-dark.png``; ends in the light theme (a user setting the tests share)."""
    lab.screenshot(f"{name}-light", target)
    set_theme(lab, "JupyterLab Dark")
    try:
        lab.screenshot(f"{name}-dark", target)
    finally:
        set_theme(lab, "JupyterLab Light")


#: (cell source, name, badge level)
GALLERY_NB7 = [(BERT, "bert", "warning"), (FROZEN, "frozen-branch-loop", "error")]


@pytest.mark.parametrize("source,name,level", GALLERY_NB7, ids=[g[1] for g in GALLERY_NB7])
def test_gallery_model_in_notebook_7_opens_readable_fits_and_steps(lab, source, name, level):
    explorer = run_in_notebook_7(lab, f"nb7-gallery-{name}.ipynb", [GALLERY_SETUP, source])
    badge = explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge[data-level]")
    assert badge.get_attribute("data-level") == level, badge.get_attribute("title")
    # the opening view has the model in view, drawn large enough to read
    nodes = explorer.locator(".jp-TraceExplorer-canvas svg g.node")
    in_view = [n for n in (nodes.nth(i) for i in range(nodes.count())) if inside_canvas(lab, explorer, n) == "in"]
    assert in_view, f"{name}: no node in the opening view"
    assert max(n.evaluate(TEXT_PX) for n in in_view[:20]) >= 7, name
    assert_group_labels_readable(explorer, f"{name}: opening view")
    screenshot_themes(lab, f"notebook7-gallery-{name}", explorer)
    if level == "error":
        # a failed check opens on its first root; the stepper walks the roots, the graph marks each in turn
        check = explorer.locator(".jp-TraceExplorer-check")
        assert check.is_visible()
        label = check.locator(".jp-TraceExplorer-stepLabel")
        roots = int(re.fullmatch(r"root 1 of (\d+)", label.inner_text()).group(1))
        assert roots >= 2
        # roots with a trace node are marked in the graph and panned to (the others are only in the check trace)
        current = explorer.locator(".jp-TraceExplorer-canvas svg g.node:is(.current, .has-current)")
        marked = []
        for i in range(1, roots + 1):
            if i > 1:
                check.get_by_role("button", name="next root").click()
            label.filter(has_text=f"root {i} of {roots}").wait_for()
            settle(lab)
            if current.count():
                assert inside_canvas(lab, explorer, current.first) == "in", f"root {i}: the view did not follow"
                marked.append(current.first.get_attribute("id"))
        assert marked, "no root of the trace was marked in the graph"
        assert check.get_by_role("button", name="next root").is_disabled()
        # the comparison over the graph area, the sides named by what they are; it follows the stepper over every
        # root, each drawn current in the middle of a pane
        check.get_by_role("button", name="first root").click()
        label.filter(has_text=f"root 1 of {roots}").wait_for()
        check.locator(".jp-TraceExplorer-openCompare").first.click()
        full = explorer.locator(".jp-TraceExplorer-compareFull")
        panes = full.locator(".jp-TraceExplorer-comparePane")
        # (a side with no counterpart says what its ops stand for after a " · ")
        sides = [t.split(" · ")[0] for t in panes.locator(".jp-TraceExplorer-paneLabel").all_inner_texts()]
        assert sides == ["trace", "check with check_inputs[0]"]
        for i in range(1, roots + 1):
            if i > 1:
                old = full.element_handle()
                check.get_by_role("button", name="next root").click()
                lab.page.wait_for_function("(old) => !old.isConnected", arg=old)  # the panes of the next root
            shown = panes.locator("svg g.node.current").first
            shown.wait_for()
            box = shown.bounding_box()
            pane = panes.filter(has=lab.page.locator("g.node.current")).first.bounding_box()
            assert pane["x"] <= box["x"] + box["width"] / 2 <= pane["x"] + pane["width"], f"root {i}"
            if i == 2:
                screenshot_themes(lab, f"notebook7-gallery-{name}-compare", explorer)
        full.locator(".jp-TraceExplorer-compareCanvas").first.focus()
        lab.page.keyboard.press("Escape")
        full.wait_for(state="detached")
    assert_fit_shows_every_node(lab, explorer)
    screenshot_themes(lab, f"notebook7-gallery-{name}-fit", explorer)
    assert not lab.extension_errors()
