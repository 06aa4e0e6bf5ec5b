"""The graph model: scopes, shapes, source lines, JSON round trip and lint."""

from __future__ import annotations

import dataclasses
import json
import warnings

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.graph import Graph, GraphLintError, Node, Value, fold_class
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined
from jupyter_tracejit.core.torchscript.extract import extract_graph
from jupyter_tracejit.core.torchscript.scope_and_stack import parse_hierarchy, scope_path

from ..models import line_of


# Block and Net stay here: a ResNet-like stack (conv, BatchNorm, residual, pooling, a dtype cast) whose lines the
# tests find by the markers in their comments; no other test traces this shape.
class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv1 = nn.Conv2d(width, width, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(width)

    def forward(self, x):
        return torch.relu(self.bn1(self.conv1(x))) + x  # block line


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.layer1 = nn.Sequential(Block(8), Block(8))
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        x = self.layer1(self.stem(x))
        x = x.mean(dim=(2, 3))  # pool line
        return self.head(x).to(torch.float64)


@pytest.fixture(scope="module")
def net_run() -> tj.TraceRun:
    return tj.trace(Net().eval(), (torch.rand(2, 3, 8, 8),))


def test_module_hierarchy_of_a_nested_module(net_run):
    g = net_run.graph
    assert g.scopes[""].type == "Net"
    assert g.scopes["layer1"].type == "Sequential"
    assert g.scopes["layer1.0"].type == "Block"
    assert g.scopes["layer1.0.conv1"].type == "Conv2d"
    assert g.scopes["layer1.1.bn1"].type == "BatchNorm2d"
    assert g.scopes["layer1.0"].parent == "layer1"
    assert sorted(g.scopes["layer1"].children) == ["layer1.0", "layer1.1"]
    assert sorted(g.scopes[""].children) == ["head", "layer1", "stem"]
    conv = [n for n in g.nodes if n.kind == "aten::_convolution"]
    assert [n.scope for n in conv] == ["stem", "layer1.0.conv1", "layer1.1.conv1"]
    assert g.scopes["layer1.0.conv1"].depth == 3 and g.scopes["layer1.0.conv1"].name == "conv1"
    # recursive membership: both blocks' ops are under layer1
    inside = {g.nodes[i].scope for i in g.nodes_in_scope("layer1")}
    assert inside >= {"layer1.0", "layer1.0.conv1", "layer1.1.bn1"}
    assert all(s.startswith("layer1") for s in inside)


def test_shapes_and_dtypes(net_run):
    g = net_run.graph
    x = g.values[g.inputs[1]]
    assert x.name.startswith("x")  # the tracer's debug name (x or x.1)
    assert (x.shape, x.dtype, x.device, x.requires_grad) == ((2, 3, 8, 8), "Float", "cpu", False)
    assert g.values[g.inputs[0]].type.endswith(".Net")
    out = g.values[g.outputs[0]]
    assert out.shape == (2, 10) and out.dtype == "Double"
    assert out.shape_str() == "Double(2, 10)"
    mean = next(n for n in g.nodes if n.kind == "aten::mean")
    assert g.values[mean.outputs[0]].shape == (2, 8)
    dims = g.producer(mean.inputs[1])
    assert dims.kind == "prim::ListConstruct" and g.values[dims.outputs[0]].type == "List[int]"
    assert [g.producer(v).attributes["value"] for v in dims.inputs] == [2, 3]


def test_source_lines_point_at_the_users_code(net_run):
    g = net_run.graph
    block_line = line_of(Block.forward, "# block line")
    relu = [n for n in g.nodes if n.kind == "aten::relu"]
    assert len(relu) == 2
    for n in relu:
        assert n.source.file == __file__
        assert n.source.line == block_line
        assert n.source.code == "return torch.relu(self.bn1(self.conv1(x))) + x  # block line"
        assert n.source.func == "forward"
        assert not n.source.user_frame.internal
    # a conv's innermost frame is torch's conv.py; the user frame is the Block line, the stack has both
    conv = next(n for n in g.nodes if n.kind == "aten::_convolution" and n.scope == "layer1.0.conv1")
    assert conv.source.stack[0].internal and conv.source.stack[0].file.endswith("torch/nn/modules/conv.py")
    assert conv.source.line == block_line
    assert any(f.line == line_of(Net.forward, "self.layer1(self.stem(x))") for f in conv.source.stack)
    at_pool_line = [g.nodes[i] for i in g.source_lines()[(__file__, line_of(Net.forward, "# pool line"))]]
    assert [n.kind for n in at_pool_line if not n.foldable] == ["aten::mean"]
    assert {n.kind for n in at_pool_line if n.foldable} == {"prim::Constant"}
    assert not any("_trace.py" in f.file for n in g.nodes if n.source for f in n.source.stack)


def test_foldable_nodes_and_their_targets(net_run):
    g = net_run.graph
    roles = {n.role for n in g.nodes}
    # roles are data the back end sets (graph_schema 2); views draw them in four families
    assert roles == {"op", "constant", "getattr", "list"}
    assert {fold_class(r) for r in roles} == {"op", "constant", "getattr", "plumbing"}
    for n in g.nodes:
        target = g.fold_target(n)
        if n.foldable and target is not None:
            assert not g.nodes[target].foldable
        if not n.foldable:
            assert target is None
    weight = next(n for n in g.nodes if n.kind == "prim::GetAttr" and n.attributes == {"name": "weight"})
    assert g.nodes[g.fold_target(weight)].kind in ("aten::_convolution", "aten::batch_norm", "aten::linear")


def test_json_round_trip_is_lossless(net_run):
    g = net_run.graph
    text = json.dumps(g.to_json(), allow_nan=False)
    again = Graph.from_json(json.loads(text))
    assert again.to_json() == g.to_json()
    assert again.nodes == g.nodes and again.values == g.values
    assert again.text() == g.text()
    assert {p: s.type for p, s in again.scopes.items()} == {p: s.type for p, s in g.scopes.items()}
    again.lint()


def test_a_graph_saved_before_titles_reads_them_from_the_kinds(net_run):
    # nodes gained a title column (the back end's); a graph written without it reads today's rule: an export's
    # default overload loses ".default", every other kind is its own title
    data = net_run.graph.to_json()
    untitled = {**data, "nodes": [row[:10] for row in data["nodes"]]}
    linear = len(data["strings"])
    untitled["strings"] = [*data["strings"], "aten::linear.default"]
    untitled["nodes"][0] = [linear, *untitled["nodes"][0][1:]]
    again = Graph.from_json(untitled)
    assert again.nodes[0].title == "aten::linear"
    assert [n.title for n in again.nodes[1:]] == [n.kind for n in net_run.graph.nodes[1:]]
    assert all(n.title == n.kind for n in net_run.graph.nodes)  # a trace titles each node by its kind


def test_json_refuses_other_schema_versions(net_run):
    data = net_run.graph.to_json()
    data["graph_schema"] = 99
    with pytest.raises(ValueError, match="graph_schema 99"):
        Graph.from_json(data)
    with pytest.raises(ValueError, match="not a jupyter-tracejit run"):
        tj.TraceRun.from_json({"kind": "something else"})
    run = net_run.to_json()
    run["schema_version"] = 0
    with pytest.raises(ValueError, match="schema_version 0"):
        tj.TraceRun.from_json(run)


def test_text_reads_like_torchscript(net_run):
    text = net_run.graph.text()
    first = text.splitlines()[0]
    assert first.startswith("graph(%self.1 : __torch__.") and first.endswith(".Net, %x.1 : Float(2, 3, 8, 8)):")
    assert "aten::_convolution" in text and "scope: layer1.0.conv1" in text
    assert "___torch_mangle" not in text
    assert text.rstrip().endswith(")")


def test_lint_accepts_real_graphs_and_names_each_violation(net_run):
    g = net_run.graph
    g.lint()
    nodes = list(g.nodes)
    values = list(g.values)
    first_op = next(n for n in nodes if n.inputs)
    # reading an undefined value and an SSA double definition
    nodes[first_op.id] = dataclasses.replace(first_op, inputs=(*first_op.inputs, len(values) + 5))
    later = nodes[-1]
    nodes[-1] = dataclasses.replace(later, outputs=(*later.outputs, g.inputs[1]))
    broken = Graph(method="forward", nodes=nodes, values=values, inputs=g.inputs, outputs=g.outputs)
    with pytest.raises(GraphLintError) as info:
        broken.lint()
    message = str(info.value)
    assert f"reads value {len(values) + 5}, which does not exist" in message
    assert "is defined twice (SSA violation)" in message
    assert "graph invariant(s) broken" in message


def test_lint_catches_use_before_definition():
    values = [
        Value(id=0, name="x", type="Tensor"),
        Value(id=1, name="a", type="Tensor", producer=1),
        Value(id=2, name="b", type="Tensor", producer=0),
    ]
    nodes = [
        Node(id=0, kind="aten::relu", inputs=(1,), outputs=(2,)),
        Node(id=1, kind="aten::neg", inputs=(0,), outputs=(1,)),
    ]
    g = Graph(method="f", nodes=nodes, values=values, inputs=(0,), outputs=(2,))
    with pytest.raises(GraphLintError, match="before it is defined: nodes must be listed in topological"):
        g.lint()


def test_scope_and_hierarchy_parsing():
    assert scope_path("__module.layer1/__module.layer1.0/__module.layer1.0.conv1") == "layer1.0.conv1"
    assert scope_path("__module") == ""
    assert scope_path("") == ""
    assert parse_hierarchy("layer1(Sequential).0(Block).conv1(Linear)") == {
        "layer1": "Sequential",
        "layer1.0": "Block",
        "layer1.0.conv1": "Linear",
    }


def test_scripted_control_flow_keeps_blocks():
    @torch.jit.script
    def clamp_loop(x: torch.Tensor, n: int) -> torch.Tensor:
        for _ in range(n):
            if bool(x.sum() > 0):
                x = x - 1
        return x

    def traced_fn(x):
        return clamp_loop(x, 3) * 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(traced_fn, (torch.rand(3),), check_trace=False)
    g = extract_graph(canonical_inlined(traced.graph), method="forward").graph
    g.lint()
    loop = next(n for n in g.nodes if n.kind == "prim::Loop")
    assert loop.blocks and loop.blocks[0].nodes
    inner_if = next(n for n in g.nodes if n.kind == "prim::If")
    assert inner_if.parent == loop.id
    assert all(g.nodes[c].parent == inner_if.id for b in inner_if.blocks for c in b.nodes)
    again = Graph.from_json(json.loads(json.dumps(g.to_json())))
    assert again.nodes == g.nodes
    assert "block0(" in g.text()


# -- module scopes under containers --------------------------------------------------------------------------


class Containers(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Sequential(nn.Linear(4, 4), nn.ModuleList([nn.ReLU()]))])
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 2)})
        self.never_called = nn.Tanh()

    def forward(self, x):
        x = self.layers[0](x)
        x = self.layers[1][1][0](self.layers[1][0](x))
        return self.heads["cls"](x)


