"""Every widget test runs against a recording comm instead of a kernel."""

from __future__ import annotations

from collections.abc import Iterator

import comm
import ipywidgets
import pytest

from .fakes import FakeClock, RecordingComm


@pytest.fixture(autouse=True)
def recording_comm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(comm, "create_comm", lambda *args, **kwargs: RecordingComm(**kwargs))
    yield
    ipywidgets.Widget.close_all()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
