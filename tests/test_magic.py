"""``%trace`` / ``%%trace`` through IPython's own shell, and once through a real kernel (nbclient)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ipywidgets
import jsonschema
import pytest
import torch
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from torch import nn

import jupyter_tracejit as tj
from jupyter_tracejit import magic, magic_output
from jupyter_tracejit.widgets import PROGRESS_MIME, RUN_MIME, WIDGET_ENV, TraceExplorer, run_from_mime
from jupyter_tracejit.widgets.anyexplorer import AnyTraceExplorer

from .core.oracle import torch_deprecates_jit_trace
from .widgets.test_explorer_schema import schema

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
OPTIONS = (
    "-o",
    "--method",
    "--no-check",
    "--check-inputs",
    "--tol",
    "--non-strict",
    "--force-outplace",
    "--eval",
    "--train",
    "--no-grad",
    "--probe",
    "--target-device",
    "--static",
    "--quiet",
)


# -- what the user's notebook holds -------------------------------------------------------------------


# Not a shared model: the magic's tests assert the target name "Net", and need Dropout (train/eval) beside a
# second method, encode.
class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.lin(x))

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * 2


class Masked(nn.Module):
    def forward(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return input_ids * mask + 1


def relu_fn(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) + 1


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y


def pick(d: dict[str, torch.Tensor]) -> torch.Tensor:
    return d["a"] * 2


def boom(x: torch.Tensor) -> torch.Tensor:
    raise ValueError("boom inside the traced code")


def returns_a_dict(x: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"a": x + 1}


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InteractiveShell]:
    """One shell for the module: each InteractiveShell costs a gc pass at interpreter exit."""
    from traitlets.config import Config

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
        config = Config()
        config.HistoryManager.hist_file = ":memory:"
        ip = InteractiveShell.instance(config=config)
        ip.run_line_magic("load_ext", "jupyter_tracejit")
        yield ip
        InteractiveShell.clear_instance()


@pytest.fixture
def ip(shell: InteractiveShell) -> Iterator[InteractiveShell]:
    """The shell with a fresh notebook namespace (restored afterwards)."""
    baseline = dict(shell.user_ns)
    torch.manual_seed(0)
    shell.user_ns.update(
        torch=torch,
        net=Net(),
        masked=Masked(),
        relu_fn=relu_fn,
        add=add,
        pick=pick,
        boom=boom,
        returns_a_dict=returns_a_dict,
        x=torch.randn(2, 4),
        x2=torch.randn(3, 4),
        x3=torch.randn(5, 4),
        ids=torch.randn(2, 3),
        m=torch.ones(2, 3),
        xs=[torch.randn(3)],
    )
    yield shell
    import ipywidgets

    ipywidgets.Widget.close_all()
    shell.user_ns.clear()
    shell.user_ns.update(baseline)


@dataclass
class Shown:
    """What one magic call printed and displayed."""

    stdout: str
    stderr: str
    #: the MIME bundles published, updates of a display included
    bundles: list[dict[str, Any]]
    #: the objects handed to magic_output._display
    objects: list[Any] = field(default_factory=list)
    #: ``(display_id, update)`` of each object handed to magic_output._display
    displays: list[tuple[str | None, bool]] = field(default_factory=list)
    #: the UsageError the magic raised (IPython prints it as one line and fails the cell); "" when none
    usage_error: str = ""

    @property
    def final(self) -> list[Any]:
        """What stays on screen: each display's last object (a placeholder is replaced by its update)."""
        last: dict[Any, Any] = {}
        for i, (obj, (display_id, _update)) in enumerate(zip(self.objects, self.displays, strict=True)):
            last[display_id if display_id is not None else i] = obj
        return list(last.values())


def run_magic(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, cell: str | None = None, name: str = "trace"
) -> tuple[Any, Shown]:
    """Run ``%trace line`` (or ``%%trace line`` + cell; ``name="export"``: ``%export``); returns the magic's return
    value and its output."""
    objects: list[Any] = []
    displays: list[tuple[str | None, bool]] = []
    real_display = magic_output._display

    def recording_display(obj: Any, *, raw: bool = False, display_id: str | None = None, update: bool = False) -> None:
        objects.append(obj)
        displays.append((display_id, update))
        real_display(obj, raw=raw, display_id=display_id, update=update)

    monkeypatch.setattr(magic_output, "_display", recording_display)
    usage_error = ""
    with capture_output() as cap:
        try:
            result = ip.run_line_magic(name, line) if cell is None else ip.run_cell_magic(name, line, cell)
        except UsageError as e:
            result, usage_error = None, str(e)
    return result, Shown(cap.stdout, cap.stderr, [o.data for o in cap.outputs], objects, displays, usage_error)


def traced(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, name: str = "_trace") -> tj.TraceRun:
    """Run ``%trace line`` that must succeed; returns the stored run."""
    result, shown = run_magic(ip, monkeypatch, line)
    assert result is None
    assert shown.stderr == "", shown.stderr
    run = ip.user_ns[name]
    assert isinstance(run, tj.TraceRun)
    return run


