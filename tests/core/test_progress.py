"""The phases a capture reports while it runs (what ``%trace``'s placeholder shows): tracing, checking, probing;
exporting, draft-exporting, checking. Heard only inside :func:`phases_to`; a listener that fails fails nothing."""

from __future__ import annotations

import logging

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.core.progress import phases_to
from tests.models import MLP


def heard(capture: object) -> list[str]:
    phases: list[str] = []
    with phases_to(phases.append):
        run = capture()  # type: ignore[operator]
    assert run.ok, run.error
    return phases


def test_a_trace_reports_each_phase_it_enters() -> None:
    x = torch.randn(2, 16)
    assert heard(lambda: tj.trace(MLP(), (x,), probe=True)) == ["tracing", "checking", "probing"]
    assert heard(lambda: tj.trace(MLP(), (x,))) == ["tracing", "checking"]
    assert heard(lambda: tj.trace(MLP(), (x,), check_trace=False)) == ["tracing"]


@pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))
def test_an_export_reports_each_phase_it_enters() -> None:
    x = torch.randn(2, 16)
    assert heard(lambda: tj.export(MLP(), (x,))) == ["exporting", "checking"]
    assert heard(lambda: tj.export(MLP(), (x,), draft="always")) == ["exporting", "draft-exporting", "checking"]


def test_phases_are_heard_only_inside_the_block() -> None:
    phases: list[str] = []
    with phases_to(phases.append):
        pass
    tj.trace(MLP(), (torch.randn(2, 16),))
    assert phases == []


def test_a_failing_listener_is_logged_and_the_capture_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    def broken(phase: str) -> None:
        raise RuntimeError(f"display failed on {phase}")

    with caplog.at_level(logging.ERROR, logger="jupyter_tracejit.core.progress"), phases_to(broken):
        run = tj.trace(MLP(), (torch.randn(2, 16),))
    assert run.ok and run.check is not None
    assert [r.getMessage() for r in caplog.records] == [
        "the progress listener failed on phase 'tracing'",
        "the progress listener failed on phase 'checking'",
    ]


def test_an_interrupt_in_the_listener_stops_the_capture_and_restores_the_module() -> None:
    model = MLP().train()

    def cancel_at_check(phase: str) -> None:
        if phase == "checking":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), phases_to(cancel_at_check):
        tj.trace(model, (torch.randn(2, 16),), module_mode="eval")
    assert model.training
