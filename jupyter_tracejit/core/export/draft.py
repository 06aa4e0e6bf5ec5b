"""``torch.export.draft_export``: what it adds to a run (:func:`offer`), its report as records
(:func:`draft_report`), its result joined to the run (:func:`join_draft`), and a refused dim located by a draft's
specialisation when nothing else located it (:func:`locate_refused_dim`).

A refused export no longer waits for the draft (2-10x torch's own time): the run says a draft is offered and what it
would add (``run.export.draft_offer``), and ``run.draft()`` (or the explorer's draft request) runs it later, on the
same request, joining its graph and report to the run when it arrives.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import TraceError
from ..hazards import Finding
from ..run import TraceRun
from ..source import is_torch_file, source_line
from .draft_report import draft_report
from .graph import graph_from_exported_program
from .places import PlaceRecorder
from .records import DraftOffer, ExportReport
from .report import report_of
from .shape_env import specialization


def offer(error: TraceError) -> DraftOffer:
    """The draft a refused export offers: what it would add to the run beside the refusal already shown."""
    adds = [
        "the graph export would have made, what it refused deferred to runtime checks (a draft to read, not a "
        "program to use)",
        "draft_export's report: each guard it added and each data-dependent expression it met, at its line",
    ]
    if (
        error.tag == "constraint_violation"
        and "became the constant" not in error.hint
        and "export needs" not in (error.hint)
    ):
        adds.append("the line that fixed the refused dim, which export did not name")
    return DraftOffer("offered", adds)


def draft_crashed(crashed: BaseException | None, *, exported_ok: bool) -> Finding:
    """The note of a draft that could not run: export's own result stands."""
    what = f"{type(crashed).__name__}: {str(crashed).splitlines()[0] if str(crashed) else ''}"
    return Finding(
        kind="draft_failure",
        severity="info",
        title="draft_export could not run",
        message=f"torch.export.draft_export raised {what.strip()}; "
        + ("the export itself succeeded and stands." if exported_ok else "export's own error stands."),
        hint="Nothing to do for the draft; torch's draft export does not handle every program (torch.cond, for one).",
    )


def join_draft(
    run: TraceRun, draft_ep: Any, log: str, *, exported_ok: bool, places: PlaceRecorder | None = None
) -> None:
    """The draft's result joined to the run: its report in ``run.export.draft`` (a note when export accepted the
    program as it is); when export refused it, the draft's graph and records (what export would have recorded) with
    the refusal's advice kept, and the refused dim located by the draft when nothing else located it."""
    report = run.records_as(ExportReport) or ExportReport(log=log)
    failures = draft_report(draft_ep) or []
    report.draft = failures
    if report.draft_offer is not None:
        report.draft_offer.status = "ran"
    if exported_ok:
        if failures:
            run.findings.append(
                Finding(
                    kind="draft_failure",
                    severity="info",
                    title="draft_export reported what export did not need",
                    message=f"draft_export reported {len(failures)} item(s) "
                    f"({', '.join(sorted({f.failure_type for f in failures}))}) on a program export "
                    "accepted as it is: the export's own result stands.",
                    hint="Nothing to do: the export succeeded; the draft's items are in run.export.draft.",
                )
            )
        return
    # export failed: the draft's graph is what export would have recorded, with its failures deferred
    graph = run.graphs["forward"] = graph_from_exported_program(draft_ep)
    drafted: ExportReport = report_of(draft_ep, graph=graph, log=report.log, places=places)
    drafted.draft, drafted.advice, drafted.draft_offer = failures, report.advice, report.draft_offer
    run.records = drafted
    if run.error is not None and not report.advice:
        locate_refused_dim(run.error, drafted)


def locate_refused_dim(error: TraceError, report: ExportReport) -> None:
    """Export refused a ``Dim`` ("Constraints violated") without naming a line of the user's; the draft's
    specialisation of that dim names it. The error moves to that line, its hint saying which size became which
    constant. A range only some of whose sizes the code takes ("Not all values of n ... satisfy the generated
    guard") is put at the draft's first guard added in the user's code, the hint quoting that guard."""
    if error.tag != "constraint_violation":
        return
    # the user's line of a draft guard: where the code called into torch's (nn.LSTM specialises the length inside)
    added_at = {
        f.expr: (f.file, f.line)
        for f in reversed(report.draft or [])
        if f.failure_type == "guard_added" and f.file and not is_torch_file(f.file)
    }
    for guard in report.guards_of("specialization"):
        spec = specialization(guard.expr)
        at = (guard.file, guard.line) if guard.file else added_at.get(guard.expr)
        if spec is None or at is None:
            continue
        name, value = spec
        symbol = report.symbol(name)
        what = symbol.sources[0] if symbol is not None and symbol.sources else name
        error.file, error.line = at
        error.code = guard.code if guard.file else source_line(*at)
        error.hint = f"{what} became the constant {value} on this line ({guard.expr}). {error.hint}"
        return
    if "Not all values of" not in error.message:
        return
    # a range only some of whose sizes the code takes: the draft's first guard added at a line of the user's
    for failure in report.draft or []:
        if failure.failure_type != "guard_added" or not failure.file or is_torch_file(failure.file):
            continue
        sources = [
            f"{name} is {symbol.sources[0]}"
            for name in dict.fromkeys(re.findall(r"\b[su]\d+\b", failure.expr))
            if (symbol := report.symbol(name)) is not None and symbol.sources
        ]
        error.file, error.line = failure.file, failure.line
        error.code = source_line(failure.file, failure.line)
        where = f" ({', '.join(sources)})" if sources else ""
        error.hint = f"This line works for only some sizes: export needs {failure.expr}{where}. {error.hint}"
        return


__all__ = ["draft_crashed", "draft_report", "join_draft", "locate_refused_dim", "offer"]
