"""The structural diff, on real traces and on hand-built graphs."""

from __future__ import annotations

import json
import warnings

import pytest
import torch
import torch.nn as nn

from jupyter_tracejit.core.diff import DOWNSTREAM, ROOT, GraphDiff, structural_diff
from jupyter_tracejit.core.graph import Graph
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined, canonical_text
from jupyter_tracejit.core.torchscript.extract import extract_graph

from ..models import LinearReLU, line_of, relu_twice, relu_twice_renamed


def graph_of(fn, *inputs, name="forward") -> Graph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, inputs, check_trace=False)
    return extract_graph(canonical_inlined(traced.graph), method=name).graph


def test_identical_traces_have_no_divergence():
    def f(x):
        return torch.relu(x) * 2 + 1

    a, b = graph_of(f, torch.rand(3)), graph_of(f, torch.rand(3))
    diff = structural_diff(a, b)
    assert diff.identical
    assert diff.matched == {n.id: n.id for n in a.nodes}


def test_debug_names_and_shapes_do_not_matter():
    a, b = graph_of(relu_twice, torch.rand(3)), graph_of(relu_twice_renamed, torch.rand(5, 7))
    assert {a.values[v].name for v in range(len(a.values))} != {b.values[v].name for v in range(len(b.values))}
    assert structural_diff(a, b).identical


def test_mangled_class_names_are_not_a_divergence():
    # two separately traced modules of one class get different ___torch_mangle_N type names, which
    # torch's per-node comparison reports as "the first diverging operator"
    torch.manual_seed(0)
    model = nn.Sequential(LinearReLU(), LinearReLU())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t1 = torch.jit.trace(model, (torch.rand(2, 4),), check_trace=False)
        t2 = torch.jit.trace(model, (torch.rand(2, 4),), check_trace=False)
    c1, c2 = canonical_inlined(t1.graph), canonical_inlined(t2.graph)
    raw_differs = any(str(n1) != str(n2) for n1, n2 in zip(c1.nodes(), c2.nodes(), strict=True))
    assert raw_differs, "expected torch's raw node strings to differ by mangled names"
    assert canonical_text(c1) == canonical_text(c2)
    diff = structural_diff(extract_graph(c1).graph, extract_graph(c2).graph)
    assert diff.identical


def sin_chain(x, n=12000):
    for _ in range(n):
        x = torch.sin(x)
    return x


def cos_chain(x, n=12000):
    for _ in range(n):
        x = torch.cos(x)
    return x


@pytest.mark.slow
def test_a_change_everywhere_in_a_12k_node_chain_is_found_in_full():
    a, b = graph_of(sin_chain, torch.rand(2)), graph_of(cos_chain, torch.rand(2))
    assert len(a) == len(b) == 12000
    diff = structural_diff(a, b)
    assert len(diff.divergences) == 12000
    assert len(diff.roots) == 1 and len(diff.downstream) == 11999
    root = diff.roots[0]
    assert (a.nodes[root.trace_node].kind, b.nodes[root.check_node].kind) == ("aten::sin", "aten::cos")
    # every sin is paired with the cos at the same depth
    assert all(d.trace_node == d.check_node for d in diff.divergences)
    assert [d.kind for d in diff.divergences[:2]] == [ROOT, DOWNSTREAM]


def test_a_local_change_in_a_deep_mlp_is_one_root_and_its_consumers():
    torch.manual_seed(0)
    layers = [m for _ in range(50) for m in (nn.Linear(8, 8), nn.ReLU())]
    base = nn.Sequential(*layers)
    changed = nn.Sequential(*layers)
    changed[51] = nn.Tanh()  # the 26th activation
    a, b = graph_of(base, torch.rand(2, 8)), graph_of(changed, torch.rand(2, 8))
    diff = structural_diff(a, b)
    roots = diff.roots
    assert len(roots) == 1
    assert (a.nodes[roots[0].trace_node].kind, b.nodes[roots[0].check_node].kind) == ("aten::relu", "aten::tanh")
    assert a.nodes[roots[0].trace_node].scope == "51"
    # everything after the change reads a diverged value: 24 Linear + 24 ReLU downstream
    kinds = sorted({a.nodes[d.trace_node].kind for d in diff.downstream})
    assert kinds == ["aten::linear", "aten::relu"]
    assert len(diff.downstream) == 48
    # everything before it is matched in lock-step
    assert all(diff.matched.get(i) == i for i in range(roots[0].trace_node))


