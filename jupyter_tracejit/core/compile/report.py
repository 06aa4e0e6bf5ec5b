"""What a run saw, as the run's records: each compiled graph as a :class:`~..graph.Graph` and a
:class:`~.records.Region`, torch's graph-break reports as :class:`~.records.GraphBreak` s joined to the ops before
and after them, and guard failures as :class:`~.records.Recompilation` s.

Graph names. A graph is named after the function dynamo compiled: the model's own function by its name
(``forward``, or the function's name), any other by its qualified name (``Layer.forward``, ``helper``); dynamo's
resume functions (the code after a break, ``torch_dynamo_resume_in_forward_at_13``) by the function they resume.
The second and later graphs of one function take ``#1``, ``#2``... in the order they were compiled, so
``forward``, ``forward#1``, ``forward#2`` read in the order the model runs them (a recompiled graph counts too:
its region's ``call`` says which call compiled it).

Breaks and ops. torch's graph-break log (:mod:`.breaks`) reports each break where dynamo meets it, with the stack;
a graph that ends at a break carries the same break as its ``compile_subgraph_reason`` (what ``explain`` reads).
A break is joined to the graph that ends at it by its innermost user line (the graph's last op is the op before
it) and to the graph of the resume function after it (dynamo names it after the function and the line it resumes
at: its first op is the op after it).
"""

from __future__ import annotations

import dataclasses
import os
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

from ..fx_graph import FxGraphBuilder
from ..fx_location import module_path
from ..graph import Frame, Graph, SourceLoc
from ..source import source_line
from .breaks import (
    LoggedBreak,
    frame_skipped,
    package_of,
    parse_logged_break,
    plain_name,
    registry,
    registry_code,
    registry_entry,
    resumed_function,
    split_reason,
    user_line,
    user_stack,
)
from .guards import inputs_terms, read_failure, recompile_hint, region_guards, spread_name
from .recorder import Compiled, Recorder
from .records import CompileReport, GraphBreak, OpRef, Recompilation, Region, StackFrame

_PREFIX = "compile"


# -- graphs ---------------------------------------------------------------------------------------------------------
class DynamoGraphBuilder(FxGraphBuilder):
    """:class:`~..fx_graph.FxGraphBuilder` for dynamo's graphs: module paths are relative to the compiled function's
    ``self`` (``L['self'].fc``, ``L['s'].fc`` for any name of it), so they are prefixed with that module's path in
    the model (``layers.0.fc`` for a layer's ``forward`` compiled on its own); resume functions in stacks are named
    after the functions they resume."""

    def __init__(self, graph_module: torch.fx.GraphModule, *, base: str, lifted: dict[str, tuple[str, str]]) -> None:
        super().__init__(graph_module, prefix=_PREFIX, lifted=lifted)
        self.base = base

    def scope_of(self, fx_node: torch.fx.Node, fallback: str) -> str:
        stack = fx_node.meta.get("nn_module_stack")
        if not stack:
            return fallback or self.base
        innermost: str | None = None
        for entry in stack.values():
            if not isinstance(entry, tuple) or len(entry) != 2:
                continue
            raw, qualified = entry
            path = self.paths.get(raw)
            if path is None:
                relative = module_path(_rooted_at_self(str(raw)))
                path = self.paths[raw] = ".".join(p for p in (self.base, relative) if p)
            self.scope_types.setdefault(path, str(qualified).rsplit(".", 1)[-1].rstrip("'>"))
            innermost = path
        return (fallback or self.base) if innermost is None else innermost

    def parse_stack(self, text: str) -> SourceLoc | None:
        found = super().parse_stack(text)
        if found is None:
            return None
        stack = tuple(
            dataclasses.replace(f, func=plain_name(f.func)) if "resume_in_" in f.func else f for f in found.stack
        )
        return SourceLoc(stack=stack, user_index=found.user_index)


