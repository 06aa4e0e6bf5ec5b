"""A trace and an export of the same model matched op for op (core/capture_diff.py): on BERT, GPT-2 and
nn.TransformerEncoder every op export could have is matched, pairs are the same op (and read the same parameters),
and what differs is grouped by line with its reason."""

from __future__ import annotations

import os
import warnings
from typing import Any

import pytest
import torch
from torch import nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.capture_diff import CaptureComparison, bare_name, compare_captures
from jupyter_tracejit.core.diff import GraphDiff
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.core.export.request import export
from jupyter_tracejit.core.graph import Graph

from ..hf_models import bert_config, gpt2_config

#: the export back end needs torch.export with Dim.AUTO (the floor torch of the matrix, 2.4, lacks it)
pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))


def both(model: nn.Module, args: tuple[Any, ...]) -> tuple[Graph, Graph]:
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = tj.trace(model, args, strict=False)
    exported = export(model, args)
    assert traced.graph is not None and exported.error is None and exported.graph is not None, exported.error
    return traced.graph, exported.graph


def parameters(graph: Graph, node_id: int) -> set[str]:
    out = set()
    for v in graph.nodes[node_id].inputs:
        path, p = [], graph.producer(v)
        while p is not None and p.role == "getattr":
            path.insert(0, str(p.attributes["name"]))
            p = graph.producer(p.inputs[0]) if p.inputs else None
        if path:
            out.add(".".join(path))
    return out


def assert_sound(trace: Graph, exported: Graph, comparison: CaptureComparison) -> None:
    assert comparison.coverage >= 0.95, comparison.summary()
    assert comparison.explained == 1.0, [d for d in comparison.lines if d.reason == "only_trace"]
    same_scope = 0
    for a, b in comparison.matched:
        assert bare_name(trace.nodes[a].kind) == bare_name(exported.nodes[b].kind)
        assert parameters(trace, a) == parameters(exported, b) or not parameters(trace, a)
        same_scope += trace.nodes[a].scope == exported.nodes[b].scope
    assert same_scope >= 0.9 * len(comparison.matched)
    assert len({a for a, _ in comparison.matched}) == len(comparison.matched)  # one counterpart each
    assert len({b for _, b in comparison.matched}) == len(comparison.matched)
    assert CaptureComparison.from_json(comparison.to_json()).to_json() == comparison.to_json()
    panes = comparison.as_graph_diff()  # what the explorer's side-by-side panes draw
    assert panes.matched == dict(map(tuple, comparison.matched))
    shown = {d.trace_node for d in panes.divergences if d.trace_node is not None}
    assert not shown & {n for d in comparison.lines if d.reason == "shape_arithmetic" for n in d.trace_nodes}
    assert GraphDiff.from_json(panes.to_json()).matched == panes.matched


def test_transformer_encoder():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True)
    trace, exported = both(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False), (torch.randn(2, 16, 64),))
    comparison = compare_captures(trace, exported)
    assert_sound(trace, exported, comparison)
    assert comparison.trace_shape_ops > 0  # the trace's size arithmetic, which export has no ops for
    assert {d.reason for d in comparison.lines} <= {"shape_arithmetic", "no_op"}


def test_bert_and_gpt2():
    transformers = pytest.importorskip("transformers")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.manual_seed(0)
    ids = torch.randint(0, 100, (2, 16))
    bert = transformers.BertModel(bert_config(transformers, hidden=64, heads=4))
    trace, exported = both(bert, (ids,))
    comparison = compare_captures(trace, exported)
    assert_sound(trace, exported, comparison)
    assert any(d.reason == "no_op" for d in comparison.lines)  # contiguous / full slices the trace keeps

    class LastHidden(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            config = gpt2_config(transformers, embd=64, heads=4, n_positions=32)
            self.gpt2 = transformers.GPT2Model(config)

        def forward(self, x):
            return self.gpt2(x, use_cache=False).last_hidden_state

    trace, exported = both(LastHidden(), (ids,))
    assert_sound(trace, exported, compare_captures(trace, exported))


def branchy(x):
    if x.sum() > 0:
        return x.sin()
    return x.cos()


class WithCond(nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, torch.sin, torch.cos, (x,))


def test_control_flow_and_frozen_lines_have_their_reasons():
    x = torch.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = tj.trace(branchy, (x,))
    exported = export(WithCond(), (x,))
    assert traced.graph is not None and exported.graph is not None, exported.error
    branch = traced.warnings[0]
    comparison = compare_captures(
        traced.graph, exported.graph, frozen_lines={(branch.file, branch.line): "tensor → Python bool"}
    )
    reasons = {d.reason: d for d in comparison.lines}
    assert "control_flow" in reasons and reasons["control_flow"].export_nodes
    cond = exported.graph.nodes[reasons["control_flow"].export_nodes[0]]
    assert cond.kind.endswith("cond") and len(cond.blocks) == 2
    matched = {traced.graph.nodes[a].kind for a, _ in comparison.matched}
    assert "aten::sin" in matched  # the branch the trace took, found inside the cond's block


class DictInput(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.a(batch["x"]) + batch["y"]


def test_reading_a_dict_inputs_items_is_no_op_only_the_trace_has() -> None:
    trace, exported = both(DictInput(), ({"x": torch.randn(3, 4), "y": torch.randn(3, 4)},))
    comparison = compare_captures(trace, exported)
    assert comparison.coverage == 1.0 and comparison.explained == 1.0, comparison.lines
    (reads,) = comparison.lines
    assert reads.reason == "no_op" and "dict or list input" in reads.detail and len(reads.trace_nodes) == 2


def test_a_same_padding_convolution_is_one_op_under_two_names():
    conv = nn.Conv2d(3, 4, 3, padding="same")
    x = torch.randn(1, 3, 8, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compared = tj.compare(tj.trace(conv, (x,)), tj.export(conv, (x,)))
    assert compared is not None
    assert (len(compared.comparison.matched), compared.comparison.trace_ops) == (1, 1), compared.comparison.summary()
    assert "1 of 1 trace ops matched" in repr(compared)  # a cell shows the summary, not the graphs


class Windows(nn.Module):
    """Swin's window padding: sizes passed on in a tuple beside a tensor, then arithmetic on them."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def split(self, x: torch.Tensor) -> tuple[torch.Tensor, int, int]:
        return self.proj(x), x.shape[1], x.shape[2]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, height, width = self.split(x)
        pad_right = (3 - width % 3) % 3  # WINDOW PADDING
        pad_bottom = (3 - height % 3) % 3
        return nn.functional.pad(h, (0, 0, 0, pad_right, 0, pad_bottom))


def test_size_arithmetic_through_a_tuple_is_called_shape_arithmetic():
    trace, exported = both(Windows(), (torch.randn(1, 5, 7, 4),))
    comparison = compare_captures(trace, exported)
    assert not [d for d in comparison.lines if d.reason == "only_trace"], comparison.lines
    padding = [d for d in comparison.lines if d.code.startswith("pad_right")]
    assert padding and all(d.reason == "shape_arithmetic" for d in padding), padding
    assert comparison.coverage == 1.0


def test_the_line_that_asked_for_the_captures_is_never_a_line_that_differs():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True).eval()
    x = torch.randn(2, 5, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compared = tj.compare(tj.trace(layer, (x,)), tj.export(layer, (x,)))  # ASKED HERE
    assert compared is not None
    with open(__file__) as f:
        here = next(i for i, text in enumerate(f, 1) if text.rstrip().endswith("# ASKED HERE"))
    assert not [d for d in compared.comparison.lines if (d.file, d.line) == (__file__, here)], compared.comparison.lines
