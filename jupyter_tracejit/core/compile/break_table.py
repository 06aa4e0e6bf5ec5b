"""Graph breaks joined to the graphs: torch's graph-break log (:mod:`.breaks`) reports each break where dynamo meets
it, with the stack; a graph that ends at a break carries the same break as its ``compile_subgraph_reason`` (what
``explain`` reads). A break is joined to the graph that ends at it by its innermost user line (the graph's last op
is the op before it) and to the graph of the resume function after it (dynamo names it after the function and the
line it resumes at: its first op is the op after it)."""

from __future__ import annotations

import types
from collections.abc import Iterable, Mapping
from typing import Any

from ..graph import Graph
from ..source import source_line
from .breaks import (
    LoggedBreak,
    frame_skipped,
    package_of,
    parse_logged_break,
    registry,
    registry_code,
    registry_entry,
    resumed_function,
    split_reason,
    user_line,
    user_stack,
)
from .graphs import op_ids
from .recorder import Compiled, Recorder
from .records import GraphBreak, OpRef, Region, StackFrame


def _reason_frames(reason: Any) -> list[tuple[str, int, str]]:
    frames = []
    for f in getattr(reason, "user_stack", None) or []:
        frames.append((str(getattr(f, "filename", "")), int(getattr(f, "lineno", 0) or 0), str(getattr(f, "name", ""))))
    return frames


class BreakTable:
    """Distinct breaks, in the order first met, keyed by line, type and whether they skipped a function."""

    def __init__(self) -> None:
        self.breaks: list[GraphBreak] = []
        self.keys: dict[tuple[str, int, str, bool], int] = {}
        #: per break, how often dynamo met it while compiling each call
        self.hits: list[dict[int, int]] = []

    def add(self, logged: LoggedBreak, stacks: Mapping[tuple[str, int], list[StackFrame]]) -> int | None:
        parts = split_reason(logged.reason) if logged.reason else []
        stack = user_stack(logged.frames) if logged.frames else list(stacks.get((logged.file, logged.line), []))
        if not stack:
            stack = [
                StackFrame(logged.file, logged.line, "", source_line(logged.file, logged.line), package_of(logged.file))
            ]
        at = user_line(stack)
        if at is None:
            return None  # a break inside torch's own code with no line of the user's above it
        cause = parts[0] if parts else None
        skipped = frame_skipped(parts)
        gb_type = cause.gb_type if cause is not None else ""
        key = (at.file, at.line, gb_type, skipped is not None)
        index = self.keys.get(key)
        if index is None:
            index = self.keys[key] = len(self.breaks)
            code = (cause.gb_code if cause is not None else "") or ""
            code = registry_code(gb_type, code) if registry() else ""
            explanation = cause.explanation if cause is not None else ""
            hints = list(cause.hints) if cause is not None else []
            entry = registry_entry(code) if code else None
            if entry is not None and not explanation:
                explanation = str(entry.get("Explanation", ""))
                hints = [str(h) for h in entry.get("Hints", [])]
            innermost = stack[-1]
            gb = GraphBreak(
                file=at.file,
                line=at.line,
                code=at.code or source_line(at.file, at.line),
                func=at.func,
                reason=logged.reason,
                gb_type=gb_type,
                gb_code=code,
                explanation=explanation,
                hints=hints,
                package=innermost.package if innermost.package not in ("", "torch") else "",
                stack=stack,
            )
            if skipped is not None:
                func, file, _ = skipped
                gb.skipped_frame = func or at.func
                inside = next(
                    (f for f in stack if f.func.rsplit(".", 1)[-1] == func and (not file or f.file == file)), None
                )
                gb.skipped_line = inside.line if inside is not None else 0
            self.breaks.append(gb)
            self.hits.append({})
        hits = self.hits[index]
        hits[logged.call] = hits.get(logged.call, 0) + 1
        if logged.call not in self.breaks[index].calls:
            self.breaks[index].calls.append(logged.call)
        return index

    def find(self, file: str, line: int, gb_type: str = "") -> int | None:
        """The break at a line, of a type when given (a split, not a skipped function, first)."""
        candidates = [(k, i) for k, i in self.keys.items() if k[0] == file and k[1] == line]
        if gb_type:
            typed = [(k, i) for k, i in candidates if k[2] == gb_type]
            candidates = typed or candidates
        candidates.sort(key=lambda ki: ki[0][3])
        return candidates[0][1] if candidates else None


