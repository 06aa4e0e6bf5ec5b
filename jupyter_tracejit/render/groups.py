"""Collapsible groups over a graph: one group per module scope, plus "bucket" groups when a module has many
children (a 2,000-layer ``nn.Sequential`` would otherwise draw 2,000 boxes).

The same rules as ``labextension/src/model/groups.ts``, which the interactive view uses: group ids, labels and
indices (creation order) must match so that the DOT of a view is the same text on both sides
(``tests/render/test_dot_parity.py``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..core.graph import Graph

#: a module with more child modules than this gets bucket groups of this many children
BUCKET_SIZE = 32


@dataclass
class Group:
    #: module path, or ``<parent>#<first>..<last>`` for a bucket; ``""`` is the root
    id: str
    label: str
    #: module class name; ``""`` for buckets
    type: str
    parent: str | None
    children: list[str] = field(default_factory=list)
    #: nodes whose innermost module is this group's module (buckets own none)
    node_ids: list[int] = field(default_factory=list)
    #: op nodes (not constants, GetAttr or plumbing) inside, recursively
    op_count: int = 0
    is_bucket: bool = False


class GroupTree:
    def __init__(self, graph: Graph, bucket_size: int = BUCKET_SIZE) -> None:
        self.graph = graph
        self.groups: dict[str, Group] = {}
        self._add_scope("", None, bucket_size)
        self._index = {gid: i for i, gid in enumerate(self.groups)}
        self._order = list(self.groups)
        self.owner_of = [0] * len(graph.nodes)
        for n in graph.nodes:
            owner = n.scope if n.scope in self.groups else ""
            self.groups[owner].node_ids.append(n.id)
            self.owner_of[n.id] = self._index[owner]
            if not n.foldable:
                g: str | None = owner
                while g is not None:
                    self.groups[g].op_count += 1
                    g = self.groups[g].parent

    def _make(self, gid: str, label: str, type_: str, parent: str | None, is_bucket: bool) -> None:
        self.groups[gid] = Group(gid, label, type_, parent, is_bucket=is_bucket)
        if parent is not None:
            self.groups[parent].children.append(gid)

    def _add_scope(self, path: str, parent: str | None, bucket_size: int) -> None:
        scope = self.graph.scopes[path]
        self._make(path, self.graph.method if path == "" else scope.name, scope.type, parent, False)
        self._attach(path, path, scope.children, bucket_size)

    def _attach(self, parent: str, owner: str, children: list[str], bucket_size: int) -> None:
        if len(children) <= bucket_size:
            for c in children:
                self._add_scope(c, parent, bucket_size)
            return
        chunk = bucket_size
        while math.ceil(len(children) / chunk) > bucket_size:
            chunk *= bucket_size
        prefix = "" if owner == "" else self.graph.scopes[owner].name + " "
        for i in range(0, len(children), chunk):
            part = children[i : i + chunk]
            first, last = self.graph.scopes[part[0]].name, self.graph.scopes[part[-1]].name
            gid = f"{parent}#{first}..{last}"
            self._make(gid, f"{prefix}{first} … {last}", "", parent, True)
            self._attach(gid, owner, part, bucket_size)

    def index(self, gid: str) -> int:
        """Stable small integer of a group (its creation order): used in DOT names."""
        return self._index.get(gid, -1)

    def owner(self, node_id: int) -> Group:
        return self.groups[self._order[self.owner_of[node_id]]]

    def ancestors(self, node_id: int) -> list[str]:
        """The chain of groups from the root to the node's owner, root first."""
        chain: list[str] = []
        g: str | None = self.owner(node_id).id
        while g is not None:
            chain.append(g)
            g = self.groups[g].parent
        return chain[::-1]

    def collapsed_ancestor(self, node_id: int, expanded: set[str]) -> str | None:
        """The outermost collapsed group containing the node, or None when it is visible."""
        for g in self.ancestors(node_id):
            if g not in expanded:
                return g
        return None

    def expanded_except(self, collapsed: Iterable[str]) -> set[str]:
        """Every group open but the ones named (unknown names and the root are ignored)."""
        closed = set(collapsed) - {""}
        return {g for g in self.groups if g not in closed}


__all__ = ["BUCKET_SIZE", "Group", "GroupTree"]
