"""The graph view's tools in a real JupyterLab on real models (a small transformers BERT, nn.TransformerEncoder):
tooltips that say what a node is, the keyboard moving along edges, the minimap and the wheel (the legend, the
picture export and the colours of highlights and repeat groups: test_graph_pictures.py)."""

from __future__ import annotations

import re

import pytest

from ..models import line_in
from .graph_steps import (
    DOT_NAME,
    ITEMS,
    MODELS,
    VIEW_AT_REST,
    cursor,
    explore_in_notebook,
    in_view,
    new_picture,
    view_at_rest,
)
from .helpers import ROOT, explorer_in
from .test_explorer import SETUP

pytestmark = pytest.mark.browser


def test_tooltips_say_kind_shapes_and_the_cell_line(lab):
    net = explore_in_notebook(
        lab,
        "tooltips.ipynb",
        "net = tj.explore(Net().eval(), (torch.ones(2, 8),))\nnet",
        "b = tj.explore(bert, (ids,))\nb",
    )
    # the title comes with the picture (the DOT names the cell as the panels do), not when the pointer reaches it
    relu = next(i for i in net.evaluate(ITEMS) if "kind-aten-relu" in i["cls"])
    lines = relu["title"].split("\n")
    assert lines[0] == "aten::relu", lines
    assert any(re.fullmatch(r"%\S+ : Float\(2, 8\)", line) for line in lines), lines
    # Block.forward's return, named as the cell's own line
    at = line_in(SETUP + MODELS, "return torch.relu(self.fc(x)) + x")
    assert any(re.fullmatch(rf"cell \[\d+\], line {at}", line) for line in lines), lines
    assert "return torch.relu(self.fc(x)) + x" in lines
    # clusters and edges say which module / which value, never their DOT names
    titles = net.evaluate(
        "(root) => [...root.querySelectorAll('.jp-TraceExplorer-canvas g.node > title, "
        ".jp-TraceExplorer-canvas g.cluster > title, .jp-TraceExplorer-canvas g.edge > title')].map(t => t.textContent)"
    )
    assert titles and not [t for t in titles if re.search(DOT_NAME, t)], titles[:20]
    cluster = net.locator(".jp-TraceExplorer-canvas g.cluster > title").first.text_content()
    assert "(Sequential)" in cluster or "(Block)" in cluster, cluster

    bert = explorer_in(lab, 2)
    items = bert.evaluate(ITEMS)
    assert items and all(not re.search(DOT_NAME, i["title"]) for i in items), items[:5]
    bert.get_by_role("button", name="collapse all").click()
    bert.locator(".jp-TraceExplorer-canvas g.node.scope-collapsed").first.wait_for()
    bert.get_by_role("button", name="fit").click()  # the boxes may lie outside the view the last picture had
    view_at_rest(bert)
    boxes = [i for i in bert.evaluate(ITEMS) if "scope-collapsed" in i["cls"]]
    assert boxes and all(not re.search(DOT_NAME, b["title"]) for b in boxes), boxes
    assert all("click to expand" in b["title"] for b in boxes)
    assert not lab.extension_errors()


