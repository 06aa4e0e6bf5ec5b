"""DOT output of :func:`jupyter_tracejit.render.dot.to_dot`: goldens, folding, collapsing, escaping.

The DOT text is read back with the small DOT reader of ``dot_reader.py`` (the ``dot`` binary is optional); when
Graphviz is installed, the hostile-input graph is also rendered to SVG and inspected.

Set ``TRACEJIT_UPDATE_GOLDEN=1`` to rewrite the golden files under ``tests/render/golden/``. That the TypeScript
builder writes the same text is tested with the fixtures of ``tests/frontend_fixtures.py``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from jupyter_tracejit.core.graph import Graph, Node, legacy_title
from jupyter_tracejit.render.dot import (
    op_title,
    to_dot,
)

from .dot_graphs import HOSTILE_CODE, K_DEC, K_ENC, K_FC, Builder, make_graph, make_hostile_graph
from .dot_reader import display, parse_dot

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("TRACEJIT_UPDATE_GOLDEN") == "1"


# -- goldens --------------------------------------------------------------------------------------
GOLDEN_CASES: dict[str, tuple[Any, dict[str, Any]]] = {
    "default": (make_graph, {}),
    "unfolded": (make_graph, {"fold": False}),
    "collapsed": (make_graph, {"collapsed": ["enc"], "highlights": {4: ["warning"], 10: ["root", "selected"]}}),
    "options": (make_graph, {"show_shapes": False, "rankdir": "LR", "title": "Net.forward", "collapsed": ["dec.act"]}),
    "hostile": (make_hostile_graph, {"title": HOSTILE_CODE}),
}


@pytest.mark.parametrize("case", sorted(GOLDEN_CASES))
def test_golden(case: str) -> None:
    make, options = GOLDEN_CASES[case]
    src = to_dot(make(), **options)
    path = GOLDEN / f"dot_{case}.dot"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(src, encoding="utf-8")
    assert path.exists(), f"{path} is missing: run with TRACEJIT_UPDATE_GOLDEN=1"
    assert src == path.read_text(encoding="utf-8"), f"DOT differs from {path.name}; TRACEJIT_UPDATE_GOLDEN=1 rewrites"
    parse_dot(src)  # every golden is valid DOT


# -- structure ------------------------------------------------------------------------------------
def test_default_structure() -> None:
    dot = parse_dot(to_dot(make_graph()))
    # constants, GetAttr and the ListConstruct are folded; ``self`` only feeds GetAttr, so it is hidden
    assert set(dot.nodes) == {"in1", "in2", "n4", "n5", "n7", "n10", "n11", "n12", "n13", "out0"}
    assert dot.nodes["n4"]["id"] == "n4"
    assert dot.label("n4") == ["linear", "Float(2, 3)"]  # parameters are not arguments to show
    assert dot.label("n7") == ["add", "Float(2, 3)", "1"]
    assert dot.label("n10") == ["cat", "Float(2, 6)", "-1"]
    assert dot.label("in1") == ["x", "Float(2, 4)"]
    assert dot.label("out0") == ["output", "(Tensor, Tensor)"]
    # the TupleConstruct feeds only the graph output: it has no fold target and stays visible
    assert dot.classes("n13") == ["node", "op-plumbing", "kind-prim-TupleConstruct"]
    assert dot.classes("n10") == ["node", "op-op", "kind-aten-cat"]
    # sorted by (source, target) names; one edge per pair
    assert dot.edge_pairs() == [
        ("in1", "n4"),
        ("in1", "n7"),
        ("in2", "n10"),
        ("n10", "n11"),  # mul(z, z): one edge
        ("n10", "n13"),
        ("n11", "n12"),
        ("n12", "n13"),
        ("n13", "out0"),
        ("n4", "n5"),
        ("n5", "n7"),
        ("n7", "n10"),  # through the folded ListConstruct
    ]
    assert [e[2]["id"] for e in dot.edges][:2] == ["ein1-n4", "ein1-n7"]
    # clusters nest like the modules; the empty ``unused`` module is not drawn
    assert {c.attrs["id"] for c in dot.clusters.values()} == {
        "cluster-enc",
        "cluster-enc.fc",
        "cluster-dec",
        "cluster-dec.act",
    }
    enc, fc = dot.cluster_of_id("cluster-enc"), dot.cluster_of_id("cluster-enc.fc")
    assert enc.name == f"cluster_{K_ENC}" and enc.parent is None
    assert fc.name == f"cluster_{K_FC}" and fc.parent == enc.name
    assert dot.cluster_of_id("cluster-dec.act").parent == f"cluster_{K_DEC}"
    assert display(enc.attrs["label"]) == "enc (Encoder)"
    assert enc.attrs["class"] == "scope"
    assert dot.node_cluster["n4"] == fc.name and dot.node_cluster["n5"] == enc.name
    assert dot.node_cluster["n10"] is None
    # tooltip: full kind, outputs, scope and the basename of the user's file only
    tip = display(dot.nodes["n4"]["tooltip"]).split("\n")
    assert tip == [
        "aten::linear",
        "%input.1 : Float(2, 3)",
        "scope: enc.fc (Linear)",
        "model.py:12",
        "h = self.fc(x)",
    ]
    assert dot.graph_attrs["rankdir"] == "TB"
    assert "label" not in dot.graph_attrs


def test_tooltips_name_a_notebook_cell_as_every_panel_does() -> None:
    """A node's tooltip said ``3441435211.py:16`` where every panel said ``cell [1], line 16``: one rule."""
    graph = make_graph()
    file = graph.nodes[4].source.file
    named = parse_dot(to_dot(graph, file_names={file: "cell [1]"}))
    assert "cell [1], line 12" in display(named.nodes["n4"]["tooltip"]).split("\n")
    assert "model.py:12" in display(parse_dot(to_dot(graph)).nodes["n4"]["tooltip"]).split("\n")


