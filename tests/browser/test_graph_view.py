"""The graph view on the models people trace, in a real JupyterLab: transformers BERT-base and GPT-2 (random
weights, built from configs, offline) and ``nn.Transformer`` open on what matters (the first warned node, the
check's root divergence), plumbing folded away, repeated layers folded into one group that opens on click,
``fit`` shows every node, a jump to a node pans there; a long chain opens collapsed into sections and "expand
all" stops short of what one picture can hold, saying so. Screenshots of the opening views in light and dark."""

from __future__ import annotations

import pytest

from ..models import ScaledBlock, source_of
from .helpers import explorer_in, run_notebook

pytestmark = pytest.mark.browser

SETUP = """\
import os
os.environ["HF_HUB_OFFLINE"] = "1"
import torch, torch.nn as nn
import jupyter_tracejit as tj
torch.manual_seed(0)
ids = torch.randint(0, 1000, (1, 16))
"""

BERT = """\
from transformers import BertConfig, BertModel
bert = tj.explore(BertModel(BertConfig(return_dict=False)).eval(), (ids,))
bert"""

GPT2 = """\
from transformers import GPT2Config, GPT2LMHeadModel

class GPT2Logits(nn.Module):
    def __init__(self):
        super().__init__()
        self.lm = GPT2LMHeadModel(GPT2Config(n_layer=4, use_cache=False))

    def forward(self, input_ids):
        return self.lm(input_ids).logits

gpt2 = tj.explore(GPT2Logits().eval(), (ids,))
gpt2"""

TRANSFORMER = """\
model = nn.Transformer(d_model=32, nhead=4, num_encoder_layers=3, num_decoder_layers=3, dim_feedforward=64,
                       batch_first=True).eval()
transformer = tj.explore(model, (torch.rand(2, 5, 32), torch.rand(2, 4, 32)))
transformer"""

#: a function with a 3,000-op loop: no module structure, so the view splits it into sections
CHAIN = """\
def chain(x):
    for _ in range(3000):
        x = x + 1
    return x

long_chain = tj.explore(chain, (torch.rand(2),), check_trace=False)
long_chain"""

#: 30 blocks of one structure (150 ops) under the root: big enough to open collapsed, the blocks as one box
BLOCKS = (
    source_of(ScaledBlock)
    + """
blocks = tj.explore(nn.Sequential(*[ScaledBlock() for _ in range(30)]).eval(), (torch.rand(2, 8),), check_trace=False)
blocks"""
)

#: 'in' when the element's box lies inside the canvas's (1 px slack), else where it is
INSIDE = """([el, canvas]) => {
  const a = el.getBoundingClientRect();
  const c = canvas.getBoundingClientRect();
  const inside = a.left >= c.left - 1 && a.right <= c.right + 1 && a.top >= c.top - 1 && a.bottom <= c.bottom + 1;
  const box = r => [r.left, r.top, r.right, r.bottom].map(Math.round);
  return inside ? 'in' : JSON.stringify({ el: box(a), canvas: box(c) });
}"""

#: how far (in fractions of the canvas size) the element's centre is from the canvas's centre
OFF_CENTRE = """([el, canvas]) => {
  const a = el.getBoundingClientRect();
  const c = canvas.getBoundingClientRect();
  return Math.max(
    Math.abs(a.left + a.width / 2 - (c.left + c.width / 2)) / c.width,
    Math.abs(a.top + a.height / 2 - (c.top + c.height / 2)) / c.height
  );
}"""

#: the drawn height of a node's first label line, in screen pixels (is the text readable?)
TEXT_PX = """(el) => el.querySelector('text').getBoundingClientRect().height"""


def canvas_of(explorer):
    return explorer.locator(".jp-TraceExplorer-canvas")


def settle(lab) -> None:
    """Let a view animation (a 250 ms pan) end."""
    lab.page.wait_for_timeout(450)


def inside_canvas(lab, explorer, locator) -> str:
    return lab.page.evaluate(INSIDE, [locator.element_handle(), canvas_of(explorer).element_handle()])