def test_keyboard_walks_the_edges_enter_inspects_escape_clears(lab):
    explorer = explore_in_notebook(
        lab, "keys.ipynb", "f = tj.explore(fork, (torch.ones(2, 3),))\nf", "b = tj.explore(bert, (ids,))\nb"
    )
    page = lab.page
    canvas = explorer.locator(".jp-TraceExplorer-canvas")
    canvas.focus()
    assert canvas.evaluate("el => el.matches(':focus-visible')")
    outline = canvas.evaluate("el => getComputedStyle(el).outlineStyle + ' ' + getComputedStyle(el).outlineWidth")
    assert outline == "solid 2px", outline
    assert "arrow keys" in canvas.get_attribute("aria-label")

    # no selection: the first press lands on the top item, the input
    page.keyboard.press("ArrowDown")
    at = cursor(explorer)
    assert at and at["dot"].startswith("in"), at
    assert explorer.locator(".jp-TraceExplorer-canvas g.node.selected").count() == 0
    # down: to a consumer (relu or sigmoid), selected as a click would, the inspector shows it
    page.keyboard.press("ArrowDown")
    first = cursor(explorer)
    kinds = {"kind-aten-relu": "aten::relu", "kind-aten-sigmoid": "aten::sigmoid"}
    first_kind = next(k for k in kinds if k in first["cls"])
    assert "selected" in first["cls"].split()
    inspector = explorer.locator(".jp-TraceExplorer-inspector .jp-TraceExplorer-nodeKind")
    inspector.filter(has_text=kinds[first_kind]).wait_for()
    # a screen reader hears what the cursor is on: the kind and its output
    announced = explorer.locator(".jp-TraceExplorer-announcer")
    assert announced.get_attribute("aria-live") == "polite"
    assert re.fullmatch(kinds[first_kind] + r", %\S+ : Float\(2, 3\)", announced.text_content()), (
        announced.text_content()
    )
    # left / right: to the sibling on that side, and back
    other = "kind-aten-sigmoid" if first_kind == "kind-aten-relu" else "kind-aten-relu"
    page.keyboard.press("ArrowRight")
    moved = cursor(explorer)
    if moved["dot"] == first["dot"]:  # the sibling is on the other side
        page.keyboard.press("ArrowLeft")
        moved = cursor(explorer)
    assert other in moved["cls"], moved
    inspector.filter(has_text=kinds[other]).wait_for()
    # down: the add both feed; down again: the output; up: back to the add
    page.keyboard.press("ArrowDown")
    assert "kind-aten-add" in cursor(explorer)["cls"]
    page.keyboard.press("ArrowDown")
    assert cursor(explorer)["dot"].startswith("out")
    assert explorer.locator(".jp-TraceExplorer-canvas g.node.selected").count() == 0
    page.keyboard.press("ArrowUp")
    add = cursor(explorer)
    assert "kind-aten-add" in add["cls"] and "selected" in add["cls"].split()
    # Escape clears the selection and the cursor
    page.keyboard.press("Escape")
    page.wait_for_function(
        "(root) => !root.querySelector('.jp-TraceExplorer-canvas :is(g.node.selected, .kbd-cursor)')",
        arg=explorer.element_handle(),
    )
    # Enter on an op opens the inspector tab even from another tab
    explorer.locator('.jp-TraceExplorer-tab[data-tab="warnings"]').click()
    canvas.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    explorer.locator('.jp-TraceExplorer-tab[data-tab="inspector"].jp-mod-active').wait_for()
    lab.screenshot_themes("graph-tools-keyboard", explorer.locator(".jp-TraceExplorer-graph"))

    # BERT: the walk follows the selection off screen, and Enter on a folded module opens it
    bert = explorer_in(lab, 2)
    bert_canvas = bert.locator(".jp-TraceExplorer-canvas")
    bert.get_by_role("button", name="collapse all").click()
    bert.locator(".jp-TraceExplorer-canvas g.node.scope-collapsed").first.wait_for()
    # expand the top level: its modules are boxes inside it
    # (a dispatched click: the view may still be easing towards it, and the pointer would land beside it)
    bert.locator(".jp-TraceExplorer-canvas g.node.scope-collapsed").first.dispatch_event("click")
    bert.locator(".jp-TraceExplorer-canvas g.cluster").first.wait_for()
    bert.get_by_role("button", name="zoom in").click()
    bert.get_by_role("button", name="zoom in").click()
    bert.get_by_role("button", name="zoom in").click()
    bert_canvas.focus()
    seen_box = None
    for _ in range(40):
        page.keyboard.press("ArrowDown")
        view_at_rest(bert)  # the view eases after the cursor
        at = cursor(bert)
        assert at is not None and in_view(bert, at), at
        if "scope-collapsed" in at["cls"]:
            seen_box = at
            break
    assert seen_box, "a walk down BERT reaches a folded module"
    page.keyboard.press("Enter")
    opened = seen_box["id"].replace("scope-", "cluster-", 1)
    bert.locator(f'.jp-TraceExplorer-canvas g.cluster[id="{opened}"]').wait_for()
    assert not lab.extension_errors()


VIEWBOX = "(root) => root.querySelector('.jp-TraceExplorer-canvas svg').viewBox.baseVal.y"


