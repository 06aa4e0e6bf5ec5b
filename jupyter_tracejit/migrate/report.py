"""What a migration found per model (:class:`ModelResult`), the whole report (:class:`MigrationReport`, the JSON a
later run compares against with ``--baseline``) and what regressed against such a baseline (:func:`regressions`).

Torch-free: a report read back from JSON needs nothing but this module. A result is made from an export run
(``tj.export(..., compare_trace=True)``) by :func:`result_of`.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..core.errors import TraceError
from ..core.jsonio import Decoders, JsonRecord, list_of
from ..core.run import TraceRun
from ..core.verdict import first_line
from ..render.location import basename

#: the report's format name and version (``format`` / ``version`` of its JSON)
FORMAT = "tracejit-migrate"
VERSION = 1
#: a model's status, best first: its export is ``ok``, has ``warnings`` (a dim specialised...), its check failed,
#: export refused it, or it could not be run (its file did not import, its inputs did not evaluate)
STATUSES = ("ok", "warnings", "check_failed", "refused", "not_run")
STATUS_WORDS = {
    "ok": "ok",
    "warnings": "warnings",
    "check_failed": "check failed",
    "refused": "refused",
    "not_run": "not run",
}
#: a specialisation's expression: ``Eq(s77, 3)``
_SPECIALIZATION = re.compile(r"^Eq\((\w+), (-?\d+)\)$")


def line_label(file: str, line: int) -> str:
    """``model.py:12`` (the file's name and the line), or ``no line`` where torch gave none."""
    return f"{basename(file)}:{line}" if file else "no line"


@dataclass
class Place(JsonRecord):
    """Where export refused, or a dim specialised: the user's file and line (empty when torch gave none)."""

    file: str = ""
    line: int = 0
    code: str = ""

    @property
    def label(self) -> str:
        return line_label(self.file, self.line)


@dataclass
class Specialized(JsonRecord):
    """A dim the code made a constant: ``x.size()[0]`` became 3 at a line."""

    dim: str
    value: int
    place: Place = field(default_factory=Place)

    _json_decoders: ClassVar[Decoders] = {"place": Place.from_json}


@dataclass
class Coverage(JsonRecord):
    """The trace beside the export: how many of the trace's ops the export matched."""

    matched: int
    trace_ops: int
    #: the share matched of those export could have matched (``CaptureComparison.coverage``)
    share: float
    lines: int = 0


@dataclass
class ModelResult(JsonRecord):
    """One row of the report."""

    name: str
    target: str
    status: str
    #: the verdict's reasons (the explorer badge's tooltip)
    reasons: list[str] = field(default_factory=list)
    #: why export refused (or the model did not run): the run's error, its message's first line, at its line
    refusal: TraceError | None = None
    specialized: list[Specialized] = field(default_factory=list)
    #: ``passed`` / ``failed`` / ``none`` (nothing to check) / ``not_run`` (export refused), and its words
    check: str = "not_run"
    check_text: str = ""
    coverage: Coverage | None = None
    #: why there is no coverage (the trace failed too, ...)
    coverage_note: str = ""
    #: the trace's own summary (the trace is the baseline of the migration)
    trace: str = ""
    #: seconds: ``export`` (torch.export), ``check``, ``draft``, ``trace`` (with the matching), ``total``
    timings: dict[str, float] = field(default_factory=dict)
    #: the --dynamic specs it was exported with (or torch's form as text)
    dynamic: list[str] = field(default_factory=list)
    #: the model's explorer page, relative to the report page (empty when no page was written)
    page: str = ""

    @property
    def refusal_label(self) -> str:
        """The refusal's line (``model.py:12``, ``no line``); ``""`` without a refusal."""
        return line_label(self.refusal.file, self.refusal.line) if self.refusal is not None else ""

    _json_decoders: ClassVar[Decoders] = {
        "refusal": TraceError.from_json,
        "specialized": list_of(Specialized.from_json),
        "coverage": Coverage.from_json,
    }

    @property
    def status_words(self) -> str:
        return STATUS_WORDS.get(self.status, self.status)


@dataclass
class MigrationReport(JsonRecord):
    """Every model's row, with what ran them."""

    models: list[ModelResult] = field(default_factory=list)
    torch_version: str = ""
    created: str = ""
    format: str = FORMAT
    version: int = VERSION

    _json_decoders: ClassVar[Decoders] = {"models": list_of(ModelResult.from_json)}

    def counts(self) -> dict[str, int]:
        found = {s: 0 for s in STATUSES}
        for m in self.models:
            found[m.status] = found.get(m.status, 0) + 1
        return {s: n for s, n in found.items() if n}

    def summary(self) -> str:
        counts = ", ".join(f"{n} {STATUS_WORDS.get(s, s)}" for s, n in self.counts().items())
        return f"{len(self.models)} model{'s' if len(self.models) != 1 else ''}: {counts or 'none run'}"

    @classmethod
    def read(cls, data: Any, source: str) -> MigrationReport:
        """A saved report (``--json``), or ``ValueError`` naming what is wrong with it."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{source} is not a tracejit migrate report (write one with tracejit migrate --json)")
        if data.get("version") != VERSION:
            raise ValueError(
                f"{source} is a tracejit migrate report of version {data.get('version')!r}; this tracejit reads "
                f"version {VERSION}: write the baseline again with this version"
            )
        try:
            return cls.from_json(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{source} is a damaged tracejit migrate report ({type(exc).__name__}: {exc})") from None


def result_of(run: TraceRun, name: str, target: str, dynamic: list[str]) -> ModelResult:
    """The row of an export run made with ``compare_trace=True``."""
    verdict = run.verdict
    error = run.error
    refusal = None
    if error is not None and error.phase != "check":
        refusal = dataclasses.replace(error, message=first_line(error.message), traceback="")
    check, check_text = _check(run)
    if refusal is not None:
        status = "not_run" if error is not None and error.phase == "arguments" else "refused"
    else:
        status = {"ok": "ok", "warnings": "warnings", "check failed": "check_failed"}.get(verdict.label, "refused")
    coverage, note, trace = None, "", ""
    if run.compared is not None:
        c = run.compared.comparison
        coverage = Coverage(len(c.matched), c.trace_ops, round(c.coverage, 4), len(c.lines))
        trace = run.compared.trace_summary
    else:
        note = next((f.message for f in run.findings if f.kind == "compare_trace"), "no comparison with a trace")
    return ModelResult(
        name=name,
        target=target,
        status=status,
        reasons=list(verdict.reasons),
        refusal=refusal,
        specialized=specializations(run),
        check=check,
        check_text=check_text,
        coverage=coverage,
        coverage_note=note,
        trace=trace,
        timings={k: round(v, 4) for k, v in run.timings.items()},
        dynamic=dynamic,
    )


def not_run(name: str, target: str, problem: str, dynamic: list[str]) -> ModelResult:
    """The row of a model that could not be run (its file did not import, its inputs did not evaluate)."""
    head, _, rest = problem.partition("\n")
    return ModelResult(
        name=name,
        target=target,
        status="not_run",
        reasons=[head],
        refusal=TraceError("UsageError", head, phase="arguments", tag="not_run", hint=rest.strip()),
        coverage_note="the model did not run",
        dynamic=dynamic,
    )


def _check(run: TraceRun) -> tuple[str, str]:
    check = run.check
    if check is None:
        return "not_run", "not run" if run.error is not None else "off"
    if not check.cases:
        return "none", "nothing to check"
    if check.ok:
        return "passed", f"passed ({check.passed_text()})"
    failed = sum(1 for c in check.cases if not c.ok)
    return "failed", f"failed ({failed} of {len(check.cases)} input sets)"


def specializations(run: TraceRun) -> list[Specialized]:
    """The dims the export made constants, each with the input size it is and its line (the export's records)."""
    records = getattr(run, "records", None)
    guards = getattr(records, "guards", None) or []
    symbols = {s.name: s for s in getattr(records, "symbols", None) or []}
    found: list[Specialized] = []
    seen: set[str] = set()
    for guard in guards:
        m = _SPECIALIZATION.match(guard.expr) if guard.kind == "specialization" else None
        if m is None or m[1] in seen:
            continue
        seen.add(m[1])
        symbol = symbols.get(m[1])
        dim = symbol.sources[0] if symbol is not None and symbol.sources else m[1]
        found.append(Specialized(dim, int(m[2]), Place(guard.file, guard.line, guard.code)))
    return found


# -- against a baseline ----------------------------------------------------------------------------------------
@dataclass
class Change:
    """How one model compares with the baseline: ``regressed`` / ``improved`` / ``same`` / ``new``, and why."""

    name: str
    kind: str
    reasons: list[str] = field(default_factory=list)


def compare(report: MigrationReport, baseline: MigrationReport, coverage_drop: float = 0.01) -> list[Change]:
    """Each model of ``report`` against the same name in ``baseline``. A regression: a worse status (ok ->
    warnings -> check failed -> refused -> not run), a dim specialised that was not, or the trace's ops matched
    falling by more than ``coverage_drop`` (a share). Timings never regress (they are too noisy to gate on)."""
    old = {m.name: m for m in baseline.models}
    changes = []
    for m in report.models:
        before = old.get(m.name)
        if before is None:
            changes.append(Change(m.name, "new", ["not in the baseline"]))
            continue
        worse, better = _differences(before, m, coverage_drop)
        kind = "regressed" if worse else "improved" if better else "same"
        changes.append(Change(m.name, kind, worse or better))
    return changes


def _rank(status: str) -> int:
    return STATUSES.index(status) if status in STATUSES else len(STATUSES)


def _differences(before: ModelResult, now: ModelResult, coverage_drop: float) -> tuple[list[str], list[str]]:
    worse: list[str] = []
    better: list[str] = []
    if _rank(now.status) != _rank(before.status):
        where = f" at {now.refusal_label}" if now.refusal is not None and now.status == "refused" else ""
        text = f"was {before.status_words}, now {now.status_words}{where}"
        (worse if _rank(now.status) > _rank(before.status) else better).append(text)
    had = {s.dim for s in before.specialized}
    has = {s.dim for s in now.specialized}
    worse += [f"{s.dim} now specialised to {s.value} at {s.place.label}" for s in now.specialized if s.dim not in had]
    better += [f"{dim} no longer specialised" for dim in sorted(had - has)]
    if before.coverage is not None and now.coverage is not None:
        drop = before.coverage.share - now.coverage.share
        text = f"trace ops matched {before.coverage.share:.0%} -> {now.coverage.share:.0%}"
        if drop > coverage_drop:
            worse.append(text)
        elif -drop > coverage_drop:
            better.append(text)
    return worse, better


__all__ = [
    "FORMAT",
    "STATUSES",
    "Change",
    "Coverage",
    "MigrationReport",
    "ModelResult",
    "Place",
    "Specialized",
    "compare",
    "line_label",
    "not_run",
    "result_of",
    "specializations",
]
