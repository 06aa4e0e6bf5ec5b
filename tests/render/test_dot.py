"""DOT output of :func:`jupyter_tracejit.render.dot.to_dot`: goldens, folding, collapsing, escaping.

The DOT text is read back with a small DOT parser below (the ``dot`` binary is optional); when
Graphviz is installed, the hostile-input graph is also rendered to SVG and inspected.

Set ``TRACEJIT_UPDATE_GOLDEN=1`` to rewrite the golden files under ``tests/render/golden/``. That the TypeScript
builder writes the same text is tested with the fixtures of ``tests/frontend_fixtures.py``.
"""

from __future__ import annotations

import html
import itertools
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from jupyter_tracejit.core.graph import Frame, Graph, Node, SourceLoc, Value, legacy_title
from jupyter_tracejit.core.torchscript.roles import role_of
from jupyter_tracejit.render.dot import (
    MAX_ITEM_CHARS,
    TOOLTIP_BACKSLASH,
    css_token,
    dom_id,
    escape_text,
    op_title,
    to_dot,
    truncate,
)

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("TRACEJIT_UPDATE_GOLDEN") == "1"


# -- a DOT reader ---------------------------------------------------------------------------------
_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/|\#[^\n]*)
  | (?P<arrow>->|--)
  | (?P<punct>[{}\[\]=;,])
  | (?P<id>[A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))
  | (?P<quote>")
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(src: str) -> list[tuple[str, str]]:
    """DOT tokens as ``(kind, text)``; quoted strings are unquoted the way Graphviz's lexer does."""
    tokens: list[tuple[str, str]] = []
    i = 0
    while i < len(src):
        m = _TOKEN.match(src, i)
        if m is None:
            raise AssertionError(f"unexpected DOT text at {i}: {src[i : i + 40]!r}")
        kind = m.lastgroup
        assert kind is not None
        i = m.end()
        if kind in ("ws", "comment"):
            continue
        if kind != "quote":
            tokens.append(("id" if kind == "id" else "sym", m.group()))
            continue
        out: list[str] = []
        while True:
            if i >= len(src):
                raise AssertionError("unterminated quoted string")
            c = src[i]
            if c == '"':
                i += 1
                break
            if c == "\\" and i + 1 < len(src):
                nxt = src[i + 1]
                if nxt == '"':
                    out.append('"')
                elif nxt == "\\":
                    out.append("\\\\")
                elif nxt != "\n":  # backslash-newline continues the line
                    out.append("\\" + nxt)
                i += 2
                continue
            out.append(c)
            i += 1
        tokens.append(("id", "".join(out)))
    return tokens


@dataclass
class Cluster:
    name: str
    parent: str | None
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class Dot:
    graph_attrs: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, dict[str, str]] = field(default_factory=dict)
    #: node name -> name of the innermost cluster it was declared in (None: top level)
    node_cluster: dict[str, str | None] = field(default_factory=dict)
    edges: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    clusters: dict[str, Cluster] = field(default_factory=dict)

    def edge_pairs(self) -> list[tuple[str, str]]:
        return [(a, b) for a, b, _ in self.edges]

    def classes(self, node: str) -> list[str]:
        return self.nodes[node].get("class", "").split()

    def label(self, node: str) -> list[str]:
        return display(self.nodes[node].get("label", node)).split("\n")

    def cluster_of_id(self, dom_id: str) -> Cluster:
        found = [c for c in self.clusters.values() if c.attrs.get("id") == dom_id]
        assert len(found) == 1, dom_id
        return found[0]