def assert_fit_shows_every_node(lab, explorer) -> None:
    explorer.get_by_role("button", name="fit").click()
    settle(lab)
    nodes = explorer.locator(".jp-TraceExplorer-canvas svg g.node")
    canvas = canvas_of(explorer).element_handle()
    outside = [
        r
        for r in (lab.page.evaluate(INSIDE, [nodes.nth(i).element_handle(), canvas]) for i in range(nodes.count()))
        if r != "in"
    ]
    assert not outside, f"{len(outside)} of {nodes.count()} nodes outside the view after fit: {outside[:3]}"


def test_real_models_open_on_what_matters_fit_and_jump(lab):
    run_notebook(lab, "models.ipynb", [SETUP, BERT, GPT2, TRANSFORMER], timeout=300_000)
    canvas_sel = ".jp-TraceExplorer-canvas svg"
    for cell, name, focus in ((1, "bert", "warning"), (2, "gpt2", "warning"), (3, "transformer", "root")):
        explorer = explorer_in(lab, cell, nodes=True)
        explorer.scroll_into_view_if_needed()
        settle(lab)
        # plumbing is folded: no attribute reads of `self`, no constants
        assert explorer.locator(f"{canvas_sel} g.node.kind-prim-GetAttr").count() == 0, name
        assert explorer.locator(f"{canvas_sel} g.node.kind-prim-Constant").count() == 0, name
        # the opening view is on the first warned node (BERT, GPT-2) or the check's root divergence (Transformer),
        # drawn large enough to read
        target = explorer.locator(f"{canvas_sel} g.node.{focus}").first
        target.wait_for()
        assert inside_canvas(lab, explorer, target) == "in", name
        assert target.evaluate(TEXT_PX) >= 7, name
        lab.screenshot_themes(f"graph-{name}-open", explorer)
        # every group label names a short class, never the qualified TorchScript type
        labels = explorer.locator(f"{canvas_sel} g.cluster text").all_text_contents()
        assert labels and not any("__torch__" in t for t in labels), name
        assert_fit_shows_every_node(lab, explorer)
        if name == "bert":
            lab.screenshot("graph-bert-fit", explorer)

    # BERT's 12 layers are one repeat group; the warning opened it (layer 0 open, the 11 others boxes)
    bert = explorer_in(lab, 1, nodes=True)
    repeat = bert.locator(f"{canvas_sel} g.cluster.scope-repeat")
    assert "BertLayer ×12" in repeat.first.locator("text").first.text_content()
    layer_boxes = bert.locator(f"{canvas_sel} g.node.scope-collapsed", has_text="(BertLayer)")
    assert layer_boxes.count() == 11
    # the Transformer's encoder and decoder layers are folded the same way
    transformer = explorer_in(lab, 3, nodes=True)
    transformer.get_by_role("button", name="collapse all").click()
    decoder = transformer.locator(f'{canvas_sel} g.node.scope-collapsed[id="scope-decoder"]')
    decoder.wait_for()
    decoder.click()
    layers = transformer.locator(f'{canvas_sel} g.node.scope-collapsed[id="scope-decoder.layers"]')
    layers.wait_for()
    layers.click()  # a ModuleList of nothing but its layers: it opens, and with it the repeat group of the layers
    transformer.locator(f'{canvas_sel} g.cluster.scope-repeat[id="cluster-decoder.layers-u7e-0..2"]').wait_for()
    assert (
        transformer.locator(f"{canvas_sel} g.node.scope-collapsed", has_text="(TransformerDecoderLayer)").count() == 3
    )

    # jump to a node: a search hit far from the view is panned to the middle
    gpt2 = explorer_in(lab, 2, nodes=True)
    gpt2.get_by_role("button", name="fit").click()
    search = gpt2.locator(".jp-TraceExplorer-search")
    search.fill("linear")
    search.press("Enter")
    selected = gpt2.locator(f"{canvas_sel} g.node.selected")
    selected.wait_for()
    settle(lab)
    off = lab.page.evaluate(OFF_CENTRE, [selected.element_handle(), canvas_of(gpt2).element_handle()])
    assert off < 0.1, f"the selected node is {off:.0%} of the canvas away from its centre"
    assert selected.evaluate(TEXT_PX) >= 7  # a jump from a fitted (small) view zooms in to readable
    assert not lab.extension_errors()
    assert not [e for e in lab.page.tracejit_errors if "viewBox" in e]