def test_minimap_shows_the_whole_graph_and_moves_the_view(lab):
    bert = explore_in_notebook(lab, "minimap.ipynb", "b = tj.explore(bert, (ids,))\nb")
    minimap = bert.locator(".jp-TraceExplorer-minimap")
    new_picture(lab, bert, bert.get_by_role("button", name="expand all").click)
    bert.get_by_role("button", name="fit").click()
    for _ in range(3):  # fit shows all of BERT at a small scale; zoomed in, the view is a part of it
        bert.get_by_role("button", name="zoom in").click()
    view_at_rest(bert)
    # the map shows it all, framing the view
    minimap.wait_for(state="visible")
    bert.locator(".jp-TraceExplorer-graph").scroll_into_view_if_needed()
    frame = bert.locator(".jp-TraceExplorer-minimapFrame")
    map_box, frame_box = minimap.bounding_box(), frame.bounding_box()
    assert frame_box["height"] < map_box["height"] * 0.9, (map_box, frame_box)
    assert (
        map_box["x"] <= frame_box["x"] and frame_box["y"] + frame_box["height"] <= map_box["y"] + map_box["height"] + 1
    )
    painted = minimap.locator("canvas").evaluate(
        "c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " let n = 0; for (let i = 3; i < d.length; i += 4) n += d[i] > 0; return n / (c.width * c.height); }"
    )
    assert painted > 0.05, painted  # the graph's shapes, not an empty box

    # a click near the bottom of the map moves the view there; the frame follows
    top = bert.evaluate(VIEWBOX)
    minimap.click(position={"x": map_box["width"] / 2, "y": map_box["height"] - 6})
    bottom = bert.evaluate(VIEWBOX)
    assert bottom > top + 100, (top, bottom)
    lab.page.wait_for_function(
        "([el, y]) => el.getBoundingClientRect().y > y + 10", arg=[frame.element_handle(), frame_box["y"]]
    )
    assert minimap.bounding_box() == map_box  # nothing scrolled: the frame moved on the map
    # a drag back up moves it continuously
    page = lab.page
    page.mouse.move(map_box["x"] + map_box["width"] / 2, map_box["y"] + map_box["height"] - 6)
    page.mouse.down()
    page.mouse.move(map_box["x"] + map_box["width"] / 2, map_box["y"] + map_box["height"] / 2, steps=4)
    middle = bert.evaluate(VIEWBOX)
    page.mouse.move(map_box["x"] + map_box["width"] / 2, map_box["y"] + 4, steps=4)
    page.mouse.up()
    assert bottom > middle > bert.evaluate(VIEWBOX), (bottom, middle)
    lab.screenshot_themes("graph-tools-minimap", bert.locator(".jp-TraceExplorer-graph"))

    # fit shows everything when it can: "collapse all" leaves a small picture, and the map goes away
    new_picture(lab, bert, bert.get_by_role("button", name="collapse all").click)
    bert.get_by_role("button", name="fit").click()
    minimap.wait_for(state="hidden")
    assert not lab.extension_errors()


#: the boxes (page px) of the minimap, the canvas and the focused nodes of an explorer
MAP_AND_FOCUS = """(root) => {
  const box = el => { const r = el.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; };
  const map = root.querySelector('.jp-TraceExplorer-minimap');
  const focus = [...root.querySelectorAll('.jp-TraceExplorer-canvas g.node:is(.selected, .current, .kbd-cursor)')];
  return {map: map.hidden ? null : box(map), corner: map.dataset.corner || null,
          canvas: box(root.querySelector('.jp-TraceExplorer-canvas')), focus: focus.map(box)};
}"""


#: pan (set the viewBox) so that the selected node's centre lands on the minimap's centre
PAN_UNDER_MAP = """(root) => {
  const svg = root.querySelector('.jp-TraceExplorer-canvas svg');
  const node = svg.querySelector('g.node.selected').getBoundingClientRect();
  const map = root.querySelector('.jp-TraceExplorer-minimap').getBoundingClientRect();
  const vb = svg.viewBox.baseVal;
  const k = vb.width / svg.parentElement.clientWidth;
  const dx = (map.x + map.width / 2 - (node.x + node.width / 2)) * k;
  const dy = (map.y + map.height / 2 - (node.y + node.height / 2)) * k;
  svg.setAttribute('viewBox', `${vb.x - dx} ${vb.y - dy} ${vb.width} ${vb.height}`);
}"""


def inside(a, b) -> bool:
    return (
        b["x"] <= a["x"]
        and a["x"] + a["w"] <= b["x"] + b["w"]
        and b["y"] <= a["y"]
        and a["y"] + a["h"] <= b["y"] + b["h"]
    )