def parse_dot(src: str) -> Dot:
    """Parse the subset of DOT that ``graphviz.Digraph`` writes, failing on anything unexpected."""
    toks = tokenize(src)
    dot = Dot()
    pos = 0

    def peek() -> tuple[str, str]:
        return toks[pos] if pos < len(toks) else ("eof", "")

    def take(expected: str | None = None) -> str:
        nonlocal pos
        kind, text = peek()
        if kind == "eof" or (expected is not None and (kind != "sym" or text != expected)):
            raise AssertionError(f"expected {expected!r} at token {pos}, found {text!r}")
        pos += 1
        return text

    def take_id() -> str:
        nonlocal pos
        kind, text = peek()
        if kind != "id":
            raise AssertionError(f"expected an identifier at token {pos}, found {text!r}")
        pos += 1
        return text

    def attr_list() -> dict[str, str]:
        attrs: dict[str, str] = {}
        while peek() == ("sym", "["):
            take("[")
            while peek() != ("sym", "]"):
                key = take_id()
                take("=")
                if key in attrs:
                    raise AssertionError(f"attribute {key!r} given twice")
                attrs[key] = take_id()
                if peek() in (("sym", ","), ("sym", ";")):
                    take()
            take("]")
        return attrs

    def stmt_list(cluster: str | None) -> None:
        take("{")
        while peek() != ("sym", "}"):
            kind, text = peek()
            if kind == "id" and text in ("graph", "node", "edge"):
                take_id()
                attrs = attr_list()
                if text == "graph":
                    target = dot.graph_attrs if cluster is None else dot.clusters[cluster].attrs
                    target.update(attrs)
            elif kind == "id" and text == "subgraph":
                take_id()
                name = take_id()
                if name in dot.clusters:
                    raise AssertionError(f"subgraph {name} declared twice")
                dot.clusters[name] = Cluster(name=name, parent=cluster)
                stmt_list(name)
            else:
                first = take_id()
                if peek() == ("sym", "="):
                    take("=")
                    (dot.graph_attrs if cluster is None else dot.clusters[cluster].attrs)[first] = take_id()
                elif peek() == ("sym", "->"):
                    chain = [first]
                    while peek() == ("sym", "->"):
                        take("->")
                        chain.append(take_id())
                    attrs = attr_list()
                    for a, b in itertools.pairwise(chain):
                        dot.edges.append((a, b, attrs))
                else:
                    if first in dot.nodes:
                        raise AssertionError(f"node {first} declared twice")
                    dot.nodes[first] = attr_list()
                    dot.node_cluster[first] = cluster
            if peek() == ("sym", ";"):
                take(";")
        take("}")

    assert take_id() == "digraph"
    if peek()[0] == "id":
        take_id()
    stmt_list(None)
    assert peek()[0] == "eof", "text after the graph"
    for a, b, _ in dot.edges:
        assert a in dot.nodes and b in dot.nodes, f"edge {a} -> {b} names an undeclared node"
    return dot


def display(esc: str) -> str:
    """What Graphviz shows for a plain label: escString sequences, then entities.

    Fails on the sequences Graphviz would expand into other text (``\\N``, ``\\G``, ...), which
    the writer must never leave unescaped in user text.
    """
    out: list[str] = []
    i = 0
    while i < len(esc):
        c = esc[i]
        if c == "\\":
            nxt = esc[i + 1] if i + 1 < len(esc) else ""
            if nxt == "\\":
                out.append("\\")
            elif nxt in ("n", "l", "r"):
                out.append("\n")
            else:
                raise AssertionError(f"Graphviz would expand \\{nxt} in {esc!r}")
            i += 2
            continue
        out.append(c)
        i += 1
    return html.unescape("".join(out))


# -- graphs built by hand -------------------------------------------------------------------------
def loc(line: int, code: str, file: str = "/home/alice/project/model.py") -> SourceLoc:
    return SourceLoc(
        stack=(
            Frame(file="/opt/venv/lib/site-packages/torch/nn/modules/module.py", line=1, func="_call", internal=True),
            Frame(file=file, line=line, func="forward", code=code),
        ),
        user_index=1,
    )


