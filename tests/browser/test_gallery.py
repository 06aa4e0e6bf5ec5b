"""The gallery: the models people trace, each opened in JupyterLab in the light and the dark theme.

BERT-base and GPT-2 (transformers, random weights from configs, offline), ``nn.Transformer``, an LSTM tagger, a
ResNet-like convnet in train mode, and a model with a frozen branch and a frozen loop: each opens with the model in
view and readable, its badge says the verdict (amber for BatchNorm in train mode, red for the failed check), and
``fit`` shows every node. The deeper checks of each view are in test_graph_view.py (opening view, repeats, jumps),
test_panels.py (causes, stepper, locations, fixes), test_shell.py (history, options bar) and test_shell_runs.py
(saved notebook).

The screenshots (``test-artifacts/screenshots/gallery-*.png``) are the ones in ``docs/gallery/``; refresh those by
copying after a look.
"""

from __future__ import annotations

import pytest

from ..models import Frozen, source_of
from .helpers import run_notebook
from .test_graph_view import BERT, GPT2, SETUP, TEXT_PX, TRANSFORMER, assert_fit_shows_every_node, inside_canvas, settle

pytestmark = pytest.mark.browser

LSTM = """\
class Tagger(nn.Module):
    def __init__(self, vocab=1000, tags=12):
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, 64, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(128, tags)

    def forward(self, ids):
        out, _ = self.lstm(self.embed(ids))
        return torch.log_softmax(self.head(out), dim=-1)

tagger = tj.explore(Tagger().eval(), (ids,), check_inputs=[(torch.randint(0, 1000, (2, 9)),)])
tagger"""

RESNET = """\
class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                      if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.short(x))

class ResNetLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.layer1 = nn.Sequential(BasicBlock(16, 16), BasicBlock(16, 16))
        self.layer2 = nn.Sequential(BasicBlock(16, 32, 2), BasicBlock(32, 32))
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.head(x.mean((2, 3)))

resnet = tj.explore(ResNetLike().train(), (torch.rand(4, 3, 32, 32),))
resnet"""

FROZEN = (
    source_of(Frozen)
    + """
frozen = tj.explore(Frozen().eval(), (torch.rand(3, 8),), check_inputs=[(-torch.rand(4, 8),)])
frozen"""
)

#: (cell source, name, badge level)
GALLERY = [
    (BERT, "bert", "warning"),
    (GPT2, "gpt2", "warning"),
    (TRANSFORMER, "transformer", "error"),
    (LSTM, "lstm-tagger", None),
    (RESNET, "resnet-train", "warning"),
    (FROZEN, "frozen-branch-loop", "error"),
]


@pytest.mark.parametrize("source,name,level", GALLERY, ids=[g[1] for g in GALLERY])
def test_gallery_model_opens_readable_with_its_verdict_in_light_and_dark(lab, source, name, level):
    run_notebook(lab, f"gallery-{name}.ipynb", [SETUP, source], timeout=300_000)
    explorer = lab.outputs(1).locator(".jp-TraceExplorer-root").first
    explorer.wait_for()
    explorer.scroll_into_view_if_needed()
    nodes = explorer.locator(".jp-TraceExplorer-canvas svg g.node")
    nodes.first.wait_for()
    settle(lab)

    badge = explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge[data-level]")
    if level is not None:
        assert badge.get_attribute("data-level") == level, badge.get_attribute("title")
    # the opening view has the model in it, drawn large enough to read
    shown = [nodes.nth(i) for i in range(nodes.count())]
    in_view = [n for n in shown if inside_canvas(lab, explorer, n) == "in"]
    assert in_view, f"{name}: no node in the opening view"
    assert max(n.evaluate(TEXT_PX) for n in in_view[:20]) >= 7, name
    lab.screenshot_themes(f"gallery-{name}", explorer)
    assert_fit_shows_every_node(lab, explorer)
    assert not lab.extension_errors()
