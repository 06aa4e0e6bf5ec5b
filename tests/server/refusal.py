"""What the server's opener refuses, read without a server (tests/server/test_open.py,
tests/security/test_server.py)."""

from __future__ import annotations

import asyncio

import pytest

from jupyter_tracejit.server.handler import Refused, TracejitOpener


def refusal(opener: TracejitOpener, path: str, imports: list[str] | None = None) -> Refused:
    """The :class:`Refused` that ``opener`` answers a request to open ``path`` with (the test fails if it opens it)."""
    with pytest.raises(Refused) as refused:
        asyncio.run(opener.open(path, imports))
    return refused.value
