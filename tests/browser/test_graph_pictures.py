"""The graph view's pictures in a real JupyterLab: the colour legend painting with the graph's own rules, the picture
export of the view and of the whole graph with their colours, the contrast of the highlight states and the look of
repeat groups in the light and dark themes."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from jupyter_tracejit._dev.browser import ARTIFACTS

from .contrast import CONTRAST, MIN_CONTRAST, css_colour
from .graph_steps import MODELS, SVG_NS, explore_in_notebook, export, new_picture, png_size, view_at_rest
from .helpers import ROOT, explorer_in
from .test_explorer import SETUP

pytestmark = pytest.mark.browser


def test_legend_paints_with_the_graphs_own_rules(lab):
    red = explore_in_notebook(lab, "legend.ipynb", "red = tj.explore(branchy, (x4,), check_inputs=[(negative,)])\nred")
    legend = red.locator(".jp-TraceExplorer-legend")
    button = red.get_by_role("button", name="legend")
    assert button.get_attribute("aria-expanded") == "false" and legend.is_hidden()
    button.click()
    legend.wait_for(state="visible")
    assert button.get_attribute("aria-expanded") == "true"
    entries = legend.locator("li")
    assert entries.count() == 15
    text = legend.inner_text()
    for meaning in ("divergence root", "downstream", "selected", "folded", "only in", "constant", "keyboard", "×N"):
        assert meaning in text, meaning
    # the swatches are painted by the rules that paint the graph: the same fill as a root node on the canvas
    red.locator(".jp-TraceExplorer-canvas g.node.root").first.wait_for()

    def fill(locator):
        return locator.evaluate("el => getComputedStyle(el).fill")

    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        lab.set_theme(theme)
        root_node = red.locator(".jp-TraceExplorer-canvas g.node.root path").first
        assert fill(legend.locator('li[data-classes="node root"] path')) == fill(root_node)
        assert fill(root_node) == css_colour(lab.page, "--jp-error-color2")
        lab.screenshot(f"graph-tools-legend-{theme.split()[-1].lower()}", red.locator(".jp-TraceExplorer-graph"))
    lab.set_theme("JupyterLab Light")
    button.click()
    legend.wait_for(state="hidden")
    assert not lab.extension_errors()


def test_export_pictures_of_the_view_and_the_whole_graph_with_their_colours(lab, tmp_path):
    explorer = explore_in_notebook(lab, "export.ipynb", "t = tj.explore(encoder, (torch.randn(2, 5, 32),))\nt")
    new_picture(lab, explorer, explorer.get_by_role("button", name="expand all").click)
    explorer.get_by_role("button", name="zoom in").click()
    drawn = explorer.locator(".jp-TraceExplorer-canvas g.node").count()
    canvas = explorer.locator(".jp-TraceExplorer-canvas svg")
    view_box = view_at_rest(explorer)
    colours = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        lab.set_theme(theme)
        name = theme.split()[-1].lower()
        whole = export(lab, explorer, "SVG of the whole graph", tmp_path / name)
        text = whole.read_text()
        assert "var(--" not in text
        root = ET.fromstring(text)  # well-formed
        assert root.tag == f"{SVG_NS}svg"
        nodes = [g for g in root.iter(f"{SVG_NS}g") if "node" in (g.get("class") or "").split()]
        assert len(nodes) == drawn
        background = root.find(f"{SVG_NS}rect")
        assert background is not None and background.get("style").startswith("fill: rgb(")
        width, height = float(root.get("width")), float(root.get("height"))
        vb = [float(v) for v in root.get("viewBox").split()]
        assert abs(vb[2] - width) < 1 and abs(vb[3] - height) < 1 and height > width > 100, (vb, width, height)
        text_style = next(root.iter(f"{SVG_NS}text")).get("style")
        assert re.match(r"fill: rgba?\(", text_style) and "font-family:" in text_style
        colours[name] = (background.get("style"), text_style.split(";")[0])
        (ARTIFACTS / f"graph-tools-export-{name}.svg").write_text(text)

        view = export(lab, explorer, "SVG of the view", tmp_path / name)
        view_root = ET.fromstring(view.read_text())
        exported_box = [float(v) for v in view_root.get("viewBox").split()]
        assert exported_box == pytest.approx([float(v) for v in view_box.split()], abs=1e-3)
        assert "var(--" not in view.read_text()
        png = export(lab, explorer, "PNG of the view", tmp_path / name)
        size = canvas.bounding_box()
        assert png_size(png) == (round(round(size["width"]) * 2), round(round(size["height"]) * 2))
        whole_png = export(lab, explorer, "PNG of the whole graph", tmp_path / name)
        assert png_size(whole_png)[1] > png_size(whole_png)[0] > 100  # the encoder is a tall column
        (ARTIFACTS / f"graph-tools-export-{name}.png").write_bytes(whole_png.read_bytes())
    lab.set_theme("JupyterLab Light")
    # the file keeps the theme it was exported from: dark background, light text in dark
    assert colours["light"] != colours["dark"], colours
    assert not lab.extension_errors()


def test_highlight_states_keep_text_contrast_in_light_and_dark(lab):
    """The graph's states (root, downstream, current, selected, search hits, a folded box hiding a root, the
    keyboard cursor, the legend) in both themes: every text >= 4.5:1 on what it is drawn over."""
    red = explore_in_notebook(
        lab,
        "states.ipynb",
        "red = tj.explore(branchy, (x4,), check_inputs=[(negative,)])\nred",
        "folded = tj.explore(branchy, (x4,), check_inputs=[(negative,)])\nfolded",
    )
    folded = explorer_in(lab, 2)
    # red: the stepper's current divergence, a selected root, the keyboard cursor on another node, the legend
    red.locator(".jp-TraceExplorer-canvas g.node.current").wait_for()  # a failed check opens on its first root
    red.locator(".jp-TraceExplorer-canvas g.node.root").first.click()
    red.locator(".jp-TraceExplorer-canvas g.node.root.selected").wait_for()
    red.locator(".jp-TraceExplorer-canvas").focus()
    lab.page.keyboard.press("ArrowUp")
    red.locator(".jp-TraceExplorer-canvas g.node.kbd-cursor").wait_for()
    red.get_by_role("button", name="legend").click()
    # folded: the modules as boxes (the loop's box marked), search hits
    folded.get_by_role("button", name="collapse all").click()
    folded.locator(".jp-TraceExplorer-canvas g.node.scope-collapsed.has-root").wait_for()
    folded.locator(".jp-TraceExplorer-search").fill("aten::linear")
    folded.locator(".jp-TraceExplorer-search").press("Enter")
    folded.locator(".jp-TraceExplorer-canvas :is(g.node.has-search-current, g.node.search-current)").first.wait_for()
    classes = " ".join(
        red.evaluate(
            "r => [...r.querySelectorAll('.jp-TraceExplorer-canvas g.node')].map(g => g.getAttribute('class'))"
        )
        + folded.evaluate(
            "r => [...r.querySelectorAll('.jp-TraceExplorer-canvas g.node')].map(g => g.getAttribute('class'))"
        )
    ).split()
    for state in ("root", "downstream", "current", "selected", "kbd-cursor", "has-root"):
        assert state in classes, state
    failures: dict[str, list[str]] = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        lab.set_theme(theme)
        measured = lab.page.evaluate(CONTRAST, f".jp-NotebookPanel:not(.lm-mod-hidden) {ROOT}")
        svg_texts = [m for m in measured if m["where"].startswith("text")]
        assert len(svg_texts) > 30, len(svg_texts)
        low = sorted((m for m in measured if m["ratio"] < MIN_CONTRAST), key=lambda m: m["ratio"])
        failures[theme] = sorted({f"{m['ratio']:.2f} {m['where']} in {m['parent']}: {m['text']!r}" for m in low})
        name = theme.split()[-1].lower()
        lab.screenshot(f"graph-tools-states-{name}-red", red.locator(".jp-TraceExplorer-graph"))
        lab.screenshot(f"graph-tools-states-{name}-folded", folded.locator(".jp-TraceExplorer-graph"))
    lab.set_theme("JupyterLab Light")
    (ARTIFACTS / "graph-tools-contrast-failures.json").write_text(json.dumps(failures, indent=1, ensure_ascii=False))
    assert failures == {"JupyterLab Light": [], "JupyterLab Dark": []}


#: six blocks of one structure: one repeat group (labelled "Block" with its count, 6)
REPEATS = "six = nn.Sequential(*[Block() for _ in range(6)]).eval()\n"


def test_repeat_groups_look_like_a_stack_with_a_count_in_light_and_dark_and_in_the_export(lab, tmp_path):
    """A folded repeat group is a stack of cards with a badge of its count, an open one a dashed frame with the
    badge, in the theme's colours; every text >= 4.5:1 (the badge on its own backdrop) in both themes; the export
    keeps it."""
    folded = explore_in_notebook(
        lab,
        "repeats.ipynb",
        "folded = tj.explore(six, (torch.ones(2, 8),), check_trace=False)\nfolded",
        "opened = tj.explore(six, (torch.ones(2, 8),), check_trace=False)\nopened",
        first=SETUP + MODELS + REPEATS,
    )
    opened = explorer_in(lab, 2)
    # a model this small opens with everything open; "collapse all" folds the six blocks into one box
    new_picture(lab, folded, folded.get_by_role("button", name="collapse all").click)
    box = folded.locator(".jp-TraceExplorer-canvas g.node.scope-collapsed.scope-repeat")
    assert "Block ×6" in box.text_content()
    # the stack: two cards behind the box (the box's outline, offset), then the badge over its corner
    stack = folded.locator(".jp-TraceExplorer-canvas g.jp-TraceExplorer-repeatStack")
    assert stack.locator("path, polygon").count() == 2
    assert stack.evaluate("s => s.nextElementSibling.classList.contains('scope-repeat')")
    badge = folded.locator(".jp-TraceExplorer-canvas g.jp-TraceExplorer-repeatBadge")
    assert badge.locator("text").text_content() == "×6"
    # open: a dashed frame with the badge, no stack
    frame = opened.locator(".jp-TraceExplorer-canvas g.cluster.scope-repeat")
    assert opened.locator(".jp-TraceExplorer-canvas g.jp-TraceExplorer-repeatBadge text").text_content() == "×6"
    assert opened.locator(".jp-TraceExplorer-canvas g.jp-TraceExplorer-repeatStack").count() == 0
    opened.get_by_role("button", name="fit").click()
    view_at_rest(opened)

    def paint(locator, prop):
        return locator.evaluate(f"el => getComputedStyle(el).{prop}")

    failures: dict[str, list[str]] = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        lab.set_theme(theme)
        # a look of its own: the brand colour's border (an op's and a plain group's are the theme's border colour)
        brand = css_colour(lab.page, "--jp-brand-color1")
        assert paint(box.locator("path, polygon").first, "stroke") == brand
        assert paint(frame.locator("path, polygon").first, "stroke") == brand
        assert paint(frame.locator("path, polygon").first, "strokeDasharray") != "none"
        op = folded.locator(".jp-TraceExplorer-canvas g.node.op-op path").first
        if op.count():
            assert paint(op, "stroke") != brand
        measured = lab.page.evaluate(CONTRAST, f".jp-NotebookPanel:not(.lm-mod-hidden) {ROOT}")
        badges = [m for m in measured if m["text"] == "×6"]
        assert len(badges) == 2 and all(m["parent"].startswith("g.jp-TraceExplorer-repeatBadge") for m in badges), (
            badges
        )
        low = sorted((m for m in measured if m["ratio"] < MIN_CONTRAST), key=lambda m: m["ratio"])
        failures[theme] = sorted({f"{m['ratio']:.2f} {m['where']} in {m['parent']}: {m['text']!r}" for m in low})
        name = theme.split()[-1].lower()
        lab.screenshot(f"graph-tools-repeat-folded-{name}", folded.locator(".jp-TraceExplorer-graph"))
        lab.screenshot(f"graph-tools-repeat-open-{name}", opened.locator(".jp-TraceExplorer-graph"))
        # the exported picture keeps the stack and the badge, in this theme's colours
        text = export(lab, folded, "SVG of the whole graph", tmp_path / name).read_text()
        assert "var(--" not in text
        root = ET.fromstring(text)
        groups = {g.get("class"): g for g in root.iter(f"{SVG_NS}g")}
        exported_badge = groups["jp-TraceExplorer-repeatBadge"]
        assert exported_badge.find(f"{SVG_NS}text").text == "×6"
        assert exported_badge.find(f"{SVG_NS}rect").get("style").startswith("fill: rgb(")
        assert len(list(groups["jp-TraceExplorer-repeatStack"])) == 2
        png = export(lab, folded, "PNG of the whole graph", tmp_path / name)
        assert min(png_size(png)) > 20
        (ARTIFACTS / f"graph-tools-repeat-export-{name}.svg").write_text(text)
        (ARTIFACTS / f"graph-tools-repeat-export-{name}.png").write_bytes(png.read_bytes())
    lab.set_theme("JupyterLab Light")
    assert failures == {"JupyterLab Light": [], "JupyterLab Dark": []}
    # a click on the box opens it, also where the badge lies over it: the decorations take no clicks
    folded.scroll_into_view_if_needed()
    b = badge.bounding_box()
    new_picture(lab, folded, lambda: lab.page.mouse.click(b["x"] + 2, b["y"] + b["height"] - 1))
    folded.locator(".jp-TraceExplorer-canvas g.cluster.scope-repeat").wait_for()
    assert not lab.extension_errors()
