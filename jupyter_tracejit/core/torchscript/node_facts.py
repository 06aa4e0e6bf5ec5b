"""What :func:`.extract.extract_graph` reads of a node beyond its values, worked out once per kind where it can be:
whether a kind can have blocks (:data:`BLOCK_KINDS`), whether its nodes may be random (:func:`may_be_nondeterministic`),
and the attributes of a node that has any (:func:`node_attributes`).
"""

from __future__ import annotations

from typing import Any

import torch

from ..values import demangle, encode_ivalue

#: the kinds whose nodes may hold blocks
BLOCK_KINDS = frozenset({"prim::If", "prim::Loop", "prim::With", "prim::Closure"})

#: kind -> whether torch may call a node of that kind nondeterministic
_MAY_BE_NONDETERMINISTIC: dict[str, bool] = {}


def may_be_nondeterministic(kind: str) -> bool:
    """Whether ``Node.isNondeterministic()`` can be True for a node of ``kind``, from torch's op registry.

    torch answers True only for an ``aten::`` node whose overload carries the ``nondeterministic_seeded`` tag
    (``SchemaInfo::is_nondeterministic``; ``aten::dropout`` with a constant ``train=False`` excepted). A kind none of
    whose overloads carry it is never random, so its nodes need no call (0.6 µs each); for the ~50 kinds that may be
    random (rand, dropout, lstm, SDPA...) torch is asked node by node. A kind the registry cannot list is asked too.
    """
    found = _MAY_BE_NONDETERMINISTIC.get(kind)
    if found is None:
        found = _MAY_BE_NONDETERMINISTIC[kind] = _seeded_overloads(kind)
    return found


def _seeded_overloads(kind: str) -> bool:
    namespace, _, name = kind.partition("::")
    if namespace != "aten":
        return False  # Node::isNondeterministic answers False outside aten::
    try:
        packet = getattr(torch.ops.aten, name)
        return any(torch.Tag.nondeterministic_seeded in getattr(packet, o).tags for o in packet.overloads())
    except Exception:  # not in the registry as an op packet: ask torch for each node
        return True


def node_attributes(n: torch._C.Node) -> dict[str, Any]:
    """A node's attributes as JSON-ready values (a graph or type attribute by its printout)."""
    attrs: dict[str, Any] = {}
    for name in n.attributeNames():
        kind = n.kindOf(name)
        try:
            raw = getattr(n, kind)(name)
        except (RuntimeError, AttributeError, TypeError):
            attrs[name] = {"repr": f"<{kind}>"}
            continue
        if kind == "g":
            attrs[name] = {"repr": "<graph>"}
        elif kind == "ty":
            attrs[name] = {"repr": demangle(str(raw))}
        else:
            attrs[name] = encode_ivalue(raw)
    return attrs
