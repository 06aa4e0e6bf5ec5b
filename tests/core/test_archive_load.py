"""tj.load's core (``core/archive``): TorchScript archives saved here, read back as runs without running them."""

from __future__ import annotations

import json
import os
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from jupyter_tracejit.core.registry import names
from jupyter_tracejit.core.run import TraceRun
from jupyter_tracejit.core.torchscript.saved.findings import dtype_casts, frozen_sizes
from jupyter_tracejit.core.torchscript.saved.load import BACKEND, load_archive
from jupyter_tracejit.core.torchscript.saved.source import archive_source, archive_source_reader
from jupyter_tracejit.core.validate import check_run

from ..hf_models import bert_config


def round_trip(run: TraceRun) -> TraceRun:
    """The run's JSON validates and reads back equal; its graphs lint."""
    data = json.loads(json.dumps(run.to_json()))
    check_run(data)
    back = TraceRun.from_json(data)
    assert back.to_json() == data
    for graph in run.graphs.values():
        graph.lint()
    return back


def kinds(run: TraceRun) -> dict[str, list[int]]:
    return {f.kind: f.node_ids for f in run.findings}


def lines_of(run: TraceRun, node_ids: list[int], method: str = "forward") -> set[int]:
    graph = run.graphs[method]
    return {s.line for i in node_ids if (s := graph.nodes[i].source) is not None}


def line_of(text: str) -> int:
    """The line of this file holding ``text`` (the original line a node should point at)."""
    for number, line in enumerate(Path(__file__).read_text().splitlines(), start=1):
        if text in line:
            return number
    raise AssertionError(text)


def rewrite(
    src: Path,
    dst: Path,
    keep: Callable[[str], bool] = lambda n: True,
    edit: Callable[[str, bytes], bytes] | None = None,
) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            if keep(info.filename):
                data = zin.read(info.filename)
                zout.writestr(info, edit(info.filename, data) if edit else data)
    return dst


# -- models -------------------------------------------------------------------------------------------------------
class ConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU())
        self.drop = torch.nn.Dropout(0.5)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.features(x).mean((2, 3))
        return self.head(self.drop(y))