def test_repeat_box_opens_on_click_and_a_long_chain_opens_in_sections(lab):
    run_notebook(lab, "big.ipynb", [SETUP, BLOCKS, CHAIN], timeout=300_000)
    canvas_sel = ".jp-TraceExplorer-canvas svg"

    # 30 blocks of one structure open as one box labelled with the class and the count; a click opens it
    blocks = explorer_in(lab, 1, nodes=True)
    box = blocks.locator(f"{canvas_sel} g.node.scope-collapsed.scope-repeat")
    assert box.count() == 1
    assert "ScaledBlock ×30" in box.text_content()
    lab.screenshot("graph-repeat-folded", blocks)
    box.click()
    blocks.locator(f"{canvas_sel} g.cluster.scope-repeat").wait_for()
    assert blocks.locator(f"{canvas_sel} g.node.scope-collapsed", has_text="(ScaledBlock)").count() == 30

    # 3,000 ops in one scope: 12 sections, drawn as boxes; "expand all" stops at what one picture holds
    chain = explorer_in(lab, 2, nodes=True)
    sections = chain.locator(f"{canvas_sel} g.node.scope-collapsed", has_text="part ")
    assert sections.count() == 12
    status = chain.locator(".jp-TraceExplorer-graphStatus")
    chain.get_by_role("button", name="expand all").click()
    status.filter(has_text="more than one picture holds").wait_for(timeout=120_000)
    drawn = chain.locator(f"{canvas_sel} g.node.kind-aten-add").count()
    assert 256 <= drawn <= 2000
    lab.screenshot("graph-chain-expand-all", chain)
    assert not lab.extension_errors()


#: the issue's nn.Transformer (sequence first, 2 + 2 layers): wide module groups side by side
TRANSFORMER_WIDE = """\
wide_model = nn.Transformer(d_model=32, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                            dim_feedforward=64).eval()
wide = tj.explore(wide_model, (torch.rand(5, 2, 32), torch.rand(4, 2, 32)))
wide"""

#: the open groups the view shows enough of to hold their label, with the label's row in view: is the label cut
#: by the canvas's edge, or outside its own frame?
LABELS_IN_VIEW = """(root) => {
  const canvas = root.querySelector('.jp-TraceExplorer-canvas').getBoundingClientRect();
  const out = [];
  const pinned = [...root.querySelectorAll('.jp-TraceExplorer-pinnedLabel:not([display="none"]) text')]
    .map(t => [t.textContent, t.getBoundingClientRect()]);
  const hits = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  for (const g of root.querySelectorAll('.jp-TraceExplorer-canvas svg g.cluster')) {
    const frame = g.querySelector('path, polygon').getBoundingClientRect();
    const text = g.querySelector('text');
    if (!text || text.getAttribute('visibility') === 'hidden') continue;  // pinned: drawn at the top instead
    const t = text.getBoundingClientRect();
    const shown = Math.min(frame.right, canvas.right) - Math.max(frame.left, canvas.left);
    if (shown < t.width + 16 || t.top < canvas.top || t.bottom > canvas.bottom) continue;
    out.push({label: text.textContent, slid: text.hasAttribute('data-slid'),
              cut: t.left < canvas.left - 0.5 || t.right > canvas.right + 0.5,
              outside: t.left < frame.left - 0.5 || t.right > frame.right + 0.5,
              over: pinned.some(([, p]) => hits(p, t))});  // hidden under a pinned label
  }
  // labels pinned to the view's top (their group's row is above the view): inside the canvas, not on each other,
  // not over a node (they covered nodes of the module far right)
  const nodes = [...root.querySelectorAll('.jp-TraceExplorer-canvas svg g.node')].map(g => g.getBoundingClientRect());
  for (const [label, t] of pinned) {
    const over = pinned.some(([other, o]) => other !== label && hits(o, t));
    out.push({label, slid: false, pinned: true, over, covers: nodes.filter(n => hits(n, t)).length,
              cut: t.left < canvas.left - 0.5 || t.right > canvas.right + 0.5 || t.top < canvas.top - 0.5,
              outside: false});
  }
  return out;
}"""


