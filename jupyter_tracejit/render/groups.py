"""Collapsible groups over a graph: one group per module scope, plus two kinds of synthetic groups:

- a "repeat" group around consecutive sibling modules of the same class and the same structure (the 12 layers
  of BERT, N decoder layers): drawn collapsed as one box labelled with the class and the count, it expands on
  click;
- "bucket" groups when a module has many children (a 2,000-layer ``nn.Sequential`` would otherwise draw 2,000
  boxes);
- "section" groups of a module's own ops, ``SECTION_SIZE`` at a time in graph order, when it has more (a
  50,000-op loop in one function has no module structure to collapse).

The same rules as ``labextension/src/model/groups.ts``, which the interactive view uses: group ids, labels and
indices (creation order) must match so that the DOT of a view is the same text on both sides
(``tests/frontend_fixtures.py`` writes the Python side's DOT into ``dot.cases.json``, which
``labextension/test/model.test.ts`` compares with the TypeScript side's).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..core.graph import Graph

#: a module with more child modules than this gets bucket groups of this many children
BUCKET_SIZE = 32
#: this many consecutive siblings of one class and one structure, or more, are folded into a repeat group
REPEAT_MIN = 3
#: a module whose own op nodes are more than this (a function or forward with a long Python loop: no module
#: structure to fold) has them split, in graph order, into "section" groups of this many ops: Graphviz could
#: neither lay out nor draw 50,000 ops in one picture
SECTION_SIZE = 256
#: a child's name as ModuleList / Sequential number them (no leading zeros; short enough to add 1 exactly)
_INDEX = re.compile(r"0|[1-9][0-9]{0,8}")

#: a child list's items: a module path, or a run of same-structured sibling paths to fold
_Item = str | list[str]


@dataclass
class Group:
    #: module path, ``<parent>#<first>..<last>`` for a bucket, ``<parent>~<first>..<last>`` for a repeat group;
    #: ``""`` is the root
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
    #: True for synthetic groups (buckets, repeats, sections): no module of their own
    is_bucket: bool = False
    #: how many same-structured modules a repeat group folds; 0 for every other group
    repeat: int = 0
    #: a section (or a bucket of sections) of a module's own nodes: the module's path; None for other groups
    section_of: str | None = None


class GroupTree:
    def __init__(self, graph: Graph, bucket_size: int = BUCKET_SIZE) -> None:
        self.graph = graph
        self.groups: dict[str, Group] = {}
        self._bucket_size = bucket_size
        self._structure = structure_ids(graph)
        #: node id -> the section group that owns it, for nodes of modules split into sections
        self._section_owner: dict[int, str] = {}
        self._add_scope("", None)
        self._index = {gid: i for i, gid in enumerate(self.groups)}
        self._order = list(self.groups)
        self.owner_of = [0] * len(graph.nodes)
        for n in graph.nodes:
            owner = self._section_owner.get(n.id) or (n.scope if n.scope in self.groups else "")
            self.groups[owner].node_ids.append(n.id)
            self.owner_of[n.id] = self._index[owner]
            if not n.foldable:
                g: str | None = owner
                while g is not None:
                    self.groups[g].op_count += 1
                    g = self.groups[g].parent

    def _make(
        self,
        gid: str,
        label: str,
        type_: str,
        parent: str | None,
        is_bucket: bool,
        repeat: int = 0,
        section_of: str | None = None,
    ) -> None:
        self.groups[gid] = Group(gid, label, type_, parent, is_bucket=is_bucket, repeat=repeat, section_of=section_of)
        if parent is not None:
            self.groups[parent].children.append(gid)

    def _add_scope(self, path: str, parent: str | None) -> None:
        scope = self.graph.scopes[path]
        self._make(path, self.graph.method if path == "" else scope.name, scope.type, parent, False)
        self._attach(path, path, self._fold_repeats(scope.children))
        self._attach_sections(path, scope.node_ids)

    def _attach_sections(self, path: str, node_ids: list[int]) -> None:
        """Split a module's own nodes into sections of SECTION_SIZE ops in graph order (the nodes that are no ops go
        with the ops after them; trailing ones with the last section), bucketed when many; none when few."""
        nodes = self.graph.nodes
        if sum(1 for i in node_ids if not nodes[i].foldable) <= SECTION_SIZE:
            return
        sections: list[list[int]] = [[]]
        ops = 0
        for i in node_ids:
            is_op = not nodes[i].foldable
            if is_op and ops == SECTION_SIZE:
                sections.append([])
                ops = 0
            sections[-1].append(i)
            ops += is_op
        n = len(sections)
        size = self._bucket_size

        def attach(parent: str, first: int, last: int) -> None:
            count = last - first + 1
            if count <= size:
                for k in range(first, last + 1):
                    gid = f"{path}@{k + 1}"
                    self._make(gid, f"part {k + 1} of {n}", "", parent, True, 0, path)
                    for node in sections[k]:
                        self._section_owner[node] = gid
                return
            chunk = size
            while math.ceil(count / chunk) > size:
                chunk *= size
            for k in range(first, last + 1, chunk):
                end = min(k + chunk - 1, last)
                gid = f"{path}@{k + 1}..{end + 1}"
                self._make(gid, f"parts {k + 1} … {end + 1} of {n}", "", parent, True, 0, path)
                attach(gid, k, end)

        attach(path, 0, n - 1)

    def _fold_repeats(self, children: list[str]) -> list[_Item]:
        """Runs of at least REPEAT_MIN children numbered one after the other (``layer.0``, ``layer.1``, ... as
        ModuleList and Sequential name them) of one known class and one structure become one item."""
        scopes = self.graph.scopes

        def index(path: str) -> int:
            return int(scopes[path].name) if _INDEX.fullmatch(scopes[path].name) else -1

        items: list[_Item] = []
        i = 0
        while i < len(children):
            first = children[i]
            j = i + 1
            if index(first) >= 0 and scopes[first].type != "":
                while (
                    j < len(children)
                    and index(children[j]) == index(children[j - 1]) + 1
                    and self._structure[children[j]] == self._structure[first]
                ):
                    j += 1
            if j - i >= REPEAT_MIN:
                items.append(children[i:j])
            else:
                items.extend(children[i:j])
            i = j
        return items

    def _attach(self, parent: str, owner: str, items: list[_Item]) -> None:
        """Attach ``items`` (children of the module ``owner``) under the group ``parent``, bucketed when many."""
        size = self._bucket_size
        scopes = self.graph.scopes
        if len(items) <= size:
            for item in items:
                if isinstance(item, str):
                    self._add_scope(item, parent)
                    continue
                gid = f"{parent}~{scopes[item[0]].name}..{scopes[item[-1]].name}"
                self._make(gid, f"{scopes[item[0]].type} ×{len(item)}", "", parent, True, len(item))
                self._attach(gid, owner, list(item))
            return
        chunk = size
        while math.ceil(len(items) / chunk) > size:
            chunk *= size
        prefix = "" if owner == "" else scopes[owner].name + " "
        for i in range(0, len(items), chunk):
            part = items[i : i + chunk]
            head, tail = part[0], part[-1]
            first = scopes[head if isinstance(head, str) else head[0]].name
            last = scopes[tail if isinstance(tail, str) else tail[-1]].name
            gid = f"{parent}#{first}..{last}"
            self._make(gid, f"{prefix}{first} … {last}", "", parent, True)
            self._attach(gid, owner, part)

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


def structure_ids(graph: Graph) -> dict[str, int]:
    """An id per module path; two modules get the same id when they have the same class, the same op kinds in the
    same order, and the same children (by name) with the same ids, recursively (mirrors model/groups.ts)."""
    id_of: dict[str, int] = {}
    known: dict[str, int] = {}

    def visit(path: str) -> int:
        scope = graph.scopes[path]
        ops = ",".join(graph.nodes[i].kind for i in scope.node_ids if not graph.nodes[i].foldable)
        parts = [scope.type, ops, *(f"{graph.scopes[c].name}={visit(c)}" for c in scope.children)]
        sid = known.setdefault("|".join(parts), len(known))
        id_of[path] = sid
        return sid

    visit("")
    return id_of


__all__ = ["BUCKET_SIZE", "REPEAT_MIN", "Group", "GroupTree", "structure_ids"]
