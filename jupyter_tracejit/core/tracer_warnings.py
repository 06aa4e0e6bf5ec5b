"""Capture the warnings a trace emits, classify them, and map them to graph nodes.

torch reports tracing hazards as ``TracerWarning`` s in the log, repeated once per re-trace and
sometimes attributed to its own files. Here each distinct warning becomes one
:class:`TraceWarning` with a stable ``category``, the user's file and line, a ``count`` and the
ids of the nodes recorded at that line.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, ClassVar

from .caller import installed_package
from .categories import BY_NAME, WARNING_CATEGORIES
from .graph import Graph
from .jsonio import JsonRecord
from .source import is_torch_file, source_line

#: every category tag, in the order the UI lists them (the table: core/categories.py)
CATEGORIES = tuple(c.name for c in WARNING_CATEGORIES)
# (substring of torch's message, category), the longest first: the first match wins, and a longer text is the more
# specific one (torch.from_numpy's message holds torch.tensor's "results are registered as constants in the trace")
_PATTERNS: tuple[tuple[str, str], ...] = tuple(
    sorted(((c.torch_text, c.name) for c in WARNING_CATEGORIES if c.torch_text), key=lambda p: -len(p[0]))
)
#: what a user can do about each category (shown beside the message)
ADVICE: dict[str, str] = {c.name: c.advice for c in WARNING_CATEGORIES}
#: categories where a value of this trace was frozen into it by the line the warning names
FROZEN = frozenset(c.name for c in WARNING_CATEGORIES if c.frozen)
#: the advice for a frozen value in an installed library's code, which the user cannot rewrite
LIBRARY_ADVICE = (
    "This line is in the installed package {package}, not in your code: rewriting it is not the fix. The trace is "
    "right for inputs that take the same path through it (the same sizes, a mask given or not): trace with inputs "
    "like those you will run, and pass `check_inputs` with the other sizes you need: the check shows whether the "
    "graph changes."
)
#: the advice for another library's deprecation notice (torch reads every attribute of a module it traces,
#: properties included, so a deprecated property warns)
OTHER_DEPRECATION_ADVICE = "A deprecation notice raised while tracing; it does not change the trace."

#: the core's own frames (the tracing machinery) are never the user's; the rest of the package (demo,
#: widgets calling trace) is treated like user code
_OWN_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_WARNINGS_FILE = os.path.abspath(warnings.__file__)


def is_torch_jit_notice(message: str) -> bool:
    """torch's notice that torch.jit.trace is deprecated (not another library's deprecation notice)."""
    return "torch.jit" in message


def classify(message: str, warning_class: str) -> str:
    for needle, category in _PATTERNS:
        if needle in message:
            return category
    if warning_class in ("DeprecationWarning", "FutureWarning", "PendingDeprecationWarning"):
        return "deprecated"  # torch.jit.trace's own notice, or any other: neither says anything about the trace
    return "other"


@dataclass
class TraceWarning(JsonRecord):
    """One distinct warning of a trace run."""

    category: str
    message: str
    file: str
    line: int
    code: str = ""
    func: str = ""
    #: how many times it was emitted (torch repeats user warnings once per re-trace)
    count: int = 1
    #: nodes recorded at ``file:line`` in the graph of ``method`` (see ``node_match``)
    node_ids: list[int] = field(default_factory=list)
    #: how ``node_ids`` were found: ``line`` (recorded at this line), ``stack`` (this line is on their
    #: stack: a call into a submodule), ``next_line`` (this line recorded nothing, e.g. an ``if`` whose
    #: condition was folded away: the nodes of the next line that did record some), or ``""`` (none)
    node_match: str = ""
    method: str = "forward"
    #: the Python warning class (``TracerWarning``, ``DeprecationWarning``, ...)
    warning_class: str = "TracerWarning"
    #: phases that emitted it: ``trace``, ``check 1``, ...
    phases: list[str] = field(default_factory=list)
    #: where torch itself attributed the warning when that was inside torch (we moved it to the user's frame)
    torch_location: str = ""
    #: why it is shown at ``line`` when torch reported it elsewhere, or why no better line fits (output mismatches)
    placement: str = ""

    #: the fix (:data:`ADVICE`) is written into the JSON so the explorer shows the text the CLI and HTML print
    _json_derived: ClassVar[tuple[str, ...]] = ("advice",)

    @property
    def is_user_problem(self) -> bool:
        """Counted in the Warnings tab and the verdict (a deprecation notice is not)."""
        row = BY_NAME.get(self.category)
        return row.counted if row is not None else True

    @property
    def advice(self) -> str:
        if self.category == "deprecated" and not is_torch_jit_notice(self.message):
            return OTHER_DEPRECATION_ADVICE
        package = installed_package(self.file) if self.category in FROZEN else None
        if package is not None:
            return LIBRARY_ADVICE.format(package=package)
        return ADVICE.get(self.category, "")


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
    from .torchscript.facts import tracer_warning_filters  # torch is imported by captures only: records load without it

    return bool(chain) and tracer_warning_filters().hides_module(chain[0].module)


def _user_facing(chain: list[_TorchFrame]) -> bool:
    """Raised in torch on behalf of the user's own call (``np.asarray(x)`` warns in ``Tensor.__array__``): kept,
    although torch's filter hides it by module name."""
    return all(f.path.endswith(_USER_FACING_TORCH_FILES) for f in chain)