#: the DOT id of the op drawn furthest right
RIGHTMOST_OP = """(root) => [...root.querySelectorAll('.jp-TraceExplorer-canvas svg g.node[id^="n"]')]
  .map(g => [g.getBoundingClientRect().right, g.id]).sort((a, b) => b[0] - a[0])[0][1]"""


def assert_group_labels_readable(explorer, where: str) -> list:
    labels = explorer.evaluate(LABELS_IN_VIEW)
    bad = [lab for lab in labels if lab["cut"] or lab["outside"] or lab.get("over") or lab.get("covers")]
    assert not bad, f"{where}: group labels cut, outside their frame, or pinned over a node: {bad}"
    return labels


def test_group_labels_stay_in_view_wherever_the_view_is(lab):
    """nn.Transformer's module groups are wide: seen from their right part (the focus far right), their labels
    slide along the frame's top to stay just inside the view, never outside their frame."""
    run_notebook(lab, "wide.ipynb", [SETUP, TRANSFORMER_WIDE], timeout=120_000)
    explorer = explorer_in(lab, 1, nodes=True)
    explorer.scroll_into_view_if_needed()
    settle(lab)
    assert_group_labels_readable(explorer, "opening view")
    # every group open; the focus far right (a click on the rightmost op: the view pans there at a readable
    # scale), then walked back left
    old = explorer.locator(".jp-TraceExplorer-canvas svg").element_handle()
    explorer.get_by_role("button", name="expand all").click()
    lab.page.wait_for_function(
        "([root, old]) => { const svg = root.querySelector('.jp-TraceExplorer-canvas svg');"
        " return svg && svg !== old; }",
        arg=[explorer.element_handle(), old],
    )
    rightmost = explorer.evaluate(RIGHTMOST_OP)
    explorer.locator(f'.jp-TraceExplorer-canvas g.node[id="{rightmost}"]').dispatch_event("click")
    explorer.locator(f'.jp-TraceExplorer-canvas g.node.selected[id="{rightmost}"]').wait_for()
    settle(lab)
    labels = assert_group_labels_readable(explorer, "focus far right")
    # the groups around the focus are named, though their labels' places are far above and left of the view
    assert [lab_ for lab_ in labels if lab_.get("pinned")], labels
    slid = [lab_["label"] for lab_ in labels if lab_["slid"]]
    lab.screenshot_themes("graph-group-labels-right", explorer.locator(".jp-TraceExplorer-graph"))
    # then up towards the groups' label rows, staying right of their left edges, and back left
    canvas_of(explorer).focus()
    for step, key in enumerate(["Shift+ArrowUp"] * 10 + ["Shift+ArrowLeft"] * 8):
        for _ in range(2):
            lab.page.keyboard.press(key)
        settle(lab)
        labels = assert_group_labels_readable(explorer, f"step {step + 1} ({key})")
        if not slid and [lab_ for lab_ in labels if lab_["slid"]]:
            lab.screenshot_themes("graph-group-labels-slid", explorer.locator(".jp-TraceExplorer-graph"))
        slid += [lab_["label"] for lab_ in labels if lab_["slid"]]
    assert slid, "no label had to slide: the view never left a group's left edge behind"
    assert not lab.extension_errors()


