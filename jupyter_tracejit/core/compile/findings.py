"""What a ``torch.compile`` run found that torch does not say (:class:`~..hazards.Finding` s).

torch reports each break and each recompilation; it does not say what they cost or what the usual fix is:

- ``graph_breaks`` / ``recompilations``: the summary (how many graphs where one would do; how many compilations);
- ``skipped_function``: a break inside a loop of the compiled function made dynamo give up on the whole function
  (0 graphs of it: it runs eagerly; the worst case, which ``explain`` reports as "no breaks");
- ``break_in_loop``: a break hit several times in one call (a layer's ``forward`` in a loop of layers): its cost is
  paid that many times;
- ``break_fix``: a break of a kind with a standard fix (``print``, ``logging``, ``warnings.warn``, ``.item()``,
  numpy, ``copy.deepcopy``, a data-dependent ``if``, ``torch._dynamo.graph_break()``);
- ``small_graph``: a graph of fewer than :data:`SMALL_GRAPH_OPS` ops between two breaks;
- ``specialized_dim``: a size compiled as a constant, compiled again call after call;
- ``call_form``: later calls that pass their inputs otherwise than the first (positional where it used keywords):
  they compile again for that alone;
- ``recompile_limit``: a function torch stopped compiling after hitting its limit (it runs eagerly from then on);
- ``side_effect``: a plain attribute of the model (``self.calls``) the forward changes: dynamo replays the write
  after the graph, and guards on the value it read, so every call compiles again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..graph import Graph
from ..hazards import Finding
from ..words import plural
from .records import CompileReport, GraphBreak

#: A graph of fewer ops than this between two breaks cannot be faster compiled: one op is one kernel already, two
#: fuse into at most one, and the graph costs a guard check and a return to Python on each side of it (tens of
#: microseconds, what a small kernel takes).
SMALL_GRAPH_OPS = 3


def _at(gb: GraphBreak) -> str:
    return f"line {gb.line}" + (f" ({gb.code})" if gb.code else "")


def _standard_fix(gb: GraphBreak) -> tuple[str, str] | None:
    """(what the break is, its usual fix) for a break of a kind with one; None otherwise."""
    code = gb.code.replace(" ", "")
    text = f"{gb.gb_type}\n{gb.explanation}\n{gb.reason}"
    if "print(" in code or "builtin operator `print`" in text:
        return (
            "print",
            "Remove the print or move it out of forward; to keep it, add print to "
            "torch._dynamo.config.reorderable_logging_functions (dynamo then prints after the graph) or call it "
            "from a helper decorated with torch.compiler.disable.",
        )
    if gb.package == "logging" or "logging.Logger" in text:
        return (
            "a logging call",
            "Move the log call out of the compiled code, log from a helper decorated with torch.compiler.disable, "
            "or let dynamo skip the logger's methods (torch._dynamo.config.ignore_logger_methods).",
        )
    if gb.package == "warnings" or "warnings.warn" in code:
        return (
            "warnings.warn",
            "Move the warning out of the compiled code (check once, before the call), or put it in a helper "
            "decorated with torch.compiler.disable.",
        )
    if ".item()" in code or "Tensor.item" in text or "item()" in gb.explanation:
        return (
            ".item()",
            "Set torch._dynamo.config.capture_scalar_outputs = True (the value stays in the graph as a symbol), or "
            "keep the value a tensor (no .item()).",
        )
    if gb.package == "numpy" or "numpy" in text.lower() or "np." in code:
        return (
            "a numpy call",
            "Do it with torch operations on the tensor (torch.mean, not np.mean): dynamo traces those; or move it "
            "into a helper decorated with torch.compiler.disable.",
        )
    if gb.package == "copy" or "deepcopy" in code:
        return (
            "copy.deepcopy",
            "Copy outside the compiled code (before the call), or use tensor.clone() for tensors.",
        )
    if "graph_break()" in code or gb.gb_code == "GB0025":
        return ("torch._dynamo.graph_break()", "Remove the call: it only exists to break the graph.")
    if "data-dependent" in text.lower() or "generic_jump" in text:
        return (
            "a branch on a tensor's value",
            "Compute both sides and pick with torch.where, or use torch.cond(pred, true_fn, false_fn, operands).",
        )
    return None


def _fullgraph_words(first: GraphBreak) -> tuple[str, str]:
    """The breaks' summary and fix when fullgraph made the first break the run's error: no graphs to count."""
    return (
        f"fullgraph=True made the first graph break an error ({_at(first)}): torch.compile compiled nothing.",
        "Fix the break (its explanation and hints are in run.compile.graph_breaks), or compile with "
        "fullgraph=False to see every break of the model.",
    )


def _breaks_words(report: CompileReport) -> tuple[str, str]:
    """The breaks' summary (how many graphs where one would do, at which lines, how often per call) and fix."""
    breaks = report.graph_breaks
    per_call = sum(b.count for b in breaks if not b.skipped_frame)
    return (
        f"torch.compile compiled {plural(report.graph_count, 'graph')} where one would do: "
        f"{plural(len(breaks), 'line')} it could not put in a graph "
        f"({', '.join(f'{b.func or b.file}:{b.line}' for b in breaks[:4])}"
        f"{', ...' if len(breaks) > 4 else ''}), {plural(per_call, 'break')} per call. Between graphs the model "
        "runs in Python, and the compiler cannot fuse across a break.",
        "Fix the breaks from the first: each one's explanation and hints are in run.compile.graph_breaks; "
        "compile with fullgraph=True to make the first one an error.",
    )


