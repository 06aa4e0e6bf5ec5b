"""A small DOT reader for the DOT tests (the ``dot`` binary is optional): tokens, nodes, edges and clusters with
their attributes, and a label or tooltip as Graphviz displays it."""

from __future__ import annotations

import html
import itertools
import re
from dataclasses import dataclass, field

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