def test_extra_node_has_no_partner_and_changed_constant_names_its_input():
    def f(x):
        return (x * 2).sum(0)

    def g(x):
        return (x * 3).sum(0)

    def h(x):
        return (x * 2).abs().sum(0)

    a = graph_of(f, torch.rand(3, 2))
    diff = structural_diff(a, graph_of(g, torch.rand(3, 2)))
    (root,) = diff.roots
    assert root.reason == "input 1 of aten::mul differs: tensor constant 2 vs 3"
    diff = structural_diff(a, graph_of(h, torch.rand(3, 2)))
    extra = [d for d in diff.roots if d.trace_node is None]
    assert len(extra) == 1
    assert extra[0].reason == "only in the check trace: aten::abs"


def test_non_tensor_constant_change_makes_its_consumer_the_root():
    def f(x):
        return x.sum(dim=0)

    def g(x):
        return x.sum(dim=1)

    a, b = graph_of(f, torch.rand(3, 3)), graph_of(g, torch.rand(3, 3))
    diff = structural_diff(a, b)
    (root,) = diff.roots
    assert a.nodes[root.trace_node].kind == "aten::sum"
    assert root.reason == "input 1 of aten::sum differs: [0] vs [1]"
    # the changed constant and its ListConstruct are looked through, never roots themselves
    assert all(a.nodes[d.trace_node].role == "op" for d in diff.divergences if d.trace_node is not None)


def test_diff_json_round_trip_and_run_length_matching():
    def f(x):
        return torch.relu(x).sum()

    def g(x):
        return torch.tanh(x).sum()

    a, b = graph_of(f, torch.rand(3)), graph_of(g, torch.rand(3))
    diff = structural_diff(a, b)
    data = json.loads(json.dumps(diff.to_json()))
    assert len(data["matched_runs"]) <= 3
    again = GraphDiff.from_json(data)
    assert again.divergences == diff.divergences and again.matched == diff.matched
    some_trace_node, some_check_node = next(iter(diff.matched.items()))
    assert again.trace_partner(some_check_node) == some_trace_node


def test_diff_of_graphs_loaded_from_json_compares_tensor_digests():
    def f(x):
        return x + torch.tensor([1.0, 2.0])

    def g(x):
        return x + torch.tensor([1.0, 5.0])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = graph_of(f, torch.rand(2)), graph_of(g, torch.rand(2))
    a2 = Graph.from_json(json.loads(json.dumps(a.to_json())))
    b2 = Graph.from_json(json.loads(json.dumps(b.to_json())))
    diff = structural_diff(a2, b2)
    assert len(diff.constant_diffs) == 1
    # torch.tensor(...) is recorded as a constant followed by a conversion (aten::to) that reads it
    assert diff.roots[0].reason == "input 0 of aten::to differs: tensor constant [1.0, 2.0] vs [1.0, 5.0]"


# -- explaining divergences plainly -------------------------------------------------------------------------


def rows_loop(x):
    out = x[0]
    for row in x:  # the loop line
        out = out + row
    return out


def branch_and_loop(x):
    if x.sum() > 0:
        x = x * 2  # the branch line
    for i in range(x.size(0)):
        x = x + i  # the loop line
    return x


def test_a_loop_over_a_tensor_diverges_at_its_unpack_with_the_line():
    import jupyter_tracejit as tj

    run = tj.trace(rows_loop, (torch.rand(3, 4),), check_inputs=[(torch.rand(5, 4),)])
    diff = run.check.cases[0].diff
    (root,) = diff.roots
    assert run.graph.nodes[root.trace_node].kind == "prim::ListUnpack"
    assert "unpacks 3 values of the result of aten::unbind" in root.reason and "5 in the check trace" in root.reason
    assert f"(line {line_of(rows_loop, 'the loop line')})" in root.reason
    loop_line = line_of(rows_loop, "the loop line")
    assert diff.downstream and all(f"at line {loop_line}" in d.reason for d in diff.downstream)


def test_no_reason_names_two_identical_strings_as_different():
    import re

    import jupyter_tracejit as tj

    for fn, x, check in [
        (rows_loop, torch.rand(3, 4), torch.rand(5, 4)),
        (branch_and_loop, torch.ones(2, 3), -torch.ones(4, 3)),
    ]:
        run = tj.trace(fn, (x,), check_inputs=[(check,)])
        compared = [m for d in run.check.cases[0].diff.divergences for m in re.finditer(r"(\S+) vs (\S+)", d.reason)]
        assert all(m.group(1) != m.group(2) for m in compared), [m.group(0) for m in compared]
    # the old wording named the same debug name twice: "(%row.1 vs %row.1)"
    assert "%row.1 vs %row.1" not in "".join(
        d.reason
        for d in tj.trace(rows_loop, (torch.rand(3, 4),), check_inputs=[(torch.rand(5, 4),)])
        .check.cases[0]
        .diff.divergences
    )


