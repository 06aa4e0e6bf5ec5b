"""The graph view's tools in a real JupyterLab on real models (a small transformers BERT, nn.TransformerEncoder):
tooltips that say what a node is, the keyboard moving along edges, the minimap, the colour legend, the picture
export with its colours, and the contrast of the graph's highlight states in the light and dark themes."""

from __future__ import annotations

import json
import re
import struct
import xml.etree.ElementTree as ET

import pytest

from jupyter_tracejit._dev.browser import ARTIFACTS

from ..models import line_in
from .helpers import ROOT, explorer_in, run_notebook
from .test_explorer import SETUP
from .test_shell import CONTRAST, MIN_CONTRAST, css_colour

pytestmark = pytest.mark.browser

MODELS = """\
import os
os.environ["HF_HUB_OFFLINE"] = "1"
from transformers import BertConfig, BertModel

def fork(x):
    a = torch.relu(x)
    b = torch.sigmoid(x)
    return a + b

torch.manual_seed(0)
bert = BertModel(BertConfig(return_dict=False, num_hidden_layers=2, hidden_size=64, num_attention_heads=2,
                            intermediate_size=128)).eval()
ids = torch.randint(0, 1000, (1, 8))
encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 2, 64, batch_first=True), 2).eval()

class Branch(nn.Module):
    # a data-dependent branch: the check with negative inputs takes the other side, inside this module
    def forward(self, x):
        if x.sum() > 0:
            return torch.relu(x) * 2
        return torch.sigmoid(x) - 1

branchy = nn.Sequential(Branch(), nn.Linear(4, 4)).eval()
x4, negative = torch.ones(3, 4), -5 * torch.ones(3, 4)
"""

#: the DOT names Graphviz would show as tooltips if nothing replaced them
DOT_NAME = r"^(n|g|in|out)\d+$|^cluster_\d+$|->"

#: the items of a picture: DOT name, classes, tooltip, centre on the page
ITEMS = """(root) => [...root.querySelectorAll('.jp-TraceExplorer-canvas g.node')].map(g => {
    const r = g.getBoundingClientRect();
    return {dot: g.dataset.dot, id: g.id, cls: g.getAttribute('class'),
            title: g.querySelector(':scope > title')?.textContent ?? '', x: r.x + r.width / 2, y: r.y + r.height / 2};
})"""


VIEW_AT_REST = """(svg) => new Promise(done => {
  let last = svg.getAttribute('viewBox');
  const tick = () => setTimeout(() => {
    const now = svg.getAttribute('viewBox');
    if (now === last) { done(now); } else { last = now; tick(); }
  }, 120);
  tick();
})"""


def explore_in_notebook(lab, name: str, *cells: str, first: str = SETUP + MODELS):
    """Notebook ``name``: ``first`` (the setup and the models above), then ``cells``, run (BERT takes a while); the
    explorer in the output of its second cell."""
    run_notebook(lab, name, [first, *cells], timeout=120_000)
    return explorer_in(lab, 1)


def view_at_rest(explorer) -> str:
    """The canvas's viewBox once it stops changing: zoom, fit and jumps move the view in a short animation."""
    return explorer.locator(".jp-TraceExplorer-canvas svg").evaluate(VIEW_AT_REST)


def new_picture(lab, explorer, action) -> None:
    """Do ``action`` and wait until the graph shows the picture it asked for (the layout runs in a worker)."""
    old = explorer.locator(".jp-TraceExplorer-canvas svg").element_handle()
    action()
    lab.page.wait_for_function(
        "([root, old]) => { const svg = root.querySelector('.jp-TraceExplorer-canvas svg');"
        " const status = root.querySelector('.jp-TraceExplorer-graphStatus').textContent;"
        " return svg && svg !== old && /items? shown/.test(status); }",
        arg=[explorer.element_handle(), old],
    )


def cursor(explorer):
    """The item the keyboard cursor is on: (DOT name, classes, centre), or None."""
    found = explorer.evaluate(ITEMS)
    on = [i for i in found if "kbd-cursor" in i["cls"].split()]
    assert len(on) <= 1, on
    return on[0] if on else None


def in_view(explorer, item) -> bool:
    box = explorer.locator(".jp-TraceExplorer-canvas").bounding_box()
    return box["x"] <= item["x"] <= box["x"] + box["width"] and box["y"] <= item["y"] <= box["y"] + box["height"]


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


def export(lab, explorer, choice: str, tmp_path):
    with lab.page.expect_download() as download:
        explorer.locator("select.jp-TraceExplorer-pictureMenu").select_option(label=choice)
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    return path


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


SVG_NS = "{http://www.w3.org/2000/svg}"


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
