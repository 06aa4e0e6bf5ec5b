"""The warnings a TorchScript trace emits, captured and mapped to the graph: :class:`WarningRecorder` keeps each
warning of the tracing thread (torch's ``TracerWarning`` s, raised again on every re-trace and sometimes attributed
to torch's own files), drops what torch's own filters would hide, and gives each distinct one as a
:class:`~..tracer_warnings.TraceWarning` with its category, the user's line and the nodes recorded there."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

from ..graph import Graph
from ..source import is_torch_file, source_line
from ..tracer_warnings import TraceWarning, classify, is_torch_jit_notice
from .facts import tracer_warning_filters

#: the core's own frames (the tracing machinery) are never the user's; the rest of the package (demo,
#: widgets calling trace) is treated like user code
_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_WARNINGS_FILE = os.path.abspath(warnings.__file__)


@dataclass
class _Raw:
    message: str
    warning_class: str
    file: str
    line: int
    func: str
    torch_location: str
    phase: str


#: torch files whose warnings are raised on behalf of the user's own call (Tensor.__array__, __len__, ...)
_USER_FACING_TORCH_FILES = ("torch/_tensor.py", "torch/overrides.py", "torch/jit/_trace.py", "torch/jit/__init__.py")


@dataclass
class _TorchFrame:
    path: str
    module: str


def _torch_chain(start: FrameType | None) -> tuple[list[_TorchFrame], FrameType | None]:
    """The torch frames between the warning and the user's frame (the one that raised first), and that frame
    (None if not found)."""
    chain: list[_TorchFrame] = []
    frame = start
    while frame is not None:
        path = frame.f_code.co_filename
        if os.path.abspath(path) == _WARNINGS_FILE or path.startswith(_OWN_DIR):
            frame = frame.f_back
            continue
        if not is_torch_file(path):
            return chain, frame
        chain.append(_TorchFrame(path.replace("\\", "/"), str(frame.f_globals.get("__name__", ""))))
        frame = frame.f_back
    return chain, None


def _hidden_by_torch(chain: list[_TorchFrame]) -> bool:
    """torch's own filter (read from the installed torch) hides TracerWarnings by the name of the module that
    raised them: its library code, not torch.jit."""
    return bool(chain) and tracer_warning_filters().hides_module(chain[0].module)


def _user_facing(chain: list[_TorchFrame]) -> bool:
    """Raised in torch on behalf of the user's own call (``np.asarray(x)`` warns in ``Tensor.__array__``): kept,
    although torch's filter hides it by module name."""
    return all(f.path.endswith(_USER_FACING_TORCH_FILES) for f in chain)


