"""``TraceRun``: everything one call of ``tj.trace`` / ``tj.trace_module`` found, as data."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .capture_diff import TraceComparison
from .check import CheckReport
from .errors import TraceError
from .graph import Graph
from .hazards import Finding
from .jsonio import NOT_IN_JSON, Decoders, JsonRecord, list_of
from .legacy import upgrade_run
from .probe_report import ProbeReport
from .registry import backend as backend_row
from .registry import by_records
from .tracer_warnings import TraceWarning
from .validate import check_run
from .verdict import Verdict, first_line, verdict_of
from .words import plural

if TYPE_CHECKING:
    from .run_diff import DiffAgainst

#: bump when the JSON layout changes; ``from_json`` reads older versions through :mod:`.legacy` and refuses newer
#: ones with a clear message. 2: ``backend``, node roles and symbolic sizes in graphs; 3: ``source`` and ``records``
#: (the back-end registry).
SCHEMA_VERSION = 3
JSON_KIND = "jupyter-tracejit.run"
_R = TypeVar("_R")


#: how runs are presented (DOT, an HTML fragment, the offline page), registered by :mod:`jupyter_tracejit.render`:
#: the core draws nothing itself and never imports presentation code
_PRESENTERS: dict[str, Callable[..., Any]] = {}


def register_presenter(name: str, present: Callable[..., Any]) -> None:
    """Make ``run.to_dot()`` (``"dot"``), ``run.to_html()`` (``"html"``) or ``run.save_html()`` (``"page"``) work."""
    _PRESENTERS[name] = present


#: names a source file for display (``cell [9]`` for a notebook cell's file), or ``None``; registered by the notebook
#: layer (:mod:`jupyter_tracejit.cells`), which knows IPython: the core never asks IPython itself
_FILE_NAMER: list[Callable[[str], str | None]] = []


def register_file_namer(namer: Callable[[str], str | None] | None) -> None:
    """Name source files in new runs' :attr:`TraceRun.file_names` with ``namer`` (``None``: stop naming)."""
    _FILE_NAMER[:] = [namer] if namer is not None else []


def display_names(files: Iterable[str]) -> dict[str, str]:
    """``file -> display name`` for the files the registered namer can name (a failing namer names nothing)."""
    if not _FILE_NAMER:
        return {}
    namer = _FILE_NAMER[0]
    names: dict[str, str] = {}
    for file in sorted(set(files)):
        try:
            name = namer(file) if file else None
        except Exception:  # a display nicety: never let it break a trace
            name = None
        if name:
            names[file] = name
    return names


#: how a run's ``diff_against`` is read back, registered by :mod:`.run_diff` (which reads runs itself, so the run
#: cannot import it: ``import jupyter_tracejit`` imports it, as it does the presenters)
_DIFF_AGAINST_DECODER: list[Callable[[Any], Any]] = []


def register_diff_against_decoder(decode: Callable[[Any], Any]) -> None:
    """Read ``diff_against`` back with ``decode`` (``DiffAgainst.from_json``)."""
    _DIFF_AGAINST_DECODER[:] = [decode]


def _diff_against_from_json(data: Mapping[str, Any]) -> DiffAgainst:
    if not _DIFF_AGAINST_DECODER:
        raise RuntimeError(
            "no diff_against decoder is registered: import jupyter_tracejit (it registers core.run_diff)"
        )
    return _DIFF_AGAINST_DECODER[0](data)


def _presenter(name: str) -> Callable[..., Any]:
    found = _PRESENTERS.get(name)
    if found is None:
        raise RuntimeError(
            f"no {name!r} presenter is registered: import jupyter_tracejit (its render package registers them)"
        )
    return found


@dataclass
class Target(JsonRecord):
    """What was traced."""

    name: str
    #: ``function``, ``module`` or ``script`` (already TorchScript)
    kind: str
    #: class name for modules
    type: str = ""
    file: str = ""
    line: int = 0


