"""The seam between the core and the ways of capturing a graph (``torch.jit.trace`` today, ``torch.export`` next).

A back end is a package of its own (:mod:`.torchscript`) behind the :class:`Backend` protocol: it runs one
capture as :data:`Steps` (a generator that yields each torch call it needs made and returns the finished
:class:`~.run.TraceRun`) and fills the run's back-end-neutral records (graphs with node roles, warnings, check,
findings, error). What every back end shares lives here: one capture at a time in a process, the guest guard that
leaves the user's module as it was found, and the stamp of a finished run. Where code lives (torch's files, the
user's frame, the caller's line) is :mod:`.source`.

The API functions (:mod:`.request`) drive the steps from their own frame: torch's tracer records every Python
frame above the traced code at each node, so a driver loop written in the API function costs no frame of ours.
"""

from __future__ import annotations

import contextlib
import datetime
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from typing import Any, ClassVar, Protocol, TypeVar

import torch

from .module_state import ModuleState
from .run import TraceRun, display_names

#: one capture at a time in a process: the warning machinery (filters, ``showwarning``), torch's RNG (the probe) and
#: the tracer's state are process-wide, so two threads tracing at once would get each other's warnings and leave
#: the filters of one in place. Re-entrant: traced code may itself call ``tj.trace``.
CAPTURE_LOCK = threading.RLock()

TraceCall = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]
#: what a torch call gave back to the steps: ``(result, None)`` or ``(None, the exception it raised)``
Reply = tuple[Any, BaseException | None]
_T = TypeVar("_T")
#: a capture step that yields torch calls, is sent their replies, and returns a ``_T``
Steps = Generator[TraceCall, Reply, _T]


class Backend(Protocol):
    """One capture by one back end (``TorchScript``'s :class:`~.torchscript.session.TraceSession`)."""

    #: ``run.backend`` of the runs it makes (run.schema.json ``backend``)
    name: ClassVar[str]

    def steps(self, started: float) -> Steps[TraceRun]:
        """The capture, its check and findings, under :data:`CAPTURE_LOCK` and :func:`guest`: yields each torch call
        for the driver to make, is sent what it returned or raised, returns the stamped run. Never raises for what
        the user's code did: that is the run's error."""
        ...


def call_torch(call: TraceCall) -> Steps[Any]:
    """Have the driver make ``call``; its result, or its exception raised here (``yield from call_torch(...)``)."""
    result, error = yield call
    if error is not None:
        try:
            raise error
        finally:
            del error  # the frame would hold its own traceback
    return result


def make_call(call: TraceCall) -> Reply:
    """Make a torch call and catch what it raises, interrupts included: the steps restore the module and grad
    mode and re-raise those. A driver that minds the stack depth writes this out in its own frame."""
    fn, args, kwargs = call
    try:
        return fn(*args, **kwargs), None
    except BaseException as e:
        return None, e


def resume(steps: Steps[_T], reply: Reply | None) -> TraceCall | _T:
    """Send the reply to the last call on (None to start); the next call to make, or the steps' result."""
    try:
        return next(steps) if reply is None else steps.send(reply)
    except StopIteration as done:
        return done.value


def drive(steps: Steps[TraceRun]) -> TraceRun:
    """Run steps to the end, each torch call made from here (for callers that do not mind the stack depth)."""
    step = resume(steps, None)
    while not isinstance(step, TraceRun):
        step = resume(steps, make_call(step))
    return step


@contextlib.contextmanager
def guest(module: torch.nn.Module | None, module_mode: str, no_grad: bool) -> Iterator[ModuleState | None]:
    """Module mode and grad mode for this capture only; both restored on every exit path, and the module's
    buffers too (BatchNorm's running statistics, counters): a guest leaves the model as it found it, although
    torch.jit.trace itself does not. Yields the saved state, which says what capturing changed."""
    grad_enabled = torch.is_grad_enabled()
    state = ModuleState([module]) if module is not None else None
    try:
        if module is not None and module_mode == "train":
            module.train()
        elif module is not None and module_mode == "eval":
            module.eval()
        with torch.no_grad() if no_grad else contextlib.nullcontext():
            yield state
    finally:
        if state is not None:
            state.restore_buffers()
            state.restore_flags()
        torch.set_grad_enabled(grad_enabled)


def stamp(run: TraceRun, started: float) -> TraceRun:
    """Version, time, id and file display names of a finished run."""
    run.file_names = display_names(run.files())
    run.torch_version = torch.__version__
    run.created = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    run.run_id = uuid.uuid4().hex[:12]
    run.timings["total"] = time.perf_counter() - started
    return run


__all__ = [
    "CAPTURE_LOCK",
    "Backend",
    "Reply",
    "Steps",
    "TraceCall",
    "call_torch",
    "drive",
    "guest",
    "make_call",
    "resume",
    "stamp",
]
