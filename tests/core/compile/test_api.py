"""``tj.compile``'s contract: its arguments, never raising, fullgraph's error at the break, the check, the back
ends, what a run records of its options."""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import shutil
import warnings
from typing import Any

import pytest
import torch

from jupyter_tracejit.core.compile.options import CompileOptions
from jupyter_tracejit.core.compile.request import compile as tj_compile
from jupyter_tracejit.core.run import TraceRun

from . import models

MODELS_FILE = os.path.abspath(models.__file__)
MARKED = models.marked_lines()


def run_quietly(model: Any, *args: Any, **options: Any) -> TraceRun:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        return tj_compile(model, args, **options)


def test_the_signature_is_the_contract() -> None:
    params = inspect.signature(tj_compile).parameters
    assert list(params) == [
        "model", "args", "kwargs", "calls", "dynamic", "fullgraph", "backend", "check", "module_mode", "no_grad",
    ]  # fmt: skip
    defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
    assert defaults == {
        "args": (), "kwargs": None, "calls": None, "dynamic": None, "fullgraph": False, "backend": "eager",
        "check": True, "module_mode": "as_is", "no_grad": False,
    }  # fmt: skip
    assert all(params[k].kind is inspect.Parameter.KEYWORD_ONLY for k in list(params)[3:])


def test_the_api_name_comes_from_the_registry() -> None:
    from jupyter_tracejit.core.registry import api_functions, backend

    row = backend("compile")
    assert api_functions()["compile"] == (".compile.request", "compile") and row.records == "compile"


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"backend": "tensorrt"}, "backend must be one of 'eager', 'aot_eager', 'inductor'"),
        ({"dynamic": "yes"}, "dynamic must be None, True or False"),
        ({"fullgraph": 1}, "fullgraph must be True or False"),
        ({"module_mode": "test"}, "module_mode must be one of"),
        ({"calls": torch.randn(3, 4)}, "calls must be a list of input sets, got a Tensor"),
        ({"calls": [torch.randn(3, 4)]}, "calls[0] must be a tuple of positional inputs or a dict"),
        ({"check": None}, "check must be True or False"),
    ],
)
def test_bad_options_are_the_runs_error_with_the_fix(options: dict[str, Any], says: str) -> None:
    run = run_quietly(models.Clean(), torch.randn(3, 4), **options)
    assert run.error is not None and run.error.phase == "arguments" and says in run.error.message
    assert run.error.hint and not run.graphs and run.backend == "compile"
    TraceRun.from_json(run.to_json())  # a refused run's options (reprs where they were wrong) are valid JSON


