"""The models the browser benchmark shows: the notebook cells that build, trace (or export) and show each, with
the targets of its figures."""

from __future__ import annotations

from dataclasses import dataclass

TTI_TARGET_MS = 1000.0  # real models: state arrival -> interactive graph
FIRST_PAINT_TARGET_MS = 2000.0  # big graphs: state arrival -> interactive graph (collapsed)
BIG_FIRST_PAINT_TARGET_MS = 5000.0  # 50k / 60k nodes: "within a few seconds"
EXPAND_TARGET_MS = 300.0  # big graphs: click on a collapsed group -> interactive graph
FIT_TARGET_MS = 500.0  # click on fit -> the fitted view on screen (a 250 ms animation of it included)
LONG_TASK_TARGET_MS = 100.0  # longest main-thread task during a phase
LONG_TASK_THRESHOLD_MS = 50.0  # the Long Tasks API reports tasks of more than this only

SETUP_CELL = """\
import json, os, time
os.environ["HF_HUB_OFFLINE"] = "1"  # models are built from configs with random weights: nothing is downloaded
import torch
from torch import nn
import jupyter_tracejit as tj
torch.manual_seed(0)
"""

# every model cell: build the model (untimed), trace (or export) it (timed), create the explorer widget (timed: this
# serializes the run and sends it over the comm), print the kernel-side figures, show the explorer
MODEL_CELL = """\
{build}
t0 = time.perf_counter()
run = {capture}
t1 = time.perf_counter()
json_bytes = len(json.dumps(run.to_json()))
t2 = time.perf_counter()
e = tj.explore(run)
t3 = time.perf_counter()
print("TRACEJIT_BENCH " + json.dumps({{
    "trace_s": t1 - t0, "json_s": t2 - t1, "explore_s": t3 - t2, "json_bytes": json_bytes,
    "nodes": sum(len(g) for g in run.graphs.values()), "torch": torch.__version__,
}}))
e
"""

TRANSFORMER = """\
layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True)
model = nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False).eval()
x = torch.randn(2, 16, 256)"""

MLP = """\
model = nn.Sequential(*[m for _ in range(2000) for m in (nn.Linear(16, 16), nn.ReLU())])
x = torch.randn(8, 16)"""

BERT = """\
from transformers import BertConfig, BertModel
model = BertModel(BertConfig(return_dict=False)).eval()
x = torch.randint(0, 1000, (1, 64))"""

GPT2 = """\
from transformers import GPT2Config, GPT2LMHeadModel
class GPT2Logits(nn.Module):
    def __init__(self):
        super().__init__()
        self.lm = GPT2LMHeadModel(GPT2Config(use_cache=False))
    def forward(self, input_ids):
        return self.lm(input_ids).logits
model = GPT2Logits().eval()
x = torch.randint(0, 1000, (1, 64))"""

# about 50,000 nodes (an add and its two constants per step), all in one scope: no module structure to collapse
CHAIN_50K = """\
def model(x):
    for _ in range(16_700):
        x = x + 1
    return x
x = torch.rand(2)"""

SEQUENTIAL_10K = """\
model = nn.Sequential(*[m for _ in range(10_000) for m in (nn.Linear(4, 4), nn.ReLU())])
x = torch.randn(2, 4)"""


TRACE = "tj.trace(model, (x,), check_trace=False)"
# the export explorer must be as quick as the trace's on the same model: its graph carries symbolic sizes, a Guards
# tab and the export report besides (the export check runs in the kernel: its time is the kernel's, not the page's)
EXPORT_DYNAMIC = 'tj.export(model, (x,), dynamic_shapes=({1: torch.export.Dim("seq", min=2, max=128)},), draft="never")'


@dataclass(frozen=True)
class Model:
    key: str
    label: str
    build: str
    first_target_ms: float
    first_name: str
    expand: bool
    capture: str = TRACE


MODELS = (
    Model("bert", "BERT-base", BERT, TTI_TARGET_MS, "state -> interactive", False),
    Model(
        "bert-export",
        "BERT-base, torch.export (Dim seq)",
        BERT,
        TTI_TARGET_MS,
        "state -> interactive",
        False,
        EXPORT_DYNAMIC,
    ),
    Model("gpt2", "GPT-2 (logits)", GPT2, TTI_TARGET_MS, "state -> interactive", False),
    Model("transformer", "TransformerEncoder x12", TRANSFORMER, TTI_TARGET_MS, "state -> interactive", False),
    Model("mlp", "MLP 2,000 layers", MLP, FIRST_PAINT_TARGET_MS, "first paint (collapsed)", True),
    Model("chain", "chain of 16,700 adds", CHAIN_50K, BIG_FIRST_PAINT_TARGET_MS, "first paint (collapsed)", True),
    Model(
        "sequential",
        "Sequential 10,000 x (Linear, ReLU)",
        SEQUENTIAL_10K,
        BIG_FIRST_PAINT_TARGET_MS,
        "first paint (collapsed)",
        True,
    ),
)
