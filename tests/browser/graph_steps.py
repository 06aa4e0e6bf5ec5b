"""What the graph view's browser tests share: the models their notebooks define, the explorer of a notebook, the
page scripts that read the drawn items and wait for the view to rest, the keyboard cursor, and the picture export."""

from __future__ import annotations

import struct

from .helpers import explorer_in, run_notebook
from .test_explorer import SETUP

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
