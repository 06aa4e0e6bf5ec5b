"""The findings an export's records say: a dim specialised, a size read from a tensor's value, the training-mode
rules of the trace worded for an export."""

from __future__ import annotations

import re

from .. import hazards
from ..graph import Graph
from ..hazards import Finding
from ..words import plural
from .advice import possessive
from .records import ExportGuard, ExportReport
from .shape_env import specialization


def _at(guard: ExportGuard) -> str:
    if not guard.line:
        return ""
    code = f" (`{guard.code}`)" if guard.code else ""
    return f" at line {guard.line}{code}"


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def training_mode_findings(report: ExportReport, graph: Graph) -> list[Finding]:
    """The trace's training-mode rules (:mod:`..hazards`) on an export's graph, worded for an export: a dropout left
    in training mode (random ops in the program) and a BatchNorm exported in training mode (batch statistics, and
    the running statistics written on every call: buffers the program mutates). The fix is the same: export in
    eval mode."""
    found = hazards.reworded(
        hazards.nondeterministic_nodes(graph, torch_flags_top_level=True),
        message=lambda r: (
            f"The exported program contains random ops (a dropout in training mode, ...) at "
            f"{plural(len(r.node_ids), 'place')}: each call gives other results."
        ),
        hint="Export in eval mode (model.eval(), module_mode='eval', --eval) so dropout is off, unless the "
        "randomness is intended.",
    )
    written = [b for b in report.mutated_buffers if b.rsplit(".", 1)[-1] in ("running_mean", "running_var")]
    also = f" (buffers the program writes: {', '.join(written[:4])}{', ...' if len(written) > 4 else ''})"
    found += hazards.reworded(
        hazards.train_mode_batchnorm(graph, 0),
        title=lambda b: (
            f"BatchNorm exported in training mode ({len(b.node_ids)} layer{'s' if len(b.node_ids) != 1 else ''})"
        ),
        message="The program's batch_norm ops have training=True: they normalise with each batch's statistics "
        f"and update running_mean/running_var on every call{also if written else ''}.",
        hint="Export in eval mode for inference (model.eval(), module_mode='eval', --eval).",
    )
    return found


def _where(guard: ExportGuard) -> str:
    if guard.library:
        lib = f"{guard.library_file.split('site-packages/')[-1]}:{guard.library_line}"
        caller = f", called from line {guard.line}" + (f" (`{guard.code}`)" if guard.code else "") if guard.line else ""
        return f" in {possessive(guard.library)} code ({lib}){caller}"
    return _at(guard)


def _specialized_findings(report: ExportReport) -> list[Finding]:
    findings: list[Finding] = []
    done: set[str] = set()
    for guard in report.guards_of("specialization"):
        spec = specialization(guard.expr)
        if spec is None or spec[0] in done:
            continue
        name, value = spec
        done.add(name)
        symbol = report.symbol(name)
        what = symbol.sources[0] if symbol is not None and symbol.sources else name
        advice = next((a for a in report.advice if a.kind == "specialized" and a.symbol == name), None)
        fixes = " ".join(f"({i}) {fix.text}" for i, fix in enumerate(advice.fixes[:3], 1)) if advice else ""
        findings.append(
            Finding(
                kind="dim_specialized",
                severity="warning",
                title=f"{what} became the constant {value}",
                message=(
                    f"{what} became {value}{_where(guard)}: the dimension was marked dynamic, but the code used its "
                    f"value as a Python int (a loop, a branch, a size computed in Python), so export specialised it "
                    f"({guard.expr}) and the program only accepts size {value} there. With Dim.AUTO this happens "
                    f"silently: the dim just vanishes from range_constraints."
                ),
                hint=f"Fixes, best first: {fixes}"
                if fixes
                else (
                    "Rewrite that code with tensor operations that do not read the size as an int (no Python loop "
                    "or branch over x.size(...)), or say the dim is static (Dim.STATIC, or leave it out of "
                    "dynamic_shapes) so the program's signature says what it accepts."
                ),
                node_ids=list(guard.node_ids),
            )
        )
    return findings


def _unbacked_findings(report: ExportReport, graph: Graph | None) -> list[Finding]:
    findings: list[Finding] = []
    for symbol in report.symbols:
        if symbol.kind != "unbacked":
            continue
        sized = []
        if graph is not None:
            sized = [
                n.id
                for n in graph.nodes
                if any(
                    isinstance(d, str) and _mentions(d, symbol.name)
                    for v in n.outputs
                    for d in (graph.values[v].shape or ())
                )
            ]
        if not sized:
            continue  # an unbacked value not used as a size: nothing depends on it shape-wise
        asserts = [g for g in report.guards_of("runtime_assert") if _mentions(g.expr, symbol.name)]
        at = next((g for g in asserts if g.line), None)
        assert_ids = [i for g in asserts for i in g.node_ids]
        where = _at(at) if at is not None else ""
        checks = "; ".join(dict.fromkeys(g.expr for g in asserts)) or "nothing"
        findings.append(
            Finding(
                kind="unbacked_symbol",
                severity="info",
                title=f"size {symbol.name} comes from a tensor's value",
                message=(
                    f"{symbol.name} is a value read from a tensor{where} (.item(), nonzero(), ...) and used as a "
                    f"size: export cannot know it, so the output's shape depends on the data. The program checks it "
                    f"at run time ({checks})."
                ),
                hint=(
                    "Fine if intended. To bound it, add torch._check(n <= ...) after reading it; to keep the shape "
                    "static, compute with a mask (torch.where) instead of a data-dependent size."
                ),
                node_ids=list(dict.fromkeys(assert_ids + sized)),
            )
        )
    return findings


def export_findings(report: ExportReport, graph: Graph | None) -> list[Finding]:
    """``dim_specialized`` (warning: the program is silently only right for one size, and export said nothing when
    the dim was ``Dim.AUTO``; its hint the advice's fixes when the report has advice for it) and ``unbacked_symbol``
    (info: a size read from a tensor's value is checked by a runtime assert, so another value fails loudly or works,
    never silently wrong; worth knowing, not a problem); then the training-mode rules
    (:func:`training_mode_findings`)."""
    findings = _specialized_findings(report) + _unbacked_findings(report, graph)
    if graph is not None:
        findings.extend(training_mode_findings(report, graph))
    return findings


__all__ = ["export_findings", "training_mode_findings"]