def test_unfolded_shows_every_node() -> None:
    dot = parse_dot(to_dot(make_graph(), fold=False))
    assert {f"n{i}" for i in range(14)} | {"in0", "in1", "in2", "out0"} == set(dot.nodes)
    assert dot.label("n6") == ["Constant", "1", "int"]
    assert dot.label("n2") == ["GetAttr", "weight", "Tensor"]
    assert dot.classes("n6")[:2] == ["node", "op-constant"]
    assert dot.label("n7") == ["add", "Float(2, 3)"]  # nothing folded into it
    pairs = dot.edge_pairs()
    assert ("n7", "n8") in pairs and ("n8", "n10") in pairs and ("n7", "n10") not in pairs
    assert ("in0", "n0") in pairs and ("n6", "n7") in pairs


def test_show_shapes_and_title() -> None:
    dot = parse_dot(to_dot(make_graph(), show_shapes=False, title="my\nmodel", rankdir="LR"))
    assert dot.label("n4") == ["linear"]
    assert dot.label("in1") == ["x"]
    assert display(dot.graph_attrs["label"]) == "my model"
    assert dot.graph_attrs["rankdir"] == "LR"
    with pytest.raises(ValueError, match="rankdir"):
        to_dot(make_graph(), rankdir="LR;evil=1")


def test_fold_target_none_stays_visible() -> None:
    b = Builder()
    x = b.value("x", shape=(2,))
    c = b.node("prim::Constant", (), ("c", "int", None), value=3)
    b.node("aten::mul", (x, x), ("m", "Tensor", (2,)))
    g = b.graph((x,), outputs=(b.out(c), b.out(1)))
    dot = parse_dot(to_dot(g))
    assert set(dot.nodes) == {"in0", "n0", "n1", "out0", "out1"}
    assert dot.label("n0") == ["Constant", "3", "int"]
    assert dot.label("out1") == ["output 1", "Float(2)"]
    assert dot.edge_pairs() == [("in0", "n1"), ("n0", "out0"), ("n1", "out1")]


def test_folded_lists_and_caps() -> None:
    b = Builder()
    x = b.value("x", shape=(2, 6))
    consts = [b.node("prim::Constant", (), (str(i), "int", None), value=v) for i, v in enumerate([0, 0, 2**63 - 1, 1])]
    sl = b.node("aten::slice", (x, *[b.out(c) for c in consts]), ("s", "Tensor", (2, 6)))
    m1 = b.node("prim::Constant", (), ("m1", "int", None), value=-1)
    three = b.node("prim::Constant", (), ("t", "int", None), value=3)
    lst = b.node("prim::ListConstruct", (b.out(m1), b.out(three)), ("l", "int[]", None))
    dim = b.node("prim::Constant", (), ("dim", "int", None), value=1)
    flag = b.node("prim::Constant", (), ("9", "bool", None), value=False)
    b.node("aten::view", (b.out(sl), b.out(lst), b.out(dim), b.out(flag)), ("v", "Tensor", (4, 3)))
    g = b.graph((x,))
    dot = parse_dot(to_dot(g))
    assert set(dot.nodes) == {"in0", "n4", "n10", "out0"}
    assert dot.label("n4") == ["slice", "Float(2, 6)", "0, 0, INT64_MAX, …"]
    # a named constant shows its name; the list of constants is drawn as a list
    assert dot.label("n10") == ["view", "Float(4, 3)", "[-1, 3], dim=1, False"]
    assert display(dot.nodes["n4"]["tooltip"]).split("\n")[2] == "args: 0, 0, INT64_MAX, 1"
    assert dot.edge_pairs() == [("in0", "n4"), ("n10", "out0"), ("n4", "n10")]


