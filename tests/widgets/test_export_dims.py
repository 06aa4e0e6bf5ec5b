"""The explorer's dims editor, kernel side (widgets/explorer_dims.py, core/export/dim_specs.py editor_state and
dims_changes): the ``dims`` trait says what the run on screen was exported with, as specs, with its inputs' sizes and
the suggested fixes; the ``dims`` message re-exports with new specs through the re-capture path, each try in the
history; a bad spec is said in the widget and nothing runs. Real models, torch's verdict as the truth."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
from torch.export import Dim

import jupyter_tracejit as tj
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.widgets import explore

from ..models import LinearReLU
from .fakes import FakeClock, front_end_custom, front_end_update
from .test_explorer_schema import schema, validator

pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))

SETTLE = 0.1


class Windows(nn.Module):
    def forward(self, x, mask):
        return x.view(x.size(0), -1, 8).sum(-1) + mask.sum()  # needs x.size(1) a multiple of 8


def refused_windows() -> tj.TraceRun:
    seq = Dim("seq", min=2, max=64)
    x, mask = torch.randn(2, 16), torch.randn(2, 16)
    run = tj.export(Windows(), (x, mask), dynamic_shapes={"x": {1: seq}, "mask": {1: seq}}, draft="never")
    assert not run.ok, run.summary()  # torch refuses it: seq must be a multiple of 8
    return run


def assert_valid(ex) -> None:
    synced = {k: ex.get_state()[k] for k in schema("widgets/explorer.schema.json")["properties"]}
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator().iter_errors(synced)]
    assert errors == [], errors[:5]


def test_the_dims_trait_says_the_specs_the_inputs_and_torchs_fix(clock: FakeClock) -> None:
    ex = explore(refused_windows(), scheduler=clock)
    dims = ex.dims
    assert dims["specs"] == ["x:1=seq[2,64]", "mask:1=seq"] and dims["problem"] == ""
    assert dims["inputs"] == [{"name": "x", "sizes": [2, 16]}, {"name": "mask", "sizes": [2, 16]}]
    assert dims["flags"] == '--dynamic "x:1=seq[2,64]" --dynamic mask:1=seq'
    (fix,) = dims["suggestions"]
    assert fix["source"] == "torch" and "seq = 8*_seq" in fix["text"]
    assert fix["specs"] == ["x:1=8*_seq[1,8]", "mask:1=8*_seq"]
    assert_valid(ex)
    # a trace has no dims to edit, and says so when asked
    trace = explore(LinearReLU(), (torch.rand(3, 4),), scheduler=clock)
    assert trace.dims == {}
    front_end_custom(trace, {"type": "dims", "specs": ["x:0"]})
    assert trace.status == "error" and "no dims to edit" in trace.status_message


def test_applying_torchs_fix_re_exports_and_each_try_stays_in_the_history(clock: FakeClock) -> None:
    refused = refused_windows()
    ex = explore(refused, scheduler=clock)
    fix = ex.dims["suggestions"][0]["specs"]
    front_end_custom(ex, {"type": "dims", "specs": fix})
    clock.advance(0.0)
    assert ex.status == "tracing"
    clock.advance(SETTLE)
    fixed = ex.run
    assert fixed is not None and fixed is not refused and fixed.ok, ex.status_message
    assert ex.dims["specs"] == fix and ex.dims["suggestions"] == []
    # the options bar shows the dims as the user would write them: a multiple, not a Dim named 8*_seq
    multiple = "8*Dim('_seq', min=1, max=8)"
    assert fixed.options["dynamic_shapes"] == f"{{'x': {{1: {multiple}}}, 'mask': {{1: {multiple}}}}}"
    assert [r.run_id for r in ex.history] == [refused.run_id, fixed.run_id] and len(ex.runs) == 2
    # another option changed later keeps the dims of the run on screen
    front_end_update(ex, options={"no_grad": True})
    clock.advance(0.3 + SETTLE)
    assert ex.run is not fixed and ex.run is not None and ex.run.ok and ex.dims["specs"] == fix
    # every dim static: torch takes that too, a third try
    ex.set_dims([])
    clock.advance(SETTLE)
    assert ex.run is not None and ex.run.ok and ex.dims["specs"] == [] and ex.dims["flags"] == ""
    assert len(ex.history) == 4
    # the history's first run puts its dims back in the editor
    ex.show_run(refused.run_id)
    assert ex.dims["specs"] == ["x:1=seq[2,64]", "mask:1=seq"]
    assert_valid(ex)


@pytest.mark.parametrize(
    ("specs", "words"),
    [
        (["x:1=seq[2,"], "is not of the form"),
        (["x:1=seq[64,2]"], "the range [64,2] is empty"),
        (["y:0"], "y is not an input of the forward (its inputs: x, mask)"),
        (["x:5"], "x:5: x has 2 dims (0..1)"),
        ("x:0", "specs must be a list of --dynamic specs"),
    ],
)
def test_a_bad_spec_is_said_and_nothing_runs(clock: FakeClock, specs, words) -> None:
    refused = refused_windows()
    ex = explore(refused, scheduler=clock)
    front_end_custom(ex, {"type": "dims", "specs": specs})
    clock.advance(1.0)
    assert ex.status == "error" and words in ex.status_message, ex.status_message
    assert ex.run is refused and len(ex.history) == 1 and ex.dims["specs"] == ["x:1=seq[2,64]", "mask:1=seq"]


def test_a_saved_run_has_no_dims_to_edit(clock: FakeClock) -> None:
    loaded = tj.TraceRun.from_json(refused_windows().to_json())
    ex = explore(loaded, scheduler=clock)
    assert ex.dims == {}
    front_end_custom(ex, {"type": "dims", "specs": []})
    assert ex.status == "error"