#: the new-user trial's nn.Transformer: 2 + 2 layers, d_model 64, traced under no_grad, the check passing (nothing
#: to open on but the inputs, and the inputs of an encoder-decoder lie far apart: src at the encoder, tgt at the
#: decoder)
TRANSFORMER_OK = """\
ok_model = nn.Transformer(d_model=64, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                          dim_feedforward=128).eval()
ok_transformer = tj.explore(ok_model, (torch.rand(5, 2, 64), torch.rand(4, 2, 64)), no_grad=True)
ok_transformer"""

#: how many of the drawn nodes (ops, boxes, inputs, outputs) lie wholly inside the canvas, and how many in all
NODES_IN_VIEW = """(root) => {
  const c = root.querySelector('.jp-TraceExplorer-canvas').getBoundingClientRect();
  const nodes = [...root.querySelectorAll('.jp-TraceExplorer-canvas svg g.node')];
  const inside = nodes.filter(g => {
    const a = g.getBoundingClientRect();
    return a.left >= c.left - 1 && a.right <= c.right + 1 && a.top >= c.top - 1 && a.bottom <= c.bottom + 1;
  });
  return {inside: inside.length, all: nodes.length,
          inputs: inside.filter(g => g.classList.contains('input')).length};
}"""


def test_an_ok_encoder_decoder_opens_on_the_model_not_a_blank_canvas(lab):
    run_notebook(lab, "ok_transformer.ipynb", [SETUP, TRANSFORMER_OK], timeout=120_000)
    explorer = explorer_in(lab, 1, nodes=True)
    explorer.scroll_into_view_if_needed()
    settle(lab)
    assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "ok"
    seen = explorer.evaluate(NODES_IN_VIEW)
    lab.screenshot_themes("graph-ok-transformer-open", explorer)
    # the model is in view: its first input (src) and the encoder's ops it flows into, readable; it opened on a
    # blank canvas between src and tgt, with 4 nodes at its right edge
    assert seen["inputs"] == 1 and seen["inside"] >= 6, seen
    src = explorer.locator(".jp-TraceExplorer-canvas svg g.node.input", has_text="src")
    assert inside_canvas(lab, explorer, src) == "in"
    assert src.evaluate(TEXT_PX) >= 7
    # the minimap sits over blank canvas (the left of the view is blank here), not over the model's nodes
    minimap = explorer.locator(".jp-TraceExplorer-minimap")
    assert minimap.is_visible()
    assert explorer.evaluate(NODES_UNDER, minimap.element_handle()) == [], "the minimap covers nodes"
    assert not lab.extension_errors()


#: the DOT ids of the drawn nodes the element's box overlaps
NODES_UNDER = """(root, el) => {
  const m = el.getBoundingClientRect();
  return [...root.querySelectorAll('.jp-TraceExplorer-canvas svg g.node')].filter(g => {
    const a = g.getBoundingClientRect();
    return a.left < m.right && m.left < a.right && a.top < m.bottom && m.top < a.bottom;
  }).map(g => g.id);
}"""

#: a function of two ops with a frozen branch (tutorial 2's `branchy`): a graph far smaller than the canvas
BRANCHY = """def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1

small = tj.explore(branchy, (torch.ones(3),))
small"""


def test_a_small_graph_opens_at_the_top_of_the_canvas(lab):
    run_notebook(lab, "small.ipynb", [SETUP, BRANCHY], timeout=120_000)
    explorer = explorer_in(lab, 1, nodes=True)
    explorer.scroll_into_view_if_needed()
    settle(lab)
    canvas = canvas_of(explorer).bounding_box()
    drawing = explorer.locator(".jp-TraceExplorer-canvas svg g.graph").bounding_box()
    lab.screenshot_themes("graph-small-open", explorer)
    # at the top, across the middle (it opened centred both ways: low in a blank pane)
    assert drawing["y"] - canvas["y"] < 40, (drawing, canvas)
    middle = drawing["x"] + drawing["width"] / 2 - (canvas["x"] + canvas["width"] / 2)
    assert abs(middle) < 0.05 * canvas["width"], (drawing, canvas)
    assert not lab.extension_errors()
