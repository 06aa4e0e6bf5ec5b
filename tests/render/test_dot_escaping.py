"""DOT output of :func:`jupyter_tracejit.render.dot.to_dot` with hostile input: the escaping helpers, a graph
whose every name breaks DOT, SVG or HTML keeps its structure, and renders (with Graphviz) to safe SVG."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from jupyter_tracejit.render.dot import (
    MAX_ITEM_CHARS,
    TOOLTIP_BACKSLASH,
    css_token,
    dom_id,
    escape_text,
    to_dot,
    truncate,
)

from .dot_graphs import HOSTILE_CODE, HOSTILE_NAME, HOSTILE_SCOPE, HOSTILE_STRING, make_hostile_graph
from .dot_reader import display, parse_dot


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


def test_an_unpaired_surrogate_is_written_as_the_replacement_character() -> None:
    # a module name can hold one (Python allows it); no encoding can write it, and Graphviz would choke on it
    from jupyter_tracejit.render.dot import escape_text

    assert escape_text("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert escape_text("a🙂b") == "a🙂b"
