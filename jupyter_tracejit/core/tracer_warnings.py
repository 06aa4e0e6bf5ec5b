"""Capture the warnings a trace emits, classify them, and map them to graph nodes.

torch reports tracing hazards as ``TracerWarning`` s in the log, repeated once per re-trace and
sometimes attributed to its own files. Here each distinct warning becomes one
:class:`TraceWarning` with a stable ``category``, the user's file and line, a ``count`` and the
ids of the nodes recorded at that line.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .caller import installed_package
from .categories import BY_NAME, WARNING_CATEGORIES
from .jsonio import JsonRecord

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


@contextlib.contextmanager
def discard_own_warnings() -> Iterator[None]:
    """Drop the warnings of this thread for the block (the capture's own runs of the model: the probe, the export
    check), while other threads' warnings are shown as they would have been: no process-wide filter is changed (an
    ``"ignore"`` filter would lose theirs too). Inside a capture's recorder (a trace's ``WarningRecorder``), the
    recorder drops them; elsewhere a ``showwarning`` of the block's forwards other threads' and drops this one's
    (``catch_warnings`` puts it back, and leaves no warning marked as already shown)."""
    current = warnings.showwarning
    recorder: Any = getattr(current, "__self__", None)
    # a capture's recorder (core/torchscript/warning_recorder.py) showing this thread's warnings: it drops them
    if hasattr(recorder, "discarding") and getattr(recorder, "owner", None) == threading.get_ident():
        was, recorder.discarding = recorder.discarding, True
        try:
            yield
        finally:
            recorder.discarding = was
        return
    owner = threading.get_ident()

    def show(*warning: Any, **where: Any) -> None:  # warnings.showwarning's arguments, passed on as they came
        if threading.get_ident() != owner:
            current(*warning, **where)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield
