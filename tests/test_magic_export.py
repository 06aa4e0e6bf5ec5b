"""``%export`` / ``%%export`` through IPython's own shell: torch.export's magic, read and shown as ``%trace`` is."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import jupyter_tracejit as tj
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.widgets import PROGRESS_MIME, RUN_MIME, TraceExplorer, run_from_mime

from .magic_shell import WIDGET_MIME, Masked, Shown, namespace, require_kernel, run_magic
from .models import MLP, LinearWithEncode

pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))

OPTIONS = (
    "-o",
    "--dynamic",
    "--auto-dynamic",
    "--check-inputs",
    "--strict",
    "--draft",
    "--compare-trace",
    "--eval",
    "--train",
    "--no-grad",
    "--static",
    "--quiet",
)


def branchy(x: torch.Tensor) -> torch.Tensor:
    if x.sum() > 0:  # data-dependent: export refuses it
        return x.sin()
    return x.cos()


@pytest.fixture
def ip(shell: InteractiveShell) -> Iterator[InteractiveShell]:
    """The shell with a fresh notebook namespace (restored afterwards)."""
    torch.manual_seed(0)
    names = dict(
        torch=torch,
        mlp=MLP(),
        encoder=LinearWithEncode(16),
        masked=Masked(),
        branchy=branchy,
        x=torch.randn(2, 16),
        x2=torch.randn(5, 16),
        ids=torch.randn(3, 4),
        m=torch.ones(3, 4),
        xs=[torch.randn(2, 16)],
    )
    with namespace(shell, names) as ip:
        yield ip


def run_export(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, cell: str | None = None
) -> tuple[Any, Shown]:
    return run_magic(ip, monkeypatch, line, cell, name="export")


def exported(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, name: str = "_export") -> tj.TraceRun:
    """Run ``%export line``, which must not be a magic error; returns the stored run."""
    result, shown = run_export(ip, monkeypatch, line)
    assert result is None and shown.usage_error == "", shown.usage_error
    run = ip.user_ns[name]
    assert isinstance(run, tj.TraceRun) and run.backend == "export"
    return run


def symbols(run: tj.TraceRun) -> list[tuple[int | None, int | None, list[str]]]:
    assert run.export is not None
    return [(s.min, s.max, s.sources) for s in run.export.symbols if s.kind == "backed"]


# -- the line form --------------------------------------------------------------------------------------


def test_export_shows_a_live_explorer_and_stores_the_run_in_underscore_export(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    before_ns, before = set(ip.user_ns), time.time()
    result, shown = run_export(ip, monkeypatch, "mlp(x)")
    assert result is None and shown.usage_error == ""
    run = ip.user_ns["_export"]
    assert run.ok and run.backend == "export" and run.traced is not None
    assert run.request.target is ip.user_ns["mlp"] and run.request.args == (ip.user_ns["x"],)
    assert set(ip.user_ns) - before_ns == {"_export", "_export_explorer"}  # %trace's variables are left alone
    (explorer,) = shown.final
    assert isinstance(explorer, TraceExplorer) and explorer.live and explorer.run is run
    assert ip.user_ns["_export_explorer"] is explorer
    # what it exports while it exports (its phases: exporting, then checking), then the explorer in its place
    placeholder, checking, bundle = shown.bundles
    progress = placeholder[PROGRESS_MIME]
    assert progress["target"] == "MLP" and before <= progress["started"] <= time.time()
    assert progress["phase"] == "exporting" and checking[PROGRESS_MIME]["phase"] == "checking"
    assert placeholder["text/plain"].startswith("exporting MLP… (started ")
    assert checking["text/plain"].startswith("checking MLP… (started ")
    assert bundle[WIDGET_MIME] and run_from_mime(bundle[RUN_MIME]) == run.to_json()


def test_o_stores_the_run_under_that_name_only(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = exported(ip, monkeypatch, "-o run mlp.forward(x)", name="run")
    assert "_export" not in ip.user_ns
    assert run.ok and run.request.target is ip.user_ns["mlp"]  # forward called as a method exports the module


def test_positional_and_keyword_arguments_become_args_and_kwargs(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = exported(ip, monkeypatch, "masked(ids, mask=m)")
    assert run.ok, run.error
    assert run.request.args == (ip.user_ns["ids"],) and dict(run.request.kwargs) == {"mask": ip.user_ns["m"]}


def test_dynamic_specs_are_the_command_lines(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = exported(ip, monkeypatch, '--dynamic "x:0=batch[2,64]" mlp(x)')
    assert run.ok, run.error
    assert run.options["dynamic_shapes"] == "{'x': {0: Dim('batch', min=2, max=64)}}"
    ((low, high, sources),) = symbols(run)  # the batch dim is a symbol of the exported program
    assert (low, high) == (2, 64) and any(s.startswith("x.size()[0]") for s in sources), sources
    # several --dynamic; a symbol that recurs is one Dim, its range on each input (unquoted: brackets end no value)
    run = exported(ip, monkeypatch, "--dynamic input_ids:0=rows[2,8] --dynamic mask:0=rows masked(ids, mask=m)")
    assert run.ok, run.error
    assert (
        run.options["dynamic_shapes"]
        == "{'input_ids': {0: Dim('rows', min=2, max=8)}, 'mask': {0: Dim('rows', min=2, max=8)}}"
    )
    found = symbols(run)
    assert {(low, high) for low, high, _ in found} == {(2, 8)}
    assert {source.split(".")[0] for _, _, sources in found for source in sources} == {"input_ids", "mask"}


def test_auto_dynamic_makes_the_dims_that_differ_from_the_check_inputs_dynamic(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = exported(ip, monkeypatch, "--auto-dynamic --check-inputs [(x2,)] mlp(x)")
    assert run.ok, run.error
    assert run.options["dynamic_shapes"] == "auto"
    assert run.options["check_inputs"] == [["Float(5, 16)"]]
    ((_low, _high, sources),) = symbols(run)
    assert any(s.startswith("x.size()[0]") for s in sources), sources


def test_export_options_are_recorded(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    mlp = ip.user_ns["mlp"]
    run = exported(ip, monkeypatch, "--strict --eval --no-grad --draft always mlp(x)")
    assert run.ok, run.error
    assert {k: run.options[k] for k in ("strict", "module_mode", "no_grad", "draft")} == {
        "strict": True,
        "module_mode": "eval",
        "no_grad": True,
        "draft": "always",
    }
    assert mlp.training  # eval for this export only
    run = exported(ip, monkeypatch, "--train --compare-trace mlp(x)")
    assert run.options["module_mode"] == "train" and run.options["strict"] is False
    assert run.compared is not None and run.compared.trace_summary


def test_a_failure_inside_the_model_is_in_the_run_at_the_users_line(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = exported(ip, monkeypatch, "branchy(x)")
    if_line = branchy.__code__.co_firstlineno + 1
    assert not run.ok and run.error is not None
    assert (run.error.file, run.error.line) == (__file__, if_line)
    assert isinstance(ip.user_ns["_export_explorer"], TraceExplorer)
    assert ip.user_ns["_export_explorer"].run is run


def test_the_run_variable_follows_the_explorer(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    first = exported(ip, monkeypatch, "-o run mlp(x)", name="run")
    explorer = ip.user_ns["_export_explorer"]
    assert explorer.run is first
    explorer.options = {**explorer.options, "module_mode": "eval"}  # a re-export (no event loop: it runs at once)
    second = explorer.run
    assert second is not first and second.backend == "export" and second.options["module_mode"] == "eval"
    assert ip.user_ns["run"] is second
    explorer.show_run(first.run_id)  # a history pick is the run on screen too
    assert ip.user_ns["run"] is first
    # a newer %export takes _export_explorer over; the older explorer's re-exports leave the newer run alone
    newer = exported(ip, monkeypatch, "mlp(x)")
    assert ip.user_ns["_export_explorer"] is not explorer
    explorer.retrace()
    assert ip.user_ns["_export"] is newer and ip.user_ns["run"] is not first


def test_quiet_prints_one_line_and_static_shows_the_kernel_free_view(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, shown = run_export(ip, monkeypatch, "--quiet mlp(x)")
    run = ip.user_ns["_export"]
    assert shown.stdout == run.summary() + "\n" and shown.objects == []
    assert "_export_explorer" not in ip.user_ns
    _, shown = run_export(ip, monkeypatch, "--static -o static mlp(x)")
    *_placeholder, bundle = shown.bundles
    assert run_from_mime(bundle[RUN_MIME]) == ip.user_ns["static"].to_json()
    assert not any(isinstance(o, TraceExplorer) for o in shown.objects)


def test_an_export_with_dynamic_dims_shows_its_flags_to_paste(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, shown = run_export(ip, monkeypatch, '--quiet --dynamic "x:0=batch[2,64]" mlp(x)')
    run = ip.user_ns["_export"]
    assert shown.stdout == run.summary() + '\nas %export flags: --dynamic "x:0=batch[2,64]"\n'
    _, shown = run_export(ip, monkeypatch, "--static --dynamic x:0 mlp(x)")
    *_placeholder, bundle = shown.bundles
    assert bundle["text/plain"].endswith("\nas %export flags: --dynamic x:0")
    # a run refused for its arguments has no flags to paste: its dims or options may be what was wrong
    _, shown = run_export(ip, monkeypatch, '--quiet --dynamic "x:0=batch[2,64]" mlp(x, x, x)')
    refused = ip.user_ns["_export"]
    assert refused.error is not None and refused.error.phase == "arguments"
    assert shown.stdout == refused.summary() + "\n"
    # the explorer's dims say the same, for its banner and its Dims tab
    exported(ip, monkeypatch, '--dynamic "x:0=batch[2,64]" mlp(x)')
    assert ip.user_ns["_export_explorer"].dims["flags"] == '--dynamic "x:0=batch[2,64]"'


# -- %%export ---------------------------------------------------------------------------------------------

CELL = """\
def g(x):
    if x.sum() > 0:
        return x * {factor}
    return x
