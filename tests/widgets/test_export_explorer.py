"""TraceExplorer on an export run (the internal export back end): the options bar is the export's (one definition:
core/export/options.py EXPORT_SPECS), and changing it re-exports through ``run.request`` in the background."""

from __future__ import annotations

import jsonschema
import pytest
import torch
from traitlets import TraitError

import jupyter_tracejit as tj
from jupyter_tracejit.core.export.options import (
    EXPORT_LIVE,
    EXPORT_READ_ONLY,
    EXPORT_SPECS,
    ExportOptions,
    export_support_problem,
)
from jupyter_tracejit.core.export.request import export
from jupyter_tracejit.widgets import EXPORT_OPTION_KEYS, TraceExplorer, explore

from ..models import LinearReLU
from .fakes import FakeClock, front_end_custom, front_end_update
from .test_explorer_schema import schema, validator

#: the export back end needs torch.export with Dim.AUTO (the floor torch of the matrix, 2.4, lacks it)
pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))

X = torch.rand(3, 4)
SETTLE = 0.1
BATCH = {"x": {0: torch.export.Dim("batch", min=2, max=64)}}


@pytest.fixture(scope="module")
def exported() -> tj.TraceRun:
    run = export(LinearReLU(), (X,), dynamic_shapes=BATCH)
    assert run.ok and run.backend == "export", run.error
    return run


def test_the_export_options_bar_has_one_definition() -> None:
    options = schema("widgets/explorer.schema.json")["definitions"]["ExportExplorerOptions"]
    assert tuple(options["properties"]) == EXPORT_OPTION_KEYS == EXPORT_LIVE
    defaults = ExportOptions()
    for key, prop in options["properties"].items():
        spec = EXPORT_SPECS[key]
        assert prop["x-label"] == spec.label and prop["description"] == spec.doc, key
        assert prop["default"] == spec.default == getattr(defaults, key), key
    assert [r["key"] for r in options["x-read-only"]] == list(EXPORT_READ_ONLY)
    assert set(EXPORT_LIVE) | set(EXPORT_READ_ONLY) | {"compare_trace"} == set(ExportOptions.names())


def test_an_export_run_is_explored_with_the_export_options(clock: FakeClock, exported: tj.TraceRun) -> None:
    ex = explore(exported, scheduler=clock)
    assert ex.live and ex.run is exported
    assert ex.options == {"strict": False, "draft": "on_request", "module_mode": "as_is", "no_grad": False}
    assert ex.run_json["backend"] == "export" and ex.selected_method == "forward"
    assert ex.runs[0]["explorer_options"] == ex.options
    synced = {k: ex.get_state()[k] for k in schema("widgets/explorer.schema.json")["properties"]}
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator().iter_errors(synced)]
    assert errors == [], errors[:5]
    # a trace option is not an export option: refused with the names it takes
    with pytest.raises(TraitError, match=r"unknown export option 'check_trace'.*draft, module_mode, no_grad, strict"):
        ex.options = {"check_trace": False}
    with pytest.raises(TraitError, match="option 'draft' must be one of 'on_request', 'on_failure', 'always', 'never'"):
        ex.options = {"draft": "sometimes"}


def test_changing_an_export_option_re_exports_in_the_background(clock: FakeClock, exported: tj.TraceRun) -> None:
    ex = explore(exported, scheduler=clock)
    front_end_update(ex, options={"no_grad": True, "module_mode": "eval"})
    assert ex.run is exported and ex.status == "idle"  # waits for the debounce
    clock.advance(0.3)
    assert ex.status == "tracing"
    clock.advance(SETTLE)
    again = ex.run
    assert again is not exported and again.backend == "export" and ex.status == "idle", ex.status_message
    assert again.options["no_grad"] is True and again.options["module_mode"] == "eval"
    # the options the bar does not offer are the request's: the dynamic batch stays dynamic
    assert again.options["dynamic_shapes"] == exported.options["dynamic_shapes"]
    assert again.export is not None and [s.name for s in again.export.symbols] == [
        s.name for s in exported.export.symbols
    ]
    assert [e["explorer_options"]["no_grad"] for e in ex.runs] == [False, True]
    ex.show_run(ex.runs[0]["run_id"])  # the history puts the first export's options back
    assert ex.run is exported and ex.options["no_grad"] is False and ex.status == "idle"
    for state in (ex.get_state(),):
        synced = {k: state[k] for k in schema("widgets/explorer.schema.json")["properties"]}
        assert list(validator().iter_errors(synced)) == []