@dataclass
class TraceRun(JsonRecord):
    """The result of one trace. Nothing here raises: failures are in :attr:`error` and :attr:`check`."""

    target: Target
    #: options as given (JSON-ready; check inputs described by their shapes)
    options: dict[str, Any]
    #: the back end that captured the run (its row in :mod:`.registry`): ``"trace"`` for ``torch.jit.trace``,
    #: ``"export"`` for ``torch.export.export``
    backend: str = "trace"
    #: where it came from: ``"capture"`` (made in this process) or ``"file"`` (a saved file read back by ``tj.load``:
    #: nothing of the model ran; its options are what the file was read with)
    source: str = "capture"
    #: example inputs per method, described by their shapes
    inputs: dict[str, list[str]] = field(default_factory=dict)
    graphs: dict[str, Graph] = field(default_factory=dict)
    warnings: list[TraceWarning] = field(default_factory=list)
    check: CheckReport | None = None
    error: TraceError | None = None
    findings: list[Finding] = field(default_factory=list)
    probe: ProbeReport | None = None
    #: how often the user's Python code ran (1 + 2 x check inputs, per method, with the check on)
    python_runs: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    torch_version: str = ""
    created: str = ""
    run_id: str = ""
    #: ``file -> display name`` for files with a better name than their path (``cell [9]`` for a notebook cell);
    #: filled when the run is made, by the namer the notebook layer registers (:func:`register_file_namer`)
    file_names: dict[str, str] = field(default_factory=dict)
    #: argument names of the ``aten::`` ops, per signature (``aten::linear(Tensor,Tensor,Tensor)`` ->
    #: ``["input", "weight", "bias"]``, :mod:`.schemas`): the inspector names each input with them
    argument_names: dict[str, list[str]] = field(default_factory=dict)
    #: ``path -> Float(8, 8)`` for the traced module's parameters and buffers (``blocks.0.fc.weight``): the graph's
    #: ``prim::GetAttr`` values carry no shape, the inspector shows these
    parameters: dict[str, str] = field(default_factory=dict)
    #: what the back end recorded beyond its graph, of the type its registry row names (an export's signature,
    #: symbols, guards, runtime asserts and draft report: :class:`~.export.records.ExportReport`), also read as
    #: ``run.<the row's records name>`` (``run.export``); None when it records nothing more
    records: Any = None
    #: an export run's comparison with a trace of the same model (``compare_trace=True``): the trace's graph and
    #: how the two correspond (:class:`~.capture_diff.TraceComparison`); None otherwise
    compared: TraceComparison | None = None
    #: the explorer's Diff view of this run against an older one (``tj.diff(a, b)`` shown: this is ``b``): the diff,
    #: the old run's graph and how the two pair (:class:`~.run_diff.DiffAgainst`); None otherwise
    diff_against: DiffAgainst | None = None
    #: what torch returned (``ScriptModule`` / ``ScriptFunction``); ``None`` on failure or after ``from_json``
    traced: Any = field(default=None, repr=False, compare=False, metadata=NOT_IN_JSON)
    #: the :class:`~.request.TraceRequest` that produced this run (live objects; ``None`` after ``from_json``)
    request: Any = field(default=None, repr=False, compare=False, metadata=NOT_IN_JSON)

    _json_decoders: ClassVar[Decoders] = {
        "target": Target.from_json,
        "graphs": lambda graphs: {name: Graph.from_json(g) for name, g in graphs.items()},
        "warnings": list_of(TraceWarning.from_json),
        "check": CheckReport.from_json,
        "error": TraceError.from_json,
        "findings": list_of(Finding.from_json),
        "probe": ProbeReport.from_json,
        "compared": TraceComparison.from_json,
        "diff_against": _diff_against_from_json,
    }

    if not TYPE_CHECKING:  # at run time only: to mypy a misspelt attribute stays an error

        def __getattr__(self, name: str) -> Any:
            """``run.export`` (``run.<a back end's records name>``): the run's records when that back end made it,
            else None. Only for names the registry declares; anything else is an AttributeError as usual."""
            if name.startswith("_"):
                raise AttributeError(name)
            row = by_records(name)
            if row is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            return self.records if self.backend == row.name else None

    def records_as(self, kind: type[_R]) -> _R | None:
        """The run's records if they are a ``kind`` (the back end's own typed access), else None."""
        return self.records if isinstance(self.records, kind) else None

    # -- verdict and shortcuts ----------------------------------------------------------------
    @property
    def ok(self) -> bool:
        """True when tracing succeeded, every check passed and the back end's records hold nothing it counts as a
        failure (records with an ``ok`` of their own: a compiled run's graph breaks and recompilations)."""
        records_ok = getattr(self.records, "ok", True) is not False
        return self.error is None and bool(self.graphs) and (self.check is None or self.check.ok) and records_ok

    @property
    def from_file(self) -> bool:
        """Whether the run was read back from a saved file (``tj.load``: a ``.pt`` or a ``.pt2``), nothing run: its
        options are what the file was read with (``RecordedArchiveOptions``)."""
        return self.source == "file"

    @property
    def graph(self) -> Graph | None:
        """The graph of ``forward`` (or of the single traced method)."""
        if "forward" in self.graphs:
            return self.graphs["forward"]
        return next(iter(self.graphs.values()), None)

    @property
    def hazards(self) -> list[Finding]:
        """Alias of :attr:`findings`."""
        return self.findings

    @property
    def user_warnings(self) -> list[TraceWarning]:
        """Warnings that point at a problem (the deprecation notice excluded)."""
        return [w for w in self.warnings if w.is_user_problem]

    @property
    def verdict(self) -> Verdict:
        """The badge: ``ok`` / ``warnings`` / ``check failed`` / ``failed``, with its reasons and counts."""
        return verdict_of(self)

    def draft(self) -> TraceRun:
        """Run the back end's draft of this run and join it to the run, which is returned: an export's
        ``torch.export.draft_export``, which a refused export no longer waits for (``run.export.draft_offer`` says
        what it adds): its graph, its report and the dims it locates. ``ValueError`` for a run whose back end has no
        draft, or that holds no live model (read from JSON or a file)."""
        action = backend_row(self.backend).action("draft")
        if action is None:
            raise ValueError(
                f"a {self.capture_noun} run has no draft: run.draft() runs torch.export.draft_export on an export "
                "run; export the model (tj.export(model, args)) to draft it"
            )
        drafted: TraceRun = action(self)
        return drafted

    @property
    def capture_noun(self) -> str:
        """What the run holds, in words: ``trace``, ``export`` or ``archive`` (the registry's words)."""
        row = backend_row(self.backend)
        if self.from_file:
            return next((f.noun for f in row.files), row.noun)
        return row.noun

    @property
    def check_name(self) -> str:
        """The check's name in words: torch's own (``check_trace``) for a trace, ours for an export."""
        return backend_row(self.backend).check_name

    @property
    def check_off(self) -> str:
        """The option setting that turns its back end's check off (``check_trace=False``), or ""."""
        return backend_row(self.backend).check_off

    def files(self) -> Iterator[str]:
        """Every source file the run points at (nodes' stacks, warnings, errors, the target), with repeats."""
        graphs = list(self.graphs.values())
        errors = [self.error]
        if self.check is not None:
            graphs += [c.graph for c in self.check.cases if c.graph is not None]
            errors += [c.exception for c in self.check.cases]
        stacks = {id(n.source): n.source for graph in graphs for n in graph.nodes if n.source is not None}
        for source in stacks.values():  # nodes of one line share their SourceLoc: each stack once
            yield from (frame.file for frame in source.stack)
        yield from (w.file for w in self.warnings)
        yield from (e.file for e in errors if e is not None)
        records_files = getattr(self.records, "files", None)
        if callable(records_files):  # the places the back end's records name (a compiled run's breaks, guards)
            yield from records_files()
        yield self.target.file

    def warnings_of(self, category: str) -> list[TraceWarning]:
        return [w for w in self.warnings if w.category == category]

    def summary(self) -> str:
        """One line: verdict, node count, warnings, divergences."""
        if self.error is not None:
            return f"{self.target.name}: FAILED ({self.error.type}: {first_line(self.error.message)})"
        g = self.graph
        parts = [plural(len(g), "node") if g is not None else "no graph"]
        # named as the explorer's header names them: distinct warnings, findings, probe disagreements
        problems = self.verdict.problems_text
        if problems:
            parts.append(problems)
        if self.check is not None:
            roots = sum(len(c.diff.roots) for c in self.check.cases if c.diff)
            if self.check.ok and not self.check.cases:
                parts.append("nothing to check")
            elif self.check.ok:
                parts.append(f"check passed ({self.check.passed_text()})")
            else:
                mism = len(self.check.output_mismatches)
                raised = sum(1 for c in self.check.cases if c.exception is not None)
                if roots or mism or not raised:
                    parts.append(
                        f"check FAILED: {plural(roots, 'root divergence')}, "
                        f"{plural(mism, 'output mismatch', 'output mismatches')}"
                    )
                else:  # the check's runs raised (an export's guard, a re-trace that failed): nothing to diverge
                    parts.append(f"check FAILED: {plural(raised, 'input set')} raised")
        else:
            parts.append("read from a file, nothing run" if self.from_file else "not checked")
        if self.probe is not None and not self.probe.ok:
            parts.append(f"probe: {plural(len(self.probe.findings), 'finding')}")
        verdict = "ok" if self.ok else "problems"
        return f"{self.target.name}: {verdict}; " + ", ".join(parts)

    def __repr__(self) -> str:
        return f"<TraceRun {self.summary()}>"

    def to_dot(self, method: str | None = None, **options: Any) -> str:
        """DOT source of a method's graph (``forward`` by default); see :func:`jupyter_tracejit.render.dot.to_dot`."""
        return str(_presenter("dot")(self, method, **options))

    def to_html(self, *, graph: bool = True) -> str:
        """A static HTML fragment: summary, error, warnings with their lines, check divergences, findings, probe,
        and each graph (inline SVG when the Graphviz ``dot`` binary is installed, else the IR text); everything
        escaped. The ``text/html`` fallback where the explorer cannot render (nbconvert, GitHub)."""
        return str(_presenter("html")(self, graph=graph))

    def save_html(self, path: str | os.PathLike[str]) -> Path:
        """Write a single self-contained, offline HTML file with the read-only trace explorer (graph, inspector,
        warnings, divergence stepper) to send to someone; returns the path. See :mod:`jupyter_tracejit.render.page`."""
        return Path(_presenter("page")(self, path))

    # -- JSON -----------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """A versioned, JSON-ready dict (``run.schema.json``); ``TraceRun.from_json(run.to_json())`` gives back an
        equal run whose ``to_json()`` is the same, key for key. ``export`` is left out when None: a trace's JSON
        is what it was before export runs existed (the schema's ``export`` is optional)."""
        fields = super().to_json()
        for optional in ("records", "compared", "diff_against"):
            if fields.get(optional, ...) is None:
                del fields[optional]
        return {
            "kind": JSON_KIND,
            "schema_version": SCHEMA_VERSION,
            "ok": self.ok,
            "summary": self.summary(),
            "verdict": self.verdict.to_json(),
            **fields,
        }

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TraceRun:
        """Read a run saved as JSON: ``json.dump(run.to_json(), f)``, ``tracejit --json``, or the explorer's JSON
        download. A file that is not such a run (not JSON, cut short, edited so that it no longer matches the run
        schema or its ids point nowhere) raises one ``ValueError`` naming the file and where it is wrong."""
        try:
            mode = os.stat(path).st_mode
        except OSError:
            pass  # open says why
        else:
            if not stat.S_ISREG(mode):  # a FIFO would wait for a writer, /dev/zero never end
                raise ValueError(f"{os.fspath(path)}: not a jupyter-tracejit run: not a regular file")
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{os.fspath(path)}: not a jupyter-tracejit run: not UTF-8 text ({exc.reason})") from None
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{os.fspath(path)}: not valid JSON ({exc}); "
                "the file was probably cut short or edited: save the run again"
            ) from None
        except RecursionError:
            raise ValueError(f"{os.fspath(path)}: not a jupyter-tracejit run: its JSON nests too deeply") from None
        try:
            return cls.from_json(data)
        except ValueError as exc:
            raise ValueError(f"{os.fspath(path)}: {exc}") from None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TraceRun:
        """Read back :meth:`to_json`. Data that is not such a run raises one ``ValueError`` saying where it is
        wrong (a JSON pointer): it is checked against the run schema and its ids first (:mod:`.validate`), so what
        loads can be summarized, rendered and explored."""
        if not isinstance(data, Mapping) or data.get("kind") != JSON_KIND:
            raise ValueError(
                "not a jupyter-tracejit run: expected a dict with kind "
                f"{JSON_KIND!r} (as written by TraceRun.to_json())"
            )
        data = upgrade_run(data)
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            # a repr only of a plain value: another may be huge, or nested too deeply to write
            shown = (
                repr(version) if isinstance(version, (int, str, type(None))) else f"of type {type(version).__name__}"
            )
            raise ValueError(
                f"this run was saved with schema_version {shown}, but this jupyter-tracejit reads "
                f"version {SCHEMA_VERSION}; re-run the trace, or install the version that wrote it"
            )
        check_run(data)
        run = super().from_json(data)
        if run.records is not None:  # read as its back end's records type
            records_class = backend_row(run.backend).records_class()
            run.records = records_class.from_json(run.records) if records_class is not None else None
        return run