def _rooted_at_self(path: str) -> str:
    """``L['s'].fc`` -> ``L['self'].fc``: :func:`~..fx_location.module_path` strips a root named ``self``."""
    if path.startswith("L[") and "]" in path:
        return "L['self']" + path[path.index("]") + 1 :]
    return path


def _lifted(c: Compiled, names: Mapping[int, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Placeholders standing for the model's parameters and buffers: name -> (kind, qualified name)."""
    return {name: names[tensor] for name, tensor in c.examples.items() if tensor in names}


def tensor_names(model: Any) -> dict[int, tuple[str, str]]:
    """``id(tensor) -> (kind, qualified name)`` for the model's parameters and buffers."""
    names: dict[int, tuple[str, str]] = {}
    if not isinstance(model, torch.nn.Module):
        return names
    try:
        for name, p in model.named_parameters(remove_duplicate=False):
            names.setdefault(id(p), (f"{_PREFIX}::parameter", name))
        for name, b in model.named_buffers(remove_duplicate=False):
            names.setdefault(id(b), (f"{_PREFIX}::buffer", name))
    except Exception:  # a module whose tensors cannot be listed: its inputs stay inputs
        pass
    return names


def module_paths(model: Any) -> dict[int, str]:
    """``id(module) -> its path in the model`` (``""`` for the model)."""
    if not isinstance(model, torch.nn.Module):
        return {}
    try:
        return {id(m): name for name, m in model.named_modules(remove_duplicate=False)}
    except Exception:
        return {}


def _input_names(graph: Graph, c: Compiled, spread: str) -> dict[str, int]:
    """The graph's inputs named as the user names them (``x``, not dynamo's ``l_x_``; ``input_ids`` for what a
    ``**kwargs`` collected) where that name is free; returns each input's value id by that name (``stack0`` for a
    value carried over a break)."""
    taken = {v.name for v in graph.values}
    by_name: dict[str, int] = {}
    for vid in graph.inputs:
        value = graph.values[vid]
        source = c.sources.get(value.name, "")
        if not source.startswith("L["):
            continue
        name = inputs_terms(source.replace("L['___stack", "L['stack"), spread)
        if not name.isidentifier():
            continue
        by_name[name] = vid
        if name not in taken:
            taken.discard(value.name)
            value.name = name
            taken.add(name)
    return by_name


def function_name(
    code: types.CodeType | None, top: types.CodeType | None, gm: torch.fx.GraphModule | None = None
) -> str:
    """The name a compiled function's graphs take (see the module's docstring)."""
    if code is None:
        return _name_from_stacks(gm) if gm is not None else "graph"
    if code is top:
        return code.co_name
    resumed = resumed_function(code.co_name)
    if resumed is not None and top is not None and resumed[0] == top.co_name and code.co_filename == top.co_filename:
        return top.co_name
    return plain_name(getattr(code, "co_qualname", code.co_name))


def _name_from_stacks(gm: torch.fx.GraphModule) -> str:
    for node in gm.graph.nodes:
        text = node.meta.get("stack_trace")
        if text:
            first = next((line for line in text.splitlines() if line.strip().startswith("File ")), "")
            if " in " in first:
                return plain_name(first.rsplit(" in ", 1)[1].strip())
    return "graph"


# -- the report ------------------------------------------------------------------------------------------------------
@dataclass
class Built:
    """What :func:`build` made: the records, the graphs by name, and each compiled graph's name."""

    report: CompileReport
    graphs: dict[str, Graph]
    names: list[str] = field(default_factory=list)


def _ops(gm: torch.fx.GraphModule) -> int:
    return sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module"))


def _op_ids(graph: Graph) -> list[int]:
    return [n.id for n in graph.nodes if n.role == "op" and n.parent is None]


def _first_line(graph: Graph) -> tuple[str, int]:
    for n in graph.nodes:
        if n.role == "op" and n.source is not None and not n.source.user_frame.internal:
            return n.source.file, n.source.line
    return "", 0


def _reason_frames(reason: Any) -> list[tuple[str, int, str]]:
    frames = []
    for f in getattr(reason, "user_stack", None) or []:
        frames.append((str(getattr(f, "filename", "")), int(getattr(f, "lineno", 0) or 0), str(getattr(f, "name", ""))))
    return frames


class _BreakTable:
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


def build(
    recorder: Recorder,
    logged: Iterable[tuple[int, str]],
    warnings: Iterable[tuple[int, str]],
    *,
    model: Any,
    top: types.CodeType | None,
    calls: int,
    dynamic: bool | None,
    backend: str,
    limit: int,
) -> Built:
    """The run's graphs and records from what the recorder and torch's log saw."""
    names = tensor_names(model)
    paths = module_paths(model)
    graphs: dict[str, Graph] = {}
    regions: list[Region] = []
    counts: dict[str, int] = {}
    gm_names: list[str] = []
    last_self: dict[str, torch.nn.Module] = {}
    inputs_of: dict[str, dict[str, int]] = {}
    for c in recorder.compiled:
        func = function_name(c.code, top, c.gm)
        n = counts.get(func, 0)
        counts[func] = n + 1
        name = func if n == 0 else f"{func}#{n}"
        gm_names.append(name)
        module = c.self_module or last_self.get(func)
        if c.self_module is not None:
            last_self[func] = c.self_module
        base = paths.get(id(module), "") if module is not None else ""
        built = DynamoGraphBuilder(c.gm, base=base, lifted=_lifted(c, names)).build(name)
        graph = built.graph
        inputs_of[name] = _input_names(graph, c, spread_name(c.code) if c.code is top else "")
        graphs[name] = graph
        file, line = _first_line(graph)
        if not file and c.code is not None:
            file, line = c.code.co_filename, c.code.co_firstlineno
        regions.append(
            Region(
                graph=name,
                func=func,
                file=file,
                line=line,
                call=c.call,
                compile_id=c.compile_id,
                ops=_ops(c.gm),
                runs=[c.runs.get(i, 0) for i in range(calls)],
                compile_time=c.compile_time,
            )
        )
    table = _BreakTable()
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
    # each graph that ends at a break: joined to the break (and the break made from it where torch logged none)
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
        if index is None:
            continue
        region.ends_at_break = index
    for index, gb in enumerate(table.breaks):
        ending = [r for r in regions if r.ends_at_break == index]
        # a break in a function called from a compiled one splits both (the caller's graph at the call, the
        # function's at the line): it is hit as often as the graphs of the function that holds it end there
        own = [r for r in ending if r.func.rsplit(".", 1)[-1] == gb.func.rsplit(".", 1)[-1]]
        ran = sum(r.runs[0] for r in (own or ending) if r.runs)
        gb.count = ran if ran else max(1, table.hits[index].get(0, 0) or sum(table.hits[index].values()))
        after = _resume_region(gb, recorder.compiled, regions)
        first_call = [i for i, r in enumerate(regions) if r.ends_at_break == index and r.call == 0]
        # the op before: the last op run before it, in the last graph of the first call that ends at it (an inner
        # function's, when it splits its caller's graph too) or, that graph empty, the graph compiled before it
        for i in range(first_call[-1] if first_call else -1, -1, -1):
            ops = _op_ids(graphs[regions[i].graph])
            if ops:
                gb.before = OpRef(regions[i].graph, ops[-1])
                break
        if after is None and first_call and first_call[-1] + 1 < len(regions):
            # no resume function found by name (the rest of the function after the break made no graph): the
            # graph compiled next in the first call is the next to run
            following = regions[first_call[-1] + 1]
            after = following if following.call == 0 else None
        if after is not None:
            ops = _op_ids(graphs[after.graph])
            if ops:
                gb.after = OpRef(after.graph, ops[0])
    known = _known_files(graphs, table.breaks, recorder, top)
    for c, region in zip(recorder.compiled, regions, strict=True):
        region.guards, region.guards_total = _guards_of(
            c, recorder, known, spread_name(c.code) if c.code is top else ""
        )
    recompilations, limit_hit = _recompilations(
        recorder,
        warnings,
        known,
        top=top,
        dynamic=dynamic,
        names=gm_names,
        graphs=graphs,
        inputs_of=inputs_of,
    )
    report = CompileReport(
        regions=regions,
        graph_breaks=table.breaks,
        recompilations=recompilations,
        calls=calls,
        backend=backend,
        recompile_limit=limit,
        limit_hit=limit_hit,
    )
    if registry() is None:
        report.unknown.append(
            f"torch {torch.__version__} has no graph-break registry (torch/_dynamo/graph_break_registry.json): "
            "breaks have no GB code, and their explanations and hints are only what the reason says"
        )
        _skipped_top(table.breaks, regions, top)
    if not logged_any and any(r.ends_at_break is not None for r in regions):
        report.unknown.append(
            f"torch {torch.__version__} wrote no graph-break log this run could read: the breaks are the ones the "
            "graphs end at (what torch's explain reports); a break with no graph before it is not known"
        )
    return Built(report, graphs, gm_names)


def _skipped_top(breaks: list[GraphBreak], regions: list[Region], top: types.CodeType | None) -> None:
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


def _known_files(
    graphs: Mapping[str, Graph], breaks: list[GraphBreak], recorder: Recorder, top: types.CodeType | None
) -> list[str]:
    """Files the run knows of (to find torch's shortened paths again)."""
    files: set[str] = set()
    for graph in graphs.values():
        for node in graph.nodes:
            if node.source is not None:
                files.update(f.file for f in node.source.stack)
    for gb in breaks:
        files.update(f.file for f in gb.stack)
    for c in recorder.compiled:
        if c.code is not None:
            files.add(c.code.co_filename)
    if top is not None:
        files.add(top.co_filename)
    return sorted(f for f in files if f and os.path.isabs(f))


def _guards_of(c: Compiled, recorder: Recorder, known: list[str], spread: str) -> tuple[list[Any], int]:
    """The guards of the cache entry a graph was compiled into, read from torch's guard manager."""
    if c.code is None or not c.compile_id:
        return [], 0
    getter = getattr(torch._C._dynamo.eval_frame, "_debug_get_cache_entry_list", None)
    if getter is None:
        return [], 0
    try:
        entries = list(getter(c.code))
    except Exception:
        return [], 0
    for entry in entries:
        if getattr(entry, "backend", None) is recorder and _id_text(getattr(entry, "compile_id", None)) == c.compile_id:
            return region_guards(entry.guard_manager, known, spread)
    return [], 0


def _id_text(compile_id: Any) -> str:
    frame, attempt = getattr(compile_id, "frame_id", None), getattr(compile_id, "frame_compile_id", None)
    return f"{frame}/{attempt}" if frame is not None and attempt is not None else str(compile_id or "")


@dataclass
class _Batch:
    """Guard failures of one function in one call: torch checks each graph compiled for it, and none passed."""

    call: int
    code: types.CodeType | None
    texts: list[str]
    #: the position of its last failure in the recorder's events
    position: int
    #: the values of the first failure's sources
    values: dict[str, Any]


def _recompilations(
    recorder: Recorder,
    warnings: Iterable[tuple[int, str]],
    known: list[str],
    *,
    top: types.CodeType | None,
    dynamic: bool | None,
    names: list[str],
    graphs: Mapping[str, Graph],
    inputs_of: Mapping[str, Mapping[str, int]],
) -> tuple[list[Recompilation], list[str]]:
    """Each batch of guard failures (one per compiled graph of a function, when a call passes none of them) as a
    recompilation, joined to the compile that followed it in the same call; a batch no compile followed, after
    torch said it hit its recompile limit, as the function torch runs eagerly from then on."""
    limit_warnings = [
        (call, text) for call, text in warnings if "recompile_limit" in text or "cache_size_limit" in text
    ]
    batches: list[_Batch] = []
    for position, (kind, index) in enumerate(recorder.events):
        if kind != "fail":
            continue
        failure = recorder.failures[index]
        last = batches[-1] if batches else None
        compile_id = failure.text.split(":", 1)[0]
        if (
            last is not None
            and last.call == failure.call
            and last.code is failure.code
            and last.position == position - 1
            and all(t.split(":", 1)[0] != compile_id for t in last.texts)
        ):
            last.texts.append(failure.text)
            last.position = position
        else:
            batches.append(_Batch(failure.call, failure.code, [failure.text], position, failure.values))
    out: list[Recompilation] = []
    limit_hit: list[str] = []
    size_changes: set[tuple[str, str]] = set()
    for batch in batches:
        call, code, texts, position = batch.call, batch.code, batch.texts, batch.position
        func = function_name(code, top)
        nxt = next(
            (
                recorder.compiled[i]
                for kind, i in recorder.events[position + 1 :]
                if kind == "compile" and recorder.compiled[i].call == call and recorder.compiled[i].code is code
            ),
            None,
        )
        limited = [t for c, t in limit_warnings if c == call and code is not None and f"'{code.co_name}'" in t]
        if nxt is None and limited:
            if func not in limit_hit:
                limit_hit.append(func)
            continue
        value_of: Callable[[str], Any] | None = batch.values.__getitem__ if batch.values else None
        read = read_failure(texts[0], known, value_of, spread_name(code) if code is top else "")
        if not read.file:
            read.file, read.line = _use_of(read, recorder, names, graphs, inputs_of)
        key = (read.compile_id.split("/", 1)[0], read.reason.split(" was ", 1)[0])
        first_change = key not in size_changes
        size_changes.add(key)
        out.append(
            Recompilation(
                call=call,
                func=func,
                compile_id=nxt.compile_id if nxt is not None else "",
                reason=read.reason,
                torch_reason="\n".join(texts),
                kind=read.kind,
                file=read.file,
                line=read.line,
                code=source_line(read.file, read.line) if read.file else "",
                hint=recompile_hint(read, dynamic, first_change),
            )
        )
    for _, text in limit_warnings:
        func = _limit_function(text)
        if func and all(func != f.rsplit(".", 1)[-1] for f in limit_hit):
            limit_hit.append(func)
    return out, limit_hit


def _use_of(
    failure: Any,
    recorder: Recorder,
    names: list[str],
    graphs: Mapping[str, Graph],
    inputs_of: Mapping[str, Mapping[str, int]],
) -> tuple[str, int]:
    """Where the graph whose guard failed first uses the failed input (its first op reading it), when torch named
    no line of the user's: ``x``'s size guard, made inside ``nn.Linear``, is used at ``h = self.fc(x)``."""
    if not failure.source_input:
        return "", 0
    for c, name in zip(recorder.compiled, names, strict=True):
        if c.compile_id != failure.compile_id or name not in graphs:
            continue
        graph = graphs[name]
        found = inputs_of.get(name, {}).get(failure.source_input)
        wanted = {found} if found is not None else set()
        for node in graph.nodes:
            source = node.source
            if (
                node.role == "op"
                and wanted & set(node.inputs)
                and source is not None
                and not source.user_frame.internal
            ):
                return source.file, source.line
    return "", 0


def _limit_function(text: str) -> str:
    marker = "function: '"
    at = text.find(marker)
    if at < 0:
        return ""
    end = text.find("'", at + len(marker))
    return plain_name(text[at + len(marker) : end]) if end > at else ""


def frame_of(stack: list[StackFrame]) -> Frame | None:
    at = user_line(stack)
    return Frame(at.file, at.line, at.func, at.code) if at is not None else None


__all__ = ["Built", "DynamoGraphBuilder", "build", "function_name", "module_paths", "tensor_names"]
