"""What a ``torch.compile`` run recorded beyond its graphs, as torch-free records (``run.compile``): a saved run's
``compile`` section loads where torch is not installed.

:mod:`.report` fills them while the model runs under ``torch.compile``; the findings and the explorer read them.
A region is one graph dynamo compiled (``run.graphs[region.graph]``); a graph break is a line dynamo could not put
in a graph (it ran it in Python and started a new graph after it, or gave up on the whole function); a
recompilation is a call whose inputs failed the guards of every graph compiled for a function before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..jsonio import Decoders, JsonRecord, list_of
from ..words import plural

#: :attr:`Recompilation.kind` values: which sort of guard failed
RECOMPILE_KINDS = ("size", "value", "type", "requires_grad", "identity", "other")
#: the ``backend`` option's values: dynamo's graphs run as they are, through AOT autograd, or compiled by inductor
COMPILE_BACKENDS = ("eager", "aot_eager", "inductor")


@dataclass
class OpRef(JsonRecord):
    """One node of one of the run's graphs: ``run.graphs[graph].nodes[node]``."""

    graph: str
    node: int


@dataclass
class StackFrame(JsonRecord):
    """One frame of the Python stack at a break, from the compiled function inward."""

    file: str
    line: int
    func: str
    code: str = ""
    #: the installed package the file belongs to (``logging``, ``transformers``), ``""`` for the user's own code
    package: str = ""


@dataclass
class GraphBreak(JsonRecord):
    """One distinct graph break: a line dynamo could not put in a graph."""

    #: the user's line: where the break is, or for a break inside torch or a library, the user's line that called it
    file: str
    line: int
    code: str = ""
    #: the function the line is in (``forward``, ``Layer.forward``, ``helper``)
    func: str = ""
    #: torch's words, whole (its break type, explanation, hints, debug context and page)
    reason: str = ""
    #: torch's name for the kind of break (``Failed to trace builtin operator``); ``""`` when torch gives none
    gb_type: str = ""
    #: its code in torch's graph-break registry (``GB0059``); ``""`` where this torch has no registry entry for it
    gb_code: str = ""
    explanation: str = ""
    hints: list[str] = field(default_factory=list)
    #: how often it was hit in the first call: the runs of the graphs of its function that end at it, or (none
    #: compiled before it) how often dynamo met it while compiling
    count: int = 1
    #: the compiled function dynamo gave up on because of it (a break inside a ``for`` loop of the function: the
    #: whole function then runs eagerly, none of its code in a graph); ``""`` when dynamo only split the graph
    skipped_frame: str = ""
    #: the line of that function that holds the break (its loop body's line), when it is not :attr:`line`
    skipped_line: int = 0
    #: the installed package the break happened in (``logging``), ``""`` when it is in the user's code
    package: str = ""
    #: the stack at the break, from the compiled function inward (the user's frames and the libraries' they called)
    stack: list[StackFrame] = field(default_factory=list)
    #: the last op before it and the first op after it, in the run's graphs; None where no graph has one
    before: OpRef | None = None
    after: OpRef | None = None
    #: the calls (0 = the first) in which dynamo met it while compiling
    calls: list[int] = field(default_factory=list)

    _json_decoders: ClassVar[Decoders] = {
        "stack": list_of(StackFrame.from_json),
        "before": OpRef.from_json,
        "after": OpRef.from_json,
    }

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class CompileGuard(JsonRecord):
    """One condition a compiled graph holds for its inputs, in the inputs' terms (``x.size()[0] == 3``)."""

    #: torch's guard type (``TENSOR_MATCH``, ``EQUALS_MATCH``, ``SHAPE_ENV``, ``TYPE_MATCH``...)
    kind: str
    expr: str
    #: the user's line that made it (empty / 0 when torch recorded none, or only a line of its own)
    file: str = ""
    line: int = 0
    code: str = ""


@dataclass
class Region(JsonRecord):
    """One graph dynamo compiled: its place in the run, where it came from, and what it holds for its inputs."""

    #: its name in ``run.graphs``: the function's name, ``#n`` for the function's n-th later graph (``forward``,
    #: ``forward#1``, ``Layer.forward``)
    graph: str
    #: the compiled function (``forward``; a resume function is named after the function it resumes)
    func: str
    file: str = ""
    #: the first line of the graph's code (its first op's user line), 0 when none
    line: int = 0
    #: the call (0 = the first) that compiled it, and torch's compile id (``0/1``: frame 0, its second compile)
    call: int = 0
    compile_id: str = ""
    #: how many ops it holds (its FX graph's calls)
    ops: int = 0
    #: how many times it ran in each call
    runs: list[int] = field(default_factory=list)
    #: seconds the back end took to compile it (inductor's code generation; next to nothing for ``eager``)
    compile_time: float = 0.0
    #: the break it ends at (an index into ``graph_breaks``), None when it ends where the function returns
    ends_at_break: int | None = None
    #: the guards on the function's inputs (types, ids of torch's own modules and the parameters' metadata left out:
    #: :attr:`guards_total` counts them all)
    guards: list[CompileGuard] = field(default_factory=list)
    guards_total: int = 0

    _json_decoders: ClassVar[Decoders] = {"guards": list_of(CompileGuard.from_json)}


@dataclass
class Recompilation(JsonRecord):
    """A call whose inputs failed the guards of the graphs compiled before for a function, which dynamo compiled
    again."""

    #: 0 = the first call, 1 = ``calls[0]``, ...
    call: int
    #: the function compiled again
    func: str = ""
    compile_id: str = ""
    #: the failed guard in the inputs' terms: ``x.size()[0] was 3, now 5``
    reason: str = ""
    #: torch's own words for it
    torch_reason: str = ""
    #: :data:`RECOMPILE_KINDS`
    kind: str = "other"
    #: where the guarded value is used, when torch records it
    file: str = ""
    line: int = 0
    code: str = ""
    hint: str = ""


