"""Where an export's explorer opens and where its minimap sits, measured in a real JupyterLab: a refused export
opens on the line torch refused at (its ops in the canvas, the inputs out of it), an export that passed opens on
its inputs, and the minimap covers no node of the graph wherever the view is panned (it moves, shrinks or
hides). Light and dark screenshots."""

from __future__ import annotations

import json

import pytest

from .helpers import explorer_in

pytestmark = pytest.mark.browser

REFUSED = """\
import json
import torch, torch.nn as nn
import jupyter_tracejit as tj

class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(16, 16) for _ in range(24))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        if x.sum() > 0:  # refused: a branch on a value
            return x * 2
        return x

run = tj.export(Deep(), (torch.randn(4, 16),), draft="on_failure")  # the draft's graph at once
at = run.error.file, run.error.line
print(json.dumps([n.id for n in run.graph.nodes
                  if n.role == "op" and n.source and any((f.file, f.line) == at for f in n.source.stack)]))
"""

LLAMA = """\
import os
os.environ["HF_HUB_OFFLINE"] = "1"
import torch, transformers
import jupyter_tracejit as tj

torch.manual_seed(0)
config = transformers.LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
llama = transformers.LlamaForCausalLM(config).eval()
ids = torch.randint(0, 1000, (2, 16))
seq = {"input_ids": {1: torch.export.Dim("seq", min=2, max=64)}, "use_cache": None}
run = tj.export(llama, (ids,), {"use_cache": False}, dynamic_shapes=seq, draft="never")
"""

#: the boxes (page px) of the canvas, the minimap (null when hidden), the nodes drawn in the canvas, and given ids
BOXES = """([root, ids]) => {
  const box = el => { const r = el.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; };
  const canvas = box(root.querySelector('.jp-TraceExplorer-canvas'));
  const inCanvas = b => b.x < canvas.x + canvas.w && b.x + b.w > canvas.x && b.y < canvas.y + canvas.h
    && b.y + b.h > canvas.y;
  const map = root.querySelector('.jp-TraceExplorer-minimap');
  const svg = root.querySelector('.jp-TraceExplorer-canvas svg');
  return {
    canvas,
    map: map.hidden ? null : box(map),
    nodes: [...svg.querySelectorAll('g.node')].map(box).filter(inCanvas),
    inputs: [...svg.querySelectorAll('g.node.input')].map(box),
    marked: ids.map(id => svg.querySelector(`g.node#n${id}`)).filter(Boolean).map(box),
  };
}"""

#: where to drag (page px) to move the view to fractions (fx, fy) of the drawing: from the canvas's centre, by the
#: view's offset from there at the view's scale
PAN_DRAG = """([root, fx, fy]) => {
  const svg = root.querySelector('.jp-TraceExplorer-canvas svg');
  const canvas = root.querySelector('.jp-TraceExplorer-canvas').getBoundingClientRect();
  const world = svg.getBBox();
  const vb = svg.viewBox.baseVal;
  const k = canvas.width / vb.width;
  const x = world.x + fx * Math.max(0, world.width - vb.width);
  const y = world.y + fy * Math.max(0, world.height - vb.height);
  const from = {x: canvas.x + canvas.width / 2, y: canvas.y + canvas.height / 2};
  return {from, to: {x: from.x - (x - vb.x) * k, y: from.y - (y - vb.y) * k}, view: [vb.x, vb.y]};
}"""
VIEW = (
    "(root) => { const vb = root.querySelector('.jp-TraceExplorer-canvas svg').viewBox.baseVal; return [vb.x, vb.y]; }"
)


