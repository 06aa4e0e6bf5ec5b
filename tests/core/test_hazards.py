"""Each hazard finding on small real traces: random ops (minus those switched off, read from torch's schemas),
the transformer fast path that differs between trace and check, devices baked into the graph, BatchNorm in
training mode, and how often the user's Python code ran."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from jupyter_tracejit.core import hazards
from jupyter_tracejit.core.check import CheckCase, CheckReport
from jupyter_tracejit.core.diff import structural_diff
from jupyter_tracejit.core.graph import Graph
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined
from jupyter_tracejit.core.torchscript.extract import extract_graph


def graph_of(fn: Any, *inputs: Any, method: str = "forward", no_grad: bool = False) -> Graph:
    with warnings.catch_warnings(), torch.set_grad_enabled(not no_grad):
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, inputs, check_trace=False)
    return extract_graph(canonical_inlined(traced.graph), method=method).graph


def kinds(graph: Graph, ids: list[int]) -> list[str]:
    return [graph.nodes[i].kind for i in ids]


# -- random ops --------------------------------------------------------------------------------------------------


def random_ops(x):
    return (
        torch.rand(2)
        + torch.bernoulli(x)
        + torch.dropout(x, 0.0, True)  # p = 0: not random
        + torch.rrelu(x, training=False)  # not training: not random
        + torch.randn_like(x)
        + F.alpha_dropout(x, 0.3, True)
    )


def test_is_random_is_torchs_flag_minus_randomness_switched_off() -> None:
    g = graph_of(random_ops, torch.rand(2))
    flagged = {g.nodes[n.id].kind: hazards.is_random(g, n) for n in g.nodes if n.nondeterministic}
    assert flagged == {
        "aten::rand": True,
        "aten::bernoulli": True,
        "aten::dropout": False,
        "aten::rrelu": False,
        "aten::randn_like": True,
        "aten::alpha_dropout": True,
    }
    assert not any(hazards.is_random(g, n) for n in g.nodes if not n.nondeterministic)


@pytest.mark.parametrize(
    ("module", "random"),
    [
        (nn.LSTM(4, 4, 2, dropout=0.5).train(), True),
        (nn.LSTM(4, 4, 2, dropout=0.5).eval(), False),  # the train flag is an input of aten::lstm
        (nn.LSTM(4, 4, 2, dropout=0.0).train(), False),
        (nn.GRU(4, 4, 2, dropout=0.3).train(), True),
    ],
    ids=["lstm-train", "lstm-eval", "lstm-p0", "gru-train"],
)
def test_recurrent_dropout_is_read_from_the_ops_schema(module: nn.Module, random: bool) -> None:
    g = graph_of(module, torch.rand(3, 1, 4))
    (rnn,) = [n for n in g.nodes if n.nondeterministic]
    assert hazards.is_random(g, rnn) is random


def dropouts(x, n: int = 6):
    for _ in range(n):
        x = torch.dropout(x, 0.5, True)
    return x


def test_nondeterministic_nodes_at_the_top_level() -> None:
    g = graph_of(lambda x: torch.dropout(x, 0.5, True), torch.rand(8))
    finding = hazards.nondeterministic_nodes(g, torch_flags_top_level=True)
    assert finding is not None
    assert (finding.kind, finding.severity, finding.method) == ("nondeterministic", "warning", "forward")
    assert finding.title == "1 nondeterministic node"
    assert kinds(g, finding.node_ids) == ["aten::dropout"]
    assert finding.message == (
        "The trace contains random ops: aten::dropout in top level. Each call gives other results, and the check "
        "compares random outputs."
    )
    assert "model.eval()" in finding.hint


def test_many_nondeterministic_nodes_are_listed_up_to_four() -> None:
    g = graph_of(dropouts, torch.rand(8))
    finding = hazards.nondeterministic_nodes(g, torch_flags_top_level=True)
    assert finding.title == "6 nondeterministic nodes"
    # one op kind in one scope is named once, with its count (a loaded Llama listed "aten::arange in top level" 4 times)
    assert "random ops: aten::dropout in top level (6 times). Each call" in finding.message
    g = graph_of(lambda x: dropouts(torch.relu(dropouts(x, 2)), 1).sigmoid().bernoulli(), torch.rand(8))
    finding = hazards.nondeterministic_nodes(g, torch_flags_top_level=True)
    assert "random ops: aten::dropout in top level (3 times), aten::bernoulli in top level. Each" in finding.message


def test_random_ops_in_submodules_say_torch_misses_them() -> None:
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Linear(4, 4), nn.Dropout(0.2)).train()
    g = graph_of(model, torch.rand(2, 4), method="encode")
    finding = hazards.nondeterministic_nodes(g, torch_flags_top_level=False)
    assert kinds(g, finding.node_ids) == ["aten::dropout", "aten::dropout"]
    assert finding.method == "encode"
    assert "aten::dropout in 1, aten::dropout in 3." in finding.message
    assert "so it does not flag these nodes inside submodules." in finding.message
    torch_saw_them = hazards.nondeterministic_nodes(g, torch_flags_top_level=True)
    assert "does not flag" not in torch_saw_them.message
    one = graph_of(nn.Sequential(nn.Dropout(0.5)).train(), torch.rand(4))
    assert "does not flag this node inside submodules" in hazards.nondeterministic_nodes(one, False).message


def test_no_finding_without_random_ops() -> None:
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).eval()
    assert hazards.nondeterministic_nodes(graph_of(model, torch.rand(2, 4)), False) is None
    assert hazards.nondeterministic_nodes(graph_of(lambda x: torch.dropout(x, 0.0, True), torch.rand(2)), True) is None


# -- the transformer fast path ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def encoder_graphs() -> tuple[Graph, Graph]:
    """An eval-mode encoder layer traced with grad (the slow path) and under no_grad (torch's fused fast path)."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True).eval()
    x = torch.rand(1, 3, 8)
    return graph_of(layer, x), graph_of(layer, x, no_grad=True)


def check_with(trace: Graph, check_graph: Graph | None, method: str = "forward") -> CheckReport:
    diff = structural_diff(trace, check_graph) if check_graph is not None else None
    return CheckReport(cases=[CheckCase(index=0, method=method, label="example inputs", graph=check_graph, diff=diff)])


def test_the_fused_kernel_in_the_retrace_is_found(encoder_graphs: tuple[Graph, Graph]) -> None:
    slow, fast = encoder_graphs
    assert "aten::_transformer_encoder_layer_fwd" in fast.kinds() and not any(
        k in hazards.FASTPATH_KINDS for k in slow.kinds()
    )
    report = check_with(slow, fast)
    finding = hazards.transformer_fastpath(slow, report)
    assert (finding.kind, finding.severity) == ("transformer_fastpath", "error")
    assert finding.message.startswith(
        "The check's re-trace used the fused aten::_transformer_encoder_layer_fwd kernel."
    )
    assert "no_grad=True" in finding.hint
    roots = [d.trace_node for d in report.cases[0].diff.roots if d.trace_node is not None]
    assert roots and finding.node_ids == roots


def test_the_fast_path_finding_names_the_option_that_fixes_it() -> None:
    """The explorer offers ``fix`` as one click that sets the options and re-traces: they must fix it."""
    import jupyter_tracejit as tj

    torch.manual_seed(0)
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2).eval()
    x = torch.rand(2, 3, 8)
    run = tj.trace(encoder, (x,))
    (finding,) = [f for f in run.findings if f.kind == "transformer_fastpath"]
    assert finding.fix == {"no_grad": True} and "no_grad=True" in finding.hint
    assert not run.check.ok and run.verdict.label == "check failed"
    fixed = tj.trace(encoder, (x,), **finding.fix)
    assert fixed.check.ok and not [f for f in fixed.findings if f.kind == "transformer_fastpath"]
    assert fixed.to_json()["findings"] == [f.to_json() for f in fixed.findings]