def overlaps(a, b) -> bool:
    return (
        a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]
    )


def test_minimap_in_a_narrow_output_stays_small_off_the_focus_and_can_be_turned_off_and_on(lab):
    """A 1024-px window with the file browser open (the output stacks the side panel under the graph): the map
    takes a small share of the canvas, moves away from the node in focus, and on a canvas too small for it is off
    until the "map" button turns it on."""
    lab.page.set_viewport_size({"width": 1024, "height": 768})
    lab.write_notebook("narrow.ipynb", [SETUP + MODELS, "b = tj.explore(bert, (ids,))\nb"])
    lab.open_notebook("narrow.ipynb")
    if not lab.page.locator("#filebrowser").is_visible():
        lab.command("filebrowser:activate")
    lab.page.locator("#filebrowser").wait_for()
    lab.run_all(timeout=120_000)
    bert = explorer_in(lab, 1)
    bert.scroll_into_view_if_needed()
    minimap = bert.locator(".jp-TraceExplorer-minimap")
    map_button = bert.get_by_role("button", name="map")
    # the opening view (on the first warned node, at a readable scale) is a part of the graph: the map is shown
    minimap.wait_for(state="visible")
    assert map_button.get_attribute("aria-pressed") == "true"
    at = bert.evaluate(MAP_AND_FOCUS)
    canvas, box = at["canvas"], at["map"]
    assert canvas["w"] < 760, canvas  # a narrow output
    assert box["w"] <= canvas["w"] * 0.25 + 8 and box["h"] <= canvas["h"] * 0.45 + 8, (box, canvas)
    lab.screenshot_themes("graph-tools-minimap-narrow", bert.locator(".jp-TraceExplorer-graph"))

    # a selected node panned under the map's corner: the map goes to another corner, never over it
    search = bert.locator(".jp-TraceExplorer-search")
    search.fill("kind:linear")
    search.press("Enter")
    bert.locator(".jp-TraceExplorer-canvas g.node.selected").wait_for()
    view_at_rest(bert)
    # (the view moved by its viewBox, as a pan does, so that the selected node's centre is the map's)
    lab.page.evaluate(PAN_UNDER_MAP, bert.element_handle())
    lab.page.wait_for_timeout(200)  # the map moves in the next frame
    at = bert.evaluate(MAP_AND_FOCUS)
    (selected,) = at["focus"]
    centre = {"x": selected["x"] + selected["w"] / 2, "y": selected["y"] + selected["h"] / 2, "w": 0, "h": 0}
    assert inside(centre, at["canvas"]), at
    assert at["map"] is None or not overlaps(at["map"], selected), at
    assert at["map"] is None or at["corner"] != "bottom-right", at
    lab.screenshot("graph-tools-minimap-off-focus", bert.locator(".jp-TraceExplorer-graph"))

    # the graph made short with the splitter: too small a canvas for the map, which is off until asked for
    splitter = bert.locator(".jp-TraceExplorer-splitter")
    splitter.focus()
    lab.page.keyboard.press("Home")
    bert.get_by_role("button", name="zoom in").click()
    lab.page.wait_for_function(
        "(b) => b.getAttribute('aria-pressed') === 'false'", arg=map_button.element_handle(), timeout=5_000
    )
    assert minimap.is_hidden()
    map_button.click()
    minimap.wait_for(state="visible")
    at = bert.evaluate(MAP_AND_FOCUS)
    assert at["map"]["w"] <= at["canvas"]["w"] * 0.25 + 8 and at["map"]["h"] <= at["canvas"]["h"] * 0.45 + 8, at
    lab.screenshot_themes("graph-tools-minimap-small-canvas", bert.locator(".jp-TraceExplorer-graph"))
    map_button.click()
    minimap.wait_for(state="hidden")
    assert map_button.get_attribute("aria-pressed") == "false"
    assert not lab.extension_errors()


#: the graph's viewBox and how far the notebook is scrolled
VIEW_AND_SCROLL = """(root) => {
  const box = root.querySelector('.jp-TraceExplorer-canvas svg').getAttribute('viewBox');
  const scroller = [...document.querySelectorAll('.jp-WindowedPanel-outer, .jp-Notebook')]
    .find(el => el.scrollHeight > el.clientHeight && el.contains(root));
  return {box, scroll: scroller ? scroller.scrollTop : null};
}"""


