"""A TraceSession runs one plan end to end as a guest in the user's process: its timings, how often the user's
code ran (1 + 2 x check sets per method, as under torch.jit.trace), grad mode and train/eval flags put back after
success and failure, the stamp of a finished run, and agreement with torch where the session itself decides."""

from __future__ import annotations

import datetime
import inspect
import os
import re
import time
import warnings
from typing import Any

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.graph import Frame
from jupyter_tracejit.core.run import Target, TraceRun
from jupyter_tracejit.core.source import is_torch_file
from jupyter_tracejit.core.torchscript.options import TraceOptions
from jupyter_tracejit.core.torchscript.plan import plan_trace, plan_trace_module
from jupyter_tracejit.core.torchscript.session import TraceSession, stamp

from ..models import OneLinear
from .oracle import torch_verdict

HERE = __file__


def session_run(plan: Any, caller: Frame | None = None) -> TraceRun:
    return TraceSession(plan, plan.options.to_json(), caller).run(time.perf_counter())


class Counted(nn.Module):
    """Records, for each call of a method, the module's train flag and the grad mode."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.drop = nn.Dropout(0.0)
        self.calls: list[tuple[str, bool, bool]] = []

    def forward(self, x):
        self.calls.append(("forward", self.training, torch.is_grad_enabled()))
        return self.drop(self.fc(x))

    def encode(self, x):
        self.calls.append(("encode", self.training, torch.is_grad_enabled()))
        return self.fc(x) * 2


def counted_fn(x, calls: list[int] = []):  # noqa: B006 (the shared list counts the calls)
    calls.append(1)
    return x * 2


def torch_runs(fn: Any, *args: Any, **kwargs: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.trace(fn, *args, **kwargs)


# -- timings -------------------------------------------------------------------------------------------------------


def test_timings_of_each_phase() -> None:
    x = torch.rand(2, 3)
    checked = session_run(plan_trace(counted_fn, (x,), None, TraceOptions()))
    assert set(checked.timings) == {"trace", "extract", "check", "total"}
    assert all(t >= 0 for t in checked.timings.values())
    assert checked.timings["trace"] + checked.timings["extract"] + checked.timings["check"] <= checked.timings["total"]
    unchecked = session_run(plan_trace(counted_fn, (x,), None, TraceOptions(check_trace=False)))
    assert set(unchecked.timings) == {"trace", "extract", "total"}
    probed = session_run(plan_trace(counted_fn, (x,), None, TraceOptions(check_trace=False, probe=True)))
    assert set(probed.timings) == {"trace", "extract", "probe", "total"}
    failed = session_run(plan_trace(lambda v: {"y": v}, (x,), None, TraceOptions()))
    assert failed.error is not None and set(failed.timings) == {"trace", "total"}


# -- how often the user's code ran -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "runs"),
    [
        (TraceOptions(check_trace=False), 1),
        (TraceOptions(), 3),
        (TraceOptions(check_inputs=[(torch.rand(4, 3),), (torch.rand(5, 3),)]), 5),
    ],
    ids=["unchecked", "example-inputs", "two-check-sets"],
)
def test_python_runs_of_a_function_is_what_torch_runs(options: TraceOptions, runs: int) -> None:
    calls = counted_fn.__defaults__[0]
    calls.clear()
    run = session_run(plan_trace(counted_fn, (torch.rand(2, 3),), None, options))
    assert run.ok and run.python_runs == len(calls) == runs
    calls.clear()
    torch_runs(counted_fn, (torch.rand(2, 3),), check_trace=options.check_trace, check_inputs=options.check_inputs)
    assert len(calls) == runs


def test_python_runs_of_every_traced_method() -> None:
    model = Counted()
    x = torch.rand(2, 3)
    run = session_run(plan_trace_module(model, {"forward": (x,), "encode": (x,)}, False, TraceOptions()))
    assert run.ok
    assert run.python_runs == len(model.calls) == 2 * (1 + 2 * 1)
    assert sorted(name for name, _, _ in model.calls) == ["encode"] * 3 + ["forward"] * 3
    finding = next(f for f in run.findings if f.kind == "python_runs")
    assert finding.title == "the Python code ran 6 times"


# -- a guest in the user's process ---------------------------------------------------------------------------------


def test_module_mode_and_no_grad_hold_for_the_trace_only() -> None:
    model = Counted().train()
    model.drop.eval()  # mixed flags: each submodule's own flag comes back
    run = session_run(plan_trace(model, (torch.rand(2, 3),), None, TraceOptions(module_mode="eval", no_grad=True)))
    assert run.ok
    # the trace, then the check's re-trace and the eager run: eval mode throughout, grad off throughout
    assert model.calls == [("forward", False, False)] * 3
    assert model.training and not model.drop.training and model.fc.training
    assert torch.is_grad_enabled()


def test_the_check_runs_without_grad_like_torchs() -> None:
    model = Counted().eval()
    run = session_run(plan_trace(model, (torch.rand(2, 3),), None, TraceOptions(module_mode="train")))
    assert run.ok
    assert model.calls == [("forward", True, True), ("forward", True, False), ("forward", True, False)]
    assert not model.training and not model.fc.training


class FailsInTheCheck(Counted):
    def forward(self, x):
        super().forward(x)
        if not torch.is_grad_enabled():
            raise ValueError("needs grad")  # the check runs under no_grad
        return self.fc(x)


def test_flags_and_grad_mode_come_back_after_a_failure() -> None:
    model = FailsInTheCheck().eval()
    model.fc.train()
    run = session_run(plan_trace(model, (torch.rand(2, 3),), None, TraceOptions(module_mode="train", no_grad=False)))
    assert run.error is not None and run.error.phase == "check" and run.error.type == "ValueError"
    assert not model.training and model.fc.training and not model.drop.training
    assert torch.is_grad_enabled()
    with torch.no_grad():  # the user's own grad mode is kept too, here with a failure in the trace itself
        run = session_run(plan_trace(model, (torch.rand(2, 3),), None, TraceOptions(module_mode="train")))
        assert run.error is not None and run.error.phase == "trace"
        assert not torch.is_grad_enabled()
    assert not model.training and model.fc.training


# Not tests.models.MarkupEverywhere: hostile to the tracer itself (named_modules raises), to make a failure of
# our own; the markup model is hostile to a report.
class Hostile(nn.Module):
    def forward(self, x):
        return x

    def named_modules(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no modules for you")


def test_a_failure_of_our_own_is_recorded_not_raised() -> None:
    run = session_run(plan_trace(Hostile(), (torch.rand(2),), None, TraceOptions()))
    assert run.error is not None and run.error.phase == "internal" and run.error.message == "no modules for you"
    assert run.torch_version and run.run_id  # still a finished run
    assert torch.is_grad_enabled()


def test_nodes_inside_torch_are_located_at_the_callers_line() -> None:
    caller = Frame(file="cell.py", line=7, func="<module>", code="run = tj.trace(seq, x)")
    run = session_run(plan_trace(nn.Sequential(nn.Linear(2, 2)), (torch.rand(2),), None, TraceOptions()), caller)
    located = [n.source for n in run.graph.nodes if n.source is not None]
    assert located and all((s.file, s.line) == ("cell.py", 7) for s in located)


# -- stamp -----------------------------------------------------------------------------------------------------------


def test_stamp() -> None:
    started = time.perf_counter() - 1.0
    run = stamp(TraceRun(target=Target(name="f", kind="function"), options={}), started)
    assert run.torch_version == torch.__version__
    created = datetime.datetime.fromisoformat(run.created)
    assert created.utcoffset() == datetime.timedelta(0)
    assert abs((datetime.datetime.now(datetime.UTC) - created).total_seconds()) < 60
    assert re.fullmatch(r"[0-9a-f]{12}", run.run_id)
    assert run.timings["total"] >= 1.0
    again = stamp(TraceRun(target=Target(name="f", kind="function"), options={}), started)
    assert again.run_id != run.run_id


# -- agreement with torch --------------------------------------------------------------------------------------------


def test_a_meta_device_module_traces_as_torch_traces_it() -> None:
    model, x = nn.BatchNorm1d(2, device="meta").eval(), torch.empty(3, 2, device="meta")
    torch_runs(model, (x,))  # torch traces and checks it without complaint
    run = tj.trace(model, (x,))
    assert run.error is None and run.ok


def doubled(x):
    return x * 2


def test_a_function_on_meta_inputs_is_checked_as_torch_checks_it() -> None:
    x = torch.empty(3, device="meta")
    assert torch_verdict(doubled, (x,)).outcome == "ok"
    run = tj.trace(doubled, (x,))
    assert run.error is None and run.ok


@pytest.mark.filterwarnings("ignore:`torch.jit.trace_method` is deprecated")
def test_a_submodule_traced_as_a_method_fails_as_torch_fails() -> None:
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'fc'"):
        torch.jit.trace_module(OneLinear(), {"fc": (torch.rand(2),)})
    run = tj.trace_module(OneLinear(), {"fc": (torch.rand(2),)})
    assert not run.ok


def test_the_check_stops_at_the_first_set_whose_graph_differs_as_torchs_does() -> None:
    """The docs' loop example: torch raises "Graphs differed" on the first check input and never runs the second
    (on which the trace would fail: it indexes row 2 of a 2-row input)."""

    def loop_in_traced_fn(x):
        result = x[0]
        for i in range(x.size(0)):
            result = result * x[i]
        return result

    inputs, checks = (torch.rand(3, 4, 5),), [(torch.rand(4, 5, 6),), (torch.rand(2, 3, 4),)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(torch.jit.TracingCheckError, match="Graphs differed"):
            torch.jit.trace(loop_in_traced_fn, inputs, check_inputs=checks)
        run = tj.trace(loop_in_traced_fn, inputs, check_inputs=checks)
    assert not run.ok and run.error is None  # a failed check, not an exception
    assert run.check is not None and [c.index for c in run.check.cases] == [0]
    assert run.check.cases[0].graphs_differ


def _recording_callers(stacks: list[list[str]]) -> Any:
    """A function that records, each time it runs, the Python frames above torch's ``trace`` / ``trace_module``
    (torch's own wrappers left out: once torch._dynamo is imported, by an export or torch.compile, torch.jit.trace
    runs inside its ``eval_frame`` wrapper)."""

    def recorded(x: torch.Tensor) -> torch.Tensor:
        frame, names = inspect.currentframe(), []
        while frame is not None:
            name = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_code.co_name}"
            if name.startswith("_trace.py:") or not is_torch_file(frame.f_code.co_filename):
                names.append(name)
            frame = frame.f_back
        entry = next((i for i, n in enumerate(names) if n in ("_trace.py:trace", "_trace.py:trace_module")), None)
        stacks.append(names[entry + 1 : entry + 3] if entry is not None else names[:4])
        return x.sin()

    return recorded


class _Recorded(nn.Module):
    def __init__(self, stacks: list[list[str]]) -> None:
        super().__init__()
        self.recorded = _recording_callers(stacks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.recorded(x)


def test_torch_traces_from_the_api_frame_so_the_tracer_records_no_frame_of_the_session() -> None:
    """torch's tracer records every Python frame above the traced code at each node (~1 µs a frame a node): the
    trace and the check's re-traces are called from tj.trace's own frame, never from the session's methods."""
    x = torch.randn(3)
    here = "test_session.py:test_torch_traces_from_the_api_frame_so_the_tracer_records_no_frame_of_the_session"
    for target, api, inputs, api_frame in [
        (_recording_callers, tj.trace, (x,), "request.py:trace"),
        (_Recorded, tj.trace_module, {"forward": (x,)}, "request.py:trace_module"),
    ]:
        stacks: list[list[str]] = []
        run = api(target(stacks), inputs, check_inputs=[inputs])  # type: ignore[operator]
        assert run.ok, run.summary()
        # the trace, the check's re-trace, then the check's Python run (made by the check, not by the tracer)
        assert len(stacks) == 3
        assert stacks[0] == stacks[1] == [api_frame, here], stacks