class BatchEight(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(12, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.view(8, -1)  # frozen batch
        heads = x.reshape(x.size(0), 4, 3)
        return self.fc(flat).float() + heads.sum()  # dtype cast


class DeviceConstant(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.zeros(3, device="cpu")  # baked device


class TwoMethods(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x).relu()  # scripted forward

    @torch.jit.export
    def encode(self, x: torch.Tensor, k: int) -> torch.Tensor:
        return self.lin(x) * k  # scripted encode


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("archives")
    out: dict[str, Path] = {}
    torch.manual_seed(0)
    with torch.no_grad():
        convnet = torch.jit.trace(ConvNet().train(), torch.randn(2, 3, 6, 6), check_trace=False)
        out["convnet"] = root / "convnet.pt"
        torch.jit.save(convnet, str(out["convnet"]))
        batch = torch.jit.trace(BatchEight().eval(), torch.randn(8, 12))
        out["batch"] = root / "batch.pt"
        torch.jit.save(batch, str(out["batch"]))
        device = torch.jit.trace(DeviceConstant(), torch.randn(3))
        out["device"] = root / "device.pt"
        torch.jit.save(device, str(out["device"]))
    out["script"] = root / "script.pt"
    torch.jit.save(torch.jit.script(TwoMethods()), str(out["script"]))
    out["pickle"] = root / "pickle.pt"
    torch.save(ConvNet(), out["pickle"])
    return out


# -- archives -------------------------------------------------------------------------------------------------------
def test_the_backend_is_known() -> None:
    assert BACKEND == "trace" and BACKEND in names()


def test_a_traced_convnet_in_train_mode(saved: dict[str, Path]) -> None:
    run = load_archive(saved["convnet"])
    assert run.error is None and run.backend == BACKEND, run.error
    assert run.target.kind == "script" and run.target.type == "ConvNet" and run.target.file == str(saved["convnet"])
    assert run.options == {"path": str(saved["convnet"]), "map_location": "cpu"}
    assert list(run.graphs) == ["forward"] and run.inputs == {"forward": ["Float(2, 3, 6, 6)"]}
    graph = run.graphs["forward"]
    # the module tree, with types, from the inlined call stacks and the module itself
    assert {p: s.type for p, s in graph.scopes.items()} == {
        "": "ConvNet",
        "features": "Sequential",
        "features.0": "Conv2d",
        "features.1": "BatchNorm2d",
        "features.2": "ReLU",
        "drop": "Dropout",
        "head": "Linear",
    }
    assert {n.scope for n in graph.nodes if n.kind == "aten::batch_norm"} == {"features.1"}
    assert run.parameters["features.1.running_mean"] == "Float(4)" and run.parameters["head.weight"] == "Float(2, 4)"
    found = kinds(run)
    assert set(found) == {"train_mode_batchnorm", "nondeterministic"}, found
    assert [graph.nodes[i].kind for i in found["train_mode_batchnorm"]] == ["aten::batch_norm"]
    assert [graph.nodes[i].kind for i in found["nondeterministic"]] == ["aten::dropout"]
    # each with the original line, in this file
    assert lines_of(run, found["train_mode_batchnorm"]) == {line_of("y = self.features(x).mean((2, 3))")}
    assert lines_of(run, found["nondeterministic"]) == {line_of("return self.head(self.drop(y))")}
    assert all(f.fix == {} for f in run.findings)  # nothing to re-trace: the archive is what it is
    assert "forward" in graph.code and run.argument_names
    assert run.verdict.level == "warning"
    round_trip(run)


def test_a_batch_size_frozen_into_a_view_and_a_baked_cast(saved: dict[str, Path]) -> None:
    run = load_archive(saved["batch"])
    assert run.error is None, run.error
    graph = run.graphs["forward"]
    found = {f.kind: f for f in run.findings}
    assert set(found) == {"frozen_size", "dtype_cast"}, found
    frozen = found["frozen_size"]
    # the view with the constant 8; not the reshape that reads x.size(0), nor its constant 4 and 3
    assert [graph.nodes[i].kind for i in frozen.node_ids] == ["aten::view"]
    assert "8" in frozen.title and frozen.severity == "warning"
    assert lines_of(run, frozen.node_ids) == {line_of("flat = x.view(8, -1)  # frozen batch")}
    assert "x.view(8, -1)" in frozen.message
    cast = found["dtype_cast"]
    assert [graph.nodes[i].kind for i in cast.node_ids] == ["aten::to"] and "float32" in cast.title
    assert lines_of(run, cast.node_ids) == {line_of("# dtype cast")}
    round_trip(run)


def test_no_frozen_size_without_stored_example_inputs(saved: dict[str, Path], tmp_path: Path) -> None:
    # the same archive without traced_inputs.pkl: the batch size is unknown, so nothing is claimed
    bare = rewrite(saved["batch"], tmp_path / "bare.pt", keep=lambda n: "traced_inputs" not in n)
    run = load_archive(bare)
    assert run.error is None and run.inputs == {"forward": ["Tensor"]}
    assert set(kinds(run)) == {"dtype_cast"}
    round_trip(run)


def test_a_device_constant_is_reported_as_baked(saved: dict[str, Path]) -> None:
    run = load_archive(saved["device"])
    assert run.error is None, run.error
    found = {f.kind: f for f in run.findings}
    device = found["device_constant"]
    graph = run.graphs["forward"]
    assert device.portability and '"cpu"' in device.title
    assert [graph.nodes[i].kind for i in device.node_ids] == ["aten::zeros"]
    assert lines_of(run, device.node_ids) == {line_of("# baked device")}
    # everything is on the CPU and no target device was given: a note, not a warning
    assert device.severity == "info" and run.verdict.level == "ok"
    round_trip(run)


def test_a_scripted_module_with_two_methods(saved: dict[str, Path]) -> None:
    run = load_archive(saved["script"])
    assert run.error is None, run.error
    assert list(run.graphs) == ["forward", "encode"]  # forward first
    assert run.inputs == {"forward": ["Tensor"], "encode": ["Tensor", "int"]}
    assert run.target.type == "TwoMethods"
    forward, encode = run.graphs["forward"], run.graphs["encode"]
    relu = next(n for n in forward.nodes if n.kind == "aten::relu")
    mul = next(n for n in encode.nodes if n.kind == "aten::mul")
    # a scripted archive keeps the source text itself: file, line and code
    assert relu.source is not None and relu.source.line == line_of("# scripted forward")
    assert relu.source.code == "return self.lin(x).relu()  # scripted forward"
    assert mul.source is not None and mul.source.line == line_of("# scripted encode")
    assert {n.scope for n in encode.nodes if n.kind == "aten::linear"} == {"lin"}
    assert run.findings == []
    round_trip(run)


def test_an_archive_saved_without_debug_info_says_so(saved: dict[str, Path], tmp_path: Path) -> None:
    stripped = rewrite(saved["batch"], tmp_path / "nodebug.pt", keep=lambda n: not n.endswith(".debug_pkl"))
    run = load_archive(stripped)
    assert run.error is None, run.error
    found = {f.kind: f for f in run.findings}
    assert found["no_debug_info"].severity == "info"
    assert all(n.source is None for n in run.graphs["forward"].nodes)
    assert "no original line" in found["frozen_size"].message  # the finding stands, without a line
    round_trip(run)


def test_map_location_is_recorded(saved: dict[str, Path]) -> None:
    run = load_archive(saved["device"], map_location=None)
    assert run.error is None and run.options["map_location"] is None
    round_trip(run)


def test_torchs_deprecation_notice_for_loading_is_not_passed_on(saved: dict[str, Path]) -> None:
    # torch.jit.load warns on every call (2.14: a FutureWarning, which the default filters print to stderr); the
    # notice is about our reading the file, and the user's own warnings still get through
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = load_archive(saved["convnet"])
        warnings.warn("the user's own", UserWarning, stacklevel=1)
    assert run.error is None
    assert [str(w.message) for w in caught] == ["the user's own"]


def test_the_source_texts_torch_gives_a_loaded_node() -> None:
    scripted = (
        '  File "/m.py", line 7\n    def f(x):\n        return x.relu()\n               ~~~~~~ <--- HERE\n'
        'Serialized   File "code/__torch__.py", line 3\n  return torch.relu(x)\n'
    )
    loc = archive_source(scripted, {})
    assert loc is not None and (loc.file, loc.line, loc.code) == ("/m.py", 7, "return x.relu()")
    assert archive_source('  File "code/__torch__.py", line 3\n  return torch.relu(x)\n', {}) is None
    assert archive_source("", {}) is None


def test_nodes_of_one_original_line_share_its_reading(saved: dict[str, Path]) -> None:
    # a loaded node's text ends with its own place in the archive's code: the original range is read once
    module = torch.jit.load(str(saved["convnet"]))
    texts = [n.sourceRange() for n in module.forward.inlined_graph.nodes()]
    read = archive_source_reader()
    by_original: dict[str, set[int]] = {}
    for text in texts:
        loc = read(text, {})
        assert loc == archive_source(text, {})
        by_original.setdefault(text.split("Serialized   File")[0], set()).add(id(loc))
    assert len(by_original) < len(set(texts)) and all(len(ids) == 1 for ids in by_original.values())


# -- a real model ------------------------------------------------------------------------------------------------
def test_bert_traced_from_its_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    transformers = pytest.importorskip("transformers")
    config = bert_config(transformers)
    model = transformers.BertModel(config).eval()
    ids = torch.randint(0, 100, (2, 7))
    with torch.no_grad():
        traced = torch.jit.trace(model, (ids,), strict=False, check_trace=False)
    path = tmp_path / "bert.pt"
    torch.jit.save(traced, str(path))
    run = load_archive(path)
    assert run.error is None, run.error
    graph = run.graphs["forward"]
    assert run.target.type == "BertModel" and len(graph) > 100
    assert "encoder.layer.1.attention.self" in graph.scopes
    assert any(n.source is not None and "modeling_bert.py" in n.source.file for n in graph.nodes)
    assert "nondeterministic" not in kinds(run) and "train_mode_batchnorm" not in kinds(run)
    assert "frozen_size" not in kinds(run)  # HF reads sizes from the tensors
    round_trip(run)


# -- bad files -----------------------------------------------------------------------------------------------------
def refused(run: TraceRun, tag: str) -> None:
    assert run.error is not None and run.error.phase == "load" and run.error.tag == tag, run.error
    assert run.error.hint and run.error.message and not run.graphs
    assert run.verdict.level == "error"
    round_trip(run)


@pytest.fixture
def no_torch_load(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("torch.load must never be called on a user's file")

    monkeypatch.setattr(torch, "load", refuse)


def test_a_text_file(tmp_path: Path, no_torch_load: None) -> None:
    path = tmp_path / "model.pt"
    path.write_text("not a model\n")
    refused(load_archive(path), "not_an_archive")


def test_a_missing_file(tmp_path: Path) -> None:
    refused(load_archive(tmp_path / "absent.pt"), "not_found")


def test_a_truncated_archive(saved: dict[str, Path], tmp_path: Path, no_torch_load: None) -> None:
    data = saved["convnet"].read_bytes()
    cut = tmp_path / "cut.pt"
    cut.write_bytes(data[: len(data) // 2])
    refused(load_archive(cut), "truncated_archive")


def test_a_whole_module_saved_with_torch_save_is_never_unpickled(
    saved: dict[str, Path], tmp_path: Path, no_torch_load: None
) -> None:
    refused(load_archive(saved["pickle"]), "pickle")
    legacy = tmp_path / "legacy.pt"
    with open(legacy, "wb") as f:  # the old format is a raw pickle
        f.write(bytes([0x80, 0x02]) + b"rest")
    refused(load_archive(legacy), "pickle")


def test_a_zip_that_is_not_an_archive(tmp_path: Path, no_torch_load: None) -> None:
    path = tmp_path / "notes.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("notes/readme.txt", "hello")
    refused(load_archive(path), "not_torchscript")


def test_an_archive_from_a_newer_torch(saved: dict[str, Path], tmp_path: Path, no_torch_load: None) -> None:
    newer = rewrite(saved["device"], tmp_path / "newer.pt", edit=lambda n, d: b"99\n" if n.endswith("/version") else d)
    run = load_archive(newer)
    refused(run, "newer_torch")
    assert run.error is not None and "version 99" in run.error.message


def test_a_corrupted_member(saved: dict[str, Path], tmp_path: Path, no_torch_load: None) -> None:
    damaged = rewrite(
        saved["device"],
        tmp_path / "damaged.pt",
        edit=lambda n, d: b"\x00" * len(d) if n.endswith("constants.pkl") or n.endswith("data.pkl") else d,
    )
    run = load_archive(damaged)
    assert run.error is not None and run.error.phase == "load" and not run.graphs
    round_trip(run)


def test_a_damaged_debug_pkl_loads_without_source_lines_and_says_so(saved: dict[str, Path], tmp_path: Path) -> None:
    """torch reads code/*.debug_pkl lazily and raised on the first source range (an internal error, no hint)."""
    damaged = rewrite(
        saved["convnet"],
        tmp_path / "damaged.pt",
        edit=lambda n, d: d[: len(d) // 2] if n.endswith(".debug_pkl") else d,
    )
    run = load_archive(damaged)
    assert run.error is None and run.graphs, run.error
    assert all(n.source is None for g in run.graphs.values() for n in g.nodes)
    (finding,) = [f for f in run.findings if f.kind == "damaged_debug_info"]
    assert "loaded without them" in finding.message and "save the model again" in finding.hint
    assert "no_debug_info" not in kinds(run)
    round_trip(run)


def test_an_export_archive(tmp_path: Path, no_torch_load: None) -> None:
    path = tmp_path / "model.pt2"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("model/archive_format", "pt2")
        z.writestr("model/models/model.json", "{}")
    refused(load_archive(path), "export_archive")


def test_the_rules_need_no_torch_beyond_the_graph(saved: dict[str, Path]) -> None:
    back = round_trip(load_archive(saved["batch"]))
    graph = back.graphs["forward"]
    frozen, cast = frozen_sizes(graph), dtype_casts(graph)
    assert frozen is not None and cast is not None
    source = graph.nodes[cast.node_ids[0]].source
    assert source is not None and os.path.basename(source.file) == "test_archive_load.py"
