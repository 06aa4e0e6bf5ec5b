"""TraceExplorer's history and the run on screen, against a recording comm and a hand-advanced clock: a bounded
history, show_run and compare, picking and cancelling, interrupts during a re-trace, and what a closed explorer lets
go of."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import jupyter_tracejit as tj
from jupyter_tracejit.widgets import RUN_MIME, explore, run_from_mime

from .explorer_models import SETTLE, DictOut, ModeBranch, Small, X, data_branch, with_check_inputs
from .fakes import FakeClock, front_end_custom

# -- history, show_run, compare ---------------------------------------------------------------------------


def test_history_is_bounded_and_keeps_the_run_on_screen(clock: FakeClock) -> None:
    ex = explore(Small(), (X,), check_trace=False, scheduler=clock)
    ids = [ex.run.run_id]
    for _ in range(11):
        ex.retrace()
        clock.advance(SETTLE)
        ids.append(ex.run.run_id)
    assert len(set(ids)) == 12
    assert [r["run_id"] for r in ex.runs] == ids[-10:]
    assert [r.run_id for r in ex.history] == ids[-10:]
    assert ex.run_json["run_id"] == ids[-1]

    front_end_custom(ex, {"type": "show_run", "run_id": ids[2]})  # the oldest kept
    assert ex.run_json["run_id"] == ids[2] and ex.run.run_id == ids[2]
    ex.history_limit = 3
    assert [r["run_id"] for r in ex.runs] == [ids[2], ids[10], ids[11]]
    ex.retrace()
    clock.advance(SETTLE)
    # the run shown before is no longer protected: it was the oldest
    assert [r["run_id"] for r in ex.runs] == [ids[10], ids[11], ex.run.run_id]


def test_show_run_and_unknown_messages_set_error_status(clock: FakeClock) -> None:
    ex = explore(Small(), (X,), check_trace=False, scheduler=clock)
    front_end_custom(ex, {"type": "show_run", "run_id": "nope"})
    assert ex.status == "error"
    assert "unknown run_id 'nope': not in the explorer's history" in ex.status_message
    front_end_custom(ex, {"type": "show_run", "run_id": ex.run.run_id})
    assert ex.status == "idle" and ex.status_message == ""
    front_end_custom(ex, {"type": "zoom"})
    assert ex.status == "error"
    assert ex.status_message.startswith("unknown message type 'zoom' from the front end; expected one of")
    front_end_custom(ex, {"type": "compare", "a": ex.run.run_id, "b": ex.run.run_id, "method": "backward"})
    assert "has no graph for method 'backward'" in ex.status_message


def test_compare_two_runs_of_the_history(clock: FakeClock) -> None:
    ex = explore(ModeBranch(), (X,), module_mode="train", scheduler=clock)
    a = ex.run
    ex.options = {"module_mode": "eval"}
    clock.advance(0.3 + SETTLE)
    b = ex.run
    assert a is not b

    front_end_custom(ex, {"type": "compare", "a": a.run_id, "b": b.run_id, "method": "forward"})
    cmp = ex.comparison
    assert set(cmp) == {"a", "b", "method", "graph_a", "graph_b", "diff"}
    assert (cmp["a"], cmp["b"], cmp["method"]) == (a.run_id, b.run_id, "forward")
    assert cmp["graph_a"] == a.graphs["forward"].to_json()
    assert cmp["graph_b"] == b.graphs["forward"].to_json()
    roots = [d for d in cmp["diff"]["divergences"] if d[2] == 0]
    assert roots, cmp["diff"]
    assert cmp["diff"] == tj.structural_diff(a.graphs["forward"], b.graphs["forward"]).to_json()
    assert ex.comm.updates("comparison")[-1] == cmp

    # the Python method, with a run traced elsewhere (other example inputs: a different graph)
    other = tj.trace(data_branch, (-X.abs(),))
    ex2 = explore(data_branch, (X.abs(),), scheduler=clock)
    ex2.add_run(other, show=False)
    assert ex2.run is not other and [r.run_id for r in ex2.history][-1] == other.run_id
    out = ex2.compare(ex2.history[0].run_id, other.run_id)
    assert any(d[2] == 0 for d in out["diff"]["divergences"])

    # a comparison naming a run the history dropped is cleared
    ex.history_limit = 1
    assert ex.comparison == {}


# -- the run on screen is the one Python sees --------------------------------------------------------------


def test_run_and_html_follow_the_run_on_screen(clock: FakeClock) -> None:
    ex = explore(ModeBranch(), (X,), module_mode="train", scheduler=clock)
    first = ex.run
    assert ex.html == first.to_html()
    seen: list[str] = []
    ex.observe(lambda change: seen.append(change["new"]["run_id"]), names="run_json")
    ex.options = {"module_mode": "eval"}
    clock.advance(0.3 + SETTLE)
    second = ex.run
    assert second is not first and second.options["module_mode"] == "eval"
    assert seen == [second.run_id]
    assert ex.html == second.to_html() and ex.html != first.to_html()
    # the html travels with the run in one state message
    update = next(m["state"] for m in ex.comm.messages if m.get("method") == "update" and "run_json" in m["state"])
    assert update["html"] == ex.html
    # what the notebook saves: the widget view with the run on screen, its JSON and its HTML
    bundle = ex._repr_mimebundle_()
    assert bundle is not None and bundle["text/html"] == ex.html and run_from_mime(bundle[RUN_MIME]) == second.to_json()


def test_picking_a_history_run_puts_its_options_back_without_retracing(clock: FakeClock) -> None:
    model = Small()
    ex = with_check_inputs(clock, model)
    first = ex.run
    ex.options = {"check_trace": False, "check_inputs_enabled": [False, True]}
    clock.advance(0.3 + SETTLE)
    second = ex.run
    assert [e["explorer_options"]["check_trace"] for e in ex.runs] == [True, False]
    calls = model.calls
    front_end_custom(ex, {"type": "show_run", "run_id": first.run_id})
    assert ex.run is first
    assert ex.options == ex.runs[0]["explorer_options"]
    assert ex.options["check_trace"] is True and ex.options["check_inputs_enabled"] == [True, True]
    assert ex.comm.updates("options")[-1] == ex.options  # the options bar shows them
    clock.advance(5)
    assert model.calls == calls and ex.run is first  # putting them back traced nothing
    front_end_custom(ex, {"type": "show_run", "run_id": second.run_id})
    assert ex.options["check_trace"] is False and ex.options["check_inputs_enabled"] == [False, True]
    # they are the options of the next re-trace
    front_end_custom(ex, {"type": "retrace"})
    clock.advance(SETTLE)
    assert ex.run.options["check_trace"] is False and ex.run.options["check_inputs"] == [["Float(3, 8)"]]


def test_picking_a_history_run_drops_a_retrace_in_flight(clock: FakeClock) -> None:
    ex = explore(ModeBranch(), (X,), module_mode="train", scheduler=clock)
    first = ex.run
    ex.options = {"module_mode": "eval"}
    clock.advance(0.1)
    front_end_custom(ex, {"type": "show_run", "run_id": first.run_id})
    clock.advance(1)
    assert ex.run is first and len(ex.history) == 1
    assert ex.options["module_mode"] == "train" and ex.status == "idle"


def test_cancel_before_the_trace_starts_traces_nothing(clock: FakeClock) -> None:
    model = Small()
    ex = explore(model, (X,), scheduler=clock)
    calls, before = model.calls, dict(ex.options)
    ex.options = {"no_grad": True}
    clock.advance(0.1)
    front_end_custom(ex, {"type": "cancel"})
    clock.advance(1)
    assert model.calls == calls and len(ex.history) == 1
    assert ex.options == before  # the options bar is back on the run on screen
    assert ex.status == "idle" and ex.status_message == ""


def test_cancel_while_tracing_drops_the_result(clock: FakeClock) -> None:
    model = Small()
    ex = explore(model, (X,), check_trace=False, scheduler=clock)
    first, before = ex.run, dict(ex.options)
    ex.options = {"no_grad": True}
    clock.advance(0.3)  # the trace ran (the kernel was busy); its result waits SETTLE seconds
    assert model.calls == 2 and ex.status == "tracing"
    front_end_custom(ex, {"type": "cancel"})  # read in that gap
    assert ex.status == "idle"
    clock.advance(1)
    assert ex.run is first and len(ex.history) == 1 and ex.run_json["run_id"] == first.run_id
    assert ex.options == before
    assert ex.comm.updates("status")[-2:] == ["tracing", "idle"]
    assert "run_json" not in {k for m in ex.comm.messages if m.get("method") == "update" for k in m["state"]}


def test_the_history_says_each_runs_verdict(clock: FakeClock) -> None:
    ex = explore(data_branch, (X.abs(),), scheduler=clock)
    assert ex.runs[-1]["verdict"] == "warnings"  # a frozen branch: right for these inputs only
    ex.add_run(tj.trace(data_branch, (X.abs(),), check_inputs=[(-X.abs(),)]))
    assert ex.runs[-1]["verdict"] == "check failed"
    ex.add_run(tj.trace(DictOut(), (X,)))
    assert ex.runs[-1]["verdict"] == "failed"


class Interrupted(nn.Module):
    """Raises what the kernel's Interrupt (or a call to exit()) raises in the traced code, once armed."""

    def __init__(self) -> None:
        super().__init__()
        self.escape: type[BaseException] | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.escape is not None:
            raise self.escape()
        return x + 1


