"""torch._C.Graph -> Graph, tested by what comes out (the extraction is being rewritten for speed; these tests
pin its observable output): source stacks, scope paths and module hierarchies parsed, every constant value kind
encoded, node ids that are preorder positions, blocks of scripted control flow, tensor constants kept live, and
canonical_text equal to the string torch's own check compares."""

from __future__ import annotations

import json
import math
import re
import warnings
from typing import Any

import pytest
import torch
import torch.nn as nn

from jupyter_tracejit.core.graph import Graph
from jupyter_tracejit.core.source import is_torch_file, source_line
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined, canonical_text, preorder
from jupyter_tracejit.core.torchscript.extract import extract_graph
from jupyter_tracejit.core.torchscript.scope_and_stack import parse_hierarchy, parse_stack, scope_path
from jupyter_tracejit.core.values import TENSOR_PREVIEW, demangle, encode_ivalue, tensor_summary

from ..models import OneLinear, line_of, relu_twice, relu_twice_renamed

HERE = __file__
TORCH = torch.__file__.rsplit("/", 1)[0]


def traced_graph(fn: Any, *inputs: Any) -> torch._C.Graph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.trace(fn, inputs, check_trace=False).graph


def torchs_comparison_string(graph: torch._C.Graph) -> str:
    """What torch.jit._trace._check_trace compares (graph_diagnostic_info), step by step."""
    g = torch._C._jit_pass_canonicalize(graph)
    torch._C._jit_pass_inline(g)
    torch._C._jit_pass_erase_shape_information(g)
    return re.sub(r"___torch_mangle_[0-9]+\.", "", str(g))


# -- small parsers -------------------------------------------------------------------------------------------------


def a_user_function():
    return 1  # the user's line


def test_parse_stack_innermost_first_up_to_the_trace_entry() -> None:
    line = line_of(a_user_function, "# the user's line")
    text = (
        f"{TORCH}/nn/modules/linear.py(134): forward\n"
        f"{HERE}({line}): a_user_function\n"
        f"{TORCH}/nn/modules/module.py(1768): _slow_forward\n"
        "not a frame line\n"
        f"{TORCH}/jit/_trace.py(1000): trace\n"
        f"{HERE}(1): test_outside_the_trace\n"
    )
    loc = parse_stack(text)
    assert [(f.file, f.line, f.func, f.internal) for f in loc.stack] == [
        (f"{TORCH}/nn/modules/linear.py", 134, "forward", True),
        (HERE, line, "a_user_function", False),
        (f"{TORCH}/nn/modules/module.py", 1768, "_slow_forward", True),
    ]
    assert loc.user_index == 1
    assert (loc.file, loc.line, loc.func) == (HERE, line, "a_user_function")
    assert loc.code == "return 1  # the user's line"


def test_parse_stack_all_inside_torch_and_empty() -> None:
    loc = parse_stack(f"{TORCH}/nn/functional.py(10): relu\n{TORCH}/nn/modules/activation.py(20): forward\n")
    assert loc.user_index == 1 and loc.user_frame.internal  # the outermost: no user frame at all
    assert parse_stack("") is None
    assert parse_stack("garbage\nmore garbage") is None
    assert parse_stack(f"{TORCH}/jit/_trace.py(1000): trace\n{HERE}(3): f\n") is None


def test_parse_stack_of_a_real_node() -> None:
    def scale(x):
        return x * 3  # recorded here

    (mul,) = [n for n in traced_graph(scale, torch.rand(2)).nodes() if n.kind() == "aten::mul"]
    loc = parse_stack(mul.sourceRange())
    assert (loc.file, loc.line, loc.func) == (HERE, line_of(scale, "# recorded here"), "scale")
    assert loc.user_index == 0


def test_paths_and_files() -> None:
    assert is_torch_file(f"{TORCH}/nn/functional.py")
    assert is_torch_file("/elsewhere/lib/python3.11/site-packages/torch/nn/functional.py")
    assert not is_torch_file(HERE)
    assert not is_torch_file("/home/me/torchvision_models/torch_utils.py")
    assert demangle("__torch__.___torch_mangle_12.Net.forward") == "__torch__.Net.forward"
    assert source_line(HERE, line_of(a_user_function, "# the user's line")) == "return 1  # the user's line"
    assert source_line("/no/such/file.py", 3) == ""


