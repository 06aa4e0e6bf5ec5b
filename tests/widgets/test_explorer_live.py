"""TraceExplorer's live re-tracing, against a recording comm and a hand-advanced clock: options re-trace once after
the debounce, a stale or failed result never replaces the run on screen, the selection follows."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.torchscript.request import TraceRequest
from jupyter_tracejit.widgets import explore

from .explorer_models import SETTLE, DictOut, ModeBranch, Small, X, data_branch, with_check_inputs
from .fakes import FakeClock, front_end_custom, front_end_update


def on_cpu(x: torch.Tensor) -> torch.Tensor:
    return x + torch.ones(x.shape[-1], device="cpu")


def test_a_target_device_set_in_the_options_bar_retraces_with_it_and_the_history_says_so(clock: FakeClock) -> None:
    ex = explore(on_cpu, (X,), scheduler=clock)
    here = ex.run
    assert ex.options["target_device"] is None and here.verdict.level == "ok"
    front_end_update(ex, options={"target_device": "cuda"})
    clock.advance(0.3 + SETTLE)
    served = ex.run
    assert served is not here and served.options["target_device"] == "cuda"
    assert served.verdict.level == "warning"
    assert served.verdict.reasons == ['warning: device "cpu" baked into the graph']
    assert [e["explorer_options"]["target_device"] for e in ex.runs] == [None, "cuda"]
    front_end_update(ex, options={"target_device": None})  # emptied: where it is traced
    clock.advance(0.3 + SETTLE)
    assert ex.run.options["target_device"] is None and ex.run.verdict.level == "ok"


def test_options_change_retraces_once_after_the_debounce(clock: FakeClock) -> None:
    model = Small()
    ex = explore(model, (X,), scheduler=clock)
    first = ex.run
    calls = model.calls
    ex.options = {"check_trace": False}
    clock.advance(0.2)
    front_end_update(ex, options={"no_grad": True})  # a partial dict, merged onto the current options
    assert ex.options["check_trace"] is False and ex.options["no_grad"] is True
    clock.advance(0.2)
    assert ex.run is first and ex.status == "idle"  # still waiting
    clock.advance(0.1)
    assert model.calls == calls + 1  # one trace, no check
    assert ex.run is first and ex.status == "tracing"  # shown a moment later, so a cancel sent meanwhile is read
    clock.advance(SETTLE)
    run = ex.run
    assert run is not first
    assert run.options["check_trace"] is False and run.options["no_grad"] is True
    assert [r["run_id"] for r in ex.runs] == [first.run_id, run.run_id]
    assert ex.run_json["run_id"] == run.run_id
    assert ex.status == "idle" and ex.status_message == ""
    # the front end heard "tracing" (with its start time) before the new run arrived
    statuses = ex.comm.updates("status")
    assert statuses == ["tracing", "idle"]
    messages = [m["state"] for m in ex.comm.messages if m.get("method") == "update"]
    tracing_at = next(i for i, s in enumerate(messages) if s.get("status") == "tracing")
    run_at = next(i for i, s in enumerate(messages) if "run_json" in s)
    assert tracing_at < run_at
    assert messages[tracing_at]["status_since"] > 0
    # echoed in full: the front end sent a partial dict
    assert ex.comm.updates("options")[-1] == ex.options


def test_a_diffs_explorer_retraces_its_new_side_and_diffs_it_again(clock: FakeClock) -> None:
    old = tj.trace(ModeBranch().eval(), (X,))
    new_model = ModeBranch().train()
    result = tj.diff(old, tj.trace(new_model, (X,)))
    ex = explore(result, scheduler=clock)
    assert ex.run.diff_against is not None and not result.same
    ex.options = {"module_mode": "eval"}  # the new side traced in eval mode: now the same graph as the old one
    clock.advance(0.3 + SETTLE)
    run = ex.run
    assert run.options["module_mode"] == "eval" and ex.status == "idle"
    against = run.diff_against
    assert against is not None and against.diff.old_run is old and against.diff.new_run is not None
    assert against.diff.scopes == [] and against.diff.new_summary == run.summary()
    assert ex.run_json["diff_against"]["diff"]["summary_text"] == against.diff.summary()
    # a run with no diff re-traces as before
    plain = explore(Small(), (X,), scheduler=clock)
    plain.options = {"check_trace": False}
    clock.advance(0.3 + SETTLE)
    assert plain.run.diff_against is None


def test_check_inputs_switches_pick_the_sets(clock: FakeClock) -> None:
    ex = with_check_inputs(clock)
    ex.options = {"check_inputs_enabled": [False, True]}
    clock.advance(0.3 + SETTLE)
    assert ex.run.options["check_inputs"] == [["Float(3, 8)"]]
    assert [c.label for c in ex.run.check.cases] == ["check_inputs[0]"]
    ex.options = {"check_inputs_enabled": [False, False]}  # none: torch's default, the example inputs
    clock.advance(0.3 + SETTLE)
    assert ex.run.options["check_inputs"] is None
    assert [c.label for c in ex.run.check.cases] == ["example inputs"]


def test_retrace_message_traces_now(clock: FakeClock) -> None:
    ex = explore(Small(), (X,), check_trace=False, scheduler=clock)
    front_end_custom(ex, {"type": "retrace"})
    assert ex.status == "idle" and len(ex.history) == 1
    clock.advance(SETTLE)
    assert len(ex.history) == 2


def test_a_stale_result_is_never_shown(clock: FakeClock) -> None:
    model = Small()
    ex = explore(model, (X,), scheduler=clock)
    first = ex.run

    def newer_request() -> None:  # the user changes an option while the first re-trace runs
        ex.options = {"no_grad": True}

    ex.options = {"check_trace": False}
    model.hook = newer_request
    clock.advance(0.3 + SETTLE)
    assert ex.run is first and len(ex.history) == 1
    assert ex.status == "tracing"
    assert ex._retracer.dropped == 1
    clock.advance(0.3 + SETTLE)
    assert ex.run.options["no_grad"] is True and ex.run.options["check_trace"] is False
    assert len(ex.history) == 2 and ex.status == "idle"


def test_a_failed_retrace_keeps_the_good_run_on_screen(clock: FakeClock) -> None:
    ex = explore(DictOut(), (X,), strict=False, scheduler=clock)
    good = ex.run
    assert good.error is None
    ex.options = {"strict": True}
    clock.advance(0.3 + SETTLE)
    assert ex.run is good and ex.run_json["run_id"] == good.run_id
    assert ex.status == "error"
    assert "Encountering a dict at the output of the tracer" in ex.status_message
    assert "Hint:" in ex.status_message and "Pass strict=False" in ex.status_message
    assert [r["ok"] for r in ex.runs] == [True, False]
    failed = ex.history[-1]
    assert failed.error is not None and failed.error.tag == "dict_output"
    # fixing the option recovers
    ex.options = {"strict": False}
    clock.advance(0.3 + SETTLE)
    assert ex.run is ex.history[-1] and ex.status == "idle" and ex.status_message == ""


def test_a_failed_first_run_is_replaced_by_the_next_one(clock: FakeClock) -> None:
    ex = explore(DictOut(), (X,), scheduler=clock)
    assert ex.run.error is not None and ex.live
    assert ex.selected_method == ""
    ex.options = {"strict": False}
    clock.advance(0.3 + SETTLE)
    assert ex.run.error is None and ex.selected_method == "forward" and ex.status == "idle"


def test_an_exception_of_ours_ends_in_error_status(clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    ex = explore(Small(), (X,), check_trace=False, scheduler=clock)

    def broken(self: TraceRequest, **overrides: Any) -> Any:
        raise RuntimeError("request lost its model")

    monkeypatch.setattr(TraceRequest, "run", broken)
    ex.options = {"no_grad": True}
    clock.advance(0.3 + SETTLE)  # must not raise
    assert ex.status == "error"
    assert ex.status_message == "re-trace failed: RuntimeError: request lost its model"
    assert len(ex.history) == 1


def test_selection_is_reset_when_it_no_longer_exists(clock: FakeClock) -> None:
    ex = explore(ModeBranch(), (X,), module_mode="eval", check_trace=False, scheduler=clock)
    last = len(ex.run.graphs["forward"]) - 1
    ex.selected_node = last
    ex.options = {"module_mode": "train"}  # a smaller graph
    clock.advance(0.3 + SETTLE)
    assert len(ex.run.graphs["forward"]) <= last
    assert ex.selected_node == -1

    ex = explore(data_branch, (X.abs(),), check_inputs=[(-X.abs(),)], scheduler=clock)
    ex.current_divergence = 0
    ex.selected_node = 0
    ex.options = {"check_trace": False}
    clock.advance(0.3 + SETTLE)
    assert ex.current_divergence == -1  # the new run has no check
    assert ex.selected_node == 0  # node 0 still exists