def read_breaks(
    table: BreakTable, logged: Iterable[tuple[int, str]], recorder: Recorder, regions: list[Region]
) -> bool:
    """Fill ``table`` from torch's graph-break log, then join each graph that ends at a break to it (the break made
    from the graph's reason where torch logged none); whether torch's log had any break this could read."""
    stacks: dict[tuple[str, int], list[StackFrame]] = {}
    logged_any = False
    for call, message in logged:
        parsed = parse_logged_break(message, call)
        if parsed is None:
            continue
        logged_any = True
        if parsed.frames:
            stacks.setdefault((parsed.file, parsed.line), user_stack(parsed.frames))
        table.add(parsed, stacks)
    for c, region in zip(recorder.compiled, regions, strict=True):
        reason = c.reason
        if reason is None or not getattr(reason, "graph_break", False):
            continue
        frames = _reason_frames(reason)
        stack = user_stack(frames) or [StackFrame(f, ln, fn, source_line(f, ln), package_of(f)) for f, ln, fn in frames]
        at = user_line(stack)
        if at is None:
            continue
        text = str(getattr(reason, "reason", ""))
        parts = split_reason(text)
        index = table.find(at.file, at.line, parts[0].gb_type if parts else "")
        if index is None:
            index = table.add(LoggedBreak(at.file, at.line, text, frames, c.call), stacks)
        if index is not None:
            region.ends_at_break = index
    return logged_any


def join_ops(table: BreakTable, compiled: list[Compiled], regions: list[Region], graphs: Mapping[str, Graph]) -> None:
    """Each break's count (how often it was hit in the first call) and the last op before it and the first after."""
    for index, gb in enumerate(table.breaks):
        ending = [r for r in regions if r.ends_at_break == index]
        # a break in a function called from a compiled one splits both (the caller's graph at the call, the
        # function's at the line): it is hit as often as the graphs of the function that holds it end there
        own = [r for r in ending if r.func.rsplit(".", 1)[-1] == gb.func.rsplit(".", 1)[-1]]
        ran = sum(r.runs[0] for r in (own or ending) if r.runs)
        gb.count = ran if ran else max(1, table.hits[index].get(0, 0) or sum(table.hits[index].values()))
        after = _resume_region(gb, compiled, regions)
        first_call = [i for i, r in enumerate(regions) if r.ends_at_break == index and r.call == 0]
        # the op before: the last op run before it, in the last graph of the first call that ends at it (an inner
        # function's, when it splits its caller's graph too) or, that graph empty, the graph compiled before it
        for i in range(first_call[-1] if first_call else -1, -1, -1):
            ops = op_ids(graphs[regions[i].graph])
            if ops:
                gb.before = OpRef(regions[i].graph, ops[-1])
                break
        if after is None and first_call and first_call[-1] + 1 < len(regions):
            # no resume function found by name (the rest of the function after the break made no graph): the
            # graph compiled next in the first call is the next to run
            following = regions[first_call[-1] + 1]
            after = following if following.call == 0 else None
        if after is not None:
            ops = op_ids(graphs[after.graph])
            if ops:
                gb.after = OpRef(after.graph, ops[0])


def skipped_top(breaks: list[GraphBreak], regions: list[Region], top: types.CodeType | None) -> None:
    """For a torch that does not say when it skips a function (no "graph break in loop" in its reasons): the top
    function compiled into no graph at all in the first call, while a break was met inside it, was skipped."""
    if top is None or any(b.skipped_frame for b in breaks):
        return
    if any(r.func == top.co_name and r.call == 0 for r in regions):
        return
    for gb in breaks:
        inside = next((f for f in gb.stack if f.file == top.co_filename and f.func == top.co_name), None)
        if inside is not None and 0 in gb.calls:
            gb.skipped_frame, gb.skipped_line = top.co_name, inside.line


def _resume_region(gb: GraphBreak, compiled: list[Compiled], regions: list[Region]) -> Region | None:
    """The region of the resume function after a break: dynamo's code for the rest of a function in the break's
    stack, from the line of the break in that function."""
    lines = {(f.file, f.line, f.func.rsplit(".", 1)[-1]) for f in gb.stack}
    for c, region in zip(compiled, regions, strict=True):
        if c.code is None:
            continue
        resumed = resumed_function(c.code.co_name)
        if resumed is not None and (c.code.co_filename, resumed[1], resumed[0]) in lines:
            return region
    return None


__all__ = ["BreakTable", "join_ops", "read_breaks", "skipped_top"]
