"""The fast extraction against the straightforward one it replaced: the same Graph, to the last JSON byte.

``extract_graph`` batches and caches what it reads from torch (see its docstring). The reference below is the
plain walk it replaced, kept verbatim as the definition of the right answer: one pybind call per fact, nothing
cached across nodes. Every case traces something real and compares ``to_json()`` and the live tensor constants.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.graph import Block, Frame, Graph, Node, SourceLoc, Value
from jupyter_tracejit.core.source import is_torch_file, is_trace_entry_file, source_line, user_frame_index
from jupyter_tracejit.core.torchscript import extract as from_torchscript
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined
from jupyter_tracejit.core.torchscript.extract import Extraction, extract_graph
from jupyter_tracejit.core.torchscript.node_facts import BLOCK_KINDS, may_be_nondeterministic, node_attributes
from jupyter_tracejit.core.torchscript.roles import role_of
from jupyter_tracejit.core.torchscript.scope_and_stack import parse_hierarchy, scope_path
from jupyter_tracejit.core.values import TENSOR_PREVIEW, demangle, encode_ivalue, encode_scalar, tensor_summary

# -- the reference: the straightforward extraction, one pybind call per fact -------------------------------------

_FRAME_RE = re.compile(r"^(.*)\((\d+)\): (.*)$")


def reference_parse_stack(text: str) -> SourceLoc | None:
    frames: list[Frame] = []
    for raw in text.splitlines():
        m = _FRAME_RE.match(raw)
        if not m:
            continue
        file, line = m.group(1), int(m.group(2))
        if is_trace_entry_file(file):
            break
        frames.append(
            Frame(file=file, line=line, func=m.group(3), code=source_line(file, line), internal=is_torch_file(file))
        )
    if not frames:
        return None
    stack = tuple(frames)
    return SourceLoc(stack=stack, user_index=user_frame_index(stack))


def reference_tensor_summary(t: torch.Tensor) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "dtype": str(t.dtype).replace("torch.", ""),
        "shape": list(t.shape),
        "device": str(t.device),
    }
    try:
        flat = t.detach().to("cpu").contiguous()
        summary["preview"] = [encode_scalar(x) for x in flat.reshape(-1)[:TENSOR_PREVIEW].tolist()]
        summary["digest"] = hashlib.sha1(
            flat.numpy().tobytes() if flat.dtype != torch.bfloat16 else flat.float().numpy().tobytes()
        ).hexdigest()[:16]
    except (RuntimeError, TypeError, ValueError):
        summary["preview"] = []
        summary["digest"] = ""
    return summary


def reference_extract(
    ts_graph: torch._C.Graph, *, method: str = "forward", code: str = "", root_type: str = ""
) -> Extraction:
    values: list[Value] = []
    value_ids: dict[int, int] = {}
    nodes: list[Node | None] = []
    tensor_constants: dict[int, torch.Tensor] = {}
    stacks: dict[str, SourceLoc | None] = {}
    scopes: dict[str, str] = {}
    hierarchy_seen: set[str] = set()
    if root_type:
        scopes[""] = root_type

    def add_value(v: torch._C.Value, producer: int | None) -> int:
        vid = len(values)
        value_ids[v.unique()] = vid
        ty: Any = v.type()
        if ty.kind() == "TensorType":
            sizes = ty.varyingSizes()
            device = ty.device()
            values.append(
                Value(
                    id=vid,
                    name=v.debugName(),
                    type="Tensor",
                    shape=None if sizes is None else tuple(sizes),
                    dtype=ty.scalarType(),
                    device=None if device is None else str(device),
                    requires_grad=ty.requires_grad(),
                    producer=producer,
                )
            )
        else:
            values.append(Value(id=vid, name=v.debugName(), type=demangle(str(ty)), producer=producer))
        return vid

    def walk(block_nodes: Any, parent: int | None) -> list[int]:
        ids: list[int] = []
        for n in block_nodes:
            nid = len(nodes)
            ids.append(nid)
            kind = n.kind()
            ins = tuple(value_ids[n.inputsAt(i).unique()] for i in range(n.inputsSize()))
            outs = tuple(add_value(n.outputsAt(i), nid) for i in range(n.outputsSize()))
            scope_name = n.scopeName()
            path = scope_path(scope_name)
            if scope_name and scope_name not in hierarchy_seen:
                hierarchy_seen.add(scope_name)
                for p, t in parse_hierarchy(n.getModuleHierarchy()).items():
                    scopes.setdefault(p, t)
            raw_stack = n.sourceRange()
            if raw_stack in stacks:
                source = stacks[raw_stack]
            else:
                source = stacks[raw_stack] = reference_parse_stack(raw_stack)
            attrs: dict[str, Any] = {}
            if kind == "prim::Constant":
                if n.hasAttribute("value") and n.kindOf("value") == "t":
                    tensor = n.t("value")
                    tensor_constants[nid] = tensor
                    attrs = {"value": {"tensor": reference_tensor_summary(tensor)}}
                elif n.outputsSize() == 1:
                    attrs = {"value": encode_ivalue(n.outputsAt(0).toIValue())}
            elif n.hasAttributes():
                attrs = node_attributes(n)
            nodes.append(None)
            blocks: tuple[Block, ...] = ()
            if kind in BLOCK_KINDS:
                built = []
                for b in n.blocks():
                    b_ins = tuple(add_value(v, None) for v in b.inputs())
                    b_nodes = tuple(walk(b.nodes(), nid))
                    b_outs = tuple(value_ids[v.unique()] for v in b.outputs())
                    built.append(Block(inputs=b_ins, outputs=b_outs, nodes=b_nodes))
                blocks = tuple(built)
            nodes[nid] = Node(
                id=nid,
                kind=kind,
                inputs=ins,
                outputs=outs,
                scope=path,
                source=source,
                attributes=attrs,
                blocks=blocks,
                parent=parent,
                nondeterministic=n.isNondeterministic(),
                role=role_of(kind),
            )
        return ids

    inputs = tuple(add_value(v, None) for v in ts_graph.inputs())
    walk(ts_graph.nodes(), None)
    outputs = tuple(value_ids[v.unique()] for v in ts_graph.outputs())
    graph = Graph(
        method=method,
        nodes=[n for n in nodes if n is not None],
        values=values,
        inputs=inputs,
        outputs=outputs,
        scope_types=scopes,
        code=code,
    )
    return Extraction(graph=graph, tensor_constants=tensor_constants)


def assert_same_extraction(ts_graph: torch._C.Graph, root_type: str = "Root") -> Graph:
    canonical = canonical_inlined(ts_graph)
    expected = reference_extract(canonical, method="m", code="code", root_type=root_type)
    got = extract_graph(canonical, method="m", code="code", root_type=root_type)
    assert got.graph.to_json() == expected.graph.to_json()
    assert got.tensor_constants.keys() == expected.tensor_constants.keys()
    for node_id, tensor in got.tensor_constants.items():
        same = expected.tensor_constants[node_id]  # the node's own tensor, as torch hands it out again
        assert (tensor.dtype, tensor.shape, tensor.stride()) == (same.dtype, same.shape, same.stride())
        assert tensor.data_ptr() == same.data_ptr()
    return got.graph


def traced_graph(fn: Any, *inputs: Any, **options: Any) -> torch._C.Graph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, inputs, check_trace=False, **options)
    return traced.graph if not isinstance(traced, torch.jit.ScriptModule) else traced.inlined_graph


# -- the cases ----------------------------------------------------------------------------------------------------


class Leaf(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("scale", torch.tensor([2.0, 3.0, 4.0, 5.0]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x)) * self.scale


class Nested(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([Leaf(), nn.Sequential(Leaf(), nn.Tanh()), Leaf()])
        self.branches = nn.ModuleDict({"a b": Leaf(), "x-y/z": Leaf(), "ünï (1)": nn.ReLU()})
        self.head = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        for layer in self.layers:
            x = layer(x)
        y = self.branches["a b"](x) + self.branches["x-y/z"](x)
        return self.head(self.branches["ünï (1)"](y)), y.sum(-1)


def test_nested_modules_module_list_and_odd_module_names() -> None:
    graph = assert_same_extraction(traced_graph(Nested().eval(), torch.rand(3, 4)), root_type="Nested")
    assert {"layers.1.0.fc", "branches.a b.fc", "branches.ünï (1)"} <= {n.scope for n in graph.nodes}


@torch.jit.script
def scripted_loop(x: torch.Tensor, n: int) -> torch.Tensor:
    for i in range(n):
        x = x * 0.5 if bool(x.sum() > float(i)) else x + torch.ones_like(x)
    while n > 0:
        n -= 1
        x = torch.sin(x)
    return x


def test_scripted_control_flow_called_from_traced_code_keeps_its_blocks() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return scripted_loop(x, 3) * 2

    graph = assert_same_extraction(traced_graph(f, torch.rand(4)))
    assert any(n.blocks for n in graph.nodes) and any(n.parent is not None for n in graph.nodes)


def test_a_scripted_function_with_non_tensor_inputs_and_unknown_shapes() -> None:
    @torch.jit.script
    def script(x: torch.Tensor, n: int, names: list[str], scale: float, tag: str, d: dict[str, torch.Tensor]):
        if tag == 'quote " and \\ and\nnewline ] ( %x':
            x = x * scale
        for name in names:
            if name in d:
                x = x + d[name]
        return x, n + len(names), tag

    graph = assert_same_extraction(script.graph, root_type="")
    kinds = {graph.values[v].type for v in graph.inputs}
    assert {"int", "List[str]", "float", "str", "Dict[str, Tensor]"} <= kinds
    assert graph.values[graph.inputs[0]].shape is None


def test_tuple_and_list_plumbing_and_multiple_outputs() -> None:
    def f(pair: tuple[torch.Tensor, torch.Tensor], items: list[torch.Tensor]):
        a, b = pair
        parts = torch.split(a, 1, dim=0)
        stacked = torch.stack([*parts, *items])
        return (stacked.max(dim=0), [b * 2, b + 1]), {"k": stacked.mean()}

    graph = assert_same_extraction(
        traced_graph(f, (torch.rand(2, 3), torch.rand(3)), [torch.rand(1, 3), torch.rand(1, 3)], strict=False)
    )
    assert any(len(n.outputs) > 1 for n in graph.nodes)


def test_constants_of_every_kind() -> None:
    big = torch.arange(40.0).reshape(4, 10)

    def f(x: torch.Tensor) -> torch.Tensor:
        y = x.to(torch.float64).to("cpu") + torch.tensor([1.5, float("nan")], dtype=torch.float64)[0]
        y = y + big.t()[:, :2].sum()  # a non-contiguous tensor constant
        y = y * torch.tensor(2, dtype=torch.int8) + torch.tensor([True, False]).sum()
        y = y + torch.tensor([1.0, 2.0], dtype=torch.bfloat16).float().sum()
        y = y + torch.tensor([1 + 2j]).real.sum() + torch.tensor([1 + 2j]).conj().imag.sum()
        y = y + torch.tensor([1.0], dtype=torch.float16).float() + torch.zeros(0).sum()
        y = torch.nn.functional.pad(y, (1, 1), mode="constant", value=0.25)
        z = torch.full((2,), 7, dtype=torch.uint8, device=x.device).to(torch.float64)
        return torch.cat([y.flatten(), z]).div(3, rounding_mode="floor").clamp(min=None, max=1e300)

    graph = assert_same_extraction(traced_graph(f, torch.rand(2, 2)))
    constants = [n.attributes["value"] for n in graph.nodes if n.kind == "prim::Constant" and n.attributes]
    assert any(isinstance(c, dict) and "tensor" in c for c in constants)
    assert any(isinstance(c, str) for c in constants) and None in constants


def test_device_dtype_and_string_constants_from_script() -> None:
    @torch.jit.script
    def script(x: torch.Tensor) -> torch.Tensor:
        y = x.to(device=torch.device("cpu"), dtype=torch.float64)
        if x.dtype == torch.float32:
            y = y.to(torch.float32)
        return y.reshape([-1]) if "a\tb" == "a\tb" else y

    def f(x: torch.Tensor) -> torch.Tensor:
        return script(x) + 1

    assert_same_extraction(traced_graph(f, torch.rand(2, 3)))


def test_nondeterministic_nodes_and_train_mode_dropout() -> None:
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Linear(4, 4), nn.Dropout(0.0)).requires_grad_(False)

    def f(x: torch.Tensor) -> torch.Tensor:
        return model(x) + torch.rand_like(x) + torch.bernoulli(torch.full_like(x, 0.5))

    graph = assert_same_extraction(traced_graph(f, torch.rand(2, 4)))
    assert any(n.nondeterministic for n in graph.nodes)
    assert_same_extraction(traced_graph(model.eval(), torch.rand(2, 4)))


def test_every_random_kind_is_asked_of_torch_and_the_rest_need_not_be() -> None:
    """Nodes are asked isNondeterministic() only where the op registry says the kind may be random: the flags
    still match torch's answer node by node, for random kinds, for their switched-off forms and for plain ops."""
    lstm = nn.LSTM(4, 4, num_layers=2, dropout=0.3).requires_grad_(False)
    gru = nn.GRU(4, 4).requires_grad_(False)

    def f(x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.dropout(x, 0.5, training=False) + torch.nn.functional.dropout(x, 0.5, training=True)
        y = y + torch.nn.functional.alpha_dropout(x, 0.2, training=True) + torch.normal(x, 1.0)
        y = y + torch.nn.functional.feature_alpha_dropout(x, 0.2, training=True) + torch.randn_like(x)
        y = y + torch.randint(0, 3, x.shape).float() + torch.randperm(4).float()
        y = y + torch.nn.functional.rrelu(x, training=True) + torch.poisson(x.abs())
        y = y + torch.multinomial(x.abs() + 0.1, 1).float().sum()
        q = y.reshape(1, 1, 4, 4)
        y = y + torch.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.1).reshape(4, 4)
        y = y + torch.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.0).reshape(4, 4)
        return y + lstm(y.unsqueeze(1))[0].squeeze(1) + gru(y.unsqueeze(1))[0].squeeze(1) + torch.sin(y).exp()

    graph = assert_same_extraction(traced_graph(f, torch.rand(4, 4)))
    random = {n.kind for n in graph.nodes if n.nondeterministic}
    assert {"aten::dropout", "aten::normal", "aten::randint", "aten::lstm", "aten::multinomial"} <= random
    assert not may_be_nondeterministic("aten::sin") and not may_be_nondeterministic("prim::Constant")
    assert may_be_nondeterministic("aten::rand") and may_be_nondeterministic("aten::not_an_op_of_this_torch")