def test_a_frozen_branch_and_a_frozen_loop_are_two_roots_each_with_its_line():
    import jupyter_tracejit as tj

    run = tj.trace(branch_and_loop, (torch.ones(2, 3),), check_inputs=[(-torch.ones(4, 3),)])
    case = run.check.cases[0]
    lines = set()
    for d in case.diff.roots:
        node = run.graph.nodes[d.trace_node] if d.trace_node is not None else case.graph.nodes[d.check_node]
        lines.add(node.source.line)
        assert d.reason
    assert lines == {line_of(branch_and_loop, "the branch line"), line_of(branch_and_loop, "the loop line")}
    assert all(d.reason.startswith("follows from the divergence at line") for d in case.diff.downstream)


def test_a_bool_constant_is_not_an_int_constant():
    """``False`` and ``0`` are equal in Python; as trace constants they are different values."""

    def f(x):
        return x.sum(dim=0)

    def g(x):
        return x.sum(dim=1)

    diff = structural_diff(graph_of(f, torch.rand(3, 3)), graph_of(g, torch.rand(3, 3)))
    assert [d.reason for d in diff.roots] == ["input 1 of aten::sum differs: [0] vs [1]"]


def branch_then_loop(x):
    x = x.relu() if x.sum() > 0 else x.abs()  # the branch line
    out = x[0]
    for i in range(x.size(0)):
        out = out + x[i].relu()  # the loop body
    return out


def test_a_loop_downstream_of_a_frozen_branch_is_a_cause_of_its_own():
    """Every op of the loop reads the branch's diverged value, so all of them are downstream of it; the loop ran 3
    times for the example and 5 for the check all the same, and its 6 extra ops must be named at the loop's line."""
    import jupyter_tracejit as tj

    run = tj.trace(branch_then_loop, (torch.rand(3, 8),), check_inputs=[(-torch.rand(5, 8),)])
    case = run.check.cases[0]
    branch, body = line_of(branch_then_loop, "the branch line"), line_of(branch_then_loop, "the loop body")
    lines: dict[int, list[str]] = {}
    for d in case.diff.roots:
        node = run.graph.nodes[d.trace_node] if d.trace_node is not None else case.graph.nodes[d.check_node]
        lines.setdefault(node.source.line, []).append(node.kind)
    assert sorted(lines) == [branch, body]
    # the two passes more of the check: an index, a relu and an add each, only in the check trace
    assert sorted(lines[body]) == sorted(["aten::select", "aten::relu", "aten::add"] * 2)
    at_body = [d for d in case.diff.roots if d.trace_node is None]
    assert len(at_body) == 6
    assert all(f"line {body} records it 3 times in the trace, 5 in the check trace" in d.reason for d in at_body)
    # the downstream ops of the 3 passes both ran are paired op with op, not one kind with another
    for d in case.diff.downstream:
        assert d.trace_node is not None and d.check_node is not None
        assert run.graph.nodes[d.trace_node].kind == case.graph.nodes[d.check_node].kind
    (loop,) = [f for f in run.findings if f.kind == "frozen_loop"]
    assert "`for i in range(x.size(0)):` ran 3 times in the trace, 5 in the check trace" in loop.message


def branch_then_size(x):
    x = x.relu() if x.sum() > 0 else x.abs()  # the frozen branch
    return x.reshape(len(x) * 2, -1)  # the frozen size


def test_a_size_frozen_downstream_of_a_frozen_branch_is_a_cause_of_its_own():
    import jupyter_tracejit as tj

    run = tj.trace(branch_then_size, (torch.rand(4, 8),), check_inputs=[(-torch.rand(6, 8),)])
    roots = run.check.cases[0].diff.roots
    assert [run.graph.nodes[d.trace_node].source.line for d in roots] == [
        line_of(branch_then_size, "the frozen branch"),
        line_of(branch_then_size, "the frozen size"),
    ]
    assert roots[1].reason == "input 1 of aten::reshape differs: [8, -1] vs [12, -1] (a cause of its own)"