@dataclass
class CompileReport(JsonRecord):
    """``run.compile``: the regions in the order they were compiled, the graph breaks, the recompilations, and what
    torch logged."""

    regions: list[Region] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    recompilations: list[Recompilation] = field(default_factory=list)
    #: how many calls were made (1 + ``len(calls)``)
    calls: int = 0
    #: the back end that compiled the graphs (:data:`COMPILE_BACKENDS`)
    backend: str = "eager"
    #: torch's ``recompile_limit`` (``cache_size_limit`` in older torches) during the run
    recompile_limit: int = 0
    #: functions torch stopped compiling after hitting the limit, running them eagerly from then on
    limit_hit: list[str] = field(default_factory=list)
    #: what this torch could not say (no graph-break registry, a log it does not write), one sentence each
    unknown: list[str] = field(default_factory=list)
    #: torch's log lines during the run (warnings it would have printed; the graph-break and recompile reports)
    log: str = ""

    _json_decoders: ClassVar[Decoders] = {
        "regions": list_of(Region.from_json),
        "graph_breaks": list_of(GraphBreak.from_json),
        "recompilations": list_of(Recompilation.from_json),
    }

    @staticmethod
    def node_references(data: Mapping[str, Any]) -> Iterator[tuple[str, str, list[Any]]]:
        """``(JSON pointer within the records, graph, node ids)`` of every node id the records' JSON holds (the
        saved-run check's rule, :mod:`..validate`): each break's op before and after it."""
        for i, gb in enumerate(data["graph_breaks"]):
            for side in ("before", "after"):
                ref = gb.get(side)
                if isinstance(ref, Mapping):
                    yield f"/graph_breaks/{i}/{side}/node", str(ref.get("graph")), [ref.get("node")]

    def region_of(self, graph: str) -> Region | None:
        return next((r for r in self.regions if r.graph == graph), None)

    @property
    def graph_count(self) -> int:
        return len(self.regions)

    def first_call_graphs(self) -> list[str]:
        """The graphs the first call ran, in the order dynamo compiled them (``tj.compare`` joins them)."""
        return [r.graph for r in self.regions if r.call == 0]

    def lines_outside_graphs(self) -> list[tuple[str, int]]:
        """The lines dynamo ran in Python, between graphs: each graph break's line and the user's lines on its
        stack."""
        return [(gb.file, gb.line) for gb in self.graph_breaks] + [
            (f.file, f.line) for gb in self.graph_breaks for f in gb.stack
        ]

    def files(self) -> Iterator[str]:
        """Every source file the records name (the breaks and their stacks, the regions, guards and
        recompilations), with repeats: ``run.files()`` names them (a notebook cell as ``cell [3]``)."""
        for gb in self.graph_breaks:
            yield gb.file
            yield from (f.file for f in gb.stack)
        for region in self.regions:
            yield region.file
            yield from (g.file for g in region.guards)
        yield from (r.file for r in self.recompilations)

    def text_lines(self, place: Callable[[str, int], str], spelling: Callable[[str], str] = str) -> list[str]:
        """The text report's part of the records (``tracejit compile``'s output): the graphs in order, each break at
        its place (``place(file, line)``) with its registry code, torch's words and first hint, each recompilation
        with the guard that failed; ``spelling`` rewrites advice for where it is read."""
        ops = ", ".join(f"{r.graph} ({plural(r.ops, 'op')})" for r in self.regions[:8])
        lines = [f"graphs ({len(self.regions)}, {self.calls} calls, backend {self.backend}): {ops or 'none'}"]
        if len(self.regions) > 8:
            lines[-1] += ", ..."
        if self.graph_breaks:
            lines.append(f"graph breaks ({len(self.graph_breaks)}):")
        for gb in self.graph_breaks:
            code = f"[{gb.gb_code}] " if gb.gb_code else ""
            times = f" (x{gb.count} per call)" if gb.count > 1 else ""
            lines.append(f"  {place(gb.file, gb.line)}: {code}{gb.code}{times}")
            what = gb.gb_type + (f": {gb.explanation}" if gb.explanation else "")
            if what:
                lines.append(f"    {what}")
            if gb.skipped_frame:
                lines.append(f"    dynamo gave up on {gb.skipped_frame}: it runs eagerly")
            if gb.hints:
                lines.append(f"    hint: {spelling(gb.hints[0])}")
        if self.recompilations:
            lines.append(f"recompilations ({len(self.recompilations)}):")
        for r in self.recompilations:
            at = f" at {place(r.file, r.line)}" if r.file else ""
            lines.append(f"  call {r.call}, {r.func}{at}: {r.reason}")
        for func in self.limit_hit:
            lines.append(f"  after {self.recompile_limit} compilations torch runs {func} eagerly")
        lines.extend(f"not known: {note}" for note in self.unknown)
        return lines

    @property
    def ok(self) -> bool:
        """Whether the model compiled as one graph per function, once: no graph break, no recompilation, no function
        torch gave up on (what ``run.ok`` and the ``tracejit compile`` gate read)."""
        return not self.graph_breaks and not self.recompilations and not self.limit_hit


__all__ = [
    "COMPILE_BACKENDS",
    "RECOMPILE_KINDS",
    "CompileGuard",
    "CompileReport",
    "GraphBreak",
    "OpRef",
    "Recompilation",
    "Region",
    "StackFrame",
]