def test_the_fused_kernel_in_the_trace_is_found(encoder_graphs: tuple[Graph, Graph]) -> None:
    slow, fast = encoder_graphs
    finding = hazards.transformer_fastpath(fast, check_with(fast, slow))
    assert finding.message.startswith("The check's trace used the fused aten::_transformer_encoder_layer_fwd kernel.")


def test_no_fast_path_finding_without_a_differing_check_graph(encoder_graphs: tuple[Graph, Graph]) -> None:
    slow, fast = encoder_graphs
    assert hazards.transformer_fastpath(slow, None) is None
    assert hazards.transformer_fastpath(slow, CheckReport()) is None
    assert hazards.transformer_fastpath(slow, check_with(slow, None)) is None  # the check graph was identical
    assert hazards.transformer_fastpath(slow, check_with(slow, slow)) is None
    assert hazards.transformer_fastpath(slow, check_with(slow, fast, method="encode")) is None  # another method's


# -- devices baked in ----------------------------------------------------------------------------------------------


def on_cpu(x):
    return x + torch.ones(2, device="cpu")


def on_two_devices(x):
    return x + torch.ones(2, device="cpu"), torch.zeros(2, device="meta")


def test_a_device_constant_names_its_consumers() -> None:
    g = graph_of(on_cpu, torch.rand(2))
    finding = hazards.device_constants(g)
    assert finding.title == 'device "cpu" baked into the graph'
    assert kinds(g, finding.node_ids) == ["aten::ones"]
    assert finding.message.startswith("1 op (aten::ones in top level) creates or moves tensors to a device fixed")
    two = graph_of(on_two_devices, torch.rand(2))
    finding = hazards.device_constants(two)
    assert finding.title == 'device "cpu", "meta" baked into the graph'
    assert kinds(two, finding.node_ids) == ["aten::ones", "aten::zeros"]
    assert finding.message.startswith("2 ops (")
    assert " create or move tensors " in finding.message


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("cpu", "cpu", True),
        ("cuda", "cuda:0", True),  # a graph baked with cuda:0, served on "cuda" (the current device): no mismatch
        ("cuda:0", "cuda", True),
        ("cuda:0", "cuda:1", False),
        ("cpu", "cuda", False),
        ("cpu", "meta", False),
    ],
)
def test_what_one_device_means(a: str, b: str, same: bool) -> None:
    assert hazards.same_device(a, b) is same