def _break_findings(report: CompileReport, fullgraph: bool = False) -> list[Finding]:
    """The breaks' summary, then per break: the function it skipped, the loop it is hit in, its standard fix."""
    found: list[Finding] = []
    breaks = report.graph_breaks
    if breaks:
        message, hint = _fullgraph_words(breaks[0]) if fullgraph else _breaks_words(report)
        title = plural(len(breaks), "graph break")
        found.append(Finding(kind="graph_breaks", severity="warning", title=title, message=message, hint=hint))
    fixed: set[tuple[str, int]] = set()
    for gb in breaks:
        if gb.skipped_frame:
            found.append(
                Finding(
                    kind="skipped_function",
                    severity="warning",
                    title=f"{gb.skipped_frame} runs eagerly",
                    message=f"A graph break inside a loop of {gb.skipped_frame}"
                    + (f" (line {gb.skipped_line})" if gb.skipped_line else "")
                    + f", caused by {gb.gb_type or 'a break'} at {_at(gb)}, made dynamo give up on the whole "
                    f"function: none of {gb.skipped_frame} is compiled (0 graphs of it), and torch's explain "
                    "reports no break for it.",
                    hint="Fix the break inside the loop (its hints are in run.compile.graph_breaks); functions it "
                    "calls are still compiled one by one.",
                )
            )
        elif gb.count > 1:
            found.append(
                Finding(
                    kind="break_in_loop",
                    severity="warning",
                    title=f"graph break hit {gb.count} times per call",
                    message=f"The break at {_at(gb)} ({gb.gb_type or 'a break'}) is hit {gb.count} times in one call "
                    "(a loop over it, or a module used that often): its cost, a return to Python and a new graph, is "
                    f"paid {gb.count} times.",
                    hint="Fix this break first: it costs the most.",
                )
            )
        fix = _standard_fix(gb) if (gb.file, gb.line) not in fixed else None
        fixed.add((gb.file, gb.line))
        if fix is not None:
            what, hint = fix
            found.append(
                Finding(
                    kind="break_fix",
                    severity="info",
                    title=f"{what} breaks the graph at line {gb.line}",
                    message=f"{what} at {_at(gb)} cannot go into a graph"
                    + (f" (inside {gb.package}, called from your line)" if gb.package else "")
                    + ": dynamo runs it in Python between two graphs.",
                    hint=hint,
                )
            )
    return found


def _small_graphs(report: CompileReport) -> list[Finding]:
    """Graphs between two breaks too small to gain from compiling."""
    found: list[Finding] = []
    breaks = report.graph_breaks
    for region in report.regions:
        starts_after_break = any(b.after is not None and b.after.graph == region.graph for b in breaks)
        if region.ends_at_break is not None and starts_after_break and 0 < region.ops < SMALL_GRAPH_OPS:
            found.append(
                Finding(
                    kind="small_graph",
                    severity="info",
                    title=f"graph {region.graph} holds {plural(region.ops, 'op')}",
                    message=f"{region.graph} sits between two graph breaks and holds {plural(region.ops, 'op')}: "
                    "compiled, it cannot be faster (nothing to fuse), and it costs a guard check and a return to "
                    "Python on each side.",
                    hint="Fix one of the two breaks around it, so its ops join a bigger graph.",
                    method=region.graph,
                )
            )
    return found