class WarningRecorder:
    """Records warnings while active; ``phase`` labels what was running."""

    def __init__(self) -> None:
        self.raw: list[_Raw] = []
        self.phase = "trace"
        #: while set, the owner thread's warnings are dropped (:func:`discard_own_warnings`)
        self.discarding = False
        #: the thread whose warnings are recorded, and where other threads' warnings go meanwhile
        self.owner = threading.get_ident()
        self._forward: Any = warnings.showwarning
        #: torch's TracerWarning class, set when a capture starts (this module loads without torch)
        self._tracer_warning: type[Warning] = Warning
        #: True while the garbage collector runs: what finalizers say then is not the traced code's
        self._collecting = False
        #: the filters in force before the capture set its own ("always"), for the warnings it passes on
        self._user_filters: list[Any] = []

    def _show(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        if threading.get_ident() != self.owner:
            # another thread's warning: not this trace's; shown as it would have been without the capture
            self._pass_on(message, category, filename, lineno, file, line)
            return
        if self._collecting:
            # a finalizer of garbage the collector reached mid-capture (an unclosed file of earlier work in a
            # long-lived kernel): it would have spoken wherever the collection fell, so it is not the trace's
            self._pass_on(message, category, filename, lineno, file, line)
            return
        if self.discarding:
            return  # the capture's own runs (the probe's): not the trace's warnings, nor the user's to see
        text = str(message)
        torch_location = ""
        func = ""
        if is_torch_file(filename) or filename.startswith(_OWN_DIR):
            chain, user = _torch_chain(sys._getframe(1))
            if issubclass(category, self._tracer_warning) and _hidden_by_torch(chain) and not _user_facing(chain):
                return  # raised by torch's own library code (nn shape checks): hidden, as torch hides it
            if user is not None:
                torch_location = f"{filename}:{lineno}"
                filename, lineno, func = user.f_code.co_filename, user.f_lineno, user.f_code.co_name
        else:
            _, user = _torch_chain(sys._getframe(1))
            if user is not None and user.f_code.co_filename == filename:
                func = user.f_code.co_name
        self.raw.append(_Raw(text, category.__name__, filename, lineno, func, torch_location, self.phase))

    @contextlib.contextmanager
    def capture(self) -> Iterator[WarningRecorder]:
        """Record every warning; torch's filter for TracerWarnings raised inside torch stays in force.

        ``catch_warnings`` restores the user's filters and ``showwarning`` on every exit path.
        """
        from torch.jit._trace import TracerWarning

        self._tracer_warning = TracerWarning
        with warnings.catch_warnings():
            self.owner = threading.get_ident()
            self._forward = warnings.showwarning
            self._user_filters = list(warnings.filters)
            warnings.simplefilter("always")
            # torch's import-time filters hide TracerWarnings by *module name* ("torch.(?!jit)"): that also
            # hides np.asarray(x)'s warning (raised in torch/_tensor.py on the user's behalf) and warnings of
            # user modules named torch*. ``_show`` applies torch's module rule (read from torch) to the torch
            # frame that raised, so torch.nn's own shape checks stay hidden (30-60 of them for a
            # TransformerEncoder), the user's are kept; its message filters are installed as they are.
            for message in tracer_warning_filters().messages:  # torch's own, read from it
                warnings.filterwarnings("ignore", message.pattern)
            warnings.showwarning = self._show
            gc.callbacks.append(self._collection)
            try:
                yield self
            finally:
                gc.callbacks.remove(self._collection)
                self._collecting = False

    def _collection(self, phase: str, info: dict[str, int]) -> None:
        self._collecting = phase == "start"

    def _pass_on(
        self, message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any, line: Any
    ) -> None:
        """Show a warning that is not the trace's as the user's own filters would have (the capture's are
        "always"): a ResourceWarning, hidden by Python's defaults, stays hidden."""
        text = str(message)
        module = filename[:-3] if filename.endswith(".py") else filename or "<unknown>"
        action: str = getattr(warnings, "defaultaction", "default")  # not in the stubs
        for act, pattern, kind, module_pattern, at_line in self._user_filters:
            if (
                (pattern is None or pattern.match(text))
                and issubclass(category, kind)
                and (module_pattern is None or module_pattern.match(module))
                and at_line in (0, lineno)
            ):
                action = act
                break
        if action != "ignore":  # "error" is shown too: raised here it would fail the capture at another's line
            self._forward(message, category, filename, lineno, file, line)

    def add_synthetic(self, message: str, warning_class: str, file: str, line: int, phase: str) -> None:
        """Record a warning torch would have emitted in its own check (the core runs the check itself)."""
        self.raw.append(_Raw(message, warning_class, file, line, "", "", phase))

    def collect(self, graphs: dict[str, Graph], method_of_phase: dict[str, str] | None = None) -> list[TraceWarning]:
        """Deduplicate into :class:`TraceWarning` s and attach node ids from the graph of their method."""
        merged: dict[tuple[Any, ...], TraceWarning] = {}
        for r in self.raw:
            category = classify(r.message, r.warning_class)
            # torch's notice is one however often it is given (from a re-trace, from the session's own frames)
            key: tuple[Any, ...] = (
                ("deprecated",)
                if category == "deprecated" and is_torch_jit_notice(r.message)
                else (category, r.message, r.file, r.line)
            )
            found = merged.get(key)
            if found is not None:
                found.count += 1
                if r.phase not in found.phases:
                    found.phases.append(r.phase)
                continue
            method = (method_of_phase or {}).get(r.phase, "forward")
            merged[key] = TraceWarning(
                category=category,
                message=r.message,
                file=r.file,
                line=r.line,
                code=source_line(r.file, r.line),
                func=r.func,
                method=method,
                warning_class=r.warning_class,
                phases=[r.phase],
                torch_location=r.torch_location,
            )
        out = list(merged.values())
        for w in out:
            g = graphs.get(w.method) or next(iter(graphs.values()), None)
            if g is not None and w.category != "deprecated":
                w.node_ids, w.node_match = nodes_for_line(g, w.file, w.line, w.func)
        return out


def nodes_for_line(graph: Graph, file: str, line: int, func: str = "") -> tuple[list[int], str]:
    """The nodes a warning at ``file:line`` is about, and how they were found (see ``TraceWarning.node_match``)."""
    direct = _prefer_ops(graph, graph.nodes_at(file, line))
    if direct:
        return direct, "line"
    on_stack = [
        n.id
        for n in graph.nodes
        if n.source is not None and any(f.line == line and f.file == file for f in n.source.stack)
    ]
    if on_stack:
        return _prefer_ops(graph, on_stack), "stack"
    if func:
        # the tracer removes dead nodes: `if x.sum() > 0:` leaves nothing at its own line, but the branch
        # it froze starts at the next line of the same function that recorded nodes
        later = [
            n
            for n in graph.nodes
            if n.source is not None and n.source.file == file and n.source.func == func and n.source.line > line
        ]
        if later:
            nearest = min(n.source.line for n in later if n.source is not None)
            ids = [n.id for n in later if n.source is not None and n.source.line == nearest]
            return _prefer_ops(graph, ids), "next_line"
    return [], ""


def _prefer_ops(graph: Graph, ids: list[int]) -> list[int]:
    """Drop constants and plumbing when real ops are among the nodes: those are what to highlight."""
    ops = [i for i in ids if not graph.nodes[i].foldable]
    return ops or ids