class Builder:
    def __init__(self) -> None:
        self.values: list[Value] = []
        self.nodes: list[Node] = []

    def value(self, name: str, type: str = "Tensor", shape: tuple[int, ...] | None = None) -> int:
        dtype = "Float" if type == "Tensor" and shape is not None else None
        self.values.append(Value(id=len(self.values), name=name, type=type, shape=shape, dtype=dtype))
        return len(self.values) - 1

    def node(
        self,
        kind: str,
        inputs: tuple[int, ...],
        out: tuple[str, str, tuple[int, ...] | None] | None,
        *,
        scope: str = "",
        source: SourceLoc | None = None,
        **attributes: Any,
    ) -> int:
        nid = len(self.nodes)
        outputs: tuple[int, ...] = ()
        if out is not None:
            name, type, shape = out
            vid = len(self.values)
            dtype = "Float" if type == "Tensor" and shape is not None else None
            self.values.append(Value(id=vid, name=name, type=type, shape=shape, dtype=dtype, producer=nid))
            outputs = (vid,)
        self.nodes.append(
            Node(
                id=nid,
                kind=kind,
                inputs=inputs,
                outputs=outputs,
                scope=scope,
                source=source,
                attributes=attributes,
                role=role_of(kind),  # as the TorchScript back end sets it
            )
        )
        return nid

    def out(self, nid: int) -> int:
        return self.nodes[nid].outputs[0]

    def graph(self, inputs: tuple[int, ...], outputs: tuple[int, ...] | None = None, **fields: Any) -> Graph:
        """The forward graph of what was built, its output the last value made unless ``outputs`` says."""
        if outputs is None:
            outputs = (len(self.values) - 1,)
        return Graph(method="forward", nodes=self.nodes, values=self.values, inputs=inputs, outputs=outputs, **fields)


def make_graph() -> Graph:
    """``Net``: ``enc`` (Encoder, with ``enc.fc`` Linear), a cat through a ListConstruct, ``dec``.

    Node ids: 0-3 GetAttr (enc, fc, weight, bias), 4 linear, 5 relu, 6 Constant 1, 7 add,
    8 ListConstruct, 9 Constant -1, 10 cat, 11 mul, 12 sigmoid, 13 TupleConstruct (output).
    """
    b = Builder()
    self_ = b.value("self.1", "__torch__.Net")
    x = b.value("x", shape=(2, 4))
    y = b.value("y", shape=(2, 3))
    enc = b.node("prim::GetAttr", (self_,), ("enc", "__torch__.Encoder", None), name="enc")
    fc = b.node("prim::GetAttr", (b.out(enc),), ("fc", "__torch__.Linear", None), name="fc")
    w = b.node("prim::GetAttr", (b.out(fc),), ("weight", "Tensor", None), name="weight")
    bias = b.node("prim::GetAttr", (b.out(fc),), ("bias", "Tensor", None), name="bias")
    lin = b.node(
        "aten::linear",
        (x, b.out(w), b.out(bias)),
        ("input.1", "Tensor", (2, 3)),
        scope="enc.fc",
        source=loc(12, "h = self.fc(x)"),
    )
    relu = b.node("aten::relu", (b.out(lin),), ("5", "Tensor", (2, 3)), scope="enc", source=loc(13, "h = h.relu()"))
    one = b.node("prim::Constant", (), ("6", "int", None), scope="enc", value=1)
    add = b.node(
        "aten::add",
        (b.out(relu), x, b.out(one)),
        ("h", "Tensor", (2, 3)),
        scope="enc",
        source=loc(14, "h = h + x[:, :3]"),
    )
    lst = b.node("prim::ListConstruct", (b.out(add), y), ("8", "Tensor[]", None))
    dim = b.node("prim::Constant", (), ("9", "int", None), value=-1)
    cat = b.node("aten::cat", (b.out(lst), b.out(dim)), ("z", "Tensor", (2, 6)), source=loc(20, "z = torch.cat(...)"))
    mul = b.node("aten::mul", (b.out(cat), b.out(cat)), ("11", "Tensor", (2, 6)), scope="dec", source=loc(30, "z * z"))
    sig = b.node("aten::sigmoid", (b.out(mul),), ("12", "Tensor", (2, 6)), scope="dec.act", source=loc(31, "act(z)"))
    b.node("prim::TupleConstruct", (b.out(sig), b.out(cat)), ("13", "(Tensor, Tensor)", None))
    return b.graph(
        (self_, x, y),
        scope_types={
            "": "Net",
            "enc": "Encoder",
            "enc.fc": "Linear",
            "dec": "Decoder",
            "dec.act": "Sigmoid",
            "unused": "Dropout",
        },
    )