# -- collapse -------------------------------------------------------------------------------------
def test_collapse_scope() -> None:
    dot = parse_dot(to_dot(make_graph(), collapsed=["enc"], highlights={4: ["warning"], 10: ["root"]}))
    box = f"g{K_ENC}"
    assert set(dot.nodes) == {"in1", "in2", box, "n10", "n11", "n12", "n13", "out0"}
    attrs = dot.nodes[box]
    assert attrs["id"] == "scope-enc"
    assert dot.label(box) == ["enc (Encoder)", "3 ops"]
    assert attrs["class"].split() == ["scope-collapsed", "has-warning"]  # node 4 lies inside
    assert dot.node_cluster[box] is None
    # x fed both linear and add inside: one edge; relu -> add and linear -> relu disappear
    assert dot.edge_pairs()[:3] == [(box, "n10"), ("in1", box), ("in2", "n10")]
    assert dot.edge_pairs().count(("in1", box)) == 1
    assert all(c.attrs["id"] not in ("scope-enc", "scope-enc.fc") for c in dot.clusters.values())
    assert dot.classes("n10")[-1] == "root"


def test_collapse_nested_and_inner() -> None:
    both = to_dot(make_graph(), collapsed=["enc.fc", "enc"])
    assert both == to_dot(make_graph(), collapsed=["enc"])  # the outer collapse hides the inner one
    dot = parse_dot(to_dot(make_graph(), collapsed=["enc.fc", "nope", ""]))
    box = f"g{K_FC}"
    assert dot.label(box) == ["fc (Linear)", "1 ops"]
    assert dot.node_cluster[box] == f"cluster_{K_ENC}"
    assert ("in1", box) in dot.edge_pairs() and (box, "n5") in dot.edge_pairs()
    assert "n4" not in dot.nodes and "n5" in dot.nodes


# -- highlights -----------------------------------------------------------------------------------
def test_highlight_classes() -> None:
    hl = {10: ["selected", "root"], 6: ["warning"], 11: ["bad class!<x>", ""], 99: ["ignored"]}
    dot = parse_dot(to_dot(make_graph(), highlights=hl))
    assert dot.classes("n10") == ["node", "op-op", "kind-aten-cat", "root", "selected"]
    # constant 6 is folded into add: the add stands for it
    assert dot.classes("n7") == ["node", "op-op", "kind-aten-add", "has-warning"]
    assert dot.classes("n11") == ["node", "op-op", "kind-aten-mul", "bad-class-x"]
    assert dot.classes("n12") == ["node", "op-op", "kind-aten-sigmoid"]
    unfolded = parse_dot(to_dot(make_graph(), highlights=hl, fold=False))
    assert unfolded.classes("n6") == ["node", "op-constant", "kind-prim-Constant", "warning"]
    assert "warning" not in unfolded.classes("n7")


# -- determinism ----------------------------------------------------------------------------------
def test_deterministic_and_json_round_trip() -> None:
    options: dict[str, Any] = {"highlights": {7: ["selected", "hazard"], 2: {"warning"}}, "collapsed": ["dec"]}
    g = make_graph()
    first = to_dot(g, **options)
    assert first == to_dot(g, **options)
    assert first == to_dot(make_graph(), **options)
    again = Graph.from_json(json.loads(json.dumps(g.to_json())))
    assert to_dot(again, **options) == first
    assert to_dot(again) == to_dot(g)
    hostile = make_hostile_graph()
    assert to_dot(Graph.from_json(json.loads(json.dumps(hostile.to_json())))) == to_dot(hostile)


def test_scope_order_does_not_depend_on_scope_types_order() -> None:
    g = make_graph()
    reordered = Graph(
        method=g.method,
        nodes=g.nodes,
        values=g.values,
        inputs=g.inputs,
        outputs=g.outputs,
        scope_types=dict(reversed(list({p: s.type for p, s in g.scopes.items()}.items()))),
    )
    assert to_dot(reordered) == to_dot(g)