@pytest.mark.parametrize(
    ("scope", "path"),
    [
        ("", ""),
        ("__module", ""),
        ("__module.fc", "fc"),
        ("__module.a/__module.a.b/__module.a.b.c", "a.b.c"),
        ("__module.layers/__module.layers.0", "layers.0"),
        ("other", "other"),
    ],
)
def test_scope_path(scope: str, path: str) -> None:
    assert scope_path(scope) == path


def test_parse_hierarchy_edges() -> None:
    assert parse_hierarchy("") == {}
    assert parse_hierarchy("b(B).fc(Linear)") == {"b": "B", "b.fc": "Linear"}
    assert parse_hierarchy("enc(__torch__.___torch_mangle_3.Encoder).0(Block)") == {
        "enc": "__torch__.Encoder",
        "enc.0": "Block",
    }


# -- values ------------------------------------------------------------------------------------------------------


def test_tensor_summary() -> None:
    t = torch.tensor([1.5, math.nan, math.inf, -math.inf, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    s = tensor_summary(t)
    assert s["dtype"] == "float32" and s["shape"] == [10] and s["device"] == "cpu"
    assert s["preview"] == [1.5, {"float": "nan"}, {"float": "inf"}, {"float": "-inf"}, 0.0, 1.0, 2.0, 3.0]
    assert len(s["preview"]) == TENSOR_PREVIEW
    assert re.fullmatch(r"[0-9a-f]{16}", s["digest"])
    assert tensor_summary(t.clone())["digest"] == s["digest"]
    changed = t.clone()
    changed[9] = 6.0  # beyond the preview: only the digest tells
    assert tensor_summary(changed)["preview"] == s["preview"] and tensor_summary(changed)["digest"] != s["digest"]
    json.dumps(s, allow_nan=False)


def test_tensor_summary_of_other_kinds() -> None:
    m = torch.arange(6.0).reshape(2, 3)
    assert tensor_summary(m.t())["digest"] == tensor_summary(m.t().contiguous())["digest"]
    assert tensor_summary(m.t())["shape"] == [3, 2]
    assert tensor_summary(torch.tensor(7))["preview"] == [7] and tensor_summary(torch.tensor(7))["shape"] == []
    assert tensor_summary(torch.tensor([True, False]))["preview"] == [True, False]
    assert tensor_summary(torch.tensor([1 + 2j]))["preview"] == [{"repr": "(1+2j)"}]
    bf16 = tensor_summary(torch.tensor([1.0, 2.0], dtype=torch.bfloat16))
    assert bf16["dtype"] == "bfloat16" and bf16["preview"] == [1.0, 2.0] and bf16["digest"]
    meta = tensor_summary(torch.empty(2, 3, device="meta"))
    assert meta == {"dtype": "float32", "shape": [2, 3], "device": "meta", "preview": [], "digest": ""}


class Opaque:
    def __repr__(self) -> str:
        return "<__torch__.___torch_mangle_7.Thing object>"


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (None, None),
        (True, True),
        (3, 3),
        ("s", "s"),
        (2.5, 2.5),
        (math.nan, {"float": "nan"}),
        (-math.inf, {"float": "-inf"}),
        (1 + 2j, {"repr": "(1+2j)"}),
        (torch.device("cpu"), {"device": "cpu"}),
        (torch.float16, {"repr": "torch.float16"}),
        ([1, (2.5, math.inf)], [1, [2.5, {"float": "inf"}]]),
        (Opaque(), {"repr": "<__torch__.Thing object>"}),
    ],
)
def test_encode_ivalue(value: Any, encoded: Any) -> None:
    assert encode_ivalue(value) == encoded


def test_encode_ivalue_of_a_tensor() -> None:
    t = torch.ones(2)
    assert encode_ivalue(t) == {"tensor": tensor_summary(t)}


# -- extract_graph -------------------------------------------------------------------------------------------------


def constants_of_every_kind(x):
    y = x * 2 + torch.tensor([1.0, 2.0, 3.0])  # tensor constant line
    z = torch.zeros(3, device="cpu", dtype=torch.float64)
    return y.sum(dim=0, keepdim=False) + z.to(torch.float32)