def test_the_wheel_scrolls_the_notebook_until_the_graph_is_engaged(lab):
    """In a notebook a plain wheel over the graph scrolls the page and says how to zoom; Ctrl + wheel (a trackpad
    pinch) zooms, so does the wheel once the graph was clicked, and always in full screen."""
    explorer = explore_in_notebook(
        lab, "wheel.ipynb", "e = tj.explore(bert, (ids,))\ne", "print('\\n'.join(map(str, range(200))))"
    )
    canvas = explorer.locator(".jp-TraceExplorer-canvas")
    canvas.scroll_into_view_if_needed()
    view_at_rest(explorer)
    page = lab.page
    page.evaluate("document.activeElement && document.activeElement.blur()")  # the graph is not engaged
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    before = explorer.evaluate(VIEW_AND_SCROLL)
    assert before["scroll"] is not None  # the notebook can scroll here
    page.mouse.wheel(0, 120)
    hint = explorer.locator(".jp-TraceExplorer-wheelHint")
    hint.wait_for()
    assert re.fullmatch(r"(Ctrl|⌘) \+ wheel zooms the graph \(or click it first\)", hint.inner_text())
    page.wait_for_function(
        "([root, top]) => { const s = [...document.querySelectorAll('.jp-WindowedPanel-outer, .jp-Notebook')]"
        ".find(el => el.scrollHeight > el.clientHeight && el.contains(root)); return s.scrollTop > top; }",
        arg=[explorer.element_handle(), before["scroll"]],
    )
    assert explorer.evaluate(VIEW_AND_SCROLL)["box"] == before["box"]  # the graph did not zoom
    lab.screenshot("graph-wheel-hint-light", canvas)
    hint.wait_for(state="detached")  # the hint goes by itself
    lab.set_theme("JupyterLab Dark")
    try:
        page.mouse.wheel(0, 40)
        hint.wait_for()
        lab.screenshot("graph-wheel-hint-dark", canvas)
        colours = hint.evaluate("el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]")
        assert colours[0] != colours[1], colours
    finally:
        lab.set_theme("JupyterLab Light")
    hint.wait_for(state="detached")
    canvas.scroll_into_view_if_needed()

    # Ctrl + wheel zooms (what a trackpad pinch sends) and leaves the page where it is
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    scrolled = explorer.evaluate(VIEW_AND_SCROLL)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -120)
    page.keyboard.up("Control")
    zoomed = view_at_rest(explorer)
    assert float(zoomed.split()[2]) < float(scrolled["box"].split()[2])
    assert explorer.evaluate(VIEW_AND_SCROLL)["scroll"] == scrolled["scroll"]

    # once the graph is clicked (in an open module's empty inside, which does not fold it), the plain wheel zooms
    status = explorer.locator(".jp-TraceExplorer-graphStatus")
    shown = status.inner_text()
    inside = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).closest('g.cluster') !== null",
        [box["x"] + 8, box["y"] + box["height"] - 8],
    )
    assert inside  # BERT's outermost groups fill the view here
    page.mouse.click(box["x"] + 8, box["y"] + box["height"] - 8)
    clicked = view_at_rest(explorer)
    page.wait_for_timeout(500)  # a fold would re-lay out the picture in a worker
    assert status.inner_text() == shown
    page.mouse.wheel(0, 120)
    out = view_at_rest(explorer)
    assert float(out.split()[2]) > float(clicked.split()[2])
    assert explorer.evaluate(VIEW_AND_SCROLL)["scroll"] == scrolled["scroll"]
    assert hint.count() == 0

    # in full screen there is no page to scroll: the wheel zooms without a click
    explorer.locator(".jp-TraceExplorer-fullScreen").click()
    full = page.locator(f"body > {ROOT}.jp-mod-fullscreen")
    full.wait_for()
    page.evaluate("document.activeElement && document.activeElement.blur()")
    box = full.locator(".jp-TraceExplorer-canvas").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    at = full.locator(".jp-TraceExplorer-canvas svg").evaluate(VIEW_AT_REST)
    page.mouse.wheel(0, -120)
    assert float(full.locator(".jp-TraceExplorer-canvas svg").evaluate(VIEW_AT_REST).split()[2]) < float(at.split()[2])
    page.keyboard.press("Escape")
    assert not lab.extension_errors()
