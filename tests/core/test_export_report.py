"""What an export recorded beyond its graph (core/export/report.py -> records.py): the signature, symbols with their
sources and ranges, guards and runtime asserts at the user's lines and nodes, the draft report, and the findings
``dim_specialized`` and ``unbacked_symbol``; the run keeps it through JSON and the schema."""

from __future__ import annotations

import subprocess
import sys
import time
from types import SimpleNamespace
from typing import Any

import pytest
import torch
import torch.nn as nn
from torch.export import Dim

import tests.models
from jupyter_tracejit.core.capture import drive
from jupyter_tracejit.core.export.draft_report import draft_report
from jupyter_tracejit.core.export.findings import export_findings
from jupyter_tracejit.core.export.graph import graph_from_exported_program
from jupyter_tracejit.core.export.guards import _unshortened
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.core.export.records import ExportReport
from jupyter_tracejit.core.export.report import report_of
from jupyter_tracejit.core.export.session import ExportSession
from jupyter_tracejit.core.export.shape_env import specialization
from jupyter_tracejit.core.graph import Frame
from jupyter_tracejit.core.run import TraceRun
from jupyter_tracejit.core.validate import check_run
from tests.models import LOOP_LINE, MLP, LinearBatchNorm, LoopOverRows

#: the export back end needs torch.export with Dim.AUTO (the floor torch of the matrix, 2.4, lacks it)
pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))

THIS_FILE = __file__
CALLER = Frame(file=THIS_FILE, line=1, func="<module>", code="")


class Item(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.sum().long().item()  # ITEM LINE
        return torch.zeros(n)


def line_of(marker: str) -> int:
    with open(THIS_FILE) as f:
        return next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}"))


def export(target: Any, args: Any, **options: Any) -> TraceRun:
    return drive(ExportSession(target, args, caller=CALLER, **options).steps(time.perf_counter()))


@pytest.fixture(scope="module")
def mlp_run() -> TraceRun:
    return export(MLP(), (torch.randn(8, 16),), dynamic_shapes={"x": {0: Dim("batch", min=2, max=64)}})


@pytest.fixture(scope="module")
def loop_run() -> TraceRun:
    return export(LoopOverRows(), (torch.randn(3, 4),), dynamic_shapes={"x": {0: Dim.AUTO}})


@pytest.fixture(scope="module")
def item_run() -> TraceRun:
    return export(Item(), (torch.rand(3, 4),))


def test_mlp_signature_and_symbols(mlp_run: TraceRun) -> None:
    assert mlp_run.error is None and mlp_run.export is not None
    report = mlp_run.export
    kinds = [(e.kind, e.name, e.target) for e in report.inputs]
    assert kinds == [
        ("parameter", "p_fc1_weight", "fc1.weight"),
        ("parameter", "p_fc1_bias", "fc1.bias"),
        ("parameter", "p_fc2_weight", "fc2.weight"),
        ("parameter", "p_fc2_bias", "fc2.bias"),
        ("user_input", "x", None),
    ]
    assert [(e.kind, e.target) for e in report.outputs] == [("user_output", None)]
    assert report.mutated_buffers == []
    [sym] = report.symbols
    assert (sym.min, sym.max, sym.sources, sym.kind) == (2, 64, ["x.size()[0]"], "backed")
    # the graph's symbolic sizes are the same symbol
    assert any(sym.name in v.shape for v in mlp_run.graphs["forward"].values if v.shape)
    assert report.guards_of("specialization") == [] and report.draft is None
    assert not [f for f in mlp_run.findings if f.kind in ("dim_specialized", "unbacked_symbol")]


def test_batchnorm_train_mutates_its_buffers() -> None:
    run = export(LinearBatchNorm(4).train(), (torch.randn(3, 4),))
    assert run.export is not None
    assert sorted(run.export.mutated_buffers) == ["bn.num_batches_tracked", "bn.running_mean", "bn.running_var"]
    assert [e.kind for e in run.export.inputs].count("buffer") == 3
    assert export(LinearBatchNorm(4).eval(), (torch.randn(3, 4),)).export.mutated_buffers == []  # type: ignore[union-attr]


def test_dim_auto_loop_is_specialised_silently(loop_run: TraceRun) -> None:
    assert loop_run.error is None and loop_run.export is not None
    report = loop_run.export
    [guard] = report.guards_of("specialization")
    name, value = specialization(guard.expr) or ("", 0)
    assert value == 3 and (guard.file, guard.line) == (tests.models.__file__, LOOP_LINE)
    assert guard.code.startswith("for i in range(x.size(0))")
    symbol = report.symbol(name)
    assert symbol is not None and symbol.sources == ["x.size()[0]"] and (symbol.min, symbol.max) == (3, 3)
    [finding] = [f for f in loop_run.findings if f.kind == "dim_specialized"]
    assert finding.severity == "warning" and finding.is_problem
    assert f"x.size()[0] became 3 at line {LOOP_LINE}" in finding.message
    assert "Dim.STATIC" in finding.hint
    assert loop_run.verdict.level == "warning"