def test_a_baked_device_is_a_portability_note_where_everything_runs_on_it() -> None:
    g = graph_of(on_cpu, torch.rand(2))
    finding = hazards.device_constants(g, {"cpu"})
    assert finding.portability and finding.severity == "info"
    assert "no target device was given: fine where it was traced" in finding.message
    assert finding.node_ids and "zeros_like" in finding.hint  # it keeps its nodes and its fix
    # it can matter for this run: a target elsewhere, or inputs and parameters elsewhere
    for devices_used, target in [({"cpu"}, "cuda"), ({"cpu"}, "cuda:0"), ({"meta"}, None), ({"cpu", "meta"}, None)]:
        finding = hazards.device_constants(g, devices_used, target)
        assert finding.portability and finding.severity == "warning", (devices_used, target)
    assert 'The target device is "cuda"' in hazards.device_constants(g, {"cpu"}, "cuda").message
    assert 'on "meta", not only "cpu"' in hazards.device_constants(g, {"meta"}).message
    # two devices baked in: wrong on either
    assert hazards.device_constants(graph_of(on_two_devices, torch.rand(2)), {"cpu"}).severity == "warning"


def test_no_device_finding_for_like_ops() -> None:
    assert hazards.device_constants(graph_of(lambda x: x + torch.ones_like(x), torch.rand(2))) is None


# -- BatchNorm in training mode -------------------------------------------------------------------------------------


def test_batchnorm_in_train_mode_and_the_runs_that_updated_it() -> None:
    model = nn.Sequential(nn.BatchNorm1d(4), nn.Linear(4, 4), nn.BatchNorm1d(4))
    g = graph_of(model.train(), torch.rand(3, 4))
    finding = hazards.train_mode_batchnorm(g, runs=3)
    assert finding.title == "BatchNorm traced in training mode (2 layers)"
    assert kinds(g, finding.node_ids) == ["aten::batch_norm", "aten::batch_norm"]
    assert "this trace's Python code ran 3 times, updating them each time." in finding.message
    assert "ran 1 time," in hazards.train_mode_batchnorm(g, runs=1).message
    one = graph_of(nn.BatchNorm1d(4).train(), torch.rand(3, 4))
    assert hazards.train_mode_batchnorm(one, 1).title == "BatchNorm traced in training mode (1 layer)"
    assert hazards.train_mode_batchnorm(graph_of(model.eval(), torch.rand(3, 4)), runs=3) is None


