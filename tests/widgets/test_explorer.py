"""TraceExplorer against a recording comm and a hand-advanced clock, with real (tiny) torch models: the wire
contract and validation at the boundary (live re-tracing: test_explorer_live.py; the history and the run on screen:
test_explorer_history.py)."""

from __future__ import annotations

from typing import Any

import pytest
from traitlets import TraitError

import jupyter_tracejit as tj
from jupyter_tracejit.widgets import TraceExplorer, default_options, explore

from .explorer_models import ModeBranch, X, data_branch, with_check_inputs
from .fakes import FakeClock, front_end_custom, front_end_update

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
        ({"strictness": True}, "unknown trace option 'strictness' (value True); the options are: check_inputs"),
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