g(x)
"""


def test_cell_defines_then_exports_its_last_line(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    _, shown = run_export(ip, monkeypatch, "-o run", "def g(x):\n    return torch.relu(x) * 3\ng(x)\n")
    assert shown.usage_error == ""
    run = ip.user_ns["run"]
    assert run.ok and run.backend == "export" and run.request.target is ip.user_ns["g"]
    assert isinstance(ip.user_ns["_export_explorer"], TraceExplorer)
    # the model's failure is at the cell's line (line 1 is %%export), named by the cell's number
    result = ip.run_cell("%%export\n" + CELL.format(factor=2), store_history=True)
    failed = ip.user_ns["_export"]
    assert not failed.ok and failed.error is not None and failed.error.line == 3
    assert failed.file_names[failed.error.file] == f"cell [{result.execution_count}]"


# -- errors of the magic itself ---------------------------------------------------------------------------

LINE_ERRORS = [
    # (line, what the message must name, the example it gives)
    ("--bogus mlp(x)", "unknown option '--bogus'; the options are -o, --dynamic,", "%export --strict model(x)"),
    ("--dyn x:0 mlp(x)", "unknown option '--dyn'", "%export --strict model(x)"),
    ("--dynamic x0 mlp(x)", "--dynamic 'x0' is not of the form NAME:DIM", "%export --dynamic x:0=batch[2,64]"),
    ("--dynamic x:0=b[9,2] mlp(x)", "write b[2,9]", "%export --dynamic x:0=batch[2,64]"),
    ("--dynamic", "option --dynamic needs a value", "%export --dynamic x:0=batch[2,64]"),
    ("--auto-dynamic mlp(x)", "--auto-dynamic needs --check-inputs", "%export --auto-dynamic --check-inputs"),
    ("--auto-dynamic --dynamic x:0 --check-inputs [(x2,)] mlp(x)", "contradict each other", "%export --dynamic"),
    ("--eval --train mlp(x)", "--eval and --train contradict", "%export --eval model(x)"),
    ("--draft maybe mlp(x)", "--draft: invalid choice: 'maybe'", "%export --draft always model(x)"),
    ("--strict=1 mlp(x)", "option --strict takes no value", "%export --strict model(x)"),
    ("--static --quiet mlp(x)", "--static and --quiet contradict", "%export --static model(x)"),
    ("-o 1x mlp(x)", "-o needs a Python variable name", "%export -o run model(x)"),
    ("--check-inputs x2 mlp(x)", "must evaluate to a list of input sets", "%export --check-inputs [(x2,), (x3,)]"),
    ("--check-inputs [(nope,)] mlp(x)", "unknown name in --check-inputs", "%export --check-inputs [(x2,), (x3,)]"),
    ("", "missing CALL, the call to export", "%export model(x)"),
    ("mlp", "single call expression", "%export model(x)"),
    ("mdl(x)", "unknown name in the callee 'mdl'", "%export model(x)"),
    ("x(x)", "'x' is a Tensor, which cannot be called", "%export model(x)"),
    ("mlp(*xs)", "unpacks arguments", "%export f(x, y)"),
    (
        "encoder.encode(x)",
        "the method 'encode' of LinearWithEncode, but torch.export exports a module's forward",
        "%export model(x)",
    ),
]


@pytest.mark.parametrize(("line", "problem", "example"), LINE_ERRORS, ids=[e[0] or "empty" for e in LINE_ERRORS])
def test_a_magic_error_is_one_line_and_changes_nothing(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, problem: str, example: str
) -> None:
    before = dict(ip.user_ns)
    result, shown = run_export(ip, monkeypatch, line)
    assert result is None
    message = shown.usage_error
    assert "\n" not in message and message.startswith("%export: "), message
    assert problem in message and f"Example: {example}" in message, message
    assert shown.stdout == shown.stderr == "" and shown.bundles == [] and shown.objects == []
    assert ip.user_ns == before


@pytest.mark.parametrize(
    ("line", "body", "problem"),
    [
        ("mlp(x)", "mlp(x)\n", "%%export takes only options on its first line"),
        ("--dynamic x0", "mlp(x)\n", "--dynamic 'x0' is not of the form"),
        ("", "def h(x):\n    return x\ny = h(x)\n", "last line of a %%export cell must be the call to export"),
    ],
)
def test_a_cell_magic_error_is_one_line_and_runs_nothing(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, body: str, problem: str
) -> None:
    before = dict(ip.user_ns)
    _, shown = run_export(ip, monkeypatch, line, body)
    message = shown.usage_error
    assert "\n" not in message and message.startswith("%%export: ") and problem in message, message
    assert ip.user_ns == before


def test_help_documents_every_option(ip: InteractiveShell) -> None:
    with capture_output() as cap:
        ip.run_cell("%export?")
    text = cap.stdout
    assert re.search(r"%export \[-o NAME\] \[--dynamic SPEC\]", text), text
    for option in OPTIONS:
        assert option in text, option
    for example in ('%export --dynamic "x:0=batch[2,64]" model(x)', "%%export", "_export_explorer"):
        assert example in text, example


def test_load_ext_registers_one_magic_per_back_end_with_a_command(ip: InteractiveShell) -> None:
    from jupyter_tracejit.core.registry import commands

    verbs = [row.verb for row in commands()]
    assert {"trace", "export"} <= set(verbs)
    for verb in verbs:
        assert ip.find_line_magic(verb) is not None and ip.find_cell_magic(verb) is not None, verb


def test_a_notebook_exports_with_the_magic(tmp_path: Path) -> None:
    """In a real kernel: the explorer replaces the placeholder, a magic error fails its cell in one line."""
    require_kernel()
    import nbformat
    from nbclient import NotebookClient

    cells = [
        "%load_ext jupyter_tracejit\nimport torch\ndef f(x):\n    return torch.relu(x) + 1\nx = torch.randn(3, 2)",
        "%export --dynamic x:0=rows[2,8] f(x)",
        "%export --dynamic x0 f(x)",
        "print(_export.ok, _export.backend, [s.max for s in _export.export.symbols])",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.cells[2].metadata["tags"] = ["raises-exception"]
    client = NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}, allow_errors=False
    )
    client.execute()
    (live,) = nb.cells[1]["outputs"]
    assert WIDGET_MIME in live["data"] and PROGRESS_MIME not in live["data"]
    assert run_from_mime(live["data"][RUN_MIME])["backend"] == "export"
    (error,) = nb.cells[2]["outputs"]
    assert error["name"] == "stderr" and error["text"].startswith("UsageError: %export: --dynamic 'x0' is not of")
    assert error["text"].count("\n") == 1
    (printed,) = nb.cells[3]["outputs"]
    assert printed["text"] == "True export [8]\n"


def test_too_many_inputs_are_the_arguments_fault_not_the_models(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = exported(ip, monkeypatch, "mlp(x, x, x)")
    assert run.error is not None and (run.error.phase, run.error.tag) == ("arguments", "inputs_mismatch")
    assert run.error.message.startswith("MLP.forward takes x, but the example inputs are 3 positional inputs")
    assert "Give one example input per argument of MLP.forward: (x,)" in run.error.hint
