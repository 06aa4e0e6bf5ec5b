"""``tj.load`` of both kinds of saved model (told apart by content) and ``tj.diff`` between runs and files: models
traced or exported here, saved in tmp_path, read back without running them."""

from __future__ import annotations

import html
import json
import zipfile
from pathlib import Path

import pytest
import torch
from torch import nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.archive.guard import guarded_loaders
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.core.run import TraceRun
from jupyter_tracejit.core.run_diff import RunDiff
from jupyter_tracejit.core.validate import check_run
from tests.models import MLP

from ..hf_models import bert_config, gpt2_config

needs_export = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))


class ConvNet(nn.Module):
    """A small convnet whose versions differ in one place each: an activation, a width, a constant."""

    def __init__(self, act: type[nn.Module] = nn.ReLU, width: int = 8, scale: float = 0.1) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(width, 8, 3), act())
        self.head = nn.Linear(8, 2)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.block(self.stem(x)).mean((2, 3))) * self.scale


IMAGES = torch.randn(2, 3, 10, 10)


def save_traced(model: nn.Module, path: Path, example: torch.Tensor = IMAGES) -> Path:
    torch.manual_seed(0)  # each version's weights start from the same seed: only what changed differs
    model.load_state_dict({k: torch.randn_like(v) for k, v in model.state_dict().items()})
    with torch.no_grad():
        torch.jit.save(torch.jit.trace(model.eval(), example), str(path))
    return path


def round_trip(run: TraceRun) -> None:
    data = json.loads(json.dumps(run.to_json()))
    check_run(data)
    assert TraceRun.from_json(data).to_json() == data


@pytest.fixture(scope="module")
def convnets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("convnets")
    return {
        "v1": save_traced(ConvNet(), root / "v1.pt"),
        "v1-again": save_traced(ConvNet(), root / "v1-again.pt"),
        "gelu": save_traced(ConvNet(act=nn.GELU), root / "gelu.pt"),
        "wide": save_traced(ConvNet(width=16), root / "wide.pt"),
        "scale": save_traced(ConvNet(scale=0.2), root / "scale.pt"),
    }


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if export_support_problem() is not None:
        pytest.skip(str(export_support_problem()))
    path = tmp_path_factory.mktemp("exported") / "mlp.pt2"
    seq = torch.export.Dim("seq", min=2, max=64)
    ep = torch.export.export(MLP().eval(), (torch.randn(3, 5, 16),), dynamic_shapes={"x": {1: seq}})
    torch.export.save(ep, str(path))
    return path


# -- tj.load ---------------------------------------------------------------------------------------------------------
def test_a_torchscript_archive_is_read_by_the_archive_loader(convnets: dict[str, Path]) -> None:
    run = tj.load(convnets["v1"])
    assert run.error is None and (run.backend, run.source) == ("trace", "file") and run.from_file
    assert run.target.name == "ConvNet" and "block.0.weight" in run.parameters
    assert run.verdict.reasons[0].endswith("read from a saved file, nothing run")
    round_trip(run)


@needs_export
def test_an_exported_program_opens_with_its_range_constraints(exported: Path) -> None:
    run = tj.load(exported)
    assert run.error is None, run.error
    assert run.backend == "export" and run.from_file and run.python_runs == 0 and run.check is None
    assert isinstance(run.traced, torch.export.ExportedProgram)
    assert run.target.name == "MLP" and run.parameters["fc1.weight"] == "Float(32, 16)"
    assert run.export is not None
    (seq,) = [s for s in run.export.symbols if s.kind == "backed"]
    assert (seq.min, seq.max) == (2, 64)
    assert seq.sources == ["x.size()[1]"]  # read back from the placeholder's symbolic shape
    assert [e.kind for e in run.export.inputs].count("parameter") == 4
    assert run.inputs["forward"] == [f"Float(3, {seq.name}, 16)"]
    graph = run.graph
    assert graph is not None and any(n.kind.startswith("aten::linear") for n in graph.nodes)
    assert run.options == {"path": str(exported), "map_location": "cpu"}
    assert run.verdict.reasons[0].endswith("read from a saved file, nothing run")
    round_trip(run)