def test_a_loaded_export_run_is_read_only(clock: FakeClock, exported: tj.TraceRun) -> None:
    loaded = tj.TraceRun.from_json(exported.to_json())
    ex = TraceExplorer(loaded, scheduler=clock)
    assert not ex.live and ex.options["draft"] == "on_request"
    ex.options = {"strict": True}
    assert ex.status == "error" and "cannot re-trace" in ex.status_message


def test_trace_and_export_runs_do_not_share_an_explorer(clock: FakeClock, exported: tj.TraceRun) -> None:
    ex = explore(LinearReLU(), (X,), scheduler=clock)
    with pytest.raises(ValueError, match="shows trace runs and the run is an export run"):
        ex.add_run(exported)
    empty = TraceExplorer(scheduler=clock)
    empty.add_run(exported)  # an empty explorer takes the export's options bar
    assert empty.run is exported and set(empty.options) == set(EXPORT_LIVE)
    jsonschema.validate(empty.options, schema("widgets/explorer.schema.json")["definitions"]["ExportExplorerOptions"])


class Loop(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(x.size(0)):  # LOOP LINE
            x = x + i
        return x


def test_a_refused_export_offers_its_draft_and_the_draft_message_joins_it(clock: FakeClock) -> None:
    refused = export(Loop(), (torch.randn(3),), dynamic_shapes={"x": {0: torch.export.Dim("n", min=2, max=8)}})
    assert refused.error is not None and refused.export is not None and not refused.graphs
    assert refused.export.draft_offer is not None and refused.export.draft_offer.status == "offered"
    ex = explore(refused, scheduler=clock)
    phases: list[str] = []
    ex.observe(lambda change: phases.append(change["new"]), "phase")
    front_end_custom(ex, {"type": "draft"})
    clock.advance(0.0)
    assert ex.status == "tracing"
    clock.advance(SETTLE)
    drafted = ex.run
    assert drafted is not None and drafted is not refused and drafted.run_id == refused.run_id
    assert drafted.graphs and drafted.export is not None and drafted.export.draft_offer is not None
    assert drafted.export.draft_offer.status == "ran" and drafted.export.draft is not None
    assert ex.run_json["records"]["draft_offer"]["status"] == "ran" and len(ex.runs) == 1
    assert "draft-exporting" in phases and ex.phase == ""
    # the draft worked: the status is idle, the refusal stays the run's (in the header), not a failed request
    assert ex.status == "idle" and ex.status_message == ""
    # the run the explorer was given is left as it was: the draft worked on a copy
    assert not refused.graphs and refused.export.draft_offer.status == "offered"
    synced = {k: ex.get_state()[k] for k in schema("widgets/explorer.schema.json")["properties"]}
    assert list(validator().iter_errors(synced)) == []


def test_a_cancelled_draft_leaves_the_run_on_screen(clock: FakeClock) -> None:
    refused = export(Loop(), (torch.randn(3),), dynamic_shapes={"x": {0: torch.export.Dim("n", min=2, max=8)}})
    ex = explore(refused, scheduler=clock)
    ex.draft()
    ex.cancel()
    clock.advance(1.0)
    assert ex.run is refused and not refused.graphs and ex.status == "idle"
    # a run with no live model cannot draft: said in the widget
    loaded = TraceExplorer(tj.TraceRun.from_json(refused.to_json()), scheduler=clock)
    front_end_custom(loaded, {"type": "draft"})
    assert loaded.status == "error" and "no live model" in loaded.status_message
    # nor can a run whose back end has no draft (a trace): said in the widget, the run left as it is
    traced = tj.trace(LinearReLU(), (torch.randn(2, 4),))
    ex = TraceExplorer(traced, scheduler=clock)
    front_end_custom(ex, {"type": "draft"})
    assert ex.status == "error" and "shows no export run" in ex.status_message and ex.run is traced