def test_extract_graph_numbers_nodes_and_values_by_position() -> None:
    ts = canonical_inlined(traced_graph(constants_of_every_kind, torch.rand(3)))
    extraction = extract_graph(ts, method="encode", code="def forward(...)", root_type="Net")
    g = extraction.graph
    assert (g.method, g.code) == ("encode", "def forward(...)")
    assert [n.id for n in g.nodes] == list(range(len(g.nodes)))
    assert [v.id for v in g.values] == list(range(len(g.values)))
    assert [n.kind for n in g.nodes] == [n.kind() for n in preorder(ts)]
    for n in g.nodes:
        assert all(g.values[v].producer == n.id for v in n.outputs)
        assert all(v < len(g.values) for v in n.inputs)
    (x,) = g.inputs
    assert g.values[x].producer is None and g.values[x].name == "x"
    assert (g.values[x].type, g.values[x].shape, g.values[x].dtype) == ("Tensor", (3,), "Float")
    assert g.values[x].device == "cpu" and g.values[x].requires_grad is False
    (out,) = g.outputs
    assert g.nodes[g.values[out].producer].kind == "aten::add"
    g.lint()


def test_extract_graph_encodes_constants_and_keeps_tensor_constants_live() -> None:
    ts = canonical_inlined(traced_graph(constants_of_every_kind, torch.rand(3)))
    extraction = extract_graph(ts)
    g = extraction.graph
    values = [n.attributes["value"] for n in g.nodes if n.kind == "prim::Constant"]
    assert {0, 1, 3, 6, 7} <= {v for v in values if type(v) is int}  # dims, sizes, dtypes
    assert False in values and None in values and {"device": "cpu"} in values
    two, three = sorted(extraction.tensor_constants)
    assert [n.id for n in g.nodes if "tensor" in str(n.attributes)] == [two, three]
    assert torch.equal(extraction.tensor_constants[two], torch.tensor(2))  # x * 2: a 0-dim Long constant
    assert torch.equal(extraction.tensor_constants[three], torch.tensor([1.0, 2.0, 3.0]))
    assert g.nodes[three].attributes == {"value": {"tensor": tensor_summary(torch.tensor([1.0, 2.0, 3.0]))}}
    assert g.nodes[three].source.line == line_of(constants_of_every_kind, "# tensor constant line")
    ts_nodes = list(preorder(ts))
    for node_id, tensor in extraction.tensor_constants.items():
        assert torch.equal(ts_nodes[node_id].t("value"), tensor)
    json.dumps(g.to_json(), allow_nan=False)


def branch(x: torch.Tensor) -> torch.Tensor:
    if bool(x.sum() > 0):
        y = x * 2
    else:
        y = x - 1
        y = y.abs()
    return y


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # torch.jit.script is deprecated in torch 2.13, and still works
    scripted_branch = torch.jit.script(branch)


def calls_scripted(x):
    return scripted_branch(x) + 1


def test_blocks_of_scripted_control_flow_in_preorder() -> None:
    ts = canonical_inlined(traced_graph(calls_scripted, torch.rand(3)))
    g = extract_graph(ts).graph
    assert [n.kind for n in g.nodes] == [n.kind() for n in preorder(ts)]
    (branch,) = [n for n in g.nodes if n.kind == "prim::If"]
    then, otherwise = branch.blocks
    assert [g.nodes[i].kind for i in then.nodes] == ["aten::mul"]  # the inliner hoists constants out of blocks
    assert [g.nodes[i].kind for i in otherwise.nodes] == ["aten::sub", "aten::abs"]
    inside = [*then.nodes, *otherwise.nodes]
    assert inside == list(range(branch.id + 1, branch.id + 1 + len(inside)))  # right after the If, in order
    assert all(g.nodes[i].parent == branch.id for i in inside)
    assert all(n.parent is None for n in g.nodes if n.id not in inside)
    assert g.values[then.outputs[0]].producer == then.nodes[-1]
    assert g.values[otherwise.outputs[0]].producer == otherwise.nodes[-1]
    (if_out,) = branch.outputs
    assert g.values[if_out].producer == branch.id
    g.lint()


# Block and Net are named here: the tests assert the scope types "Net" and "Block" and the qualified type name
# __torch__.<this module>.Net.
class Block(OneLinear):
    """tests.models.OneLinear (two wide) under the name the scope types say."""


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())

    def forward(self, x):
        return self.blocks(x).relu()


def test_scopes_and_their_types_from_the_module_hierarchy() -> None:
    g = extract_graph(canonical_inlined(traced_graph(Net(), torch.rand(2))), root_type="Net").graph
    linear = [n for n in g.nodes if n.kind == "aten::linear"]
    assert [n.scope for n in linear] == ["blocks.0.fc", "blocks.1.fc"]
    assert [n.scope for n in g.nodes if n.kind == "aten::relu"] == [""]
    assert {p: s.type for p, s in g.scopes.items()} == {
        "": "Net",
        "blocks": "Sequential",
        "blocks.0": "Block",
        "blocks.0.fc": "Linear",
        "blocks.1": "Block",
        "blocks.1.fc": "Linear",
    }