def test_the_train_mode_findings_name_the_option_that_fixes_them() -> None:
    import jupyter_tracejit as tj

    model = nn.Sequential(nn.BatchNorm1d(4), nn.Dropout(0.5), nn.Linear(4, 4)).train()
    run = tj.trace(model, (torch.rand(3, 4),), check_trace=False)
    fixes = {f.kind: f.fix for f in run.findings}
    assert fixes["train_mode_batchnorm"] == fixes["nondeterministic"] == {"module_mode": "eval"}
    fixed = tj.trace(model, (torch.rand(3, 4),), check_trace=False, **fixes["train_mode_batchnorm"])
    assert not {"train_mode_batchnorm", "nondeterministic"} & {f.kind for f in fixed.findings}
    assert model.training  # module_mode is for this trace only
    # a fix that lives in the user's code names no option
    assert hazards.device_constants(graph_of(lambda x: x + torch.ones(2, device="cpu"), torch.rand(2))).fix == {}


# -- how often the Python code ran -------------------------------------------------------------------------------


def test_python_runs() -> None:
    assert hazards.python_runs(1, 0, []) is None
    three = hazards.python_runs(3, 1, [])
    assert (three.kind, three.severity, three.title) == ("python_runs", "info", "the Python code ran 3 times")
    assert three.message.startswith(
        "Tracing ran the Python body 3 times (1 trace + 1 re-trace + 1 eager run for the check)."
    )
    assert "Module state changed" not in three.message
    assert "check_trace=False" in three.hint


def test_python_runs_with_changed_buffers_is_a_warning() -> None:
    once = hazards.python_runs(1, 0, ["bn.running_mean"])
    assert once.severity == "warning" and once.title == "the Python code ran 1 time"
    assert "(1 trace)." in once.message
    assert "Module state changed during tracing: bn.running_mean. jupyter-tracejit put the buffers back" in once.message
    assert "torch.jit.trace leaves them changed (the check also runs" in once.message
    many = hazards.python_runs(5, 2, [f"b{i}" for i in range(8)])
    assert "changed during tracing: b0, b1, b2, b3, b4, b5 and 2 more. " in many.message
    assert "(1 trace + 2 re-traces + 2 eager runs for the check)" in many.message


# -- loops unrolled with the example's count --------------------------------------------------------------------


def loop_over_rows(x: torch.Tensor) -> torch.Tensor:
    result = x[0]
    for i in range(x.size(0)):
        result = result * x[i]
    return result


def branch_only(x: torch.Tensor) -> torch.Tensor:
    if x.sum() > 0:
        x = x * 2
    return x


def test_a_loop_over_a_size_is_named_with_its_line_where_torch_says_nothing() -> None:
    import jupyter_tracejit as tj

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tj.trace(loop_over_rows, (torch.rand(3, 4),), check_inputs=[(torch.rand(4, 4),)])
        same_count = tj.trace(loop_over_rows, (torch.rand(3, 4),), check_inputs=[(torch.rand(3, 4),)])
        branch = tj.trace(branch_only, (torch.ones(3),), check_inputs=[(-torch.ones(3),)])
    assert not run.check.ok and not [w for w in run.user_warnings if w.category not in ("output_mismatch_python",)]
    (found,) = [f for f in run.findings if f.kind == "frozen_loop"]
    assert "`for i in range(x.size(0)):`" in found.message and found.severity == "warning"
    graph = run.graphs["forward"]
    loop_line = found.message.split("line ", 1)[1].split(":", 1)[0]
    # the finding points at the loop's ops in the trace: every pass of the body (the size is a Python int here)
    assert {graph.nodes[i].source.line for i in found.node_ids} == {int(loop_line) + 1}
    assert (
        sorted(graph.nodes[i].kind for i in found.node_ids if graph.nodes[i].role == "op")
        == ["aten::mul"] * 3 + ["aten::select"] * 3
    )
    assert "frozen_loop" not in {f.kind for f in same_count.findings}  # the check passes: nothing to explain
    assert "frozen_loop" not in {f.kind for f in branch.findings}  # a frozen branch is not a loop
    assert hazards.enclosing_loop(__file__, loop_over_rows.__code__.co_firstlineno + 2) is not None
    assert hazards.enclosing_loop("<no such file>", 3) is None
