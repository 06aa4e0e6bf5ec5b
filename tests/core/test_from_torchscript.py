"""core/from_torchscript.py: torch's graph turned into ours: source stacks, scopes, values of every kind, blocks,
and the canonical text torch's check compares."""

from __future__ import annotations

import warnings

import torch
import torch.nn as nn

from jupyter_tracejit.core.from_torchscript import (
    canonical_inlined,
    canonical_text,
    encode_ivalue,
    extract_graph,
    parse_hierarchy,
    parse_stack,
    scope_path,
    tensor_summary,
)


def traced_graph(fn, *inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.trace(fn, inputs, check_trace=False)


def test_stacks_stop_at_torch_jit_and_point_at_the_first_frame_outside_torch():
    text = (
        "/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py(125): forward\n"
        "/home/u/model.py(12): forward\n"
        "/venv/lib/python3.11/site-packages/torch/jit/_trace.py(1100): trace_module\n"
        "/home/u/notebook.py(3): <module>\n"
    )
    loc = parse_stack(text)
    assert [f.line for f in loc.stack] == [125, 12]  # the caller of torch.jit.trace is not traced code
    assert loc.user_index == 1 and loc.stack[0].internal and not loc.user_frame.internal
    assert parse_stack("") is None


def test_scope_names_and_module_hierarchies():
    assert scope_path("__module.layer1/__module.layer1.0/__module.layer1.0.conv1") == "layer1.0.conv1"
    assert scope_path("__module") == "" and scope_path("") == ""
    assert parse_hierarchy("layer1(Sequential).0(___torch_mangle_3.Block)") == {
        "layer1": "Sequential",
        "layer1.0": "Block",
    }


def test_values_of_every_kind_become_json_ready():
    assert encode_ivalue(None) is None and encode_ivalue(True) is True and encode_ivalue("s") == "s"
    assert encode_ivalue(float("inf")) == {"float": "inf"} and encode_ivalue(1 + 2j) == {"repr": "(1+2j)"}
    assert encode_ivalue(torch.device("cpu")) == {"device": "cpu"}
    assert encode_ivalue(torch.float16) == {"repr": "torch.float16"}
    assert encode_ivalue([1, (2.5, None)]) == [1, [2.5, None]]
    summary = tensor_summary(torch.arange(10.0))
    assert summary["dtype"] == "float32" and summary["shape"] == [10] and summary["preview"] == list(range(8))
    assert len(summary["digest"]) == 16 and tensor_summary(torch.arange(10.0))["digest"] == summary["digest"]
    assert tensor_summary(torch.empty(2, device="meta"))["digest"] == ""


@torch.jit.script
def scripted_branch(x: torch.Tensor) -> torch.Tensor:
    if bool(x.sum() > 0):
        return x * 2
    return x - 1


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])

    def forward(self, x, scale: torch.Tensor):
        for block in self.blocks:
            x = block(x)
        x = scripted_branch(x) + torch.tensor([1.0, 2.0, 3.0])
        return x * scale, x.sum()


def test_a_real_graph_ids_blocks_tensor_constants_and_sources():
    traced = traced_graph(lambda x: scripted_branch(x) + torch.tensor([1.0, 2.0]), torch.rand(2))
    extraction = extract_graph(canonical_inlined(traced.graph), method="forward", root_type="")
    graph = extraction.graph
    graph.lint()
    assert [n.id for n in graph.nodes] == list(range(len(graph)))
    branch = next(n for n in graph.nodes if n.kind == "prim::If")
    assert len(branch.blocks) == 2 and all(graph.nodes[i].parent == branch.id for b in branch.blocks for i in b.nodes)
    (constant_id,) = extraction.tensor_constants
    assert torch.equal(extraction.tensor_constants[constant_id], torch.tensor([1.0, 2.0]))
    assert graph.nodes[constant_id].attributes["value"]["tensor"]["shape"] == [2]
    add = next(n for n in graph.nodes if n.kind == "aten::add" and n.parent is None)
    assert add.source is not None and add.source.file == __file__


def test_canonical_text_is_torchs_comparison_string_shapes_and_mangling_erased():
    def f(x):
        y = torch.relu(x)
        return y * 2

    a, b = traced_graph(f, torch.rand(2)), traced_graph(f, torch.rand(3, 5))
    text = canonical_text(canonical_inlined(a.graph))
    assert text == canonical_text(canonical_inlined(b.graph))  # shapes are erased, as torch's check does
    assert "%y : Tensor = aten::relu(%x)" in text  # debug names stay: torch compares them too
    nets = [traced_graph(Net(), torch.rand(3), torch.rand(1)) for _ in range(2)]
    texts = [canonical_text(canonical_inlined(n.graph)) for n in nets]
    assert texts[0] == texts[1] and "___torch_mangle" not in texts[0]