@needs_export
def test_the_kind_is_read_from_the_content_not_the_name(
    exported: Path, convnets: dict[str, Path], tmp_path: Path
) -> None:
    program = tmp_path / "program.bin"
    program.write_bytes(exported.read_bytes())
    assert tj.load(program).backend == "export"
    archive = tmp_path / "archive.pt2"
    archive.write_bytes(convnets["v1"].read_bytes())
    assert (tj.load(archive).backend, tj.load(archive).source) == ("trace", "file")


def rewrite(src: Path, dst: Path, edit: object) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, edit(info.filename, zin.read(info.filename)))  # type: ignore[operator]
    return dst


@needs_export
@pytest.mark.parametrize(
    ("member", "content", "tag", "words"),
    [
        ("archive_version", b"99", "version_mismatch", "archive version 99"),
        (".data/version", b"99\n", "newer_torch", "version 99"),
        ("models/model.json", b"{not json", "corrupt_archive", "Expecting property name"),
    ],
)
def test_a_damaged_or_newer_exported_program(
    exported: Path, tmp_path: Path, member: str, content: bytes, tag: str, words: str
) -> None:
    bad = rewrite(exported, tmp_path / "bad.pt2", lambda n, d: content if n.endswith(member) else d)
    run = tj.load(bad)  # never raises
    assert run.error is not None and run.error.phase == "load" and run.error.tag == tag, run.error
    assert words in run.error.message and run.error.hint and not run.graphs
    round_trip(run)


@needs_export
def test_a_truncated_exported_program(exported: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.pt2"
    data = exported.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    run = tj.load(cut)
    assert run.error is not None and run.error.tag == "truncated_archive"


@pytest.mark.parametrize(
    ("content", "tag"),
    [(b"", "not_an_archive"), (b"hello\n", "not_an_archive"), (bytes([0x80, 0x02]) + b"rest", "pickle")],
)
def test_what_is_not_a_saved_model(tmp_path: Path, content: bytes, tag: str) -> None:
    path = tmp_path / "model.pt2"
    path.write_bytes(content)
    run = tj.load(path)
    assert run.error is not None and run.error.tag == tag and run.error.hint
    assert "exported program" in run.error.message or tag == "pickle"


def test_a_whole_module_saved_with_torch_save_is_not_unpickled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "module.pt"
    torch.save(MLP(), str(path))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("torch.load must never be called on a user's file")

    monkeypatch.setattr(torch, "load", refuse)
    run = tj.load(path)
    assert run.error is not None and run.error.tag == "pickle"


def test_a_missing_file(tmp_path: Path) -> None:
    run = tj.load(tmp_path / "absent.pt2")
    assert run.error is not None and run.error.tag == "not_found"


def test_torch_loads_within_an_export_load_read_tensors_only(tmp_path: Path) -> None:
    """torch.export.load unpickles pickled weights with weights_only=False; inside the load it cannot."""
    whole = tmp_path / "module.pt"
    torch.save(MLP(), str(whole))
    tensor = tmp_path / "tensor.pt"
    torch.save(torch.ones(2), str(tensor))
    real = torch.load
    with guarded_loaders("cpu"):
        assert torch.equal(torch.load(str(tensor), weights_only=False), torch.ones(2))
        with pytest.raises(Exception, match="Weights only load failed"):
            torch.load(str(whole), weights_only=False)
    assert torch.load is real


# -- tj.diff ---------------------------------------------------------------------------------------------------------
def test_the_same_archive_twice_is_the_same(convnets: dict[str, Path]) -> None:
    result = tj.diff(convnets["v1"], convnets["v1"], values=True)
    assert result.same and not result.scopes and not result.parameters
    assert result.summary().startswith("same: ") and "values within" in result.summary()
    again = tj.diff(convnets["v1"], convnets["v1-again"], values=True)
    assert again.same, again.summary()  # saved twice from the same weights


def test_a_changed_layer_is_named_by_its_module(convnets: dict[str, Path]) -> None:
    result = tj.diff(convnets["v1"], convnets["gelu"])
    assert not result.same
    (scope,) = result.scopes
    assert scope.scope == "block.1" and scope.changed == 1
    assert "block.1: 1 op changed (aten::relu -> aten::gelu)" in result.summary()
    assert not result.parameters  # ReLU and GELU hold none


class TwiceActivated(nn.Module):
    """One activation module called at two places: changing it changes two ops, the second downstream of the first."""

    def __init__(self, act: nn.Module) -> None:
        super().__init__()
        self.fc1, self.fc2, self.act = nn.Linear(4, 4), nn.Linear(4, 4), act

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(self.act(x))))


