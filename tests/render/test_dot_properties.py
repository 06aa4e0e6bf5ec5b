"""Property-based: whatever a model calls its modules, values and constants, the DOT is valid, every text reads
back literally (control characters as spaces, long text cut with an ellipsis), nothing becomes markup or a link,
and a run's JSON round-trips byte for byte."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import warnings
import xml.etree.ElementTree as ET

import pytest
import torch
import torch.nn as nn
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import jupyter_tracejit as tj
from jupyter_tracejit.core.graph import Graph
from jupyter_tracejit.render.dot import MAX_LABEL_CHARS, TOOLTIP_BACKSLASH, to_dot, truncate

from .dot_graphs import Builder, loc
from .dot_reader import display, parse_dot

#: what hostile text is made of: markup, quotes, DOT and Graphviz syntax, escapes, control and non-ASCII characters
HOSTILE_ALPHABET = st.sampled_from(
    [
        *"<>&\"'\\{}[];=,.:/()#%@ \t\n\r\x00\x07\x1b\u2028\u2029\u00e9\u4e2d\U0001f642",
        *["\\N", "\\G", "\\l", "&amp;", "<script>", "</title>", "javascript:", "URL=", "href", "label=<"],
    ]
)
hostile_text = st.lists(HOSTILE_ALPHABET | st.characters(), max_size=30).map("".join)
#: a module name torch accepts (no "." and not empty)
module_name = hostile_text.filter(lambda s: s and "." not in s)

ALLOWED_NODE_ATTRS = {"id", "label", "tooltip", "class", "peripheries", "shape"}
LINK_ATTRS = {"url", "href", "target", "labelhref", "labelurl", "tailurl", "headurl", "edgeurl", "tailhref"}


def plain(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """What a label line should read back as: unpaired surrogates become U+FFFD, control characters spaces,
    then the cut."""
    text = re.sub(r"[\ud800-\udfff]", "\ufffd", text)
    return truncate(re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+", " ", text), limit)


def hostile_graph(scope: str, scope_type: str, name: str, code: str, string: str, file: str) -> Graph:
    b = Builder()
    x = b.value(name, shape=(3,))
    c = b.node("prim::Constant", (), ("s", "str", None), scope=scope, value=string)
    op = b.node("aten::add", (x, b.out(c)), (name, "Tensor", (3,)), scope=scope, source=loc(7, code, file=file))
    b.node("aten::neg", (b.out(op),), ("y", "Tensor", (3,)), scope=scope + ".inner")
    return b.graph((x,), scope_types={scope: scope_type, scope + ".inner": scope_type})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scope=module_name,
    scope_type=hostile_text,
    name=hostile_text,
    code=hostile_text,
    string=hostile_text,
    file=hostile_text,
    title=hostile_text,
    fold=st.booleans(),
    collapse=st.booleans(),
    classes=st.lists(hostile_text, max_size=3),
)
# a lone surrogate in a folded constant crashed the label's truncation (found by this test in CI)
@example(
    scope="a",
    scope_type="",
    name="",
    code="",
    string="\ud800" * 40,
    file="",
    title="",
    fold=True,
    collapse=False,
    classes=[],
)
def test_any_text_gives_valid_dot_that_reads_back_literally(
    scope, scope_type, name, code, string, file, title, fold, collapse, classes
):
    graph = hostile_graph(scope, scope_type, name, code, string, file)
    src = to_dot(graph, fold=fold, collapsed=[scope] if collapse else [], title=title, highlights={1: classes})
    dot = parse_dot(src)  # valid DOT: every string closed, every statement where it belongs
    every_key = {
        k.lower()
        for attrs in [
            dot.graph_attrs,
            *dot.nodes.values(),
            *(c.attrs for c in dot.clusters.values()),
            *(e[2] for e in dot.edges),
        ]
        for k in attrs
    }
    assert not every_key & LINK_ATTRS, every_key
    for node, attrs in dot.nodes.items():
        assert set(attrs) <= ALLOWED_NODE_ATTRS, (node, attrs)
        for key in ("label", "tooltip"):
            if key in attrs:
                display(attrs[key])  # fails on any \N, \G, \l ... left unescaped
        assert re.fullmatch(r"[A-Za-z0-9_ -]*", attrs.get("class", "")), attrs.get("class")
        assert re.fullmatch(r"[A-Za-z0-9_.-]+", attrs["id"]), attrs["id"]
    assert display(dot.graph_attrs["label"]) == plain(title, 120)
    assert dot.label("in0")[0] == plain(name)
    if not collapse:
        cluster = dot.cluster_of_id("cluster-" + re.sub(r"[^A-Za-z0-9_.-]", lambda m: f"-u{ord(m.group()):x}-", scope))
        shown = f"{scope} ({scope_type})" if scope_type else scope
        assert display(cluster.attrs["label"]) == plain(shown)
        tip = display(dot.nodes["n1"]["tooltip"]).split("\n")
        assert tip[-1] == plain(code, 160).replace("\\", TOOLTIP_BACKSLASH) or not code.strip()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot binary is not installed")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scope=module_name, name=hostile_text, code=hostile_text, string=hostile_text)
def test_graphviz_renders_any_text_to_svg_without_markup_of_ours(scope, name, code, string):
    src = to_dot(hostile_graph(scope, "T", name, code, string, "m.py"))
    svg = subprocess.run(["dot", "-Tsvg"], input=src.encode(), capture_output=True, timeout=60).stdout.decode()
    root = ET.fromstring(svg)  # well-formed XML
    tags = {el.tag.rsplit("}", 1)[-1] for el in root.iter()}
    assert tags <= {"svg", "g", "title", "polygon", "path", "text", "ellipse", "polyline", "a"}
    assert not any("href" in k for el in root.iter() for k in el.attrib if not k.endswith("}title"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: torch's C++ cannot hold it as a module name (tracing fails there)
        return False
    return True


@given(name=module_name.filter(lambda s: "\x00" not in s and _utf8(s)))
def test_a_real_run_with_any_module_name_round_trips_its_json_byte_for_byte(name):
    class Wrapper(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.add_module(name, nn.Linear(2, 2))

        def forward(self, x):
            return getattr(self, name)(x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tj.trace(Wrapper(), (torch.rand(2),))
    text = json.dumps(run.to_json(), allow_nan=False)
    assert json.dumps(tj.TraceRun.from_json(json.loads(text)).to_json(), allow_nan=False) == text
    assert run.ok
    parse_dot(run.to_dot())