def test_scopes_under_containers_carry_their_own_types_and_no_phantoms():
    run = tj.trace(Containers(), (torch.rand(2, 4),))
    scopes = {p: s.type for p, s in run.graph.scopes.items()}
    assert scopes == {
        "": "Containers",
        "layers": "ModuleList",
        "layers.0": "Linear",
        "layers.1": "Sequential",
        "layers.1.0": "Linear",
        "layers.1.1": "ModuleList",
        "layers.1.1.0": "ReLU",
        "heads": "ModuleDict",
        "heads.cls": "Linear",
    }
    run.graph.lint()
    for case in run.check.cases:
        assert case.graph is None  # identical re-trace: nothing more to check there


def test_lint_names_phantom_and_untyped_scopes():
    node = Node(id=0, kind="aten::relu", inputs=(0,), outputs=(1,), scope="layers.0")
    values = [Value(0, "x", "Tensor"), Value(1, "y", "Tensor", producer=0)]
    phantom = Graph(
        method="forward", nodes=[node], values=values, inputs=(0,), outputs=(1,), scope_types={"0": "Linear"}
    )
    with pytest.raises(GraphLintError) as err:
        phantom.lint()
    assert "scope '0' (Linear) holds no nodes and no modules" in str(err.value)
    assert "scope 'layers.0' holds nodes but has no module type" in str(err.value)
