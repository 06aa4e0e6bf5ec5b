"""Recompilations: each batch of guard failures (one per compiled graph of a function, when a call passes none of
them) joined to the compile that followed it in the same call, read in the inputs' terms (:mod:`.failures`) with
the line the guarded value is used at and the usual fix; a batch no compile followed, after torch said it hit its
recompile limit, is the function torch runs eagerly from then on."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..graph import Graph
from ..source import source_line
from .breaks import plain_name
from .failures import read_failure, recompile_hint
from .graphs import function_name
from .guards import spread_name
from .recorder import Recorder
from .records import Recompilation


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


def _batches(recorder: Recorder) -> list[_Batch]:
    """The recorder's guard failures in batches: consecutive failures of one function in one call, one per graph
    compiled for it before."""
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
    return batches


def recompilations(
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
    batches = _batches(recorder)
    # the model's arguments by name (a size guard on one of them names it in the fix)
    bound = recorder.locals or {}
    arguments = {name for name in bound if name != "self"}
    arguments |= {key for value in bound.values() if isinstance(value, dict) for key in value if isinstance(key, str)}
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
                hint=recompile_hint(read, dynamic, first_change, arguments),
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


__all__ = ["recompilations"]