def test_value_types_are_demangled() -> None:
    for _ in range(2):  # the second trace of a class gets a ___torch_mangle_N name
        ts = traced_graph(Net(), torch.rand(2))
    assert "___torch_mangle_" in str(ts)
    g = extract_graph(ts).graph
    assert not any("___torch_mangle_" in v.type for v in g.values)
    assert g.values[g.inputs[0]].type == f"__torch__.{__name__}.Net"


def test_a_round_trip_through_json_keeps_the_extraction() -> None:
    g = extract_graph(canonical_inlined(traced_graph(calls_scripted, torch.rand(3)))).graph
    again = Graph.from_json(json.loads(json.dumps(g.to_json())))
    assert again.nodes == g.nodes and again.values == g.values


# -- canonical text ------------------------------------------------------------------------------------------------


def test_canonical_text_is_torchs_comparison_string() -> None:
    for fn in (relu_twice, relu_twice_renamed, constants_of_every_kind):
        graph = traced_graph(fn, torch.rand(3))
        assert canonical_text(canonical_inlined(graph)) == torchs_comparison_string(graph)


def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def unnumbered(text: str) -> str:
    return re.sub(r"%\d+\b", "%N", text)


def test_canonical_text_with_inlined_calls_is_torchs_up_to_numbering() -> None:
    # the copy canonical_text prints renumbers the values the inliner added (scripted calls, submodules' methods);
    # torch prints them as the inliner numbered them
    for _ in range(2):  # the second trace of Net is mangled
        module_graph = traced_graph(Net(), torch.rand(2))
    for graph in (traced_graph(calls_scripted, torch.rand(3)), module_graph):
        assert unnumbered(canonical_text(canonical_inlined(graph))) == unnumbered(torchs_comparison_string(graph))


@pytest.mark.parametrize(
    ("fn", "a", "b"),
    [
        (relu_twice, torch.rand(3), torch.rand(5, 7)),
        (calls_scripted, torch.rand(3), -torch.rand(4)),
        (branchy, torch.ones(3), -torch.ones(3)),
        (constants_of_every_kind, torch.rand(3), torch.rand(3)),
        (Net(), torch.rand(2), torch.rand(3, 2)),
    ],
    ids=["shapes", "inlined-call", "branch", "constants", "module"],
)
def test_two_canonical_texts_are_equal_exactly_when_torchs_are(fn: Any, a: torch.Tensor, b: torch.Tensor) -> None:
    first, second = traced_graph(fn, a), traced_graph(fn, b)
    ours = canonical_text(canonical_inlined(first)) == canonical_text(canonical_inlined(second))
    assert ours == (torchs_comparison_string(first) == torchs_comparison_string(second))
    assert ours is (fn is not branchy)


def test_canonical_text_ignores_shapes_and_mangling() -> None:
    small, large = traced_graph(relu_twice, torch.rand(3)), traced_graph(relu_twice, torch.rand(5, 7))
    assert str(small) != str(large)
    assert canonical_text(canonical_inlined(small)) == canonical_text(canonical_inlined(large))
    first, second = traced_graph(Net(), torch.rand(2)), traced_graph(Net(), torch.rand(2))
    assert str(first) != str(second)  # the second class is mangled
    assert canonical_text(canonical_inlined(first)) == canonical_text(canonical_inlined(second))


def test_canonical_text_keeps_debug_names_as_torch_does() -> None:
    # torch compares printouts, names included; the structural diff (not this text) is what ignores them
    a = canonical_text(canonical_inlined(traced_graph(relu_twice, torch.rand(3))))
    b = canonical_text(canonical_inlined(traced_graph(relu_twice_renamed, torch.rand(3))))
    assert "%y" in a and "%renamed" in b
    assert re.sub(r"%\w+|#.*", "", a) == re.sub(r"%\w+|#.*", "", b)


def test_canonical_text_leaves_its_graph_alone() -> None:
    canonical = canonical_inlined(traced_graph(relu_twice, torch.rand(3)))
    before = str(canonical)
    canonical_text(canonical)
    assert str(canonical) == before and "Float(3" in before