def _recompile_findings(report: CompileReport, dynamic: bool | None) -> list[Finding]:
    """The recompilations' summary, each dim compiled as a constant call after call, and the recompile limit."""
    found: list[Finding] = []
    recompilations = report.recompilations
    if recompilations:
        found.append(
            Finding(
                kind="recompilations",
                severity="warning",
                title=plural(len(recompilations), "recompilation"),
                message=f"torch.compile compiled again {plural(len(recompilations), 'time')} over "
                f"{plural(report.calls, 'call')}: "
                + "; ".join(f"call {r.call}: {r.reason}" for r in recompilations[:3])
                + ("; ..." if len(recompilations) > 3 else ""),
                hint=recompilations[0].hint,
            )
        )
    by_guard: dict[tuple[str, str], list[int]] = {}
    for r in recompilations:
        if r.kind == "size":
            calls_of = by_guard.setdefault((r.func, r.reason.split(" was ", 1)[0]), [])
            if r.call not in calls_of:
                calls_of.append(r.call)
    for (func, what), calls in by_guard.items():
        if len(calls) >= 2:
            found.append(
                Finding(
                    kind="specialized_dim",
                    severity="warning",
                    title=f"{what} is compiled as a constant",
                    message=f"{func} compiled again in {plural(len(calls), 'call')} ({', '.join(map(str, calls))}) "
                    f"because {what} changed: each new size is a new graph"
                    + (" (dynamic=False)" if dynamic is False else " (the code makes the size a constant)"),
                    hint=next(r.hint for r in recompilations if r.kind == "size" and r.func == func),
                    fix={"dynamic": None} if dynamic is False else {},
                )
            )
    for func in report.limit_hit:
        found.append(
            Finding(
                kind="recompile_limit",
                severity="warning",
                title=f"torch runs {func} eagerly",
                message=f"After {report.recompile_limit} compilations of {func}, torch stopped compiling it: every "
                "later call with new inputs runs it eagerly, without a word.",
                hint="Fix what recompiles it (the recompilations say which guard failed); raising "
                "torch._dynamo.config.recompile_limit only postpones it.",
            )
        )
    return found


def _side_effects(changed: Sequence[tuple[str, str, Any, Any]]) -> list[Finding]:
    """The plain attributes of the model its forward writes."""
    found: list[Finding] = []
    for path, name, was, now in changed:
        attribute = f"self.{name}" if not path else f"{path}.{name}"
        found.append(
            Finding(
                kind="side_effect",
                severity="warning",
                title=f"the model writes {attribute}",
                message=f"{attribute} was {was!r} before the call and {now!r} after: the compiled forward writes a "
                "Python attribute. dynamo replays the write after the graph and guards on the value it read, so each "
                "call with a new value compiles again (and after the recompile limit, runs eagerly).",
                hint="Keep state that changes on every call out of forward (count calls outside the model), or keep it "
                "in a tensor buffer (register_buffer), which the graph updates in place.",
            )
        )
    return found


def _form(args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    """How a call passes its inputs: ``2 positional``, ``1 positional + attention_mask``, ``input_ids=, mask=``."""
    parts = [f"{len(args)} positional"] if args else []
    parts += [f"{name}=" for name in kwargs]
    return " + ".join(parts) or "no inputs"


def _call_forms(report: CompileReport, calls: Sequence[tuple[Sequence[Any], Mapping[str, Any]]]) -> list[Finding]:
    """Later calls that pass their inputs otherwise than the first (positional where it used keywords): dynamo
    guards on how a function is called (``len(args)``), so those calls compile again for that alone, and the sizes
    that changed are named by position (``args[0]``), not by the argument's name."""
    if not calls or not report.recompilations:
        return []
    first, *later = [_form(*c) for c in calls]
    other = [(n, form) for n, form in enumerate(later, 1) if form != first]
    if not other:
        return []
    n, form = other[0]
    return [
        Finding(
            kind="call_form",
            severity="warning",
            title="the calls pass their inputs in other ways",
            message=f"The first call passes {first}; call {n} passes {form}"
            + (f" (and {plural(len(other) - 1, 'more call')})" if len(other) > 1 else "")
            + ". dynamo guards on how the function is called, so a call made another way compiles again for that "
            "alone, and its recompilations name the inputs by position.",
            hint="Call the model the same way every time: each entry of calls is a tuple of positional inputs or a "
            "dict of keyword inputs, so pass the first call's inputs the same way (all keywords: tj.compile(model, "
            "(), {'input_ids': ids, 'attention_mask': mask}, calls=[{'input_ids': ids2, 'attention_mask': mask2}])).",
        )
    ]


def compile_findings(
    report: CompileReport,
    graphs: Mapping[str, Graph],
    *,
    dynamic: bool | None,
    changed: Sequence[tuple[str, str, Any, Any]] = (),
    calls: Sequence[tuple[Sequence[Any], Mapping[str, Any]]] = (),
    fullgraph: bool = False,
) -> list[Finding]:
    """The findings of one run (see the module docstring); ``calls``: each call's positional and keyword inputs."""
    return [
        *_break_findings(report, fullgraph),
        *_small_graphs(report),
        *_recompile_findings(report, dynamic),
        *_call_forms(report, calls),
        *_side_effects(changed),
    ]


__all__ = ["SMALL_GRAPH_OPS", "compile_findings"]
