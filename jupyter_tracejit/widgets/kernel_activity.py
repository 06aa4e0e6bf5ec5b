"""A re-trace as the kernel's own work: interruptible, and shown busy.

The explorer re-traces from a callback of the kernel's event loop, outside any request. There ipykernel ignores
SIGINT (it installs Python's handler only while it handles a message), so the Interrupt button did nothing during
a long re-trace, and the status bar said Idle while the kernel was blocked. :func:`as_kernel_work` installs the
handler and publishes busy / idle around the work, as ipykernel does around a request.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)


def _kernel() -> Any:
    """The running ipykernel, or None (plain Python, a test, another kernel)."""
    try:
        from ipykernel.kernelbase import Kernel
    except ImportError:
        return None
    return Kernel.instance() if Kernel.initialized() else None


def _publish(kernel: Any, state: str) -> None:
    publish = getattr(kernel, "_publish_status", None)
    if not callable(publish):
        return
    try:
        publish(state, "shell")
    except Exception:  # a status message is a courtesy: never fail the trace for it
        log.debug("could not publish kernel status %r", state, exc_info=True)


@contextlib.contextmanager
def as_kernel_work() -> Iterator[None]:
    """Run the block with SIGINT raising KeyboardInterrupt (on the main thread) and the kernel shown busy."""
    saved: Any = None
    if threading.current_thread() is threading.main_thread():
        saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    kernel = _kernel()
    if kernel is not None:
        _publish(kernel, "busy")
    try:
        yield
    finally:
        if saved is not None:
            signal.signal(signal.SIGINT, saved)
        if kernel is not None:
            _publish(kernel, "idle")


__all__ = ["as_kernel_work"]
