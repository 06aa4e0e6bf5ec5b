"""What a run's badge says and why (:class:`Verdict`, :func:`verdict_of`): ``ok`` / ``warnings`` / ``check failed``
/ ``failed``, with one reason per line. Torch-free, as the run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .categories import WARNING_CATEGORIES
from .jsonio import JsonRecord

if TYPE_CHECKING:
    from .run import TraceRun


@dataclass
class Verdict(JsonRecord):
    """What the explorer's badge (and the saved HTML) says about a run, and why.

    ``error`` (red): tracing failed, or torch's check failed. ``warning`` (amber): the trace is right for these
    inputs, but a tracer warning, a finding (severity warning or error) or the generalization probe says it may be
    wrong for others. ``ok`` (green) only when nothing says so (warnings that are not about the trace, such as a
    library's deprecation notice, are counted but leave it green). A portability finding (a device baked into the
    graph) is a warning only when it can matter for this run (inputs, parameters or the target device elsewhere);
    otherwise it is a note among the reasons, and the badge stays green.
    """

    level: str
    #: the badge's text: ``ok``, ``warnings``, ``check failed`` or ``failed``
    label: str
    #: why, one line each, the most serious first (the badge's tooltip)
    reasons: list[str] = field(default_factory=list)
    #: distinct tracer warnings (the deprecation notice excluded): the Warnings tab's first count
    warnings: int = 0
    #: findings of severity warning or error
    findings: int = 0
    #: probe cases that disagree with eager or fail in the trace
    probe: int = 0
    #: root divergences over every check case
    roots: int = 0

    @property
    def problems(self) -> int:
        """What the Warnings tab counts: tracer warnings, findings and probe disagreements."""
        return self.warnings + self.findings + self.probe

    @property
    def problems_text(self) -> str:
        """The same counts named apart, as the explorer's header and the summary say them: ``1 warning, 2 findings``
        (a finding is ours, not torch's: counted as warnings they read as three of torch's); empty when none.
        ``TraceRunModel.problemsText`` in labextension/src/model/run.ts mirrors it."""
        counts = ((self.warnings, "warning"), (self.findings, "finding"), (self.probe, "probe disagreement"))
        return ", ".join(_plural(n, word) for n, word in counts if n)


#: warning categories that say nothing about whether the trace is right (a library's own warnings, a module that was
#: already TorchScript): counted with the others, but they leave the badge green (the table: core/categories.py)
NOT_ABOUT_THE_TRACE = frozenset(c.name for c in WARNING_CATEGORIES if c.counted and not c.about_the_trace)


def first_line(text: str) -> str:
    """The first line of a message (``""`` for an empty one: a saved run may hold one)."""
    return (text.splitlines() or [""])[0]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith(('ch', 'sh', 's', 'x')) else 's'}"


def unchecked_words(run: TraceRun) -> str:
    """Why a run has no check, in words: read from a file (nothing ran), or the check was off (the trace's
    ``check_trace=False``)."""
    if run.from_file:
        return "read from a saved file, nothing run"
    return f"not checked ({run.check_off or f'{run.check_name} was off'})"


def verdict_of(run: TraceRun) -> Verdict:
    """The badge of a run: ``ok`` / ``warnings`` / ``check failed`` / ``failed``, with its reasons and counts."""
    user = run.user_warnings
    serious = [f for f in run.findings if f.is_problem]
    probe = run.probe.findings if run.probe is not None else []
    roots = sum(len(c.diff.roots) for c in run.check.cases if c.diff) if run.check is not None else 0
    counts = {"warnings": len(user), "findings": len(serious), "probe": len(probe), "roots": roots}
    reasons: list[str] = []
    # an exception inside the check is the run's error, as torch raises there and returns nothing
    check_raised = run.error is not None and run.error.phase == "check"
    if run.error is not None:
        failed = "torch's check raised" if check_raised else "tracing failed"
        reasons.append(f"{failed}: {run.error.type}: {first_line(run.error.message)}")
    elif not run.graphs:
        reasons.append("tracing recorded no graph")
    if run.check is not None and not run.check.ok and not check_raised:
        mismatches = len(run.check.output_mismatches)
        raised = sum(1 for c in run.check.cases if c.exception is not None)
        if not roots and not mismatches and raised:
            # the captured program refused an input set (an export's guard failed): nothing diverged, it raised
            reasons.append(f"{run.check_name} failed: {_plural(raised, 'input set')} raised")
        else:
            reasons.append(
                f"{run.check_name} failed: {_plural(roots, 'root divergence')}, "
                f"{_plural(mismatches, 'output mismatch')}"
            )
    reasons += [f"{f.severity}: {f.title}" for f in serious]
    hazards = [w for w in user if w.category not in NOT_ABOUT_THE_TRACE]
    if hazards:
        by_category: dict[str, int] = {}
        for w in hazards:
            by_category[w.category] = by_category.get(w.category, 0) + 1
        kinds = ", ".join(f"{c} ×{n}" if n > 1 else c for c, n in by_category.items())
        reasons.append(f"{_plural(len(hazards), 'tracer warning')} ({kinds})")
    if probe:
        assert run.probe is not None
        reasons.append(f"probe: {len(probe)} of {len(run.probe.cases)} derived input sets disagree with eager or fail")
    if check_raised or (run.error is None and run.check is not None and not run.check.ok):
        return Verdict("error", "check failed", reasons, **counts)
    if run.error is not None or not run.graphs:
        return Verdict("error", "failed", reasons, **counts)
    others = len(user) - len(hazards)
    notes = [f"{_plural(others, 'other warning')}, not about the trace"] if others else []
    notes += [
        f"portability: {f.title} (fine where it was traced; pass target_device to check another device)"
        for f in run.findings
        if f.portability and not f.is_problem
    ]
    if reasons:
        return Verdict("warning", "warnings", reasons + notes, **counts)
    if run.check is not None and not run.check.cases:
        checked = "nothing to check (no check_inputs, no dynamic ranges)"
    elif run.check is not None:
        checked = f"{run.check_name} passed on {run.check.passed_text()}"
    else:
        checked = unchecked_words(run)
    return Verdict("ok", "ok", [f"nothing says the {run.capture_noun} is wrong; {checked}", *notes], **counts)


__all__ = ["NOT_ABOUT_THE_TRACE", "Verdict", "first_line", "unchecked_words", "verdict_of"]
