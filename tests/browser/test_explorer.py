"""The trace explorer in a real JupyterLab, driven like a user: graph, inspector, groups, warnings,
divergence stepper, live options, the saved notebook without a kernel, and the dark theme."""

from __future__ import annotations

import pytest

from ..models import Block, DictNet, Net, loop_in_traced_fn, source_of
from .helpers import ROOT, close_comparison, explorer_in, reopened_without_kernel, run_notebook, walk_downstream_too

pytestmark = pytest.mark.browser

#: the first cell: the models of tests/models.py the explorer tests trace
SETUP = (
    "import torch, torch.nn as nn\nimport jupyter_tracejit as tj\n\n"
    + source_of(Block, Net, DictNet, loop_in_traced_fn)
    + "\ntorch.manual_seed(0)\n"
)


def open_comparison(explorer):
    """Click the check panel's compare button: the two graphs side by side over the graph area. The panes."""
    toggle = explorer.locator(".jp-TraceExplorer-check .jp-TraceExplorer-openCompare").first
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"  # the button says the panes are open (and closes them)
    panes = explorer.locator(".jp-TraceExplorer-graph > .jp-TraceExplorer-compareFull .jp-TraceExplorer-comparePane")
    panes.nth(0).locator("svg").wait_for()
    panes.nth(1).locator("svg").wait_for()
    # (one side may draw no node: an op only in the other graph, with nothing matched around it)
    panes.locator("svg g.node").first.wait_for()
    return panes


def graph_node(explorer, kind_class: str):
    return explorer.locator(f".jp-TraceExplorer-canvas g.node.{kind_class}")


def test_graph_inspector_warnings_and_groups(lab):
    run_notebook(
        lab,
        "explore.ipynb",
        [
            SETUP,
            "e = tj.explore(Net().eval(), (torch.ones(2, 8),))\ne",
            "big = tj.explore(Net(blocks=60).eval(), (torch.ones(2, 8),))\nbig",
        ],
    )
    explorer = explorer_in(lab, 1)
    # torch's check passes, but the data-dependent branch is frozen: amber, not green
    assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "warnings"
    assert explorer.locator(".jp-TraceExplorer-summary").get_attribute("title").startswith("Net: ok;")
    # the small graph is fully expanded: every linear is drawn, constants are folded away
    linears = graph_node(explorer, "kind-aten-linear")
    assert linears.count() == 3
    assert graph_node(explorer, "kind-prim-Constant").count() == 0
    assert explorer.locator(".jp-TraceExplorer-canvas g.cluster").count() >= 3  # blocks, blocks.0, blocks.1, ...

    # click a node: the inspector shows its source line
    graph_node(explorer, "kind-aten-relu").first.click()
    inspector = explorer.locator(".jp-TraceExplorer-inspector")
    assert inspector.locator(".jp-TraceExplorer-nodeKind").inner_text().startswith("aten::relu")
    assert "return torch.relu(self.fc(x)) + x" in inspector.locator(".jp-TraceExplorer-sourceLine").inner_text()
    assert "blocks (Sequential) › 0 (Block)" in inspector.locator(".jp-TraceExplorer-scope").inner_text()
    assert graph_node(explorer, "selected").count() == 1

    # the warnings tab: the data-dependent branch, grouped with its count; a click highlights its node
    explorer.locator('.jp-TraceExplorer-tab[data-tab="warnings"]').click()
    warning = explorer.locator('.jp-TraceExplorer-warning[data-category="to_bool"]')
    assert "×2" in warning.inner_text()
    assert "if x.sum() > 0:" in warning.inner_text()
    warning.click()
    selected = graph_node(explorer, "selected")
    selected.wait_for()
    assert "kind-aten-mul" in selected.get_attribute("class")
    assert "warning" in selected.get_attribute("class")
    lab.screenshot_themes("explorer-graph", explorer)

    # a big graph opens with its modules collapsed; a click expands a group, another collapses it
    big = explorer_in(lab, 2)
    boxes = big.locator(".jp-TraceExplorer-canvas g.node.scope-collapsed")
    assert boxes.count() >= 1
    assert graph_node(big, "kind-aten-linear").count() < 61
    drawn = big.locator(".jp-TraceExplorer-canvas g.node")
    # "collapse all" leaves the top-level modules as boxes; open the big Sequential with a click
    big.get_by_role("button", name="collapse all").click()
    box = big.locator('.jp-TraceExplorer-canvas g.node.scope-collapsed[id="scope-blocks"]')
    box.wait_for()
    before = drawn.count()
    assert before <= 6  # input, mul, the two module boxes, output
    box_id = box.get_attribute("id")
    box.click()
    big.locator(f'.jp-TraceExplorer-canvas [id="{box_id}"]').wait_for(state="detached")
    group = box_id.removeprefix("scope-")
    cluster = big.locator(f'.jp-TraceExplorer-canvas g.cluster[id="cluster-{group}"]')
    cluster.wait_for()
    assert drawn.count() > before  # the box became a cluster of its contents
    lab.screenshot("explorer-expanded", big)
    # a click on the group's frame, by its label, collapses it again
    frame = cluster.locator("path").first
    box = frame.bounding_box()
    frame.click(position={"x": box["width"] * 0.2, "y": 7})  # by the label, away from edges entering it
    big.locator(f'.jp-TraceExplorer-canvas [id="{box_id}"]').wait_for()
    assert drawn.count() == before
    assert not lab.extension_errors()