def test_unknown_shapes_after_erasing_shape_information() -> None:
    graph = canonical_inlined(traced_graph(Nested().eval(), torch.rand(3, 4)))
    torch._C._jit_pass_erase_shape_information(graph)
    assert_same_extraction(graph)


def test_requires_grad_and_integer_inputs() -> None:
    def f(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return (x * 2).index_select(0, idx).cumsum(0)

    assert_same_extraction(traced_graph(f, torch.rand(4, 3, requires_grad=True), torch.tensor([0, 2])))


def test_benchmark_models_transformer_encoder_and_convnet() -> None:
    layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    with torch.no_grad():
        assert_same_extraction(traced_graph(encoder, torch.rand(2, 5, 32)), root_type="TransformerEncoder")
    assert_same_extraction(traced_graph(encoder, torch.rand(2, 5, 32)), root_type="TransformerEncoder")
    convnet = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8)),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(8, 10),
    ).eval()
    assert_same_extraction(traced_graph(convnet, torch.rand(1, 3, 16, 16)), root_type="Sequential")


def test_a_dense_chain() -> None:
    def chain(x: torch.Tensor) -> torch.Tensor:
        for _ in range(300):
            x = x + 1
            x = torch.sin(x)
        return x

    assert_same_extraction(traced_graph(chain, torch.rand(3)))


