"""torch's graph-break reports read as data: a reason's parts (its type, explanation, hints and registry code), the
graph-break log's records (where, why, the stack), and torch's registry of break types.

torch 2.13 words a break's reason as its type on the first line, then ``Explanation:`` and ``Hint:`` lines, a
``Developer debug context:`` and the page of the type on torch's graph-break site (``.../gb/gb0059.html``); the
registry (``torch/_dynamo/graph_break_registry.json``) lists every type by code. When dynamo gives up on a whole
function (a break inside one of its loops), the reason holds the break that caused it and, after ``*** While
handling this graph break, another graph break occurred: ***``, the ``graph break in loop`` that skipped the frame.
Older torches word reasons in one line and have no registry: what is missing is left empty.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sysconfig
from dataclasses import dataclass, field
from typing import Any

from ..caller import installed_package, is_own_file
from ..source import is_torch_file, source_line
from .records import StackFrame

#: what torch writes between the break that caused another and the other one
_ANOTHER = re.compile(r"\n*\*\*\* While handling this graph break, another graph break occurred: \*\*\*\n*")
#: lines torch puts before a break's type
_PREAMBLES = (
    re.compile(r"^Encountered graph break when attempting to trace .*:$"),
    re.compile(r"^Failed to handle graph break gracefully\..*Graph break encountered:$"),
    re.compile(r"^Graph break under .*:$"),
)
_PAGE = re.compile(r"compile-graph-break-site/gb/(gb\d{4})\.html|\b(GB\d{4})\b")
_FIELD = re.compile(r"^\s*(Explanation|Hint|Developer debug context):\s?(.*)$")
_FOR_MORE = re.compile(r"^\s*For more details about this graph break")
#: the type of the break that makes dynamo skip a whole function
LOOP_TYPE = "graph break in loop"
_FRAME_SKIPPED = re.compile(r"frame skipped: (?P<func>[\w<>.]+) \((?P<file>.*) line (?P<line>\d+)\)")


@dataclass
class ReasonParts:
    """One block of a reason: a break's type and what torch says about it."""

    gb_type: str = ""
    explanation: str = ""
    hints: list[str] = field(default_factory=list)
    context: str = ""
    #: the page's code, ``GB0059`` (``""`` when the text names none)
    gb_code: str = ""


def split_reason(reason: str) -> list[ReasonParts]:
    """Each block of a reason (a break, then the breaks it led to), parsed."""
    return [parse_block(block) for block in _ANOTHER.split(reason) if block.strip()]


def parse_block(text: str) -> ReasonParts:
    parts = ReasonParts()
    current: str | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            current = None if current != "Explanation" else current
            continue
        if not parts.gb_type:
            if any(p.match(line.strip()) for p in _PREAMBLES):
                continue
            parts.gb_type = line.strip()
            continue
        if _FOR_MORE.match(line):
            found = _PAGE.search(line)
            if found is not None:
                parts.gb_code = (found.group(1) or found.group(2)).upper()
            current = None
            continue
        m = _FIELD.match(line)
        if m is not None:
            current = m.group(1)
            if current == "Explanation":
                parts.explanation = m.group(2).strip()
            elif current == "Hint":
                parts.hints.append(m.group(2).strip())
            else:
                parts.context = m.group(2).strip()
            continue
        if current == "Explanation":  # torch indents an explanation's further lines
            parts.explanation += "\n" + line.strip()
        elif current == "Hint" and parts.hints:
            parts.hints[-1] += " " + line.strip()
        elif current == "Developer debug context":
            parts.context += " " + line.strip()
    if not parts.gb_code:
        found = _PAGE.search(text)
        if found is not None:
            parts.gb_code = (found.group(1) or found.group(2)).upper()
    return parts


@functools.cache
def registry() -> dict[str, list[dict[str, Any]]] | None:
    """torch's graph-break registry (code -> its entries: ``Gb_type``, ``Explanation``, ``Hints``), or None where
    this torch has none (before 2.8)."""
    try:
        import torch._dynamo
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(torch._dynamo.__file__)), "graph_break_registry.json")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def registry_code(gb_type: str, named: str = "") -> str:
    """The registry's code of a break type: ``named`` when the registry has it, else the code whose entry has
    this type; ``""`` without a registry or a match."""
    table = registry()
    if not table:
        return ""
    if named and named in table:
        return named
    for code, entries in table.items():
        if any(isinstance(e, dict) and e.get("Gb_type") == gb_type for e in entries):
            return code
    return ""


def registry_entry(code: str) -> dict[str, Any] | None:
    table = registry() or {}
    entries = table.get(code) or []
    return entries[0] if entries and isinstance(entries[0], dict) else None


def frame_skipped(parts: list[ReasonParts]) -> tuple[str, str, int] | None:
    """``(function, file, def line)`` of the function dynamo gave up on, when a block of the reason says it did."""
    for p in parts[1:]:
        if p.gb_type == LOOP_TYPE:
            m = _FRAME_SKIPPED.search(p.context)
            if m is not None:
                return m.group("func"), m.group("file"), int(m.group("line"))
            return "", "", 0
    return None


# -- where code lives ------------------------------------------------------------------------------------------------
_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