# -- a real trace ---------------------------------------------------------------------------------
def test_real_torch_trace() -> None:
    pytest.importorskip("torch")
    import torch

    from jupyter_tracejit.core.torchscript.canonical import canonical_inlined
    from jupyter_tracejit.core.torchscript.extract import extract_graph

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)

        def forward(self, x: Any) -> Any:
            return torch.relu(self.fc(x)) + 1

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.block = Block()

        def forward(self, x: Any, y: Any) -> Any:
            return torch.cat([self.block(x), y], dim=-1).sum(dim=-1)

    traced = torch.jit.trace(Net(), (torch.randn(2, 4), torch.randn(2, 1)), check_trace=False)
    graph = extract_graph(canonical_inlined(traced.graph), root_type="Net").graph
    src = to_dot(graph)
    dot = parse_dot(src)
    kinds = {graph.nodes[int(n[1:])].kind for n in dot.nodes if re.fullmatch(r"n\d+", n)}
    assert kinds == {"aten::linear", "aten::relu", "aten::add", "aten::cat", "aten::sum"}
    assert {c.attrs["id"] for c in dot.clusters.values()} == {"cluster-block", "cluster-block.fc"}
    by_kind = {graph.nodes[int(n[1:])].kind: n for n in dot.nodes if re.fullmatch(r"n\d+", n)}
    assert dot.label(by_kind["aten::linear"]) == ["linear", "Float(2, 3)"]
    assert dot.label(by_kind["aten::cat"])[-1] == "-1"
    assert (by_kind["aten::add"], by_kind["aten::cat"]) in dot.edge_pairs()  # through the ListConstruct
    tip = display(dot.nodes[by_kind["aten::relu"]]["tooltip"])
    assert "test_dot.py:" in tip and "/" not in tip.split("\n")[-2]
    assert "torch.relu(self.fc(x)) + 1" in tip
    assert src == to_dot(Graph.from_json(json.loads(json.dumps(graph.to_json()))))


def test_dead_plumbing_is_not_drawn() -> None:
    pytest.importorskip("torch")
    import torch

    from jupyter_tracejit.core.torchscript.canonical import canonical_inlined
    from jupyter_tracejit.core.torchscript.extract import extract_graph

    # the GetAttr of each parameter-free ReLU module survives in the graph but feeds nothing
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU(), torch.nn.Linear(2, 2), torch.nn.ReLU())
    traced = torch.jit.trace(model, (torch.randn(1, 2),), check_trace=False)
    graph = extract_graph(canonical_inlined(traced.graph)).graph
    dead = [n for n in graph.nodes if n.kind == "prim::GetAttr" and not graph.consumers(n)]
    assert len(dead) == 2
    dot = parse_dot(to_dot(graph))
    drawn = {graph.nodes[int(n[1:])].kind for n in dot.nodes if re.fullmatch(r"n\d+", n)}
    assert drawn == {"aten::linear", "aten::relu"}
    unfolded = parse_dot(to_dot(graph, fold=False))
    assert all(f"n{n.id}" in unfolded.nodes for n in dead)


#: a node saved before nodes carried titles: its kind -> its first label line (core/graph_parts.py ``legacy_title``,
#: then the renderer); the same table is in labextension/test/dotText.test.ts: both sides read such a node alike
UNTITLED_KINDS = {
    "aten::linear": "linear",
    "aten::linear.default": "linear",
    "aten::add.Tensor": "add.Tensor",
    "prim::Constant": "Constant",
    "higher_order::cond": "cond",
    ".default": ".default",
}


@pytest.mark.parametrize(("kind", "title"), UNTITLED_KINDS.items())
def test_a_node_saved_without_a_title_drops_the_default_overload(kind: str, title: str) -> None:
    assert op_title(Node(id=0, kind=kind, inputs=(), outputs=(), title=legacy_title(kind))) == title


def test_the_label_shows_the_title_the_back_end_gave() -> None:
    # the renderer applies no rule of a back end's: only the namespace goes
    assert op_title(Node(id=0, kind="aten::linear.default", inputs=(), outputs=(), title="aten::linear")) == "linear"
    kept = Node(id=0, kind="aten::linear.default", inputs=(), outputs=(), title="aten::linear.default")
    assert op_title(kept) == "linear.default"
    assert op_title(Node(id=0, kind="prim::Constant", inputs=(), outputs=())) == "Constant"
