"""Graphs built by hand for the DOT tests: a small encoder/decoder with scopes, constants and locations
(``make_graph``), and one whose every name, type, string and location is hostile to DOT, SVG and HTML."""

from __future__ import annotations

from typing import Any

from jupyter_tracejit.core.graph import Frame, Graph, Node, SourceLoc, Value
from jupyter_tracejit.core.torchscript.roles import role_of


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