def test_divergence_stepper_moves_the_highlight_in_both_graphs(lab):
    run_notebook(
        lab,
        "stepper.ipynb",
        [SETUP, "e = tj.explore(loop_in_traced_fn, (torch.rand(3, 4),), check_inputs=[(torch.rand(4, 4),)])\ne"],
    )
    explorer = explorer_in(lab, 1)
    check = explorer.locator(".jp-TraceExplorer-check")
    check.wait_for()  # a failed check opens on the check tab
    # it opens on the first root; the stepper walks the roots, and every divergence with "downstream too"
    total = walk_downstream_too(check)
    label = check.locator(".jp-TraceExplorer-stepLabel")
    # no thumbnails: the comparison is shown over the graph area, the sides named by what they are
    assert check.locator(".jp-TraceExplorer-sideBySide svg").count() == 0
    sides = open_comparison(explorer)
    assert sides.locator(".jp-TraceExplorer-paneLabel").all_inner_texts() == ["trace", "check with check_inputs[0]"]
    current_check = sides.nth(1).locator("g.node.current")
    assert "kind-aten-select" in current_check.get_attribute("class")
    assert "root" in current_check.get_attribute("class")
    assert "only in the check trace: aten::select" in check.locator(".jp-TraceExplorer-reason").inner_text()
    first_id = current_check.get_attribute("id")
    # the keyboard moves on in the check panel: the panes follow, the current node changes in the check graph
    check.focus()
    lab.page.keyboard.press("ArrowRight")
    label.filter(has_text=f"2 of {total}").wait_for()
    lab.page.wait_for_function(
        "(old) => { const el = document.querySelectorAll('.jp-TraceExplorer-comparePane')[1]"
        "?.querySelector('g.node.current'); return el && el.id !== old; }",
        arg=first_id,
    )
    # both pictures are laid out in the worker: wait for them, then there is exactly one each
    sides.nth(0).locator("svg").wait_for()
    sides.nth(1).locator("svg").wait_for()
    assert sides.nth(0).locator("svg").count() == 1 and sides.nth(1).locator("svg").count() == 1
    assert sides.nth(0).locator("g.node.matched").count() >= 1  # matched nodes drawn on the trace side too
    lab.screenshot_themes("explorer-stepper", explorer)
    check.get_by_role("button", name="previous divergence").click()
    label.filter(has_text=f"1 of {total}").wait_for()
    check.locator('input[data-action="downstream"]').uncheck()
    label.filter(has_text="root 1 of 1").wait_for()
    # the toggle closes the comparison: the graph is back
    close_comparison(explorer, check)
    assert not lab.extension_errors()


def test_live_options_retrace_and_the_saved_notebook_renders_without_a_kernel(lab):
    run_notebook(lab, "live.ipynb", [SETUP, "e = tj.explore(DictNet().eval(), (torch.ones(2, 8),))\ne"])
    explorer = lab.outputs(1).locator(ROOT).first
    explorer.wait_for()
    # strict=True rejects the dict output: the error and its hint are shown
    assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "failed"
    assert "strict=False" in explorer.locator(".jp-TraceExplorer-error").inner_text()
    assert explorer.locator(".jp-TraceExplorer-canvas svg").count() == 0
    # no empty graph pane (it stood ~450 px tall, blank): the side panel alone, as tall as what it holds
    graph_pane = explorer.locator(".jp-TraceExplorer-graph")
    main = explorer.locator(".jp-TraceExplorer-main")
    assert not graph_pane.is_visible()
    assert main.bounding_box()["height"] < 300, main.bounding_box()
    assert explorer.locator(".jp-TraceExplorer-sidebar").bounding_box()["width"] >= main.bounding_box()["width"] - 2
    lab.screenshot_themes("explorer-failed", explorer)

    # strict off: re-traced in the kernel, the graph appears
    explorer.locator('input[data-option="strict"]').uncheck()
    explorer.locator(".jp-TraceExplorer-canvas svg").wait_for(timeout=60_000)
    assert graph_pane.is_visible() and main.bounding_box()["height"] > 400
    explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge", has_text="warnings").wait_for()
    assert "strict" not in explorer.locator(".jp-TraceExplorer-status").inner_text()

    # check_trace off: re-traced without a check
    explorer.locator('.jp-TraceExplorer-tab[data-tab="check"]').click()
    assert "Check passed" in explorer.locator(".jp-TraceExplorer-check").inner_text()
    explorer.locator('input[data-option="check_trace"]').uncheck()
    explorer.locator(".jp-TraceExplorer-check", has_text="The check was off").wait_for(timeout=60_000)
    assert "not checked" in explorer.locator(".jp-TraceExplorer-summary").inner_text()
    history = explorer.locator(".jp-TraceExplorer-history select option")
    assert history.count() == 3
    lab.screenshot_themes("explorer-live", explorer)

    # save, stop the kernel, reload: the explorer of the saved run renders, read-only
    saved = reopened_without_kernel(lab)
    assert saved.locator("input[data-option]").count() == 0
    graph_node(saved, "kind-aten-linear").first.click()
    assert saved.locator(".jp-TraceExplorer-nodeKind").inner_text().startswith("aten::linear")
    lab.screenshot("explorer-saved-no-kernel", saved)
