"""What a capture is doing now (tracing, checking, probing...), for whoever shows it while the kernel is busy.

The back ends say when they enter a phase (:func:`enter_phase`); a caller that shows progress (``%trace``'s
placeholder) listens for the length of one capture (:func:`phases_to`). The core knows no listener: nothing is
shown unless someone listens. Torch-free.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar

log = logging.getLogger(__name__)

#: the phases, as the placeholder reads them ("checking BertModel… 12 s")
TRACING = "tracing"
CHECKING = "checking"
PROBING = "probing"
EXPORTING = "exporting"
DRAFTING = "draft-exporting"

PhaseListener = Callable[[str], None]

_listener: ContextVar[PhaseListener | None] = ContextVar("jupyter_tracejit_phase_listener", default=None)


def enter_phase(phase: str) -> None:
    """Tell the listener, if any, that the capture now does ``phase``. A listener that fails is logged, never
    fails the capture; an interrupt while it runs (the user's cancel) goes through, as anywhere in a capture."""
    listener = _listener.get()
    if listener is None:
        return
    try:
        listener(phase)
    except Exception:
        log.exception("the progress listener failed on phase %r", phase)


@contextlib.contextmanager
def phases_to(listener: PhaseListener) -> Iterator[None]:
    """Send the phases of the captures made inside the block to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


__all__ = ["CHECKING", "DRAFTING", "EXPORTING", "PROBING", "TRACING", "PhaseListener", "enter_phase", "phases_to"]