def nondeterministic(run: tj.TraceRun) -> bool:
    return any(f.kind == "nondeterministic" for f in run.findings)


# -- the default form -----------------------------------------------------------------------------------


def test_trace_shows_a_live_explorer_and_stores_the_run_in_underscore_trace(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = set(ip.user_ns)
    result, shown = run_magic(ip, monkeypatch, "relu_fn(x)")
    assert result is None  # nothing for Out[] / `_`: the explorer is already on screen
    run = ip.user_ns["_trace"]
    assert run.ok and run.request.kind == "trace" and run.request.target is relu_fn
    assert run.request.inputs == (ip.user_ns["x"],)
    # the namespace gains the run and its explorer, nothing else
    assert set(ip.user_ns) - before == {"_trace", "_trace_explorer"}
    (explorer,) = shown.final
    assert isinstance(explorer, TraceExplorer) and explorer.live and explorer.run is run
    assert ip.user_ns["_trace_explorer"] is explorer
    # what it traces while it traces (its phases: tracing, then checking), then the explorer in its place
    placeholder, checking, bundle = shown.bundles
    assert placeholder[PROGRESS_MIME]["phase"] == "tracing" and checking[PROGRESS_MIME]["phase"] == "checking"
    assert bundle[WIDGET_MIME] and run_from_mime(bundle[RUN_MIME]) == run.to_json()
    assert {WIDGET_MIME, RUN_MIME, "text/html", "text/plain"} <= bundle.keys()
    assert bundle["text/html"] == run.to_html()
    assert bundle["text/plain"] == run.summary()
    assert shown.stdout == shown.stderr == ""


def test_dict_and_brace_arguments_are_not_variable_expanded(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = traced(ip, monkeypatch, "pick({'a': x})")
    assert run.ok
    assert run.request.inputs == ({"a": ip.user_ns["x"]},)


def test_a_failure_inside_the_traced_code_is_recorded_not_reported_as_a_magic_error(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, shown = run_magic(ip, monkeypatch, "boom(x)")
    assert shown.stderr == ""
    run = ip.user_ns["_trace"]
    assert not run.ok and run.error is not None and run.error.type == "ValueError"
    (explorer,) = shown.final
    assert isinstance(explorer, TraceExplorer) and explorer.run is run


def test_o_stores_the_run_under_that_name_only(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    before = set(ip.user_ns)
    run = traced(ip, monkeypatch, "-o first relu_fn(x)", name="first")
    assert "_trace" not in ip.user_ns
    assert set(ip.user_ns) - before == {"first", "_trace_explorer"}
    second = traced(ip, monkeypatch, "-osecond relu_fn(x)", name="second")
    assert second is not run


def test_keyword_arguments_become_example_kwarg_inputs(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "masked(input_ids=ids, mask=m)")
    assert run.ok, run.summary()
    assert run.options["example_kwarg_inputs"] == ["input_ids", "mask"]
    assert run.request.kind == "trace" and run.request.target is ip.user_ns["masked"]
    assert run.request.inputs is None
    assert run.request.example_kwarg_inputs == {"input_ids": ip.user_ns["ids"], "mask": ip.user_ns["m"]}
    run = traced(ip, monkeypatch, "add(x=x, y=x2[:2])")
    assert run.ok and run.options["example_kwarg_inputs"] == ["x", "y"]


# -- methods ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["--method encode net.encode(x)", "--method encode net(x)", "net.encode(x)"])
def test_a_module_method_is_traced_with_trace_module(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str
) -> None:
    run = traced(ip, monkeypatch, line)
    assert run.ok, run.summary()
    assert run.request.kind == "trace_module"
    assert run.request.target is ip.user_ns["net"]
    assert run.request.inputs == {"encode": (ip.user_ns["x"],)}
    assert list(run.graphs) == ["encode"]


def test_method_with_check_inputs_and_keyword_inputs(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--check-inputs [(x2,), x3] net.encode(x)")
    assert run.ok and len(run.check.cases) == 2
    assert run.request.options.check_inputs == [{"encode": (ip.user_ns["x2"],)}, {"encode": (ip.user_ns["x3"],)}]
    run = traced(ip, monkeypatch, "--method forward masked(input_ids=ids, mask=m)")
    assert run.ok and run.request.kind == "trace_module"
    assert run.request.example_inputs_is_kwarg is True
    assert run.request.inputs == {"forward": {"input_ids": ip.user_ns["ids"], "mask": ip.user_ns["m"]}}


def test_forward_called_as_a_method_traces_the_module(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--eval net.forward(x)")
    assert run.ok and run.request.kind == "trace" and run.request.target is ip.user_ns["net"]
    assert run.target.kind == "module"


# -- every option ---------------------------------------------------------------------------------------


def test_no_check(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--no-check relu_fn(x)")
    assert run.options["check_trace"] is False and run.check is None
    assert traced(ip, monkeypatch, "relu_fn(x)").options["check_trace"] is True


def test_check_inputs_and_tol(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--check-inputs [(x2,), (x3,)] --tol 1e-3 relu_fn(x)")
    assert run.ok
    assert run.options["check_inputs"] == [["Float(3, 4)"], ["Float(5, 4)"]]
    assert run.request.options.check_inputs == [(ip.user_ns["x2"],), (ip.user_ns["x3"],)]
    assert [c.label for c in run.check.cases] == ["check_inputs[0]", "check_inputs[1]"]
    assert run.options["check_tolerance"] == 1e-3 and run.check.tolerance == 1e-3
    # = glued values, and a list of dicts for keyword calls
    run = traced(ip, monkeypatch, "--tol=0 --check-inputs=[dict(x=x2,y=x2)] add(x=x, y=x2[:2])")
    assert run.options["check_tolerance"] == 0.0
    assert run.request.options.check_inputs == [{"x": ip.user_ns["x2"], "y": ip.user_ns["x2"]}]


def test_non_strict(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    strict = traced(ip, monkeypatch, "returns_a_dict(x)")
    assert strict.options["strict"] is True and not strict.ok
    run = traced(ip, monkeypatch, "--non-strict returns_a_dict(x)")
    assert run.options["strict"] is False and run.request.options.strict is False
    assert run.ok, run.summary()


def test_force_outplace(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--force-outplace relu_fn(x)")
    assert run.options["force_outplace"] is True and run.request.options.force_outplace is True


def test_eval_is_for_this_trace_only(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    net = ip.user_ns["net"]
    assert net.training
    assert nondeterministic(traced(ip, monkeypatch, "--no-check net(x)"))  # dropout in train mode
    run = traced(ip, monkeypatch, "--eval net(x)")
    assert run.options["module_mode"] == "eval"
    assert not nondeterministic(run) and run.ok
    assert net.training and net.drop.training  # back in train mode


def test_train_is_for_this_trace_only(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    net = ip.user_ns["net"].eval()
    assert not nondeterministic(traced(ip, monkeypatch, "net(x)"))
    run = traced(ip, monkeypatch, "--train --no-check net(x)")
    assert run.options["module_mode"] == "train" and nondeterministic(run)
    assert not net.training and not net.drop.training


def test_no_grad(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--no-grad --eval net(x)")
    assert run.options["no_grad"] is True and run.request.options.no_grad is True
    assert torch.is_grad_enabled()


def test_target_device(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    ip.user_ns["on_cpu"] = lambda x: x + torch.ones(x.shape[-1], device="cpu")
    here = traced(ip, monkeypatch, "on_cpu(x)")
    assert here.options["target_device"] is None and here.verdict.level == "ok"
    run = traced(ip, monkeypatch, "--target-device cuda on_cpu(x)")
    assert run.options["target_device"] == "cuda" and run.request.options.target_device == "cuda"
    assert run.verdict.level == "warning" and run.verdict.reasons == ['warning: device "cpu" baked into the graph']


def test_probe(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    assert traced(ip, monkeypatch, "relu_fn(x)").probe is None
    run = traced(ip, monkeypatch, "--probe relu_fn(x)")
    assert run.options["probe"] is True and run.probe is not None


def test_static_displays_the_kernel_free_view(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    _, shown = run_magic(ip, monkeypatch, "--static -o run relu_fn(x)")
    run = ip.user_ns["run"]
    *_placeholder, bundle = shown.bundles
    expected = {RUN_MIME, "text/plain"} | ({"text/html"} if callable(getattr(run, "to_html", None)) else set())
    assert set(bundle) == expected
    assert isinstance(bundle[RUN_MIME], str) and run_from_mime(bundle[RUN_MIME]) == run.to_json()
    assert bundle["text/plain"] == run.summary()
    assert not any(isinstance(o, TraceExplorer) for o in shown.objects)
    assert shown.stdout == shown.stderr == ""


def test_where_explorers_are_anywidgets_trace_shows_one_and_none_of_our_mime_types(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    # VS Code, Colab, marimo: our JupyterLab renderers are not on the page, so %trace sends nothing only they read
    monkeypatch.setenv(WIDGET_ENV, "anywidget")
    _, shown = run_magic(ip, monkeypatch, "relu_fn(x)")
    run = ip.user_ns["_trace"]
    (explorer,) = shown.final
    assert isinstance(explorer, AnyTraceExplorer) and explorer.run is run
    placeholder, checking, bundle = shown.bundles  # the phases, in text: the host's own renderer shows them
    assert set(placeholder) == {"text/plain"} and placeholder["text/plain"].startswith("tracing relu_fn…")
    assert set(checking) == {"text/plain"} and checking["text/plain"].startswith("checking relu_fn…")
    assert WIDGET_MIME in bundle and RUN_MIME not in bundle and bundle["text/plain"] == run.summary()
    _, shown = run_magic(ip, monkeypatch, "--static relu_fn(x)")
    *_placeholder, bundle = shown.bundles
    assert RUN_MIME not in bundle and bundle["text/plain"] == ip.user_ns["_trace"].summary()


def test_a_placeholder_says_what_is_traced_until_the_explorer_replaces_it(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = time.time()
    _, shown = run_magic(ip, monkeypatch, "--no-check --eval net(x)")
    (display_id, update), (same_id, replaces) = shown.displays
    assert display_id and same_id == display_id and (update, replaces) == (False, True)
    placeholder, explorer = shown.bundles
    progress = placeholder[PROGRESS_MIME]
    assert progress["target"] == "Net" and before <= progress["started"] <= time.time()
    assert progress["phase"] == "tracing"
    jsonschema.validate(progress, schema("widgets/explorer.schema.json")["definitions"]["TraceProgress"])
    started = time.strftime("%H:%M:%S", time.localtime(progress["started"]))
    assert placeholder["text/plain"] == f"tracing Net… (started {started})"
    assert WIDGET_MIME in explorer and PROGRESS_MIME not in explorer
    # a module method is named as such
    _, shown = run_magic(ip, monkeypatch, "net.encode(x)")
    assert shown.bundles[0][PROGRESS_MIME]["target"] == "Net.encode"


def test_the_placeholder_follows_the_phases_of_the_trace(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    _, shown = run_magic(ip, monkeypatch, "--probe net(x)")
    *progress, explorer = shown.bundles
    assert [p[PROGRESS_MIME]["phase"] for p in progress] == ["tracing", "checking", "probing"]
    # one placeholder, updated in place, counting from the same start
    (display_id, _), *updates = shown.displays
    assert all(update == (display_id, True) for update in updates)
    assert len({p[PROGRESS_MIME]["started"] for p in progress}) == 1
    assert progress[2]["text/plain"].startswith("probing Net… (started ")
    assert WIDGET_MIME in explorer
    # without the check, no checking phase
    _, shown = run_magic(ip, monkeypatch, "--no-check relu_fn(x)")
    assert [b[PROGRESS_MIME]["phase"] for b in shown.bundles if PROGRESS_MIME in b] == ["tracing"]


def slow_then_interrupted(x: torch.Tensor) -> torch.Tensor:
    """Traced fine, interrupted when the check traces it again (what the cancel button does to a slow model)."""
    if torch.jit.is_tracing() and slow_then_interrupted.traces:
        raise KeyboardInterrupt
    slow_then_interrupted.traces += 1
    return x + 1


slow_then_interrupted.traces = 0  # type: ignore[attr-defined]


def test_a_cancelled_trace_says_so_in_one_line_and_leaves_the_namespace(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    ip.user_ns["slow"] = slow_then_interrupted
    previous = ip.user_ns["_trace"] = object()
    before = set(ip.user_ns)
    slow_then_interrupted.traces = 0  # type: ignore[attr-defined]
    result, shown = run_magic(ip, monkeypatch, "slow(x)")
    assert result is None and shown.usage_error == ""
    assert shown.stdout == shown.stderr == ""  # no traceback
    _placeholder, checking, cancelled = shown.bundles
    assert checking[PROGRESS_MIME]["phase"] == "checking"
    assert cancelled.keys() == {"text/plain"}
    assert re.fullmatch(r"cancelled after \d+\.\d s \(checking slow_then_interrupted\)", cancelled["text/plain"])
    (display_id, _), *updates = shown.displays
    assert updates == [(display_id, True), (display_id, True)]
    assert ip.user_ns["_trace"] is previous and set(ip.user_ns) == before
    # the kernel goes on: the next %trace works
    assert traced(ip, monkeypatch, "relu_fn(x)").ok


def test_an_escape_other_than_an_interrupt_leaves_no_placeholder_counting(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    def exits(*_args: Any) -> None:
        raise SystemExit(3)

    from jupyter_tracejit.core.torchscript import command

    monkeypatch.setattr(command, "_trace", exits)
    shown: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(magic_output, "_display", lambda obj, **kwargs: shown.append((obj, kwargs)))
    previous = ip.user_ns.get("_trace")
    with pytest.raises(SystemExit):
        ip.run_line_magic("trace", "net(x)")
    (placeholder, shown_as), (stopped, replaced_as) = shown
    assert PROGRESS_MIME in placeholder
    assert replaced_as == {"raw": True, "display_id": shown_as["display_id"], "update": True}
    assert re.fullmatch(r"stopped after \d+\.\d s \(tracing Net\)", stopped["text/plain"])
    assert ip.user_ns.get("_trace") is previous


def test_the_run_variable_follows_the_explorer(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    first = traced(ip, monkeypatch, "-o run net(x)", name="run")
    explorer = ip.user_ns["_trace_explorer"]
    assert explorer.run is first
    explorer.options = {"module_mode": "eval"}  # a re-trace (no event loop here: it runs at once)
    second = explorer.run
    assert second is not first and second.options["module_mode"] == "eval"
    assert ip.user_ns["run"] is second
    explorer.show_run(first.run_id)  # a history pick is the run on screen too
    assert ip.user_ns["run"] is first
    # a variable the user reassigned is theirs
    ip.user_ns["run"] = "mine"
    explorer.retrace()
    assert ip.user_ns["run"] == "mine" and explorer.run is not first
    # a newer %trace takes _trace over: the older explorer's re-traces leave it alone
    newer = traced(ip, monkeypatch, "relu_fn(x)")
    older = explorer
    assert ip.user_ns["_trace_explorer"] is not older
    older.retrace()
    assert ip.user_ns["_trace"] is newer


def test_locations_in_cells_are_named_by_their_execution_count(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    ip.run_cell("def branchy(x):\n    if x.sum() > 0:\n        return x * 2\n    return x\n", store_history=True)
    defined_in = ip.execution_count - 1
    run = traced(ip, monkeypatch, "branchy(x.abs())")
    (warning,) = run.user_warnings
    assert run.file_names[warning.file] == f"cell [{defined_in}]"
    assert run.file_names[run.target.file] == f"cell [{defined_in}]"
    assert all(name.startswith("cell [") for name in run.file_names.values())
    assert f"cell [{defined_in}], line 2" in run.to_html()
    run_magic(ip, monkeypatch, "", CELL.format(factor=3))
    cell_run = ip.user_ns["_trace"]
    assert cell_run.file_names[cell_run.target.file] == f"cell [{ip.execution_count}]"


def test_a_cell_magic_names_its_cell_by_the_number_the_cell_ran_as(ip: InteractiveShell) -> None:
    """IPython 9 counts a cell in ``execution_count`` before it runs: the %%trace cell's locations must still read
    the number the notebook shows for it."""
    result = ip.run_cell("%%trace\n" + CELL.format(factor=2), store_history=True)
    run = ip.user_ns["_trace"]
    assert run.file_names[run.target.file] == f"cell [{result.execution_count}]"


def test_nodes_inside_torch_point_at_the_trace_line_as_written_and_retraces_keep_it(ip: InteractiveShell) -> None:
    """nn.Sequential's nodes are all recorded inside torch: their location is the %trace line of the cell, as the
    user wrote it (not IPython's get_ipython().run_line_magic rewrite); a re-trace from the explorer (run from the
    event loop, nowhere near the cell) says the same, never a torch file."""
    ip.user_ns["seq"] = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    result = ip.run_cell("y = 1\n%trace seq(x)", store_history=True)
    run = ip.user_ns["_trace"]

    def located(r: tj.TraceRun) -> set[tuple[str, int, str]]:
        graph = r.graphs["forward"]
        return {
            (r.file_names.get(n.source.file, n.source.file), n.source.line, n.source.code)
            for n in graph.nodes
            if n.source
        }

    assert located(run) == {(f"cell [{result.execution_count}]", 2, "%trace seq(x)")}
    # torch's deprecation notice names its caller, which is this package's code: it is the %trace line's too
    notices = [w for w in run.warnings if w.category == "deprecated"]
    assert len(notices) == (1 if torch_deprecates_jit_trace() else 0)
    for deprecated in notices:
        assert (run.file_names.get(deprecated.file), deprecated.line, deprecated.code) == located(run).pop()
    explorer = ip.user_ns["_trace_explorer"]
    explorer.options = {"module_mode": "eval"}  # a re-trace (no event loop here: it runs at once)
    assert explorer.run is not run and located(explorer.run) == located(run)


def test_static_bundle_uses_to_html_when_the_run_has_one() -> None:
    run = tj.trace(relu_fn, (torch.randn(3),))
    run.to_html = lambda: "<b>run</b>"  # type: ignore[attr-defined]
    assert magic.static_bundle(run)["text/html"] == "<b>run</b>"


def test_quiet_prints_one_line(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    _, shown = run_magic(ip, monkeypatch, "--quiet relu_fn(x)")
    run = ip.user_ns["_trace"]
    assert shown.stdout == run.summary() + "\n"
    assert shown.bundles == [] and shown.objects == [] and shown.stderr == ""
    assert "_trace_explorer" not in ip.user_ns  # nothing on screen to follow


def test_help_documents_every_option(ip: InteractiveShell) -> None:
    with capture_output() as cap:
        ip.run_cell("%trace?")
    text = cap.stdout
    assert "%trace [-o NAME]" in text  # the usage block
    for option in OPTIONS:
        assert option in text, option
    for example in ("%trace model(x)", "%trace --method encode model.encode(x)", "%%trace", "_trace"):
        assert example in text, example


# -- %%trace --------------------------------------------------------------------------------------------

CELL = """\
def g(x):
    return torch.relu(x) * {factor}
g(x)
"""


def test_cell_defines_then_traces_its_last_line(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    _, shown = run_magic(ip, monkeypatch, "", CELL.format(factor=3))
    assert shown.stderr == ""
    run = ip.user_ns["_trace"]
    assert run.ok and run.target.name == "g"
    assert run.request.target is ip.user_ns["g"]  # the definition landed in the namespace
    assert run.target.line == 2  # line 1 of the cell is %%trace
    assert any(n.kind == "aten::mul" for n in run.graph.nodes)
    (explorer,) = shown.final
    assert isinstance(explorer, TraceExplorer) and explorer.live
    # edit the function, re-run the cell: options on the first line
    _, shown = run_magic(ip, monkeypatch, "--no-check -o edited", CELL.format(factor="x"))
    edited = ip.user_ns["edited"]
    assert edited.options["check_trace"] is False and ip.user_ns["_trace"] is run
    assert edited.graph.to_json() != run.graph.to_json()


def test_cell_error_in_the_code_before_the_call_shows_its_traceback_and_traces_nothing(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    previous = traced(ip, monkeypatch, "relu_fn(x)")
    _, shown = run_magic(ip, monkeypatch, "", "y = 1\n1 / 0\nrelu_fn(x)\n")
    assert "ZeroDivisionError" in shown.stdout + shown.stderr
    assert "magic.py" not in shown.stdout + shown.stderr
    assert ip.user_ns["_trace"] is previous and shown.objects == []


# -- errors of the magic itself ---------------------------------------------------------------------------

LINE_ERRORS = [
    # (line, what the message must name, the example it gives)
    ("relu_fn(x", "is not a Python expression", "%trace model(x)"),
    ("", "missing CALL", "%trace model(x)"),
    ("relu_fn", "single call expression", "%trace model(x)"),
    ("relu_fn(x) + 1", "single call expression", "%trace model(x)"),
    ("modle(x)", "unknown name in the callee 'modle'", "%trace model(x)"),
    ("relu_fn(undefined_x)", "unknown name in argument 'undefined_x'", "%trace model(x)"),
    ("add(x=x, y=nope)", "unknown name in keyword argument y 'nope'", "%trace model(x)"),
    ("relu_fn(x[99])", "IndexError", "%trace model(x)"),
    ("x(x)", "'x' is a Tensor, which cannot be called", "%trace model(x)"),
    ("--tol abc relu_fn(x)", "--tol needs a finite number >= 0", "%trace --tol 1e-4 model(x)"),
    ("--tol -1 relu_fn(x)", "got '-1'", "%trace --tol 1e-4 model(x)"),
    ("--tol nan relu_fn(x)", "got 'nan'", "%trace --tol 1e-4 model(x)"),
    ("--tol", "option --tol needs a value", "%trace --tol 1e-4 model(x)"),
    (
        "--target-device gpu relu_fn(x)",
        "--target-device needs a device name such as 'cuda', 'cuda:0' or 'cpu', got 'gpu'",
        "%trace --target-device cuda model(x)",
    ),
    ("--check-inputs x relu_fn(x)", "must evaluate to a list", "%trace --check-inputs [(x2,), (x3,)] model(x)"),
    ("--check-inputs (x2,) relu_fn(x)", "got a tuple", "%trace --check-inputs [(x2,), (x3,)] model(x)"),
    ("--check-inputs [1] relu_fn(x)", "item 0 is a int", "%trace --check-inputs [(x2,), (x3,)] model(x)"),
    ("--check-inputs [(x2,)] add(x=x, y=x)", "must be a dict", "%trace --check-inputs [dict(x=x2), dict(x=x3)]"),
    ("--check-inputs [(nope,)] relu_fn(x)", "unknown name in --check-inputs", "%trace --check-inputs [(x2,)"),
    ("--check-inputs [(x2,) relu_fn(x)", "--check-inputs has an unclosed bracket", "%trace --check-inputs [(x2,)"),
    ("--check-inputs [(x2,)]] relu_fn(x)", "is not a Python expression", "%trace --check-inputs [(x2,)"),
    ("--eval --train net(x)", "--eval and --train contradict", "%trace --eval model(x)"),
    ("--static --quiet net(x)", "--static and --quiet contradict", "%trace --static model(x)"),
    ("--bogus net(x)", "unknown option '--bogus'", "%trace --no-check model(x)"),
    ("--no net(x)", "unknown option '--no'", "%trace --no-check model(x)"),
    ("--eval=1 net(x)", "option --eval takes no value", "%trace --eval model(x)"),
    ("-o 1x net(x)", "-o needs a Python variable name", "%trace -o run model(x)"),
    ("-o", "option -o needs a value", "%trace -o run model(x)"),
    ("add(x, y=x)", "mixes positional and keyword arguments", "%trace model(input_ids=ids, mask=m)"),
    ("add(*xs)", "unpacks arguments", "%trace f(x, y)"),
    ("add(**{'x': x, 'y': x})", "unpacks arguments", "%trace f(x, y)"),
    ("--method decode net.encode(x)", "CALL calls 'net.encode' (method 'encode')", "%trace --method encode"),
    ("--method nothere net(x)", "Net has no method 'nothere'", "%trace --method encode model.encode(x)"),
    ("--method encode relu_fn(x)", "needs CALL to call an nn.Module", "%trace --method encode model.encode(x)"),
    ("--method 2 net(x)", "--method needs a method name", "%trace --method encode model.encode(x)"),
]


@pytest.mark.parametrize(("line", "problem", "example"), LINE_ERRORS, ids=[e[0] or "empty" for e in LINE_ERRORS])
def test_a_magic_error_is_one_line_and_changes_nothing(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, problem: str, example: str
) -> None:
    previous = traced(ip, monkeypatch, "relu_fn(x)")
    before = dict(ip.user_ns)
    training = ip.user_ns["net"].training
    result, shown = run_magic(ip, monkeypatch, line)
    assert result is None
    message = shown.usage_error
    assert "\n" not in message, message
    assert message.startswith("%trace: ") and problem in message and f"Example: {example}" in message, message
    assert "Traceback" not in message
    assert shown.stdout == shown.stderr == "" and shown.bundles == [] and shown.objects == []
    assert ip.user_ns["_trace"] is previous
    assert ip.user_ns == before
    assert ip.user_ns["net"].training == training


CELL_ERRORS = [
    # (first line, body, problem, example)
    ("relu_fn(x)", "relu_fn(x)\n", "%%trace takes only options on its first line", "%%trace (newline)"),
    ("--tol abc", "relu_fn(x)\n", "--tol needs a finite number", "%trace --tol 1e-4 model(x)"),
    ("", "def h(x):\n    return x.relu(\nh(x)\n", "syntax error on line 3 of the cell", "%%trace (newline)"),
    ("", "def h(x):\n    return x\ny = h(x)\n", "last line of a %%trace cell must be the call", "%%trace (newline)"),
    ("", "def h(x):\n    return x\nh\n", "last line of a %%trace cell must be the call", "%%trace (newline)"),
    ("", "\n", "the cell has no code", "%%trace (newline)"),
    ("", "def h(x):\n    return x\nh(*xs)\n", "unpacks arguments", "%trace f(x, y)"),
    ("", "def h(x):\n    return x\nh(nope)\n", "unknown name in argument 'nope'", "%trace model(x)"),
]


@pytest.mark.parametrize(("line", "body", "problem", "example"), CELL_ERRORS)
def test_a_cell_magic_error_is_one_line_and_changes_nothing(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, body: str, problem: str, example: str
) -> None:
    previous = traced(ip, monkeypatch, "relu_fn(x)")
    ip.user_ns.pop("h", None)
    _, shown = run_magic(ip, monkeypatch, line, body)
    message = shown.usage_error
    assert "\n" not in message and message.startswith("%%trace: "), message
    assert problem in message and f"Example: {example}" in message, message
    assert shown.stdout == shown.stderr == "" and shown.bundles == []
    assert ip.user_ns["_trace"] is previous
    # a bad call is found before anything runs, so the cell's definitions did not run; an unknown name in the call
    # is found only once they ran (the name could have been defined by the cell)
    assert ("h" in ip.user_ns) == ("nope" in body)


# -- the command line ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "words", "call"),
    [
        ("model(x)", [], "model(x)"),
        (
            "--check-inputs [(x2,), (x3,)] --tol 1e-4 -o run model(a, b)",
            ["--check-inputs=[(x2,), (x3,)]", "--tol=1e-4", "-orun"],
            "model(a, b)",
        ),
        ("--tol=1e-4 --eval  model( x ) ", ["--tol=1e-4", "--eval"], "model( x )"),
        ("--check-inputs {'a': ' b '} f(x)", ["--check-inputs={'a': ' b '}"], "f(x)"),
        ("--tol -1 f(x)", ["--tol=-1"], "f(x)"),
        ("--eval -- f(x)", ["--eval"], "f(x)"),
        ("--tol", ["--tol"], ""),
        # quoted values, as IPython users write values with blanks: read by IPython's shell-like rules
        ("--check-inputs '[(-x2, x3)]' f(x)", ["--check-inputs=[(-x2, x3)]"], "f(x)"),
        ('--tol "1e-4" -o "run" f(x)', ["--tol=1e-4", "-orun"], "f(x)"),
        (
            "--check-inputs='[(x2,)]' --method 'encode' m.encode(x)",
            ["--check-inputs=[(x2,)]", "--method=encode"],
            "m.encode(x)",
        ),
        ("--check-inputs [(' a b ',)] f(x)", ["--check-inputs=[(' a b ',)]"], "f(x)"),
    ],
)
def test_split_line(line: str, words: list[str], call: str) -> None:
    from jupyter_tracejit.core.registry import backend
    from jupyter_tracejit.magic_line import grammar_of

    assert magic.split_line(line, grammar_of(backend("trace"))) == (words, call)


@pytest.mark.parametrize("quote", ["'", '"', ""])
def test_quoted_and_unquoted_option_values_trace_alike(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, quote: str
) -> None:
    run = traced(
        ip, monkeypatch, f"--check-inputs {quote}[(-torch.ones(3, 4),)]{quote} --tol {quote}1e-3{quote} relu_fn(x)"
    )
    assert run.options["check_inputs"] == [["Float(3, 4)"]] and run.options["check_tolerance"] == 1e-3


def test_load_ext_registers_line_and_cell_magics(ip: InteractiveShell) -> None:
    assert ip.find_line_magic("trace") is not None
    assert ip.find_cell_magic("trace") is not None


# -- what shown explorers keep alive --------------------------------------------------------------------


def test_rerunning_a_cell_closes_the_explorer_its_previous_run_showed(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(magic, "_cell_id", lambda shell: "cell-a")
    traced(ip, monkeypatch, "relu_fn(x)")
    first = ip.user_ns["_trace_explorer"]
    traced(ip, monkeypatch, "relu_fn(x)")
    second = ip.user_ns["_trace_explorer"]
    assert first.comm is None and first not in ipywidgets.Widget.widgets.values()
    assert second.comm is not None
    monkeypatch.setattr(magic, "_cell_id", lambda shell: "cell-b")  # another cell leaves it open
    traced(ip, monkeypatch, "relu_fn(x)")
    assert second.comm is not None


def test_beyond_the_bound_the_oldest_explorer_is_closed(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(magic, "MAX_LIVE_EXPLORERS", 3)
    monkeypatch.setattr(magic, "_cell_id", lambda shell: None)  # no cell ids (a console): only the bound applies
    shown = []
    for _ in range(5):
        traced(ip, monkeypatch, "relu_fn(x)")
        shown.append(ip.user_ns["_trace_explorer"])
    assert [e.comm is not None for e in shown] == [False, False, True, True, True]
    assert shown[0].run is not None  # a closed explorer's run stays readable


def test_fifty_runs_of_a_cell_leave_one_explorer_registered(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-running a cell closes its previous explorer, and with it the Layout widget every DOMWidget makes: before,
    that one stayed registered (comm open) per run, 51 widgets after 50 runs."""
    monkeypatch.setattr(magic, "_cell_id", lambda shell: "the-same-cell")
    before = set(ipywidgets.Widget.widgets)
    for _ in range(50):
        run_magic(ip, monkeypatch, "--no-check relu_fn(x)")
    explorer = ip.user_ns["_trace_explorer"]
    left = {ipywidgets.Widget.widgets[k] for k in set(ipywidgets.Widget.widgets) - before}
    assert left == {explorer, explorer.layout}, sorted(type(w).__name__ for w in left)


def test_a_closed_explorer_closes_its_layout(ip: InteractiveShell) -> None:
    explorer = tj.explore(tj.trace(relu_fn, (torch.ones(2),), check_trace=False))
    layout = explorer.layout
    explorer.close()
    assert layout.comm is None and layout not in ipywidgets.Widget.widgets.values()


# -- a real kernel -------------------------------------------------------------------------------------


def _require_kernel() -> None:
    for module in ("ipykernel", "nbclient", "nbformat"):
        pytest.importorskip(module)
    jupyter = Path(sys.executable).parent / "jupyter"
    exe = str(jupyter) if jupyter.exists() else shutil.which("jupyter")
    if exe is None:
        pytest.skip("the jupyter command is not installed")
    out = subprocess.run([exe, "kernelspec", "list"], capture_output=True, text=True)
    if out.returncode != 0 or "python3" not in out.stdout:
        pytest.skip("no python3 kernelspec (pip install ipykernel)")


def test_notebook_with_load_ext_and_trace(tmp_path: Path) -> None:
    _require_kernel()
    import nbformat
    from nbclient import NotebookClient

    cells = [
        "%load_ext jupyter_tracejit\nimport torch\ndef f(x):\n    return torch.relu(x) + 1\nx = torch.randn(3)",
        "%trace f(x)",
        "%trace --static -o static_run f(x)",
        "%trace --tol abc f(x)",
        "print(_trace.ok, static_run.ok, type(_trace).__name__)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.cells[3].metadata["tags"] = ["raises-exception"]  # a magic error fails its cell; Run All would stop there
    path = tmp_path / "magic.ipynb"
    nbformat.write(nb, path)
    client = NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}, allow_errors=False
    )
    client.execute()

    def outputs(i: int) -> list[dict[str, Any]]:
        return nb.cells[i]["outputs"]

    (live,) = outputs(1)  # the placeholder was replaced in place
    assert live["output_type"] == "display_data"
    assert {WIDGET_MIME, RUN_MIME, "text/html", "text/plain"} <= set(live["data"])
    assert PROGRESS_MIME not in live["data"]
    assert run_from_mime(live["data"][RUN_MIME])["ok"] is True
    assert "cell [1]" in run_from_mime(live["data"][RUN_MIME])["file_names"].values()  # f is defined in the first cell
    (static,) = outputs(2)
    assert RUN_MIME in static["data"] and WIDGET_MIME not in static["data"]
    assert "text/html" in static["data"]
    (error,) = outputs(3)
    assert error["output_type"] == "stream" and error["name"] == "stderr"
    assert error["text"].startswith("UsageError: %trace: --tol needs a finite number")
    assert error["text"].count("\n") == 1
    (printed,) = outputs(4)
    assert printed["text"] == "True True TraceRun\n"