@pytest.mark.parametrize(
    ("escape", "message"),
    [
        (KeyboardInterrupt, "re-trace interrupted: the run on screen is the one before it"),
        (SystemExit, "re-trace stopped: the traced code called exit (None); the kernel keeps running"),
    ],
)
def test_an_interrupt_or_exit_during_a_retrace_keeps_the_run_and_the_kernel(
    clock: FakeClock, escape: type[BaseException], message: str
) -> None:
    model = Interrupted()
    ex = explore(model, (X,), check_trace=False, scheduler=clock)
    good = ex.run
    model.escape = escape
    ex.options = {"no_grad": True}
    clock.advance(0.3 + SETTLE)  # must not raise
    assert ex.status == "error" and ex.status_message == message
    assert ex.run is good and [r.run_id for r in ex.history] == [good.run_id]
    model.escape = None
    ex.options = {"no_grad": False}
    clock.advance(0.3 + SETTLE)
    assert ex.status == "idle" and ex.run is not good


def test_a_retrace_runs_with_the_interrupt_handler_installed(clock: FakeClock) -> None:
    # outside a request ipykernel ignores SIGINT; the re-trace installs Python's handler, as a request does
    import signal

    seen: list[object] = []

    class Probe(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            seen.append(signal.getsignal(signal.SIGINT))
            return x + 1

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        ex = explore(Probe(), (X,), check_trace=False, scheduler=clock)
        ex.options = {"no_grad": True}
        clock.advance(0.3 + SETTLE)
        assert seen == [signal.SIG_IGN, signal.default_int_handler]  # the first trace was the user's call
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_closed_explorer_lets_go_of_its_model_and_history(clock: FakeClock) -> None:
    import gc
    import weakref

    model = Small()
    ex = explore(model, (X,), check_trace=False, scheduler=clock)
    ex.options = {"no_grad": True}
    clock.advance(0.3 + SETTLE)
    assert len(ex.history) == 2
    first = weakref.ref(ex.history[0].traced)
    shown = ex.run
    model_ref = weakref.ref(model)
    del model
    ex.close()
    gc.collect()
    assert first() is None  # the history's other ScriptModules are released at once
    assert ex.run is shown and ex.history == [shown]  # what it showed stays readable
    with pytest.raises(RuntimeError, match="this explorer was closed"):
        ex.retrace()
    # and nothing of ipywidgets' keeps the closed explorer, so its model goes with it
    assert shown.request is not None and shown.request.target is model_ref()
    del ex, shown
    gc.collect()
    assert model_ref() is None