def package_of(path: str) -> str:
    """The installed package (``transformers``) or standard-library module (``logging``) a file belongs to; ``""``
    for the user's own code (torch's files are torch's: ``torch``)."""
    if not path or path.startswith("<"):
        return ""
    if is_torch_file(path):
        return "torch"
    found = installed_package(path)
    if found:
        return found
    absolute = os.path.abspath(path)
    if absolute.startswith(_STDLIB):
        rest = absolute[len(_STDLIB) :].split(os.sep)
        return rest[0][:-3] if rest[0].endswith(".py") else rest[0]
    return ""


def is_user_file(path: str) -> bool:
    """Neither torch's, nor a library's, nor this package's: the user's code (a notebook cell, a script, a
    ``<string>`` the user exec'd)."""
    if not path:
        return False
    if path.startswith("<"):
        return not path.startswith(("<frozen", "<eval_with_key"))
    return not is_own_file(os.path.abspath(path)) and not package_of(path)


# -- the graph-break log -----------------------------------------------------------------------------------------------
_HEADER = re.compile(
    r"^Graph break (?:\(user stack suppressed due to duplicate graph break\) )?"
    r"in user code at (?P<file>.*):(?P<line>\d+)$"
)
#: torch 2.4's words: ``Graph break: REASON from user code at:`` and the frames
_OLD_HEADER = re.compile(r"^Graph break: (?P<reason>[\s\S]*?) from user code at:\n(?P<frames>[\s\S]*)$")
_REASON = "Graph Break Reason: "
_SECTIONS = re.compile(r"\n\n(?:Stack variable source attribution:|User code traceback:)")
_TB_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')


@dataclass
class LoggedBreak:
    """One graph-break record of torch's log: where, why, and the stack (outermost first), as torch wrote it."""

    file: str
    line: int
    reason: str
    #: ``(file, line, func)`` frames of its "User code traceback", outermost first; empty when torch left it out
    #: (a break it had already reported once with its stack)
    frames: list[tuple[str, int, str]] = field(default_factory=list)
    #: the call (0 = the first) during which torch reported it
    call: int = 0


def parse_logged_break(message: str, call: int = 0) -> LoggedBreak | None:
    """A record of torch's ``graph_breaks`` log (2.13's words), or None for a message that is not one."""
    first, _, rest = message.partition("\n")
    m = _HEADER.match(first.strip())
    if m is None:
        old = _OLD_HEADER.match(message)
        if old is None:
            return None
        found = [f for line in old.group("frames").splitlines() if (f := _TB_FRAME.match(line)) is not None]
        frames_old = [(f.group("file"), int(f.group("line")), f.group("func").strip()) for f in found]
        if not frames_old:
            return None
        return LoggedBreak(frames_old[-1][0], frames_old[-1][1], old.group("reason").strip(), frames_old, call)
    reason = ""
    frames: list[tuple[str, int, str]] = []
    if rest.startswith(_REASON):
        body = rest[len(_REASON) :]
        cut = _SECTIONS.search(body)
        reason = (body[: cut.start()] if cut is not None else body).strip("\n")
        traceback_at = body.find("User code traceback:")
        if traceback_at >= 0:
            for line in body[traceback_at:].splitlines():
                f = _TB_FRAME.match(line)
                if f is not None:
                    frames.append((f.group("file"), int(f.group("line")), f.group("func").strip()))
    return LoggedBreak(m.group("file"), int(m.group("line")), reason, frames, call)


_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<func>.+)_at_(?P<line>\d+)$")


def resumed_function(name: str) -> tuple[str, int] | None:
    """``(function, line)`` of a resume function's name (``torch_dynamo_resume_in_forward_at_13``: dynamo's code for
    the rest of ``forward`` after the break at line 13), or None for another name."""
    m = _RESUME.match(name)
    if m is None:
        return None
    inner = resumed_function(m.group("func"))
    return (inner[0] if inner is not None else m.group("func")), int(m.group("line"))


def plain_name(name: str) -> str:
    """A function's name with dynamo's resume prefixes taken off (``Layer.torch_dynamo_resume_in_forward_at_9`` ->
    ``Layer.forward``)."""
    owner, dot, last = name.rpartition(".")
    resumed = resumed_function(last)
    return f"{owner}{dot}{resumed[0]}" if resumed is not None else name


def user_stack(frames: list[tuple[str, int, str]]) -> list[StackFrame]:
    """The frames of a break from the compiled code inward: the frames above it (the caller, this package's, torch's
    module calls into it) left out, resume functions named after the functions they resume."""
    start = 0
    for i, (file, _, _) in enumerate(frames):
        if not file.startswith("<") and is_own_file(os.path.abspath(file)):
            start = i + 1
    while start < len(frames) and is_torch_file(frames[start][0]):
        start += 1
    return [
        StackFrame(file, line, plain_name(func), source_line(file, line), package_of(file))
        for file, line, func in frames[start:]
    ]


def user_line(stack: list[StackFrame]) -> StackFrame | None:
    """The innermost frame of the user's code: the break itself, or the user's line that called into a library."""
    for frame in reversed(stack):
        if not frame.package and is_user_file(frame.file):
            return frame
    return None


__all__ = [
    "LOOP_TYPE",
    "LoggedBreak",
    "ReasonParts",
    "frame_skipped",
    "is_user_file",
    "package_of",
    "parse_block",
    "parse_logged_break",
    "plain_name",
    "registry",
    "registry_code",
    "registry_entry",
    "resumed_function",
    "split_reason",
    "user_line",
    "user_stack",
]