class Nested(nn.Module):
    def forward(self, x: torch.Tensor, pair: dict[str, torch.Tensor], *, mask: torch.Tensor) -> torch.Tensor:
        return x.sum() + pair["u"].sum() + mask.sum()


def test_strict_export_names_symbols_after_the_inputs_not_flat_args() -> None:
    # strict export traces a wrapper taking *flat_args: torch's sources read flat_args[0].size()[0]
    args = (torch.randn(3, 4), {"u": torch.randn(5, 2)})
    dims = {"x": {0: Dim.AUTO}, "pair": {"u": {0: Dim.AUTO}}, "mask": {0: Dim.AUTO}}
    run = export(Nested(), args, kwargs={"mask": torch.randn(6)}, dynamic_shapes=dims, strict=True)
    assert run.error is None and run.export is not None
    sources = sorted(s for sym in run.export.symbols for s in sym.sources)
    assert sources == ["mask.size()[0]", "pair_u.size()[0]", "x.size()[0]"]
    loop = export(LoopOverRows(), (torch.randn(3, 4),), dynamic_shapes={"x": {0: Dim.AUTO}}, strict=True)
    [finding] = [f for f in loop.findings if f.kind == "dim_specialized"]
    assert finding.title == "x.size()[0] became the constant 3"


def test_item_used_as_a_size_is_an_unbacked_symbol(item_run: TraceRun) -> None:
    assert item_run.error is None and item_run.export is not None
    report, graph = item_run.export, item_run.graphs["forward"]
    [sym] = [s for s in report.symbols if s.kind == "unbacked"]
    assert sym.name.startswith("u") and (sym.min, sym.max) == (0, None)
    asserts = [g for g in report.guards_of("runtime_assert") if sym.name in g.expr]
    assert asserts and all(g.node_ids for g in asserts)
    for g in asserts:
        assert (g.file, g.line) == (THIS_FILE, line_of("ITEM LINE"))
        assert all(graph.nodes[i].kind == "aten::_assert_scalar.default" for i in g.node_ids)
    [finding] = [f for f in item_run.findings if f.kind == "unbacked_symbol"]
    assert finding.severity == "info"
    assert set(asserts[0].node_ids) <= set(finding.node_ids)
    assert f"line {line_of('ITEM LINE')}" in finding.message


def test_report_without_graph_has_no_node_ids() -> None:
    ep = torch.export.export(Item(), (torch.rand(3, 4),))
    report = report_of(ep)
    assert report.guards_of("runtime_assert") and all(not g.node_ids for g in report.guards_of("runtime_assert"))
    assert all(g.line == line_of("ITEM LINE") for g in report.guards_of("runtime_assert"))
    with_graph = report_of(ep, graph=graph_from_exported_program(ep))
    assert [g.expr for g in with_graph.guards] == [g.expr for g in report.guards]


