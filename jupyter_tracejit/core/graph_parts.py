"""The parts a :class:`~.graph.Graph` is made of, as plain, torch-free data: its nodes and their roles, its values,
blocks, module scopes and source locations. :mod:`.graph` puts them together (and re-exports them); the JSON codec
(:mod:`.graph_json`) builds them without needing the graph itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: What a node does, as data (torch.fx's ``Node.op`` plays this part): readers decide by role, never by a back
#: end's spelling of a kind (``prim::Constant``). Each back end says which of its kinds has which role.
NODE_ROLES: dict[str, str] = {
    "op": "a computation (an operator call)",
    "constant": "a literal value (its attribute 'value')",
    "getattr": "reads a parameter, buffer or submodule of the module (its attribute 'name'); chains give paths",
    "list": "builds a list of its inputs",
    "tuple": "builds a tuple of its inputs",
    "dict": "builds a dict of its inputs (keys and values alternating)",
    "unpack": "takes a list or tuple apart: its outputs are the items",
    "index": "picks one item of a tuple (its attribute 'index')",
}
#: roles that only carry structure into their consumers; with constants and attribute reads, views fold them
PLUMBING_ROLES = frozenset({"list", "tuple", "dict", "unpack", "index"})


def legacy_title(kind: str) -> str:
    """The title of a node saved without one: its kind without ``.default``, the overload nearly every export op
    has (``aten::linear.default`` -> ``aten::linear``; ``aten::add.Tensor`` keeps ``.Tensor``)."""
    head, sep, name = kind.rpartition("::")
    bare = name.removesuffix(".default")
    return f"{head}{sep}{bare}" if bare else kind


def fold_class(role: str) -> str:
    """The role's family as views draw it: ``constant``, ``getattr``, ``plumbing`` or ``op``."""
    return "plumbing" if role in PLUMBING_ROLES else role


@dataclass(frozen=True)
class Frame:
    """One Python stack frame recorded by the tracer."""

    file: str
    line: int
    func: str
    code: str = ""
    #: True for frames inside torch itself (``site-packages/torch/...``)
    internal: bool = False

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.func}"


@dataclass(frozen=True)
class SourceLoc:
    """Where a node was recorded: the user's frame plus the whole stack (innermost first)."""

    stack: tuple[Frame, ...]
    #: index into ``stack`` of the innermost frame outside torch (the user's line)
    user_index: int

    @property
    def user_frame(self) -> Frame:
        return self.stack[self.user_index]

    @property
    def file(self) -> str:
        return self.user_frame.file

    @property
    def line(self) -> int:
        return self.user_frame.line

    @property
    def code(self) -> str:
        return self.user_frame.code

    @property
    def func(self) -> str:
        return self.user_frame.func

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


# Value, Block and Node are read-only by convention; they are not frozen because a frozen dataclass
# costs 5x more to build, and a 12k-node graph builds 24k of them per extraction.
@dataclass(slots=True)
class Value:
    """An SSA value: a graph or block input, or the output of one node."""

    id: int
    #: TorchScript debug name (``x``, ``input.3``, ``12``); not stable across traces
    name: str
    #: TorchScript type without shape (``Tensor``, ``int``, ``Tensor[]``, ``__torch__.Net``)
    type: str
    #: sizes when the capture recorded them: a number, a symbol an export keeps symbolic (``s27``, ``2*s27``), or
    #: ``None`` for an unknown dimension
    shape: tuple[int | str | None, ...] | None = None
    dtype: str | None = None
    device: str | None = None
    requires_grad: bool | None = None
    #: id of the producing node; ``None`` for graph and block inputs
    producer: int | None = None

    def shape_str(self) -> str:
        """``Float(3, 4)``-style summary used by labels, or the type for non-tensors."""
        if self.shape is None:
            return self.dtype or self.type
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.dtype or self.type}({dims})"


@dataclass(slots=True)
class Block:
    """A sub-block of a ``prim::If`` / ``prim::Loop`` node (present when traced code calls script)."""

    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    nodes: tuple[int, ...]


@dataclass(slots=True)
class Node:
    id: int
    kind: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    #: module path of the innermost module that recorded the node (``layer1.0.conv1``; ``""`` is the root)
    scope: str = ""
    source: SourceLoc | None = None
    #: JSON-ready attribute values (``value`` of a constant, ``name`` of a GetAttr, ...)
    attributes: dict[str, Any] = field(default_factory=dict)
    blocks: tuple[Block, ...] = ()
    #: id of the node whose block contains this one, ``None`` at top level
    parent: int | None = None
    #: torch's ``Node.isNondeterministic()`` (dropout in train mode, random ops)
    nondeterministic: bool = False
    #: what the node does (:data:`NODE_ROLES`), set by the back end that built the graph
    role: str = "op"
    #: what the views call the node, set by the back end beside its role (an export titles ``aten::linear.default``
    #: ``aten::linear``); ``""``: its kind. A graph saved before nodes had titles reads with :func:`legacy_title`
    title: str = ""

    @property
    def foldable(self) -> bool:
        """Constants, attribute reads and container plumbing: views fold them into their consumers."""
        return self.role != "op"


@dataclass
class ModuleScope:
    """One ``nn.Module`` in the hierarchy of the traced module."""

    path: str
    #: class name of the module (``Linear``), ``""`` when unknown
    type: str
    parent: str | None
    children: list[str] = field(default_factory=list)
    #: nodes whose innermost scope is this module (not its children)
    node_ids: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1] if self.path else ""

    @property
    def depth(self) -> int:
        return 0 if not self.path else self.path.count(".") + 1