@contextlib.contextmanager
def discard_own_warnings() -> Iterator[None]:
    """Drop the warnings of this thread for the block (the capture's own runs of the model: the probe, the export
    check), while other threads' warnings are shown as they would have been: no process-wide filter is changed (an
    ``"ignore"`` filter would lose theirs too). Inside a :class:`WarningRecorder`'s capture, the recorder drops them;
    elsewhere a ``showwarning`` of the block's forwards other threads' and drops this one's (``catch_warnings``
    puts it back, and leaves no warning marked as already shown)."""
    current = warnings.showwarning
    recorder = getattr(current, "__self__", None)
    if isinstance(recorder, WarningRecorder) and recorder._owner == threading.get_ident():
        was, recorder.discarding = recorder.discarding, True
        try:
            yield
        finally:
            recorder.discarding = was
        return
    owner = threading.get_ident()

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        if threading.get_ident() != owner:
            current(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


class WarningRecorder:
    """Records warnings while active; ``phase`` labels what was running."""

    def __init__(self) -> None:
        self.raw: list[_Raw] = []
        self.phase = "trace"
        #: while set, the owner thread's warnings are dropped (:func:`discard_own_warnings`)
        self.discarding = False
        #: the thread whose warnings are recorded, and where other threads' warnings go meanwhile
        self._owner = threading.get_ident()
        self._forward: Any = warnings.showwarning
        #: torch's TracerWarning class, set when a capture starts (this module loads without torch)
        self._tracer_warning: type[Warning] = Warning

    def _show(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        if threading.get_ident() != self._owner:
            # another thread's warning: not this trace's; shown as it would have been without the capture
            self._forward(message, category, filename, lineno, file, line)
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

        from .torchscript.facts import tracer_warning_filters

        self._tracer_warning = TracerWarning
        with warnings.catch_warnings():
            self._owner = threading.get_ident()
            self._forward = warnings.showwarning
            warnings.simplefilter("always")
            # torch's import-time filters hide TracerWarnings by *module name* ("torch.(?!jit)"): that also
            # hides np.asarray(x)'s warning (raised in torch/_tensor.py on the user's behalf) and warnings of
            # user modules named torch*. ``_show`` applies torch's module rule (read from torch) to the torch
            # frame that raised, so torch.nn's own shape checks stay hidden (30-60 of them for a
            # TransformerEncoder), the user's are kept; its message filters are installed as they are.
            for message in tracer_warning_filters().messages:  # torch's own, read from it
                warnings.filterwarnings("ignore", message.pattern)
            warnings.showwarning = self._show
            yield self

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