# sorted(scopes) == ["", "dec", "dec.act", "enc", "enc.fc", "unused"]
K_DEC, K_ACT, K_ENC, K_FC = 1, 2, 3, 4

HOSTILE_SCOPE = 'a" ; evil=1'
HOSTILE_NAME = "x\\N\\G"
HOSTILE_CODE = "</title><script>alert(1)</script>"
HOSTILE_TYPE = "T{}]\n[evil=2"
HOSTILE_STRING = 'say "hi"\\l\\\n& &lt;'


def make_hostile_graph() -> Graph:
    b = Builder()
    x = b.value(HOSTILE_NAME, shape=(3,))
    c = b.node("prim::Constant", (), ("1", "str", None), scope=HOSTILE_SCOPE, value=HOSTILE_STRING)
    op = b.node(
        "aten::</title>",
        (x, b.out(c)),
        ("<y>", "Tensor", (3,)),
        scope=HOSTILE_SCOPE,
        source=loc(7, HOSTILE_CODE, file='C:\\Users\\evil"dir\\m\\N.py'),
    )
    b.node("aten::neg", (b.out(op),), ("\\", "Tensor", (3,)), scope=HOSTILE_SCOPE + ".{}")
    return b.graph((x,), scope_types={HOSTILE_SCOPE: HOSTILE_TYPE, HOSTILE_SCOPE + ".{}": "\\N"})


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


# -- escaping -------------------------------------------------------------------------------------
def test_escape_helpers() -> None:
    assert escape_text("a\\N") == "a\\\\N"
    assert escape_text("a\nb\r\tc") == "a b c"
    assert escape_text("&lt;") == "&amp;lt;"
    assert escape_text("x" * 100, 10) == "x" * 9 + "…"
    assert css_token("aten::linear") == "aten-linear"
    assert css_token("a b<c>") == "a-b-c"
    assert dom_id("layer1.0") == "layer1.0"
    assert dom_id('a" b') == "a-u22--u20-b"
    assert dom_id("🙂") == "-u1f642-"  # one code point, not two UTF-16 halves


ALLOWED_ATTRS = {"label", "id", "class", "tooltip", "peripheries", "shape"}
#: a string constant shows as a JSON literal, cut to the length of a folded item
SHOWN_STRING = truncate(json.dumps(HOSTILE_STRING, ensure_ascii=False), MAX_ITEM_CHARS)