def test_a_module_called_twice_and_changed_counts_both_ops() -> None:
    torch.manual_seed(0)
    old = TwiceActivated(nn.ReLU())
    new = TwiceActivated(nn.GELU())
    new.load_state_dict(old.state_dict())
    x = torch.randn(2, 4)
    result = tj.diff(tj.trace(old, (x,)), tj.trace(new, (x,)))
    (scope,) = result.scopes
    assert scope.scope == "act" and scope.changed == 2, result.summary()
    assert "act: 2 ops changed" in result.summary()


class Norm(nn.Module):
    """Llama's RMSNorm, the shape of the problem: its ops are the same computation wherever it is used."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm, self.fc = Norm(), nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc(self.norm(x))


class Stack(nn.Module):
    def __init__(self, depth: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(depth))
        self.norm = Norm()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


def test_a_layer_added_before_the_final_norm_is_added_and_the_norm_reads_other_inputs() -> None:
    """Matched by computation alone, the old final norm's ops paired with the new layer's own norm (the same ops on
    the same input): 'layers.2.norm: 1 op changed' and 'norm: 6 ops added'. Ops match within their module."""
    torch.manual_seed(0)
    old, new = Stack(2), Stack(3)
    new.load_state_dict(old.state_dict(), strict=False)
    x = torch.randn(2, 8)
    result = tj.diff(tj.trace(old, (x,)), tj.trace(new, (x,)))
    changes = {s.scope: s for s in result.scopes}
    assert set(changes) == {"layers.2.norm", "layers.2.fc", "layers.2", "norm"}, result.summary()
    assert all(changes[s].added and not changes[s].removed for s in changes if s != "norm"), result.summary()
    # every op of a module only the new model has is added, not 'downstream of' its first one
    assert (changes["layers.2.norm"].added, changes["layers.2.fc"].added) == (6, 1), result.summary()
    assert (changes["norm"].changed, changes["norm"].added, changes["norm"].removed) == (1, 0, 0), result.summary()
    assert "reads other inputs" in changes["norm"].details[0]
    assert {p.name for p in result.parameters} == {"layers.2.norm.weight", "layers.2.fc.weight", "layers.2.fc.bias"}


def test_a_changed_constant_says_from_what_to_what(convnets: dict[str, Path]) -> None:
    result = tj.diff(convnets["v1"], convnets["scale"])
    (scope,) = result.scopes
    assert scope.scope == "" and scope.constants == ["tensor constant 0.1 -> 0.2"]
    assert "top level: 1 constant changed tensor constant 0.1 -> 0.2" in result.summary()


def test_parameters_that_changed_shape_are_named(convnets: dict[str, Path]) -> None:
    result = tj.diff(convnets["v1"], convnets["wide"])
    assert not result.same and not result.scopes  # the same ops, on wider tensors
    changed = {p.name: (p.before, p.after) for p in result.parameters if p.change == "type"}
    assert changed == {
        "stem.0.weight": ("Float(8, 3, 3, 3)", "Float(16, 3, 3, 3)"),
        "stem.0.bias": ("Float(8)", "Float(16)"),
        "block.0.weight": ("Float(8, 8, 3, 3)", "Float(8, 16, 3, 3)"),
    }
    assert "stem.0.weight Float(8, 3, 3, 3) -> Float(16, 3, 3, 3)" in result.summary()


def test_values_are_compared_with_a_tolerance(convnets: dict[str, Path]) -> None:
    old, new = tj.load(convnets["v1"]), tj.load(convnets["v1"])
    with torch.no_grad():
        new.traced.head.bias.add_(1e-3)
    assert tj.diff(old, new).same  # names and types only by default
    changed = tj.diff(old, new, values=True)
    assert [(p.name, p.change) for p in changed.parameters] == [("head.bias", "values")]
    assert changed.parameters[0].max_abs == pytest.approx(1e-3, rel=1e-3)
    assert tj.diff(old, new, values=True, atol=1e-2).same


def test_an_archive_against_a_fresh_trace_of_the_same_code(convnets: dict[str, Path]) -> None:
    model = ConvNet().eval()
    torch.manual_seed(0)
    model.load_state_dict({k: torch.randn_like(v) for k, v in model.state_dict().items()})
    fresh = tj.trace(model, IMAGES)
    result = tj.diff(convnets["v1"], fresh, values=True)
    assert result.same, result.summary()
    assert not tj.diff(convnets["gelu"], fresh).same


@needs_export
def test_an_archive_against_an_export_of_the_same_model(convnets: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "convnet.pt2"
    torch.export.save(torch.export.export(ConvNet().eval(), (IMAGES,)), str(path))
    result = tj.diff(convnets["v1"], path)
    assert result.compared_as == "capture" and result.same, result.summary()  # _convolution and conv2d are one op
    changed = tj.diff(convnets["gelu"], path)
    assert {s.scope for s in changed.scopes} == {"block.1"}


def test_a_diff_round_trips_and_from_json_runs_say_values_were_not_compared(convnets: dict[str, Path]) -> None:
    result = tj.diff(convnets["v1"], convnets["wide"])
    data = json.loads(json.dumps(result.to_json()))
    assert data["same"] is False and "stem.0.weight" in data["summary_text"]
    assert RunDiff.from_json(data).to_json() == data
    saved = TraceRun.from_json(tj.load(convnets["v1"]).to_json())
    noted = tj.diff(saved, convnets["v1"], values=True)
    assert noted.same and "values not compared" in noted.values_note
    # the one line said "have the same graphs and parameters" and nothing of the values
    assert noted.summary().endswith(f"have the same graphs and parameters ({noted.values_note})")


def test_a_side_that_failed_is_not_compared(convnets: dict[str, Path], tmp_path: Path) -> None:
    result = tj.diff(convnets["v1"], tmp_path / "absent.pt")
    assert not result.same and result.error.startswith("the new run failed: cannot read")
    with pytest.raises(TypeError, match="runs or saved files"):
        tj.diff(convnets["v1"], 3)  # type: ignore[arg-type]


def test_the_diff_page(convnets: dict[str, Path]) -> None:
    page = tj.diff(convnets["v1"], convnets["gelu"]).to_html()
    assert page.startswith("<!DOCTYPE html>") and "default-src 'none'" in html.unescape(page)  # no network
    assert "block.1" in page and "aten::relu -&gt; aten::gelu" in page and "<script>" not in page


def test_the_new_run_carries_what_the_diff_view_needs(convnets: dict[str, Path]) -> None:
    result = tj.diff(convnets["v1"], convnets["gelu"])
    shown = result.explorer_run()
    assert shown.graphs == result.new_run.graphs and shown.diff_against is not None  # run b, with the diff
    view = shown.diff_against
    assert view.method == "forward" and view.old_graph == result.old_run.graph
    (scope,) = view.diff.scopes
    (old_id,), (new_id,) = scope.old_nodes, scope.new_nodes
    assert view.old_graph.nodes[old_id].kind == "aten::relu" and shown.graph.nodes[new_id].kind == "aten::gelu"
    # the pairing lines the panes up: the block's conv is matched, the changed activation is not
    assert view.graph_diff is not None and old_id not in view.graph_diff.matched
    conv = next(n.id for n in view.old_graph.nodes if n.scope == "block.0" and n.role == "op")
    assert shown.graph.nodes[view.graph_diff.matched[conv]].scope == "block.0"
    # kernel-free: the saved JSON is a valid schema-2 run, read back the same, and a run without it is unchanged
    data = json.loads(json.dumps(shown.to_json()))
    check_run(data)
    assert data["schema_version"] == 3 and TraceRun.from_json(data).to_json() == data
    assert "diff_against" not in result.new_run.to_json()


def test_a_trace_against_an_export_has_no_pairing(convnets: dict[str, Path], tmp_path: Path) -> None:
    if export_support_problem() is not None:
        pytest.skip(str(export_support_problem()))
    path = tmp_path / "convnet.pt2"
    torch.export.save(torch.export.export(ConvNet().eval(), (IMAGES,)), str(path))
    view = tj.diff(convnets["gelu"], path).explorer_run().diff_against
    assert view is not None and view.graph_diff is None and view.diff.compared_as == "capture"


def test_a_diff_read_back_from_json_cannot_be_explored(convnets: dict[str, Path]) -> None:
    saved = RunDiff.from_json(tj.diff(convnets["v1"], convnets["gelu"]).to_json())
    with pytest.raises(ValueError, match=r"read back from JSON.*tj\.diff"):
        saved.explorer_run()


@needs_export
@pytest.mark.slow
def test_bert_exported_with_a_dynamic_length_opens_with_its_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    transformers = pytest.importorskip("transformers")
    config = bert_config(transformers)
    model = transformers.BertModel(config).eval()
    seq = torch.export.Dim("seq", min=2, max=64)
    ids = torch.randint(0, 100, (2, 7))
    ep = torch.export.export(model, (ids,), dynamic_shapes={"input_ids": {1: seq}}, strict=False)
    path = tmp_path / "bert.pt2"
    torch.export.save(ep, str(path))
    run = tj.load(path)
    assert run.error is None, run.error
    assert run.backend == "export" and run.target.name == "BertModel"
    assert run.export is not None
    ranges = {s.name: (s.min, s.max, s.sources) for s in run.export.symbols if s.kind == "backed"}
    assert list(ranges.values()) == [(2, 64, ["input_ids.size()[1]"])], ranges
    graph = run.graph
    assert graph is not None and "encoder.layer.1.attention.self" in graph.scopes
    round_trip(run)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_a_saved_trace_of_a_real_model_opens_as_its_trace_did(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BERT and GPT-2 traced, saved, read back: the archive's graph has the trace's module scopes and its ops' original
    lines (none made up: torch's 'File "", line 0' for an op the tracer recorded with no stack is no line)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    transformers = pytest.importorskip("transformers")
    if name == "bert":
        config = bert_config(transformers)
        model = transformers.BertModel(config, add_pooling_layer=False).eval()
    else:
        config = gpt2_config(transformers, use_cache=False)
        model = transformers.GPT2Model(config).eval()
    ids = torch.randint(0, 100, (2, 7))
    traced = tj.trace(model, (ids,), check_trace=False, strict=False)  # the models return dicts
    assert traced.error is None, traced.error
    path = tmp_path / f"{name}.pt"
    torch.jit.save(traced.traced, str(path))
    run = tj.load(path)
    assert run.error is None and (run.backend, run.source) == ("trace", "file"), run.error
    graph, trace_graph = run.graph, traced.graph
    assert graph is not None and trace_graph is not None
    assert set(graph.scopes) == set(trace_graph.scopes)
    ops = [n for n in graph.nodes if n.role == "op"]
    with_lines = [n for n in ops if n.source is not None and n.source.user_frame is not None]
    assert len(with_lines) >= 0.9 * len(ops), (len(with_lines), len(ops))
    trace_lines = {(n.source.user_frame.line) for n in trace_graph.nodes if n.source and n.source.user_frame}
    assert {n.source.user_frame.line for n in with_lines} <= trace_lines
    # every finding points at its nodes, and they at original lines
    assert all(f.node_ids for f in run.findings), run.findings
    round_trip(run)


class Pair:
    """An output class registered with torch's pytree only while the test exports and saves it."""

    def __init__(self, a: torch.Tensor, b: torch.Tensor) -> None:
        self.a, self.b = a, b


class ReturnsPair(nn.Module):
    def forward(self, x: torch.Tensor) -> Pair:
        return Pair(x + 1, x * 2)


@needs_export
def test_a_program_returning_a_class_this_python_has_not_registered(tmp_path: Path) -> None:
    from torch.utils import _pytree as pytree

    pytree.register_pytree_node(
        Pair,
        lambda p: ([p.a, p.b], None),
        lambda values, _: Pair(*values),
        serialized_type_name=f"{__name__}.Pair",
    )
    try:
        torch.export.save(torch.export.export(ReturnsPair(), (torch.randn(3),)), str(tmp_path / "pair.pt2"))
    finally:
        pytree._deregister_pytree_node(Pair)  # as in a fresh Python (tracejit view) that never imported its module
    run = tj.load(tmp_path / "pair.pt2")
    assert run.error is not None and run.error.tag == "unregistered_pytree", run.error
    assert f"{__name__}.Pair" in run.error.message and "Import the module that defines" in run.error.hint
    assert f"import {__name__} before tj.load" in run.error.hint, run.error.hint  # the module, from torch's message
    round_trip(run)