def test_graphs_of_real_runs_including_the_check_graph() -> None:
    def flip(x: torch.Tensor) -> torch.Tensor:
        return torch.sin(x) if x.shape[0] == 2 else torch.cos(x) * 2

    run = tj.trace(flip, (torch.rand(2),), check_inputs=[(torch.rand(3),)])
    assert run.check is not None and run.check.cases[0].graph is not None  # the check graph is extracted too
    trace = assert_same_extraction(traced_graph(flip, torch.rand(2)))
    check = assert_same_extraction(traced_graph(flip, torch.rand(3)))
    assert trace.to_json()["nodes"] == run.graph.to_json()["nodes"]
    assert check.to_json()["nodes"] == run.check.cases[0].graph.to_json()["nodes"]


def test_without_a_complete_type_printout_types_are_read_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(from_torchscript, "_TYPE_PRINTOUT_COMPLETE", False)
    assert_same_extraction(traced_graph(Nested().eval(), torch.rand(3, 4)))


# -- values whose pybind wrappers come back as new objects ----------------------------------------------------


class _Proxy:
    """Wraps a torch._C object; every call returns fresh proxies, as if pybind kept no wrapper for a value."""

    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._target, name)

        def call(*args: Any) -> Any:
            return _wrap(method(*args))

        return call


