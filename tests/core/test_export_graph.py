"""ExportedProgram -> Graph on real models (BERT and GPT-2 with two layers, nn.TransformerEncoder, a ResNet-like
convnet with BatchNorm in train and eval mode, an MLP, torch.cond, an ``.item()`` size), checked against what the
Graph promises (lint, JSON round trip, roles and kinds) and against a ``tj.trace`` of the same model (scopes, user
lines)."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import Any

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.export import argument_names, graph_from_exported_program
from jupyter_tracejit.core.export.graph import build, module_path
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.core.graph import NODE_ROLES, Graph, Node
from jupyter_tracejit.core.graph_text import signature

from ..hf_models import bert_config, gpt2_config

#: the export back end needs torch.export with Dim.AUTO (the floor torch of the matrix, 2.4, lacks it)
pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SEQ = torch.export.Dim("seq", min=2, max=64)


# -- models ----------------------------------------------------------------------------------------------------------
class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.fc1(x))
        return self.fc2(h).softmax(dim=-1)


class Block(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + x)


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.layers = nn.Sequential(Block(8), Block(8))
        self.head = nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layers(self.stem(x))
        return self.head(x.mean(dim=(2, 3)))


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder(x)


class Cond(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        def positive(x: torch.Tensor) -> torch.Tensor:
            return self.fc(x).sin()

        def negative(x: torch.Tensor) -> torch.Tensor:
            return x.cos()

        y = torch.cond(x.sum() > 0, positive, negative, (x,))
        return y + 1


class ItemSize(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.sum().long().item()
        torch._check(n >= 0)
        return torch.zeros(n) + x.mean()


def bert() -> nn.Module:
    transformers = pytest.importorskip("transformers")
    config = bert_config(transformers, max_position_embeddings=64)
    torch.manual_seed(0)
    return transformers.BertModel(config).eval()


def gpt2() -> nn.Module:
    transformers = pytest.importorskip("transformers")
    config = gpt2_config(transformers, n_positions=64, use_cache=False)
    torch.manual_seed(0)
    return transformers.GPT2Model(config).eval()


@dataclass
class Case:
    model: nn.Module
    args: tuple[Any, ...]
    dynamic: Any = None
    #: compare with a tj.trace of the same model (torch.cond cannot be traced)
    traceable: bool = True


def cases() -> dict[str, Any]:
    torch.manual_seed(0)
    ids = torch.randint(0, 100, (2, 8))
    return {
        "mlp": lambda: Case(MLP(), (torch.randn(3, 16),)),
        "mlp-dim": lambda: Case(MLP(), (torch.randn(3, 8, 16),), {"x": {1: SEQ}}),
        "convnet-train": lambda: Case(ConvNet().train(), (torch.randn(2, 3, 8, 8),)),
        "convnet-eval": lambda: Case(ConvNet().eval(), (torch.randn(2, 3, 8, 8),)),
        "transformer-encoder": lambda: Case(Encoder().eval(), (torch.randn(2, 5, 64),)),
        "cond": lambda: Case(Cond(), (torch.randn(3, 4),), traceable=False),
        "item-size": lambda: Case(ItemSize(), (torch.tensor([1.0, 2.0]),), traceable=False),
        "bert": lambda: Case(bert(), (ids,)),
        "bert-dim": lambda: Case(bert(), (ids,), {"input_ids": {1: SEQ}}),
        "gpt2": lambda: Case(gpt2(), (ids,)),
    }


_CACHE: dict[str, tuple[Case, torch.export.ExportedProgram, Any]] = {}


def exported(name: str) -> tuple[Case, torch.export.ExportedProgram, Any]:
    if name not in _CACHE:
        case = cases()[name]()
        ep = torch.export.export(case.model, case.args, dynamic_shapes=case.dynamic)
        _CACHE[name] = (case, ep, build(ep))
    return _CACHE[name]


_TRACES: dict[int, Graph] = {}


def traced(case: Case) -> Graph:
    key = id(case.model)
    if key not in _TRACES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = tj.trace(case.model, case.args, check_trace=False, strict=False)  # HF models return dicts
        assert run.graph is not None, run.error
        _TRACES[key] = run.graph
    return _TRACES[key]


def ops(graph: Graph) -> list[Node]:
    return [n for n in graph.nodes if n.role == "op"]


def user_lines(graph: Graph, *, skip_caller: bool = False, forward_only: bool = False) -> set[tuple[str, int]]:
    """(file, line) of every op's user frame; ``skip_caller`` leaves out the caller a trace attributes torch-only
    nodes to (the export back end leaves that to the session).

    ``forward_only`` (for a trace of a library's model) keeps the lines export can know: non-strict export records
    only frames of functions named ``forward`` (``TracerBase._record_forward_stack_traces_only``), so an op made in
    a helper (transformers' ``sdpa_attention_forward``, ``masking_utils``) is at the line of the ``forward`` that
    called it; and a trace's ``aten::size`` reads are no ops in a static export (sizes are numbers there)."""
    out = set()
    for n in ops(graph):
        src = n.source
        if src is None or src.user_frame.internal:
            continue
        if skip_caller and src.user_index == len(src.stack) - 1 and all(f.internal for f in src.stack[:-1]):
            continue
        if forward_only and (src.func != "forward" or n.kind == "aten::size"):
            continue
        out.add((src.file, src.line))
    return out


ALL = list(cases())
HF = {"bert", "bert-dim", "gpt2"}


# -- the promises of every graph -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_graph_is_well_formed_round_trips_and_has_the_specified_roles_and_kinds(name: str) -> None:
    _case, ep, built = exported(name)
    graph = built.graph
    graph.lint()
    again = Graph.from_json(graph.to_json())
    assert again.to_json() == graph.to_json()
    assert graph.code == ep.graph_module.code
    assert all(n.role in NODE_ROLES for n in graph.nodes)

    fx_calls = {n.name: n for n in ep.graph.nodes if n.op == "call_function"}
    produced = {graph.values[n.outputs[0]].name: n for n in graph.nodes if n.outputs and n.parent is None}
    for fx_name, fx_node in fx_calls.items():
        target = fx_node.target
        if fx_name not in produced:  # no result (an assert): found by kind below
            continue
        node = produced[fx_name]
        if isinstance(target, torch._ops.OpOverload):
            assert node.role == "op"
            assert node.kind == f"{target._schema.name}.{target._overloadname}"
            # the default overload is called by its name alone (aten::linear); another keeps its overload
            default = target._overloadname == "default"
            assert node.title == (target._schema.name if default else node.kind)
        elif target.__name__ == "getitem":
            assert node.role == "index" and node.attributes["index"] == fx_node.args[1]
    for n in graph.nodes:
        if n.role == "constant":
            assert n.kind == "export::constant" and "value" in n.attributes and not n.inputs
        elif n.role == "getattr":
            assert n.kind.startswith("export::") and not n.inputs and len(n.outputs) == 1
    assert name == "item-size" or any(
        n.kind in ("aten::linear.default", "aten::conv2d.default", "aten::addmm.default") for n in graph.nodes
    )

    # user inputs are the graph's inputs, named as the user named them
    user_inputs = list(ep.graph_signature.user_inputs)
    assert [graph.values[v].name for v in graph.inputs] == user_inputs


@pytest.mark.parametrize("name", ALL)
def test_parameters_are_getattr_nodes_named_by_their_qualified_names(name: str) -> None:
    case, _ep, built = exported(name)
    graph = built.graph
    params = dict(case.model.named_parameters())
    buffers = dict(case.model.named_buffers())
    lifted = [n for n in graph.nodes if n.role == "getattr"]
    names = {n.attributes["name"] for n in lifted if n.kind == "export::parameter"}
    assert names == set(params)
    for n in lifted:
        value = graph.values[n.outputs[0]]
        if n.kind == "export::parameter":
            p = params[n.attributes["name"]]
            assert value.shape == tuple(p.shape) and value.dtype == "Float" and value.requires_grad
        elif n.kind == "export::buffer":
            assert n.attributes["name"] in buffers
    if name == "bert":
        assert "encoder.layer.0.attention.self.query.weight" in names


@pytest.mark.parametrize("name", ALL)
def test_op_nodes_have_sources_and_cover_every_user_line_of_the_trace(name: str) -> None:
    case, _ep, built = exported(name)
    graph = built.graph
    op_nodes = ops(graph)
    with_line = [n for n in op_nodes if n.source is not None and n.source.file and n.source.line > 0]
    assert len(with_line) >= 0.99 * len(op_nodes), [graph.node_text(n) for n in op_nodes if n not in with_line]
    for n in graph.nodes:
        if n.source is not None:
            assert n.source.stack[n.source.user_index] is n.source.user_frame
            for frame in n.source.stack:
                assert frame.internal == (frame.file.startswith("<eval_with_key>") or "/torch/" in frame.file)
    mine = user_lines(graph)
    if name not in HF:  # the models of this file: their lines are found by both
        assert any(f == __file__ for f, _ in mine)
    if not case.traceable:
        return
    theirs = user_lines(traced(case), skip_caller=True, forward_only=name in HF)
    assert theirs <= mine, sorted(theirs - mine)


@pytest.mark.parametrize("name", ALL)
def test_scopes_equal_the_traces(name: str) -> None:
    case, _ep, built = exported(name)
    graph = built.graph
    modules = dict(case.model.named_modules())
    assert set(graph.scopes) <= set(modules)
    for path, scope in graph.scopes.items():
        # containers whose forward never runs (ModuleList, ModuleDict) are in no nn_module_stack: no type
        expected = "" if isinstance(modules[path], (nn.ModuleList, nn.ModuleDict)) else type(modules[path]).__name__
        assert scope.type == expected, path
    if case.traceable:
        assert set(graph.scopes) == set(traced(case).scopes)


def test_symbolic_sizes_are_strings() -> None:
    for name, symbol_dim in (("mlp-dim", 1), ("bert-dim", 1)):
        if name in HF:
            pytest.importorskip("transformers")
        _case, _ep, built = exported(name)
        graph = built.graph
        x = graph.values[graph.inputs[0]]
        assert isinstance(x.shape[symbol_dim], str) and x.shape[symbol_dim].startswith("s")
        tensors = [v for v in graph.values if v.type == "Tensor" and v.shape is not None]
        symbolic = [v for v in tensors if any(isinstance(d, str) for d in v.shape)]
        assert len(symbolic) >= 0.3 * len(tensors)
        assert all(isinstance(d, (int, str)) for v in tensors for d in v.shape)
    static = exported("mlp")[2].graph
    assert all(isinstance(d, int) for v in static.values if v.shape for d in v.shape)


def test_cond_has_two_blocks_of_its_subgraphs() -> None:
    _, _ep, built = exported("cond")
    graph = built.graph
    (cond,) = [n for n in graph.nodes if n.kind == "higher_order::cond"]
    assert cond.role == "op" and len(cond.blocks) == 2
    true_block, false_block = cond.blocks
    kinds = [graph.nodes[i].kind for i in true_block.nodes]
    assert "aten::linear.default" in kinds and "aten::sin.default" in kinds
    assert [graph.nodes[i].kind for i in false_block.nodes] == ["aten::cos.default"]
    for block in cond.blocks:
        assert all(graph.nodes[i].parent == cond.id for i in block.nodes)
        assert len(block.outputs) == 1
        assert all(graph.values[v].producer is None and graph.values[v].type == "Tensor" for v in block.inputs)
        # the nodes follow their parent, in pre-order
        assert min(block.nodes) > cond.id
        # a subgraph's lines are FX's generated code: its nodes show the user's torch.cond line instead
        for i in block.nodes:
            assert graph.nodes[i].source is not None and graph.nodes[i].source.line == cond.source.line
    assert cond.source is not None and "torch.cond" in cond.source.code
    assert graph.values[cond.inputs[0]].type == "Tensor"  # the predicate, then the operands
    picks = [n for n in graph.nodes if n.role == "index" and graph.producer(n.inputs[0]) is cond]
    assert [n.attributes["index"] for n in picks] == [0]


def test_item_size_is_an_unbacked_int() -> None:
    _, _ep, built = exported("item-size")
    graph = built.graph
    (item,) = [n for n in graph.nodes if n.kind == "aten::item.default"]
    assert graph.values[item.outputs[0]].type == "int"
    (zeros,) = [n for n in graph.nodes if n.kind == "aten::zeros.default"]
    size = graph.producer(zeros.inputs[0])
    assert size is not None and size.role == "list" and size.inputs == item.outputs
    assert graph.values[zeros.outputs[0]].shape == ("u0",)
    asserts = [n for n in graph.nodes if n.kind == "aten::_assert_scalar.default"]
    assert asserts and all(not n.outputs for n in asserts)


def test_constants_are_named_by_schema_arguments_and_names_are_found_again() -> None:
    for name in ALL:
        if name in HF and not _have_transformers():
            continue
        _, _ep, built = exported(name)
        graph = built.graph
        table = argument_names(graph)
        for nid, names in built.input_names.items():
            node = graph.nodes[nid]
            assert table.get(signature(graph, node)) == names, graph.node_text(node)
            for v, arg in zip(node.inputs, names, strict=True):
                p = graph.producer(v)
                if p is not None and p.role == "constant":
                    assert graph.values[v].name.split(".")[0] == arg
    graph = exported("mlp")[2].graph
    (softmax,) = [n for n in graph.nodes if n.kind == "aten::softmax.int"]
    dim = graph.producer(softmax.inputs[1])
    assert dim is not None and dim.attributes == {"value": -1} and graph.values[dim.outputs[0]].name.startswith("dim")


def test_nondeterministic_ops_and_batchnorm_modes() -> None:
    train = exported("convnet-train")[2].graph
    evaluated = exported("convnet-eval")[2].graph
    assert any(n.kind == "aten::add_.Tensor" for n in train.nodes)  # num_batches_tracked += 1
    assert not any(n.kind == "aten::add_.Tensor" for n in evaluated.nodes)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).train()
    graph = graph_from_exported_program(torch.export.export(model, (torch.randn(2, 4),)))
    (dropout,) = [n for n in graph.nodes if "dropout" in n.kind]
    assert dropout.nondeterministic
    rand = graph_from_exported_program(torch.export.export(RandAdd(), (torch.randn(2, 4),)))
    assert [n.kind for n in rand.nodes if n.nondeterministic] == ["aten::rand_like.default"]
    model.eval()
    graph = graph_from_exported_program(torch.export.export(model, (torch.randn(2, 4),)))
    assert not any(n.nondeterministic for n in graph.nodes)


class Loop(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        from torch._higher_order_ops.while_loop import while_loop

        def cond_fn(i: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
            return i < 3

        def body_fn(i: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return i + 1, self.fc(x)

        _, out = while_loop(cond_fn, body_fn, (torch.tensor(0), x))
        return out, None


@pytest.mark.parametrize("strict", [False, True])
def test_while_loop_and_strict_mode(strict: bool) -> None:
    model = Loop()
    graph = graph_from_exported_program(torch.export.export(model, (torch.randn(2, 3),), strict=strict))
    graph.lint()
    assert Graph.from_json(graph.to_json()).to_json() == graph.to_json()
    (loop,) = [n for n in graph.nodes if n.kind == "higher_order::while_loop"]
    cond_block, body_block = loop.blocks
    assert [graph.nodes[i].kind for i in cond_block.nodes if graph.nodes[i].role == "op"] == ["aten::lt.Scalar"]
    body = [graph.nodes[i] for i in body_block.nodes if graph.nodes[i].role == "op"]
    assert [n.kind for n in body] == ["aten::add.Tensor", "aten::linear.default"]
    # block inputs stand for the loop's operands (counter, x, the lifted parameters) and take their types
    assert [graph.values[v].shape_str() for v in body_block.inputs] == [
        graph.values[v].shape_str() for v in loop.inputs
    ]
    assert set(graph.scopes) <= {"", "fc"}  # strict mode's "_export_root" wrapper is not a module of the model
    assert graph.producer(graph.outputs[1]).attributes == {"value": None}  # type: ignore[union-attr]
    convnet = ConvNet().eval()
    strict_graph = graph_from_exported_program(torch.export.export(convnet, (torch.randn(2, 3, 8, 8),), strict=strict))
    assert set(strict_graph.scopes) == set(exported("convnet-eval")[2].graph.scopes)


class RandAdd(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.rand_like(x)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("layers.0", "layers.0"),
        ("", ""),
        ("L['self'].layers[0].fc", "layers.0.fc"),
        ("L['self']._modules['a b']", "a b"),
        ("L['self'].encoder.layer[1]", "encoder.layer.1"),
        ("_export_root", ""),
        ("_export_root.fc", "fc"),
    ],
)
def test_module_paths(raw: str, expected: str) -> None:
    assert module_path(raw) == expected


def _have_transformers() -> bool:
    try:
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


def test_the_package_file_imports_no_torch() -> None:
    """``core/export/__init__.py`` loads the torch-side module on first use of its names only."""
    import ast
    from pathlib import Path

    import jupyter_tracejit.core.export as package

    tree = ast.parse(Path(package.__file__).read_text())  # type: ignore[arg-type]
    imported = [
        alias.name if isinstance(node, ast.Import) else (node.module or "")
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    ]
    assert not [m for m in imported if m.split(".")[0] == "torch"], imported
    assert package.graph_from_exported_program is graph_from_exported_program


def test_values_keep_the_names_the_graph_code_uses() -> None:
    for name in ("mlp", "cond", "convnet-train"):
        _, ep, built = exported(name)
        graph = built.graph
        names = {graph.values[v].name for n in graph.nodes if n.parent is None for v in n.outputs}
        names |= {graph.values[v].name for v in graph.inputs}
        fx_names = {n.name for n in ep.graph.nodes if n.op not in ("output", "get_attr")}
        fx_names -= {n.name for n in ep.graph.nodes if n.op == "call_function" and n.meta.get("val") is None}
        assert fx_names <= names, sorted(fx_names - names)