def pan_to(lab, explorer, fx: float, fy: float) -> tuple[list[float], list[float]]:
    """Drag the canvas (as a person pans) so the view is at fractions (fx, fy) of the drawing; the view's corner
    before and after."""
    drag = lab.page.evaluate(PAN_DRAG, [explorer.element_handle(), fx, fy])
    (x0, y0), (x1, y1) = drag["from"].values(), drag["to"].values()
    canvas = explorer.locator(".jp-TraceExplorer-canvas").bounding_box()
    # in drags that stay on the canvas (a third of it each), as a person pans a long way
    parts = max(1, int(max(abs(x1 - x0) / (canvas["width"] / 3), abs(y1 - y0) / (canvas["height"] / 3))) + 1)
    mouse = lab.page.mouse
    for _ in range(parts):
        mouse.move(x0, y0)
        mouse.down()
        mouse.move(x0 + (x1 - x0) / parts, y0 + (y1 - y0) / parts, steps=4)
        mouse.up()
    settled(lab, explorer)
    return drag["view"], explorer.evaluate(VIEW)


def inside(a: dict, b: dict) -> bool:
    return (
        b["x"] <= a["x"]
        and a["x"] + a["w"] <= b["x"] + b["w"]
        and b["y"] <= a["y"]
        and a["y"] + a["h"] <= b["y"] + b["h"]
    )


def overlaps(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]
    )


def settled(lab, explorer) -> None:
    """Let the view's animation and the minimap's next frame pass."""
    lab.page.wait_for_timeout(400)
    lab.page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def test_a_refused_export_opens_on_the_line_torch_refused_at(lab):
    lab.write_notebook("refused_opening.ipynb", [REFUSED, "tj.explore(run)"])
    lab.open_notebook("refused_opening.ipynb")
    lab.run_all(timeout=180_000)
    at_line = json.loads(lab.outputs(0).inner_text())
    assert at_line, "the draft's graph has ops at the refused line"
    explorer = explorer_in(lab, 1, nodes=True)
    explorer.scroll_into_view_if_needed()
    settled(lab, explorer)
    boxes = lab.page.evaluate(BOXES, [explorer.element_handle(), at_line])
    first = boxes["marked"][0]
    assert inside(first, boxes["canvas"]), boxes  # the refused line's first op is in view...
    assert boxes["map"] is None or not overlaps(boxes["map"], first), boxes  # ...and not under the map
    assert not any(overlaps(b, boxes["canvas"]) for b in boxes["inputs"]), boxes  # not the inputs' view
    lab.screenshot_themes("export-opens-on-refusal", explorer)


def test_an_export_opens_on_its_inputs_and_the_minimap_covers_no_node(lab):
    lab.write_notebook("export_minimap.ipynb", [LLAMA, "tj.explore(run)"])
    lab.open_notebook("export_minimap.ipynb")
    lab.run_all(timeout=240_000)
    explorer = explorer_in(lab, 1, nodes=True)
    explorer.scroll_into_view_if_needed()
    settled(lab, explorer)
    handle = explorer.element_handle()
    boxes = lab.page.evaluate(BOXES, [handle, []])
    assert boxes["inputs"] and all(inside(b, boxes["canvas"]) for b in boxes["inputs"]), boxes
    lab.screenshot_themes("export-opens-on-inputs", explorer)
    shown, moved = 0, 0
    for fy in (0.0, 0.25, 0.5, 0.75, 1.0):
        for fx in (0.0, 0.5, 1.0):
            before, after = pan_to(lab, explorer, fx, fy)
            moved += abs(before[0] - after[0]) + abs(before[1] - after[1]) > 1
            boxes = lab.page.evaluate(BOXES, [handle, []])
            if boxes["map"] is None:
                continue
            shown += 1
            under = [b for b in boxes["nodes"] if overlaps(b, boxes["map"])]
            assert not under, (fx, fy, boxes["map"], under)
    assert moved >= 10, f"the view moved {moved} times in 15 drags"
    assert shown >= 3, f"the map was shown in {shown} of 15 views"  # it moves and shrinks rather than hide
    pan_to(lab, explorer, 0.5, 0.6)
    lab.screenshot_themes("export-minimap-clear-of-nodes", explorer)
    assert not lab.extension_errors()