def _wrap(result: Any) -> Any:
    if isinstance(result, (torch._C.Node, torch._C.Value, torch._C.Block)):
        return _Proxy(result)
    if isinstance(result, Iterator) or type(result).__name__ == "iterator":
        return (_wrap(r) for r in result)
    return result


def test_values_are_found_by_their_unique_number_when_wrappers_are_new_objects() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return scripted_loop(x, 2) + x

    canonical = canonical_inlined(traced_graph(f, torch.rand(4)))
    expected = reference_extract(canonical)
    got = extract_graph(_Proxy(canonical))  # type: ignore[arg-type]
    assert got.graph.to_json() == expected.graph.to_json()


def test_the_garbage_collector_is_restored() -> None:
    import gc

    graph = canonical_inlined(traced_graph(Leaf(), torch.rand(2, 4)))
    assert gc.isenabled()
    extract_graph(graph)
    assert gc.isenabled()
    gc.disable()
    try:
        extract_graph(graph)
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize(
    "tensor",
    [
        torch.tensor(1),
        torch.rand(3, 4).t(),
        torch.tensor([float("nan"), float("inf"), -1e300]),
        torch.rand(3, dtype=torch.float16),
        torch.rand(3, dtype=torch.bfloat16),
        torch.rand(3, dtype=torch.complex64).conj(),
        torch.tensor([True, False]),
        torch.zeros(0, 3, dtype=torch.uint8),
        torch.rand(2, requires_grad=True),
        torch.rand(2).to_sparse(),
        torch.empty(2, device="meta"),
    ],
    ids=lambda t: f"{t.dtype}-{t.layout}-{t.device}",
)
def test_tensor_summary_matches_the_torch_reading(tensor: torch.Tensor) -> None:
    assert tensor_summary(tensor) == reference_tensor_summary(tensor)
