"""Every graph break torch's ``explain`` reports is in ``run.compile.graph_breaks`` at the user's line, and the run
has as many graphs as explain: one model per classic break (tests/core/compile/models.py)."""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from pathlib import Path

import pytest
import torch

from jupyter_tracejit.core.compile.request import compile as tj_compile
from jupyter_tracejit.core.run import TraceRun

from . import models
from .truth import explain

MODELS_FILE = os.path.abspath(models.__file__)
MARKED = models.marked_lines()
#: the standard fix each classic break's finding names (findings.py)
FIXES = {
    "print": "reorderable_logging_functions",
    "branch": "torch.where",
    "item": "capture_scalar_outputs",
    "logging": "ignore_logger_methods",
    "warnings": "torch.compiler.disable",
    "deepcopy": "clone()",
    "numpy": "torch operations",
    "graph_break": "Remove the call",
    "helper": "reorderable_logging_functions",
    "submodule": "reorderable_logging_functions",
    "loop": "Remove the call",
    "layers": "reorderable_logging_functions",
}


def run_quietly(model: torch.nn.Module, *args: torch.Tensor, **options: object) -> TraceRun:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        return tj_compile(model, args, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(models.BREAKING))
def test_every_break_explain_reports_is_at_its_line(name: str) -> None:
    torch.manual_seed(0)
    model = models.BREAKING[name]()
    x = torch.randn(3, 4)
    run = run_quietly(model, x)
    assert run.error is None, run.error
    truth = explain(model, (x,), files=[MODELS_FILE])
    report = run.compile
    found = {(os.path.abspath(b.file), b.line) for b in report.graph_breaks}
    assert set(truth.break_lines) <= found, (truth.break_lines, found, truth.reasons)
    first_call = [r for r in report.regions if r.call == 0]
    assert len(first_call) == truth.graph_count
    assert len(run.graphs) == len(report.regions)
    # the break is at the line the model marks, the user's line even when it happens inside a library
    marked = {MARKED[k] for k in MARKED}
    assert any(b.line in marked and os.path.abspath(b.file) == MODELS_FILE for b in report.graph_breaks), [
        (b.file, b.line) for b in report.graph_breaks
    ]
    assert run.check is not None and run.check.ok
    fixes = [f for f in run.findings if f.kind == "break_fix"]
    assert fixes and any(FIXES[name] in f.hint for f in fixes), [f.hint for f in fixes]
    for gb in report.graph_breaks:
        assert gb.reason and gb.gb_type and gb.count >= 1
        assert gb.code == Path(gb.file).read_text().splitlines()[gb.line - 1].strip()


def test_a_break_inside_a_library_is_at_the_users_line_and_names_the_library() -> None:
    run = run_quietly(models.Deepcopy(), torch.randn(3, 4))
    (gb,) = run.compile.graph_breaks
    assert (os.path.abspath(gb.file), gb.line) == (MODELS_FILE, MARKED["Deepcopy"])
    assert gb.package == "copy" and gb.stack[-1].package == "copy" and gb.stack[0].line == gb.line
    torch_words = explain(models.Deepcopy(), (torch.randn(3, 4),)).reasons[0]
    assert gb.gb_type and gb.gb_type in torch_words
    assert any(f.kind == "break_fix" and "copy.deepcopy" in f.title for f in run.findings)


def test_the_registry_code_and_hints_are_torchs(tmp_path: object) -> None:
    from jupyter_tracejit.core.compile.breaks import registry

    table = registry()
    run = run_quietly(models.Explicit(), torch.randn(3, 4))
    (gb,) = run.compile.graph_breaks
    if table is None:
        assert gb.gb_code == "" and any("registry" in u for u in run.compile.unknown)
        return
    entry = table[gb.gb_code][0]
    assert entry["Gb_type"] == gb.gb_type == "Call to `torch._dynamo.graph_break()`"
    assert gb.explanation.startswith(entry["Explanation"].split("{")[0].strip())
    assert gb.hints and all(h in gb.reason for h in gb.hints)


