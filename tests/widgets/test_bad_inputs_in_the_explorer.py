"""The bad-input corpus (tests/core/test_bad_inputs.py) through the explorer: each failed run is shown as one clear
message in state the front end can read (valid against the wire schema), the kernel-free copy says the same, and the
good run before it stays in the history, on screen again with one click."""

from __future__ import annotations

import contextlib
import io

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.widgets import RUN_MIME, explore, run_from_mime

from ..core.test_bad_inputs import CASES, LIN, Case
from .fakes import FakeClock
from .test_explorer_schema import validator


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_bad_input_shows_one_message_and_the_good_run_stays(case: Case, clock: FakeClock) -> None:
    good = tj.trace(LIN, (torch.rand(2),))
    ex = explore(good, scheduler=clock)
    with contextlib.redirect_stdout(io.StringIO()):
        bad = case.call()
    ex.add_run(bad)  # what a re-trace or a second %trace puts on screen

    # ours of the synced state (ipywidgets adds its own: layout, _view_name...)
    state = {k: v for k, v in ex.get_state().items() if k in validator().schema["properties"]}
    errors = sorted(validator().iter_errors(state), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:3]]
    shown = ex.run_json
    assert shown["run_id"] == bad.run_id and ex.status != "error"
    if case.message is None:
        assert shown["ok"] and shown["error"] is None
    else:
        assert not shown["ok"] and case.message in shown["error"]["message"]
        assert shown["error"]["hint"]  # the fix is named
    assert "\n" not in shown["summary"]
    # the saved (kernel-free) copy of the output says the same
    bundle = ex._repr_mimebundle_() or {}
    assert run_from_mime(bundle[RUN_MIME])["run_id"] == bad.run_id and bundle["text/plain"] == shown["summary"]

    # the good run is still there, whole, and back on screen with one click
    assert [entry["run_id"] for entry in ex.runs] == [good.run_id, bad.run_id]
    ex.show_run(good.run_id)
    assert ex.run is good and ex.run_json["ok"] and ex.status == "idle"
