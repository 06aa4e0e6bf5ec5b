"""``%compile`` / ``%%compile`` and ``tracejit compile``: the compile back end's command words (its registry row's
``command``) and ``capture``, through IPython's own shell and the CLI's ``main``; the exit rule of the CI gate (0 one
graph, 1 graph breaks or recompilations, 2 usage errors); the explorer's re-compile through ``run.request``."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from IPython.core.interactiveshell import InteractiveShell

import jupyter_tracejit as tj
from jupyter_tracejit.core.compile.options import COMPILE_TABLE
from jupyter_tracejit.core.compile.request import compile_support_problem
from jupyter_tracejit.widgets import RUN_MIME, TraceExplorer

from ...cli_run import run_cli
from ...magic_shell import WIDGET_MIME, namespace, run_magic
from ...models import line_in, source_of
from ...widgets.fakes import FakeClock, front_end_update
from . import models

pytestmark = pytest.mark.skipif(compile_support_problem() is not None, reason=str(compile_support_problem()))

#: the file the command line compiles: Clean and Printing of models.py, the models the magic's tests compile
MODEL = "import torch\nfrom torch import nn\n\n\n" + source_of(models.OneLayer, models.Clean, models.Printing)


def tracejit(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    (tmp_path / "model.py").write_text(MODEL)
    return run_cli(tmp_path, "compile", *args)


# -- tracejit compile: the CI gate ----------------------------------------------------------------------------------
def test_one_graph_exits_0_and_a_graph_break_exits_1_with_the_break_at_its_line(tmp_path: Path) -> None:
    again = "[(torch.rand(2, 4),)]"
    code, out, _ = tracejit(tmp_path, "model.py:Clean", "--inputs", "torch.rand(2, 4)", "--calls", again)
    assert code == 0, out
    assert out.startswith("Clean: ok;") and "graphs (1, 2 calls, backend eager): forward (3 ops)" in out
    code, out, _ = tracejit(tmp_path, "model.py:Printing", "--inputs", "torch.rand(2, 4)", "--json", "run.json")
    assert code == 1
    line = line_in(MODEL, 'print("shape", h.shape)  # BREAK')
    shown = out.replace(str(tmp_path) + "/", "")
    assert f'graph breaks (1):\n  model.py:{line}: [GB0059] print("shape", h.shape)  # BREAK' in shown
    saved = json.loads((tmp_path / "run.json").read_text())
    assert saved["backend"] == "compile" and saved["records"]["graph_breaks"][0]["line"] == line


def test_recompilations_exit_1_and_the_flags_are_the_tables(tmp_path: Path) -> None:
    sizes = "[(torch.rand(3, 4),), (torch.rand(4, 4),)]"
    first = ("model.py:Clean", "--inputs", "torch.rand(2, 4)", "--calls", sizes)
    code, out, _ = tracejit(tmp_path, *first, "--no-dynamic")
    assert code == 1
    assert "recompilations (2):" in out and "x.size()[0] was 2, now 3" in out
    # advice is spelled for the command line: dynamic=True is --dynamic
    assert "--no-dynamic compiles again for every new size" in out
    code, out, _ = tracejit(tmp_path, *first, "--dynamic")
    assert code == 0, out  # every size dynamic from the start: one graph for every call
    flags = {f.flag for f in COMPILE_TABLE.flags}
    assert {"--calls", "--dynamic", "--no-dynamic", "--fullgraph", "--backend", "--no-check"} <= flags


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--calls", "3"), "--calls must give a tuple of inputs"),
        (("--backend", "tvm"), "invalid choice: 'tvm'"),
        (("--dynamic", "--no-dynamic"), "--dynamic and --no-dynamic contradict each other"),
    ],
)
def test_usage_errors_exit_2_naming_the_problem(tmp_path: Path, args: tuple[str, ...], words: str) -> None:
    with contextlib.suppress(SystemExit):  # argparse's own errors exit 2 through SystemExit
        code, _, err = tracejit(tmp_path, "model.py:Clean", "--inputs", "torch.rand(2, 4)", *args)
        assert code == 2 and words in err


def test_fullgraph_makes_the_break_the_runs_error(tmp_path: Path) -> None:
    code, out, _ = tracejit(tmp_path, "model.py:Printing", "--inputs", "torch.rand(2, 4)", "--fullgraph")
    assert code == 1 and "\nPrinting: FAILED (Unsupported: Failed to trace builtin operator" in out
    assert "hint: --fullgraph turns the first graph break into this error" in out


# -- %compile and %%compile -----------------------------------------------------------------------------------------
@pytest.fixture
def ip(shell: InteractiveShell) -> Iterator[InteractiveShell]:
    torch.manual_seed(0)
    names = dict(
        torch=torch,
        printing=models.Printing(),
        clean=models.Clean(),
        x=torch.randn(3, 4),
        x5=torch.randn(5, 4),
    )
    with namespace(shell, names) as ip:
        yield ip


def compiled(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, cell: str | None = None) -> tj.TraceRun:
    result, shown = run_magic(ip, monkeypatch, line, cell, name="compile")
    assert result is None and shown.usage_error == "", shown.usage_error
    run = ip.user_ns["_compile"]
    assert isinstance(run, tj.TraceRun) and run.backend == "compile"
    return run


def test_compile_shows_a_live_explorer_of_the_run(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    result, shown = run_magic(ip, monkeypatch, "--calls [(x5,)] --no-dynamic printing(x)", name="compile")
    assert result is None and shown.usage_error == ""
    run = ip.user_ns["_compile"]
    assert run.request.target is ip.user_ns["printing"] and run.request.options.dynamic is False
    assert len(run.compile.graph_breaks) == 1 and len(run.compile.recompilations) == 2
    (explorer,) = shown.final
    assert isinstance(explorer, TraceExplorer) and explorer.live and ip.user_ns["_compile_explorer"] is explorer
    assert shown.bundles[-1][WIDGET_MIME] and shown.bundles[0]["text/plain"].startswith("compiling Printing… ")


def test_the_options_bar_recompiles_through_the_request_with_the_same_calls() -> None:
    clock = FakeClock()
    run = tj.compile(models.Printing(), (torch.randn(3, 4),), calls=[(torch.randn(5, 4),)], dynamic=False)
    explorer = tj.explore(run, scheduler=clock)
    assert explorer.live and explorer.options == {
        "fullgraph": False,
        "dynamic": False,
        "backend": "eager",
        "check": True,
        "module_mode": "as_is",
        "no_grad": False,
    }
    front_end_update(explorer, options={"dynamic": None})  # the bar's menu: "dynamic: auto"
    clock.advance(1.0)
    again = explorer.run
    assert again is not run and again.options["dynamic"] is None and again.options["calls"] == [["Float(5, 4)"]]
    assert again.request is not None and again.request.options.calls == run.request.options.calls
    front_end_update(explorer, options={"fullgraph": True})
    clock.advance(1.0)
    # the error stays in the status and the history; the last good run stays on screen
    assert explorer.status == "error" and "fullgraph=True turns the first graph break" in explorer.status_message
    assert explorer.runs[-1]["verdict"] == "failed"


def test_positional_and_keyword_inputs_go_together(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    ip.user_ns["scaled"] = torch.nn.Bilinear(4, 4, 2)
    run = compiled(ip, monkeypatch, "--quiet scaled(x, input2=x)")
    assert run.error is None and run.request.args == (ip.user_ns["x"],) and "input2" in run.request.kwargs


def test_a_cell_defines_the_model_and_compiles_its_last_line(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    cell = (
        "class Cell(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        print('in the cell')\n"
        "        return x.relu() * 2\n"
        "Cell()(x)\n"
    )
    run = compiled(ip, monkeypatch, "--quiet --no-check", cell)
    (gb,) = run.compile.graph_breaks
    assert gb.line == 4 and "print('in the cell')" in gb.code  # the cell's own line numbers (line 1: %%compile)
    assert "Cell" in ip.user_ns


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("--calls 3 clean(x)", "--calls '3' must evaluate to a list of input sets, one per further call, got an int"),
        ("--calls [3] clean(x)", "--calls item 0 is an int"),
        (
            "--calls (x,x) clean(x)",
            "--calls '(x,x)' is a tuple: pass a list with one input set per further call, [(x,x)]",
        ),
        ("--dynamic --no-dynamic clean(x)", "--dynamic and --no-dynamic contradict each other"),
        ("--backend tvm clean(x)", "--backend: invalid choice: 'tvm'"),
        ("--fullgraph clean", "CALL must be a single call expression like model(x), got 'clean'"),
    ],
)
def test_a_mistake_in_the_line_is_one_line_and_changes_nothing(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, words: str
) -> None:
    _, shown = run_magic(ip, monkeypatch, line, name="compile")
    assert shown.usage_error.startswith("%compile: ") and words in shown.usage_error, shown.usage_error
    assert "_compile" not in ip.user_ns


def test_static_shows_the_kernel_free_view(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    _, shown = run_magic(ip, monkeypatch, "--static --no-check clean(x)", name="compile")
    assert shown.usage_error == "" and RUN_MIME in shown.bundles[-1]


def test_the_help_names_every_option_and_example(ip: InteractiveShell) -> None:
    doc = ip.find_line_magic("compile").__doc__
    options = ("-o", "--calls", "--dynamic", "--no-dynamic", "--fullgraph", "--backend", "--no-check", "--static")
    for word in (*options, "--quiet", "%%compile", "_compile_explorer", "positional and keyword inputs together"):
        assert word in doc, word