def test_hostile_names_keep_structure() -> None:
    src = to_dot(make_hostile_graph(), title=HOSTILE_CODE)
    for bad in ("URL", "href", "target", "labelhref"):
        assert not re.search(rf"\b{bad}\s*=", src, re.IGNORECASE)
    dot = parse_dot(src)
    assert set(dot.nodes) == {"in0", "n1", "n2", "out0"}
    for name, attrs in dot.nodes.items():
        assert set(attrs) <= ALLOWED_ATTRS, (name, attrs)
        # tooltips never hold a user backslash (only the line breaks the writer adds)
        assert "\\" not in attrs["tooltip"].replace("\\n", ""), attrs["tooltip"]
    for _, _, attrs in dot.edges:
        assert set(attrs) == {"id", "tooltip"}
    assert dot.edge_pairs() == [("in0", "n1"), ("n1", "n2"), ("n2", "out0")]
    assert len(dot.clusters) == 2
    outer = next(c for c in dot.clusters.values() if c.parent is None)
    inner = next(c for c in dot.clusters.values() if c.parent is not None)
    assert inner.parent == outer.name
    assert set(outer.attrs) == {"class", "fontsize", "id", "label", "labeljust", "style", "tooltip"}
    assert re.fullmatch(r"[A-Za-z0-9_.-]+", outer.attrs["id"])
    # every text reads back literally (control characters as spaces)
    assert display(outer.attrs["label"]) == f"{HOSTILE_SCOPE} (T{{}}] [evil=2)"
    assert display(inner.attrs["label"]) == "{} (\\N)"
    assert dot.label("in0") == [HOSTILE_NAME, "Float(3)"]
    assert dot.label("n1") == ["</title>", "Float(3)", SHOWN_STRING.replace("\n", " ")]
    assert dot.label("n2") == ["neg", "Float(3)"]
    tip = display(dot.nodes["n1"]["tooltip"]).split("\n")
    assert tip[0] == "aten::</title>"
    assert tip[1] == "%<y> : Float(3)"
    bs = TOOLTIP_BACKSLASH
    assert tip[2] == "args: " + json.dumps(HOSTILE_STRING, ensure_ascii=False).replace("\\", bs)
    assert tip[-2:] == ["N.py:7", HOSTILE_CODE]
    assert display(dot.graph_attrs["label"]) == HOSTILE_CODE
    assert display(dot.nodes["out0"]["tooltip"]) == f"output %{bs} : Float(3)"
    assert display(inner.attrs["tooltip"]) == f"{HOSTILE_SCOPE}.{{}} ({bs}N)"
    for _, _, attrs in dot.edges:
        display(attrs["tooltip"])
    assert dot.classes("n1") == ["node", "op-op", "kind-aten-title"]


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot binary is not installed")
def test_hostile_names_render_to_safe_svg() -> None:
    src = to_dot(make_hostile_graph(), title=HOSTILE_CODE)
    svg = subprocess.run(
        ["dot", "-Tsvg"], input=src.encode(), capture_output=True, check=True, timeout=60
    ).stdout.decode()
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    allowed_tags = {"svg", "g", "title", "polygon", "path", "text", "ellipse", "polyline", "a"}
    allowed_attrs = {
        "id", "class", "width", "height", "viewBox", "transform", "fill", "stroke", "points", "d", "x", "y",
        "text-anchor", "font-family", "font-size", "stroke-width", "stroke-dasharray", "rx", "ry", "cx", "cy",
        "{http://www.w3.org/1999/xlink}title", "{http://www.w3.org/XML/1998/namespace}space",
    }  # fmt: skip
    texts: list[str] = []
    for el in root.iter():
        tag = el.tag.removeprefix(ns)
        assert tag in allowed_tags, tag
        assert set(el.attrib) <= allowed_attrs, (tag, el.attrib)
        assert "href" not in "".join(el.attrib)
        if tag == "text" and el.text:
            texts.append(el.text)
    assert "script" not in {el.tag.removeprefix(ns) for el in root.iter()}
    # labels show the user's text literally: no \N / \G expansion, entities kept as typed
    assert HOSTILE_NAME in texts
    assert HOSTILE_CODE in texts  # the title
    assert "</title>" in texts
    assert SHOWN_STRING in texts
    tooltips = [v for el in root.iter() for k, v in el.attrib.items() if k.endswith("}title")]
    assert any(t.endswith("\n" + HOSTILE_CODE) for t in tooltips)
    # tooltips show backslashes as a look-alike: Graphviz expands escapes in them more than once
    shown_name = HOSTILE_NAME.replace("\\", TOOLTIP_BACKSLASH)
    assert f"input %{shown_name} : Float(3)" in tooltips
    assert f"%{shown_name} : Float(3)" in tooltips  # the edge
    assert any(t.startswith("aten::neg\n") and t.endswith(f"{{}} ({TOOLTIP_BACKSLASH}N)") for t in tooltips)
    assert any(json.dumps(HOSTILE_STRING, ensure_ascii=False).replace("\\", TOOLTIP_BACKSLASH) in t for t in tooltips)
    classes = {el.attrib.get("class", "") for el in root.iter()}
    assert "node node op-op kind-aten-title" in classes
    assert "scope" in " ".join(classes).split()


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


def test_an_unpaired_surrogate_is_written_as_the_replacement_character() -> None:
    # a module name can hold one (Python allows it); no encoding can write it, and Graphviz would choke on it
    from jupyter_tracejit.render.dot import escape_text

    assert escape_text("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert escape_text("a🙂b") == "a🙂b"


#: a node saved before nodes carried titles: its kind -> its first label line (core/graph_parts.py ``legacy_title``,
#: then the renderer); the same table is in labextension/test/model.test.ts: both sides read such a node alike
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
