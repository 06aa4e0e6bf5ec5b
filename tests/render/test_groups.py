"""The group tree views fold a graph with (render/groups.py; labextension/src/model/groups.ts follows the same rules):
repeated blocks folded into one group, long chains split into sections, on real traces."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.render import groups as groups_module
from jupyter_tracejit.render.dot import to_dot, visible_dot
from jupyter_tracejit.render.groups import REPEAT_MIN, SECTION_SIZE, GroupTree, structure_ids


# Not a shared model: the folded group's label spells "Block", and Odd subclasses it to break a run of repeats.
class Block(nn.Module):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(torch.relu(self.fc(x)) + x)


class Odd(Block):
    def forward(self, x):
        return torch.tanh(self.fc(x))


def trace(fn, *inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = tj.trace(fn, inputs, check_trace=False)
    assert run.graph is not None, run.error
    return run.graph


def test_numbered_blocks_of_one_structure_fold_into_one_repeat_group() -> None:
    graph = trace(nn.Sequential(Block(), Block(), Block(), Block(), Odd(), Block(), Block()).eval(), torch.rand(2, 8))
    tree = GroupTree(graph)
    ids = structure_ids(graph)
    assert ids["0"] == ids["3"] != ids["4"]
    # 0..3 fold; 4 (another forward) breaks the run; 5..6 are too few to fold
    assert REPEAT_MIN == 3
    assert tree.groups[""].children == ["~0..3", "4", "5", "6"]
    repeat = tree.groups["~0..3"]
    assert (repeat.label, repeat.repeat, repeat.children) == ("Block ×4", 4, ["0", "1", "2", "3"])
    assert repeat.op_count == sum(tree.groups[str(i)].op_count for i in range(4))
    # named children (fc, norm) never fold, whatever their class
    assert all(g.repeat == 0 for gid, g in tree.groups.items() if gid != "~0..3")
    # collapsed, it is one box labelled with the class and the count; every node of the blocks is inside it
    view = visible_dot(graph, tree, expanded=tree.expanded_except(["~0..3"]))
    box = f"g{tree.index('~0..3')}"
    assert f'label="Block ×4\\n{repeat.op_count} ops"' in view.dot
    assert 'class="scope-collapsed scope-repeat"' in view.dot
    in_blocks = [n for n in graph.nodes if not n.foldable and n.scope.split(".")[0] in {"0", "1", "2", "3"}]
    assert len(in_blocks) >= 16
    assert all(view.representative[n.id] == box for n in in_blocks)
    # opened (to_dot opens everything), it is a cluster of its own around the four blocks
    assert 'class="scope scope-repeat"' in to_dot(graph)


def test_blocks_differing_inside_do_not_fold() -> None:
    wide = nn.Sequential(Block(8), Block(8), nn.Sequential(nn.Linear(8, 8)), Block(8)).eval()
    tree = GroupTree(trace(wide, torch.rand(2, 8)))
    assert all(g.repeat == 0 for g in tree.groups.values())


def long_chain(x):
    for _ in range(SECTION_SIZE + 10):
        x = x * 1.5
    return x


def test_a_long_chain_is_split_into_sections_in_graph_order() -> None:
    graph = trace(long_chain, torch.rand(3))
    tree = GroupTree(graph)
    sections = [tree.groups[c] for c in tree.groups[""].children]
    assert [s.label for s in sections] == ["part 1 of 2", "part 2 of 2"]
    assert [s.op_count for s in sections] == [SECTION_SIZE, 10]
    assert all(s.section_of == "" for s in sections)
    # the sections' own nodes partition the scope's nodes, in order
    owned = [i for s in sections for i in s.node_ids]
    assert owned == sorted(owned) == [n.id for n in graph.nodes]
    assert tree.groups[""].node_ids == []
    view = visible_dot(graph, tree, expanded={""})
    assert view.boxes == [s.id for s in sections]
    assert f"part 1 of 2: the nodes of {graph.method} in graph order" in view.dot


def test_many_sections_are_bucketed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(groups_module, "SECTION_SIZE", 4)
    graph = trace(long_chain, torch.rand(3))  # SECTION_SIZE + 10 (266) ops: 67 sections of 4
    tree = GroupTree(graph)
    top = tree.groups[""].children
    assert top == ["@1..32", "@33..64", "@65..67"]
    assert tree.groups["@1..32"].label == "parts 1 … 32 of 67"
    assert tree.groups["@1..32"].children[:2] == ["@1", "@2"]
    assert sum(tree.groups[t].op_count for t in top) == tree.groups[""].op_count