def test_a_break_in_a_loop_of_the_compiled_function_is_reported_not_read_as_none() -> None:
    x = torch.randn(3, 4)
    run = run_quietly(models.InLoop(), x)
    assert explain(models.InLoop(), (x,)).graph_count == 0  # torch: no graph, "no breaks"
    report = run.compile
    assert report.regions == []
    (gb,) = report.graph_breaks
    assert gb.skipped_frame == "forward" and gb.line == MARKED["InLoop"]
    assert gb.skipped_line == MARKED["InLoop"]
    skipped = [f for f in run.findings if f.kind == "skipped_function"]
    assert len(skipped) == 1 and "forward runs eagerly" in skipped[0].title
    assert run.verdict.level != "ok" and "warning: forward runs eagerly" in run.verdict.reasons


def test_a_layers_break_is_counted_once_per_layer_and_its_ops_joined() -> None:
    model = models.Layers(3)
    x = torch.randn(2, 4)
    run = run_quietly(model, x)
    report = run.compile
    in_layer = [b for b in report.graph_breaks if b.line == MARKED["Noisy"] and not b.skipped_frame]
    assert len(in_layer) == 1 and in_layer[0].count == 3
    skipped = [b for b in report.graph_breaks if b.skipped_frame]
    assert [b.skipped_frame for b in skipped] == ["forward"]
    assert any(f.kind == "break_in_loop" for f in run.findings)
    gb = in_layer[0]
    assert gb.before is not None and gb.after is not None
    before = run.graphs[gb.before.graph].nodes[gb.before.node]
    after = run.graphs[gb.after.graph].nodes[gb.after.node]
    assert before.source is not None and before.source.line < gb.line < after.source.line  # type: ignore[union-attr]
    # the layer's graphs are scoped under the layer, as the model names it
    assert before.scope.startswith("layers.") and before.scope.endswith(".fc")


def test_ops_before_and_after_a_break_are_the_lines_around_it() -> None:
    run = run_quietly(models.Printing(), torch.randn(3, 4))
    (gb,) = run.compile.graph_breaks
    assert gb.before == type(gb.before)("forward", gb.before.node)  # type: ignore[call-arg,union-attr]
    assert gb.after is not None and gb.after.graph == "forward#1"
    before = run.graphs["forward"].nodes[gb.before.node]  # type: ignore[union-attr]
    after = run.graphs["forward#1"].nodes[gb.after.node]
    assert before.kind == "torch::linear" and before.scope == "fc"
    assert before.source is not None and before.source.line == gb.line - 1
    assert after.source is not None and after.source.line == gb.line + 1
    # parameters are the model's, by their names
    names = {n.attributes.get("name") for n in run.graphs["forward"].nodes if n.role == "getattr"}
    assert names == {"fc.weight", "fc.bias"}
    assert [run.graphs["forward"].values[v].name for v in run.graphs["forward"].inputs] == ["x"]


class TwoBreaks(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        torch._dynamo.graph_break()
        h = h + 1
        torch._dynamo.graph_break()
        return (h.cos() * 2).relu()


def test_a_graph_too_small_to_gain_is_a_finding() -> None:
    run = run_quietly(TwoBreaks(), torch.randn(3, 4))
    assert [r.ops for r in run.compile.regions] == [1, 1, 3]
    (small,) = [f for f in run.findings if f.kind == "small_graph"]
    assert small.method == "forward#1" and "1 op" in small.title


def test_a_clean_model_is_one_graph_and_ok() -> None:
    run = run_quietly(models.Clean(), torch.randn(3, 4))
    assert run.ok and run.compile.graph_breaks == [] and len(run.compile.regions) == 1
    assert list(run.graphs) == ["forward"] and run.verdict.level == "ok"


def test_a_function_compiles_under_its_name() -> None:
    run = run_quietly(models.double, torch.randn(3, 4))  # type: ignore[arg-type]
    assert run.ok and list(run.graphs) == ["double"] and run.target.kind == "function"


def test_the_run_survives_json() -> None:
    run = run_quietly(models.InHelper(), torch.randn(3, 4))
    data = run.to_json()
    again = TraceRun.from_json(data)
    assert again.to_json() == data
    assert again.compile is not None and len(again.compile.graph_breaks) == len(run.compile.graph_breaks)