def test_bad_arguments_are_the_runs_error() -> None:
    assert "args must be a tuple" in str(run_quietly_args(models.Clean(), [torch.randn(3, 4)]))
    assert "compile needs an nn.Module or a function" in str(run_quietly_args(3, (torch.randn(3, 4),)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit.script is deprecated in 2.13
        scripted = torch.jit.script(models.Clean())
    assert "TorchScript" in str(run_quietly_args(scripted, (torch.randn(3, 4),)))


def test_an_unsupported_torch_gets_a_run_that_says_why_and_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a torch older than the back end's floor (the CI matrix's 2.4.1 for real; here the version it reads is
    made one), tj.compile runs nothing and its run names the torch and the fix."""
    from jupyter_tracejit.core.compile import request

    monkeypatch.setattr(request.torch, "__version__", "2.4.1")
    problem = request.compile_support_problem()
    assert problem is not None and "torch 2.4.1" in problem and "pip install 'torch>=2.13'" in problem
    run = tj_compile(models.Clean(), (torch.randn(3, 4),))
    assert not run.ok and run.error is not None and run.error.phase == "arguments"
    assert "torch 2.4.1" in run.error.message and not run.graphs


def run_quietly_args(model: Any, args: Any) -> Any:
    run = tj_compile(model, args)
    assert run.error is not None and run.error.phase == "arguments"
    return run.error.message


def test_the_model_raising_is_the_runs_error_at_its_line() -> None:
    run = run_quietly(models.Clean(), torch.randn(3, 5))  # 5 features for a Linear(4, 4)
    assert run.error is not None and run.error.phase == "compile" and run.error.hint
    assert run.error.file and run.error.line


def test_fullgraph_makes_the_first_break_an_error_at_its_line() -> None:
    run = run_quietly(models.Printing(), torch.randn(3, 4), fullgraph=True)
    assert run.error is not None and run.error.tag == "graph_break"
    assert (os.path.abspath(run.error.file), run.error.line) == (MODELS_FILE, MARKED["Printing"])
    assert "print" in run.error.message and "fullgraph=True" in run.error.hint
    (gb,) = run.compile.graph_breaks
    assert gb.line == run.error.line and all(h in run.error.hint for h in gb.hints)
    assert run.verdict.level == "error"
    # the breaks' finding says fullgraph made the break the error, and does not recommend the option in force
    (summary,) = [f for f in run.findings if f.kind == "graph_breaks"]
    assert summary.message.startswith(f"fullgraph=True made the first graph break an error (line {gb.line}")
    assert "fullgraph=False" in summary.hint and "fullgraph=True" not in summary.hint
    clean = run_quietly(models.Clean(), torch.randn(3, 4), fullgraph=True)
    assert clean.ok


class CompiledDiffers(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1 if torch.compiler.is_compiling() else x


def test_the_check_compares_every_call_with_the_eager_model() -> None:
    run = run_quietly(CompiledDiffers(), torch.randn(3, 4), calls=[(torch.randn(2, 4),)])
    assert run.check is not None and not run.check.ok
    assert [c.label for c in run.check.cases] == ["call 0", "call 1"]
    assert all(not c.outputs[0].ok and c.outputs[0].against == "python" for c in run.check.cases)
    assert run.verdict.label == "check failed"
    unchecked = run_quietly(CompiledDiffers(), torch.randn(3, 4), check=False)
    assert unchecked.check is None and unchecked.python_runs == 1


def test_module_mode_and_no_grad_apply_to_the_run_only() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5), torch.nn.BatchNorm1d(4))
    model.train()
    stats = model[2].running_mean.clone()
    run = run_quietly(model, torch.randn(8, 4), module_mode="eval", no_grad=True)
    assert run.ok and model.training and torch.equal(model[2].running_mean, stats)
    assert torch.is_grad_enabled()
    trained = run_quietly(model, torch.randn(8, 4), calls=[(torch.randn(8, 4),)])
    assert trained.check is not None and trained.check.ok  # dropout drew the same numbers eagerly and compiled
    assert torch.equal(model[2].running_mean, stats)  # buffers put back


def test_options_are_recorded() -> None:
    run = run_quietly(models.Clean(), torch.randn(3, 4), calls=[(torch.randn(5, 4),)], dynamic=False)
    assert run.options == {
        "calls": [["Float(5, 4)"]],
        "dynamic": False,
        "fullgraph": False,
        "backend": "eager",
        "check": True,
        "module_mode": "as_is",
        "no_grad": False,
    }
    assert CompileOptions().to_json()["calls"] is None
    again = run.request.run(dynamic=None)
    assert again.options["dynamic"] is None and len(again.compile.recompilations) == 1


def test_aot_eager_makes_the_same_graphs() -> None:
    x = torch.randn(3, 4)
    eager = run_quietly(models.InHelper(), x)
    aot = run_quietly(models.InHelper(), x, backend="aot_eager")
    assert aot.error is None and aot.compile.backend == "aot_eager"
    assert not aot.ok  # its break: a compiled run with graph breaks is not ok (the CLI's exit 1)
    assert [r.ops for r in aot.compile.regions] == [r.ops for r in eager.compile.regions]


def _inductor_works() -> bool:
    if shutil.which("g++") is None and shutil.which("gcc") is None and shutil.which("c++") is None:
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.compile(lambda t: t * 2 + 1, backend="inductor")(torch.randn(3))
    except Exception:
        return False
    finally:
        torch._dynamo.reset()
    return True


@pytest.mark.slow
def test_inductor_records_each_regions_compile_time() -> None:
    if not _inductor_works():
        pytest.skip("inductor cannot compile here (no working C++ compiler)")
    run = run_quietly(models.Printing(), torch.randn(3, 4), backend="inductor")
    assert run.error is None, run.error
    eager = run_quietly(models.Printing(), torch.randn(3, 4))
    assert len(run.compile.regions) == len(eager.compile.regions) == 2
    inductor_time = [r.compile_time for r in run.compile.regions]
    assert all(t > 0 for t in inductor_time)
    assert sum(inductor_time) > 10 * sum(r.compile_time for r in eager.compile.regions)


def test_tj_compile_is_the_packages() -> None:
    import jupyter_tracejit as tj

    assert tj.compile is tj_compile and "compile" in tj.__all__


def test_the_options_are_one_table_with_the_command_lines_flags() -> None:
    import argparse

    from jupyter_tracejit.core.compile.options import COMPILE_TABLE
    from jupyter_tracejit.core.options import CommandLineError

    parser = argparse.ArgumentParser()
    COMPILE_TABLE.add_command_line(parser.add_argument)
    given, expressions = COMPILE_TABLE.from_command_line(
        parser.parse_args(["--no-dynamic", "--backend", "inductor", "--no-check", "--calls", "[(x2,)]", "--eval"])
    )
    assert given == {"dynamic": False, "backend": "inductor", "check": False, "module_mode": "eval"}
    assert expressions == {"calls": "[(x2,)]"}
    with pytest.raises(CommandLineError, match="--dynamic and --no-dynamic contradict"):
        COMPILE_TABLE.from_command_line(parser.parse_args(["--dynamic", "--no-dynamic"]))
    rows = {row["key"]: row for row in COMPILE_TABLE.bar_rows()}
    assert rows["calls"]["read_only"] and rows["backend"]["choices"] == ["eager", "aot_eager", "inductor"]
    assert list(rows)[:3] == ["fullgraph", "dynamic", "backend"]
    # dynamic is torch's None / True / False: a menu in the bar, each value in words
    assert rows["dynamic"]["control"] == "menu" and rows["dynamic"]["choices"] == [None, True, False]
    assert rows["dynamic"]["choice_labels"] == ["dynamic: auto", "dynamic: all sizes", "dynamic: off"]
    assert CompileOptions().replace(dynamic=True).dynamic is True
    with pytest.raises(TypeError, match="unknown compile option"):
        CompileOptions().replace(strict=True)


def test_a_model_already_compiled_is_compiled_from_its_original() -> None:
    model = models.Printing()
    run = run_quietly(torch.compile(model, backend="eager"), torch.randn(3, 4))
    assert run.error is None and len(run.compile.graph_breaks) == 1 and run.target.name == "Printing"
    function = run_quietly(torch.compile(models.double, backend="eager"), torch.randn(3, 4))
    assert function.ok and list(function.graphs) == ["double"]


@pytest.mark.parametrize(
    ("version", "supported"),
    [("2.12.1", False), ("2.13.0+cpu", True), ("2.13.0.dev20260901+cu128", True), ("2.14.1", True), ("3.0.0", True)],
)
def test_the_floor_reads_the_release_whatever_the_local_tag(
    monkeypatch: pytest.MonkeyPatch, version: str, supported: bool
) -> None:
    from jupyter_tracejit.core.compile import request

    monkeypatch.setattr(request.torch, "__version__", version)
    assert (request.compile_support_problem() is None) is supported


def test_a_run_with_its_check_off_says_which_setting_turned_it_off() -> None:
    """The setting is the back end's (its registry row's ``check_off``), as the user wrote it: ``check=False`` for
    tj.compile, where a trace says ``check_trace=False``."""
    from jupyter_tracejit.render.html import to_html

    run = run_quietly(models.Clean(), torch.randn(3, 4), check=False)
    assert run.check is None and run.error is None
    assert run.verdict.reasons[-1].endswith("not checked (check=False)")
    assert "The check was off (<code>check=False</code>)" in to_html(run, graph=False)


def test_a_model_that_raises_under_compile_is_at_the_line_dynamo_names() -> None:
    """A wrong input width fails in dynamo's fake-tensor run of the model's line: the run's error is at that line
    (torch's "from user code"), not at the line that called tj.compile."""
    run = run_quietly(models.Clean(), torch.randn(3, 5))
    assert run.error is not None and run.error.phase == "compile"
    lines, first = inspect.getsourcelines(models.Clean.forward)
    line = first + next(i for i, text in enumerate(lines) if "self.fc(x)" in text)
    assert (os.path.abspath(run.error.file), run.error.line) == (MODELS_FILE, line)
    assert "self.fc(x)" in run.error.code
