"""``tj.compare`` of a compiled run beside a trace or an export of the same model (core/capture_compare.py): the
compiled run's graphs of the first call joined in order, ops matched by scope, parameters and source line; what
differs at its line with its reason, the ops of a helper dynamo ran in Python said to be outside its graphs."""

from __future__ import annotations

import contextlib
import io
import warnings

import pytest
import torch
from torch import nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.capture_compare import OUTSIDE_GRAPHS, RunComparison, join_graphs
from jupyter_tracejit.core.compile.request import compile_support_problem

pytestmark = pytest.mark.skipif(compile_support_problem() is not None, reason=str(compile_support_problem()))


@torch.compiler.disable
def scaled(h: torch.Tensor) -> torch.Tensor:
    return h * 3  # dynamo runs this helper in Python: a graph break at its call


class Helped(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.out = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        h = scaled(h) + torch.sigmoid(h)
        return self.out(h.relu())


def quietly(capture: object, *args: object, **kwargs: object) -> tj.TraceRun:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        return capture(*args, **kwargs)  # type: ignore[operator, no-any-return]


def test_a_compiled_run_beside_a_trace_matches_the_ops_of_its_graphs_in_order() -> None:
    model, x = Helped(), torch.randn(3, 4)
    traced, compiled = quietly(tj.trace, model, (x,)), quietly(tj.compile, model, (x,))
    assert len(compiled.compile.regions) == 2 and len(compiled.compile.graph_breaks) == 1
    result = tj.compare(compiled, traced)  # either order: the registry's order puts the trace left
    assert isinstance(result, RunComparison) and (result.left, result.right) == ("trace", "compile")
    assert traced.compared is None and compiled.compared is None  # nothing stored: only an export shows a comparison
    c = result.comparison
    # every op of the trace but the helper's has its partner in one of the two graphs, found in each run
    assert c.trace_ops == 6 and len(c.matched) == 5 and c.export_ops == 5
    graphs = {result.place("right", right)[0] for _, right in c.matched}
    assert graphs == {"forward", "forward#1"}
    for left, right in c.matched:
        t_graph, t_node = result.place("left", left)
        g_graph, g_node = result.place("right", right)
        t_op, g_op = traced.graphs[t_graph].nodes[t_node], compiled.graphs[g_graph].nodes[g_node]
        assert t_op.source is not None and g_op.source is not None
        assert t_op.source.line == g_op.source.line, (t_op.kind, g_op.kind)
    # the helper's op: the trace recorded it, dynamo ran it in Python between its two graphs
    (line,) = c.lines
    assert (line.code, line.reason) == (
        "return h * 3  # dynamo runs this helper in Python: a graph break at its call",
        OUTSIDE_GRAPHS,
    )
    assert line.detail == "the compiled run ran this line in Python, outside its graphs (a graph break)"
    assert result.summary().startswith("5 of 6 trace ops matched in the compiled run")


def test_an_export_beside_a_compiled_run_and_the_words_of_their_sides() -> None:
    model, x = Helped(), torch.randn(3, 4)
    exported, compiled = quietly(tj.export, model, (x,)), quietly(tj.compile, model, (x,))
    result = tj.compare(exported, compiled)
    assert isinstance(result, RunComparison) and (result.left, result.right) == ("export", "compile")
    assert len(result.comparison.matched) == 5 and result.comparison.trace_ops == 6
    reasons = {d.reason for d in result.lines}
    assert reasons <= {OUTSIDE_GRAPHS, "only_export", "only_compile", "no_op", "shape_arithmetic"}, reasons
    assert all("trace" not in d.detail for d in result.lines)  # the matcher's words name these runs' back ends
    with pytest.raises(ValueError, match=r"two runs of one back end: tj\.diff"):
        tj.compare(compiled, compiled)
    # a trace and an export are compared as before: kept on the export run for its tab
    traced = quietly(tj.trace, model, (x,))
    assert tj.compare(traced, exported) is exported.compared


def test_a_run_with_no_graph_is_refused_with_what_stopped_it() -> None:
    """fullgraph=True makes the break an error: the compiled run has no graph, and compare says so instead of
    returning nothing."""
    model, x = Helped(), torch.randn(3, 4)
    traced, failed = quietly(tj.trace, model, (x,)), quietly(tj.compile, model, (x,), fullgraph=True)
    assert failed.error is not None and not failed.graphs
    with pytest.raises(ValueError, match=r"the compiled run recorded no graph \(") as caught:
        tj.compare(traced, failed)
    assert failed.error.type in str(caught.value) and "capture a graph on both sides" in str(caught.value)


def test_joined_graphs_keep_each_nodes_place() -> None:
    model, x = Helped(), torch.randn(3, 4)
    compiled = quietly(tj.compile, model, (x,))
    parts = [(name, compiled.graphs[name]) for name in compiled.compile.first_call_graphs()]
    joined, origin = join_graphs(parts, "program")
    assert len(joined.nodes) == sum(len(g.nodes) for _, g in parts) == len(origin)
    joined.lint()
    for node, (name, node_id) in zip(joined.nodes, origin, strict=True):
        assert node.kind == compiled.graphs[name].nodes[node_id].kind
