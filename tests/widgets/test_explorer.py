"""TraceExplorer against a recording comm and a hand-advanced clock, with real (tiny) torch models."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn
from traitlets import TraitError

import jupyter_tracejit as tj
from jupyter_tracejit.core.torchscript.request import TraceRequest
from jupyter_tracejit.widgets import RUN_MIME, TraceExplorer, default_options, explore, run_from_mime

from .fakes import FakeClock, front_end_custom, front_end_update

X = torch.randn(4, 8)
#: how long after its trace a result is shown (TraceExplorer's default settle)
SETTLE = 0.1


class Small(nn.Module):
    """Counts its calls, and runs ``hook`` once when one is set (to act in the middle of a trace)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 4)
        self.calls = 0
        self.hook: Any = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.hook is not None:
            hook, self.hook = self.hook, None
            hook()
        return torch.relu(self.lin(x))


class DictOut(nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"y": x * 2}


class ModeBranch(nn.Module):
    """A different graph in train and eval mode."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            return x * 2
        return torch.sigmoid(x) - 1


def data_branch(x: torch.Tensor) -> torch.Tensor:
    if x.sum() > 0:  # frozen by the tracer: the check with negative inputs diverges
        return x * 2
    return x - 1


def with_check_inputs(clock: FakeClock, model: nn.Module | None = None) -> TraceExplorer:
    checks = [(torch.randn(2, 8),), (torch.randn(3, 8),)]
    return explore(model or Small(), (X,), check_inputs=checks, scheduler=clock)


SYNCED = {
    "run_json",
    "html",
    "runs",
    "history_limit",
    "options",
    "check_input_labels",
    "live",
    "status",
    "status_since",
    "status_message",
    "selected_method",
    "selected_node",
    "current_divergence",
    "comparison",
}


# -- the wire contract ---------------------------------------------------------------------------------


def test_defaults_and_contract_names() -> None:
    ex = TraceExplorer()
    state = ex.comm.open_data["state"]
    assert state.keys() >= SYNCED
    assert (state["_model_name"], state["_view_name"]) == ("TraceExplorerModel", "TraceExplorerView")
    assert state["_model_module"] == state["_view_module"] == "jupyter-tracejit"
    assert state["_model_module_version"] == state["_view_module_version"] == "^" + tj.__version__
    assert ex.run_json == {} and ex.runs == [] and ex.comparison == {}
    assert ex.history_limit == 10
    assert ex.options == default_options()
    assert ex.check_input_labels == []
    assert ex.live is False
    assert (ex.status, ex.status_since, ex.status_message) == ("idle", 0.0, "")
    assert (ex.selected_method, ex.selected_node, ex.current_divergence) == ("", -1, -1)
    assert ex.run is None and ex.history == []


def test_explorer_on_a_traced_module(clock: FakeClock) -> None:
    ex = with_check_inputs(clock)
    run = ex.run
    assert run is not None and run.ok
    assert ex.live
    assert ex.run_json == run.to_json()
    assert ex.options == {
        "strict": True,
        "check_trace": True,
        "check_tolerance": 1e-5,
        "check_inputs_enabled": [True, True],
        "force_outplace": False,
        "module_mode": "as_is",
        "no_grad": False,
        "target_device": None,
    }
    assert ex.runs == [
        {
            "run_id": run.run_id,
            "summary": run.summary(),
            "ok": True,
            "verdict": "ok",
            "created": run.created,
            "options": run.options,
            "explorer_options": ex.options,
        }
    ]
    assert ex.html == run.to_html() and '<strong class="tracejit-ok">ok</strong>' in ex.html
    assert ex.check_input_labels == ["check_inputs[0]: Float(2, 8)", "check_inputs[1]: Float(3, 8)"]
    assert ex.selected_method == "forward"
    assert ex.comm.open_data["state"]["run_json"]["run_id"] == run.run_id


def test_explore_a_run_live_or_loaded(clock: FakeClock) -> None:
    run = tj.trace(ModeBranch(), (X,), module_mode="eval", check_tolerance=1e-3, check_inputs=[(X[:2],)])
    live = explore(run, scheduler=clock)
    assert live.live and live.run is run
    assert live.options["module_mode"] == "eval" and live.options["check_tolerance"] == 1e-3

    loaded = explore(tj.TraceRun.from_json(run.to_json()))
    assert not loaded.live
    assert loaded.options["module_mode"] == "eval"
    assert loaded.options["check_inputs_enabled"] == [True]
    assert loaded.check_input_labels == ["check_inputs[0]: Float(2, 8)"]
    loaded.options = {"strict": False}
    assert loaded.status == "error"
    assert "cannot re-trace" in loaded.status_message
    front_end_custom(loaded, {"type": "retrace"})
    assert loaded.status == "error"

    with pytest.raises(TypeError, match="takes no example inputs or trace options"):
        explore(run, (X,))
    with pytest.raises(TypeError, match=r"explore needs a TraceRun, an nn\.Module or a function, got int"):
        explore(42)


def test_the_top_level_explore_is_the_widget_one(clock: FakeClock) -> None:
    ex = tj.explore(data_branch, (X.abs(),), check_trace=False, scheduler=clock)
    assert isinstance(ex, TraceExplorer) and ex.live
    assert ex.options["check_trace"] is False


# -- validation at the boundary ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"strictness": True}, "unknown trace option 'strictness' (value True); the options are: check_inputs_enabled,"),
        ({"strict": "yes"}, "option 'strict' must be True or False, got 'yes'"),
        ({"check_tolerance": -1e-3}, "option 'check_tolerance' must be a finite number >= 0, got -0.001"),
        ({"check_tolerance": float("inf")}, "option 'check_tolerance' must be a finite number >= 0, got inf"),
        ({"check_tolerance": "1e-5"}, "option 'check_tolerance' must be a finite number >= 0, got '1e-5'"),
        ({"module_mode": "inference"}, "option 'module_mode' must be one of 'as_is', 'train', 'eval', got 'inference'"),
        (
            {"check_inputs_enabled": [True]},
            "option 'check_inputs_enabled' must be a list of 2 true/false value(s), one per check",
        ),
        ({"check_inputs_enabled": [1, 0]}, "got [1, 0]"),
        ({"target_device": "gpu"}, "option 'target_device' must be a device name such as 'cuda', 'cuda:0' or 'cpu'"),
    ],
)
def test_bad_options_are_refused_with_a_message(clock: FakeClock, change: dict[str, Any], message: str) -> None:
    ex = with_check_inputs(clock)
    before = dict(ex.options)
    with pytest.raises(TraitError) as info:
        ex.options = change
    assert message in str(info.value)
    assert ex.options == before
    assert clock.pending == []  # nothing re-traces


def test_history_limit_and_selection_are_validated(clock: FakeClock) -> None:
    ex = explore(data_branch, (X.abs(),), check_inputs=[(-X.abs(),)], scheduler=clock)
    with pytest.raises(TraitError, match=r"history_limit must be at least 1, got 0: .* use 1 to keep only the run"):
        ex.history_limit = 0
    size = len(ex.run.graphs["forward"])
    with pytest.raises(
        TraitError, match=rf"selected_node 999 does not exist in the graph of 'forward' \(node ids 0..{size - 1}\)"
    ):
        ex.selected_node = 999
    ex.selected_node = size - 1
    ex.selected_node = -1
    with pytest.raises(TraitError, match="selected_method 'backward' is not a traced method of the run on screen"):
        ex.selected_method = "backward"
    count = sum(len(c.diff.divergences) for c in ex.run.check.cases if c.diff)
    assert count >= 1
    ex.current_divergence = count - 1
    with pytest.raises(TraitError, match=f"current_divergence {count} is out of range: the run on screen has indices"):
        ex.current_divergence = count
    with pytest.raises(TraitError, match="live is fixed"):
        ex.live = False


def test_a_bad_update_from_the_front_end_is_shown_not_raised(clock: FakeClock) -> None:
    ex = with_check_inputs(clock)
    before = dict(ex.options)
    front_end_update(ex, options={"module_mode": "inference"})
    assert ex.options == before
    assert ex.status == "error"
    assert "'module_mode' must be one of" in ex.status_message
    assert ex.comm.updates("options")[-1] == before  # the front end gets the options in effect back
    assert clock.pending == []


# -- live re-tracing --------------------------------------------------------------------------------------


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
