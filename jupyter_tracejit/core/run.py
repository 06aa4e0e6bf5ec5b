"""``TraceRun``: everything one call of ``tj.trace`` / ``tj.trace_module`` found, as data."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .check import CheckReport
from .errors import TraceError
from .graph import Graph
from .hazards import Finding
from .jsonio import NOT_IN_JSON, Decoders, JsonRecord, list_of
from .probe import ProbeReport
from .tracer_warnings import TraceWarning

#: bump when the JSON layout changes; ``from_json`` refuses other versions with a clear message
SCHEMA_VERSION = 1
JSON_KIND = "jupyter-tracejit.run"


#: how runs are presented (DOT, an HTML fragment, the offline page), registered by :mod:`jupyter_tracejit.render`:
#: the core draws nothing itself and never imports presentation code
_PRESENTERS: dict[str, Callable[..., Any]] = {}


def register_presenter(name: str, present: Callable[..., Any]) -> None:
    """Make ``run.to_dot()`` (``"dot"``), ``run.to_html()`` (``"html"``) or ``run.save_html()`` (``"page"``) work."""
    _PRESENTERS[name] = present


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
    }

    # -- verdict and shortcuts ----------------------------------------------------------------
    @property
    def ok(self) -> bool:
        """True when tracing succeeded and every check passed."""
        return self.error is None and bool(self.graphs) and (self.check is None or self.check.ok)

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

    def warnings_of(self, category: str) -> list[TraceWarning]:
        return [w for w in self.warnings if w.category == category]

    def summary(self) -> str:
        """One line: verdict, node count, warnings, divergences."""
        if self.error is not None:
            return f"{self.target.name}: FAILED ({self.error.type}: {self.error.message.splitlines()[0]})"
        g = self.graph
        parts = [f"{len(g)} nodes" if g is not None else "no graph"]
        uw = self.user_warnings
        if uw:
            parts.append(f"{sum(w.count for w in uw)} warnings ({len(uw)} distinct)")
        if self.check is not None:
            roots = sum(len(c.diff.roots) for c in self.check.cases if c.diff)
            if self.check.ok:
                parts.append(f"check passed ({len(self.check.cases)} input set(s))")
            else:
                mism = len(self.check.output_mismatches)
                parts.append(f"check FAILED: {roots} root divergence(s), {mism} output mismatch(es)")
        else:
            parts.append("not checked")
        if self.probe is not None and not self.probe.ok:
            parts.append(f"probe: {len(self.probe.findings)} finding(s)")
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
        equal run whose ``to_json()`` is the same, key for key."""
        return {
            "kind": JSON_KIND,
            "schema_version": SCHEMA_VERSION,
            "ok": self.ok,
            "summary": self.summary(),
            **super().to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TraceRun:
        if not isinstance(data, Mapping) or data.get("kind") != JSON_KIND:
            raise ValueError(
                "not a jupyter-tracejit run: expected a dict with kind "
                f"{JSON_KIND!r} (as written by TraceRun.to_json())"
            )
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(
                f"this run was saved with schema_version {version!r}, but this jupyter-tracejit reads "
                f"version {SCHEMA_VERSION}; re-run the trace, or install the version that wrote it"
            )
        return super().from_json(data)