class Branchy(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x + 1
        return x - 1


def test_a_failing_export_keeps_torchs_log() -> None:
    # torch prints the partial graph of a data-dependent branch: the run keeps it, and nothing reaches stderr
    run = export(Branchy(), (torch.randn(3, 4),), draft="never")
    assert run.error is not None and run.export is not None
    assert "aten.item.default" in run.export.log and run.export.symbols == []
    check_run(run.to_json())


def test_torchs_structured_trace_is_left_to_its_own_handler() -> None:
    # torch.__trace records (TORCH_TRACE, for tlparse) carry no message: they are not taken from the user's trace
    # files, and a failure torch prints nothing for keeps an empty log (it read as many empty lines as torch's
    # trace state in the process decided)
    run = export(LoopOverRows(), (torch.randn(3, 4),), dynamic_shapes={"x": {0: Dim("n")}}, draft="never")
    assert run.error is not None and run.export is not None
    assert "torch.__trace" not in run.export.log


def test_report_of_never_raises_on_a_broken_program() -> None:
    broken = SimpleNamespace(graph=SimpleNamespace(nodes=None), graph_signature=None, range_constraints=None)
    report = report_of(broken, log="text")
    assert report == ExportReport(log="text")


def test_draft_report_is_read_defensively() -> None:
    assert draft_report(SimpleNamespace()) is None
    assert draft_report(SimpleNamespace(_report=SimpleNamespace(failures=5))) is None
    failure = SimpleNamespace(
        failure_type=SimpleNamespace(name="GUARD_ADDED"),
        data={"expr": "Eq(s77, 3)", "user_stack": [{"filename": 0, "line": LOOP_LINE, "loc": ""}]},
        print=lambda files: "guard added",
    )
    fake = SimpleNamespace(_report=SimpleNamespace(failures=[failure], str_to_filename={0: THIS_FILE}))
    [row] = draft_report(fake) or []
    assert (row.failure_type, row.expr, row.file, row.line, row.message) == (
        "guard_added",
        "Eq(s77, 3)",
        THIS_FILE,
        LOOP_LINE,
        "guard added",
    )
    # a frame whose file number no table has names no file (not a file called "1000000")
    inner = {"filename": 10**6, "line": 1789, "loc": "return forward_call(*args, **kwargs)"}
    failure.data = {"expr": "Eq(u0, 1)", "user_stack": [failure.data["user_stack"][0], inner]}
    [row] = draft_report(fake) or []
    assert (row.file, row.line) == (THIS_FILE, LOOP_LINE)


def test_findings_of_a_report_without_graph_skip_sizes(item_run: TraceRun) -> None:
    assert item_run.export is not None
    assert export_findings(item_run.export, None) == []


@pytest.mark.parametrize("name", ["mlp_run", "loop_run", "item_run"])
def test_run_with_report_round_trips_and_validates(name: str, request: pytest.FixtureRequest) -> None:
    run: TraceRun = request.getfixturevalue(name)
    data = run.to_json()
    check_run(data)
    again = TraceRun.from_json(data)
    assert again.export == run.export
    assert again.to_json() == data


def test_runs_without_records_still_validate(mlp_run: TraceRun) -> None:
    data = mlp_run.to_json()
    data.pop("records")  # as a run saved before the report existed
    check_run(data)
    assert TraceRun.from_json(data).export is None


def test_records_module_imports_no_torch() -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from jupyter_tracejit.core.export.records import ExportReport\n"
        "from jupyter_tracejit.core.run import TraceRun\n"
        "r = ExportReport.from_json(ExportReport(log='x').to_json()); assert r.log == 'x'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_guard_pointing_at_no_node_is_refused(item_run: TraceRun) -> None:
    data = item_run.to_json()
    [at] = [i for i, g in enumerate(data["records"]["guards"]) if g["node_ids"]][:1]
    data["records"]["guards"][at]["node_ids"] = [10**6]
    with pytest.raises(ValueError, match=f"/records/guards/{at}/node_ids"):
        check_run(data)


def test_a_model_exported_in_training_mode_is_said_so_with_the_eval_fix() -> None:
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Dropout(0.5))
    x = torch.randn(2, 3, 8, 8)
    trained = ExportSession(model.train(), (x,), caller=None)
    run = drive(trained.steps(time.perf_counter()))
    found = {f.kind: f for f in run.findings}
    assert found.keys() >= {"nondeterministic", "train_mode_batchnorm"}, found
    kinds = {k: [run.graph.nodes[i].kind for i in f.node_ids] for k, f in found.items()}
    assert kinds["nondeterministic"] == ["aten::dropout.default"]
    assert kinds["train_mode_batchnorm"] == ["aten::batch_norm.default"]
    assert "1.running_mean" in found["train_mode_batchnorm"].message
    assert all(f.fix == {"module_mode": "eval"} for f in found.values())
    assert run.verdict.label == "warnings"
    evaluated = drive(ExportSession(model.eval(), (x,), caller=None).steps(time.perf_counter()))
    assert not {"nondeterministic", "train_mode_batchnorm"} & {f.kind for f in evaluated.findings}


class Attention(nn.Module):
    def forward(self, q: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.0)


def test_an_op_whose_randomness_is_off_is_not_random_in_an_export() -> None:
    # scaled_dot_product_attention carries torch's nondeterministic tag; dropout_p=0.0 switches it off (its schema
    # is found through the export's overload name, aten::scaled_dot_product_attention.default)
    run = drive(ExportSession(Attention().train(), (torch.randn(1, 2, 3, 4),), caller=None).steps(time.perf_counter()))
    (sdpa,) = [n for n in run.graph.nodes if "scaled_dot_product_attention" in n.kind]
    assert sdpa.nondeterministic
    assert "nondeterministic" not in {f.kind for f in run.findings}


def test_a_path_torch_shortened_past_the_root_is_found_again(tmp_path):
    """torch's format_frame cuts the common path of a file and torch's folder, plus one character for the slash:
    when they share only "/" (a notebook cell in /tmp, torch under /work) it cuts a letter of the file's own
    top-level folder ("/tmp/x.py" -> "mp/x.py"). A strict export's guards on torch 2.14 came out so."""
    from torch.utils._traceback import shorten_filename

    model = tmp_path / "model.py"
    model.write_text("x = 1\n")
    shortened = shorten_filename(str(model), base="/nonexistent-folder/site-packages")
    assert shortened == str(model)[2:]  # torch's cut, the letter after "/" gone
    assert _unshortened(shortened) == str(model)
    assert _unshortened("no/such/file.py") == "no/such/file.py"


def test_a_one_letter_top_folder_cut_by_torch_is_found_again(monkeypatch):
    """'/w/x.py' shortened past the root reads '/x.py', an absolute path that does not exist: the one-letter folder
    it lost is found among the root's (the file system faked: a test cannot make a folder at '/')."""
    import os

    real_isfile, real_listdir = os.path.isfile, os.listdir
    monkeypatch.setattr(os.path, "isfile", lambda p: p == "/w/x.py" or (p != "/x.py" and real_isfile(p)))
    monkeypatch.setattr(os, "listdir", lambda p=".": ["wx", "w", "work"] if p == "/" else real_listdir(p))
    assert _unshortened("/x.py") == "/w/x.py"
