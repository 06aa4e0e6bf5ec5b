"""core/hazards.py: findings torch does not report, each from a small real trace."""

from __future__ import annotations

import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.core import hazards


def kinds(run: tj.TraceRun) -> dict[str, hazards.Finding]:
    return {f.kind: f for f in run.findings}


class Nested(nn.Module):
    def __init__(self, p: float) -> None:
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(4, 4), nn.Dropout(p))

    def forward(self, x):
        return self.inner(x)


def test_random_ops_anywhere_in_the_graph_and_why_torch_misses_them():
    run = tj.trace(Nested(0.5).train(), (torch.rand(2, 4),), check_trace=False)
    found = kinds(run)["nondeterministic"]
    assert found.severity == "warning" and "inner.1" in found.message
    assert "only scans the top level" in found.message and "model.eval()" in found.hint
    assert [run.graph.nodes[i].kind for i in found.node_ids] == ["aten::dropout"]
    for quiet in (Nested(0.5).eval(), Nested(0.0).train()):
        assert "nondeterministic" not in kinds(tj.trace(quiet, (torch.rand(2, 4),), check_trace=False))


def test_is_random_reads_the_switch_arguments_from_torchs_schemas():
    def lstm_graph(train: bool, dropout: float):
        lstm = nn.LSTM(4, 4, 2, dropout=dropout).train(train)
        return tj.trace(lstm, (torch.rand(3, 1, 4),), check_trace=False).graph

    for train, dropout, random in [(False, 0.5, False), (True, 0.0, False), (True, 0.5, True)]:
        graph = lstm_graph(train, dropout)
        node = next(n for n in graph.nodes if n.kind == "aten::lstm")
        assert node.nondeterministic and hazards.is_random(graph, node) is random
    assert hazards._switch_positions("aten::dropout", ("Tensor", "float", "bool")) == (1, 2)
    assert hazards._switch_positions("aten::relu", ("Tensor",)) == (-1, -1)
    assert hazards._switch_positions("not::an_op", ()) == (-1, -1)


def test_the_transformer_fast_path_finding_names_the_fix():
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
    enc = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).eval()
    run = tj.trace(enc, (torch.rand(2, 3, 16),))
    found = kinds(run)["transformer_fastpath"]
    assert found.severity == "error" and "no_grad=True" in found.hint and found.node_ids
    assert "transformer_fastpath" not in kinds(tj.trace(enc, (torch.rand(2, 3, 16),), no_grad=True))


def test_devices_baked_into_the_graph():
    run = tj.trace(lambda x: x + torch.ones(2, device="cpu"), (torch.rand(2),), check_trace=False)
    found = kinds(run)["device_constant"]
    assert '"cpu"' in found.title and found.node_ids
    assert "device_constant" not in kinds(tj.trace(lambda x: x + torch.ones_like(x), (torch.rand(2),)))


def test_batchnorm_in_training_mode():
    run = tj.trace(nn.BatchNorm1d(3).train(), (torch.rand(4, 3),), check_trace=False)
    found = kinds(run)["train_mode_batchnorm"]
    assert "1 layer" in found.title and "model.eval()" in found.hint
    assert "train_mode_batchnorm" not in kinds(tj.trace(nn.BatchNorm1d(3).eval(), (torch.rand(4, 3),)))


def test_python_runs_counts_and_mutations():
    assert hazards.python_runs(1, 0, []) is None
    info = hazards.python_runs(3, 1, [])
    assert info is not None and info.severity == "info" and "1 trace + 1 re-trace(s) + 1 eager run(s)" in info.message
    warned = hazards.python_runs(3, 1, [f"b{i}" for i in range(8)])
    assert warned is not None and warned.severity == "warning" and "b5 and 2 more" in warned.message
