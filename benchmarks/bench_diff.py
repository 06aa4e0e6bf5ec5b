"""[2] our structural check diff against torch's text diagnostic (``graph_diagnostic_info`` of ``_check_trace``).

Run ``python benchmarks/bench_diff.py [--quick] [--chain-budget S] [--json out.json]`` (``bench_core.py`` runs it
with the other core figures). See ``benchmarks/README.md`` for what each figure means.
"""

from __future__ import annotations

import difflib
import gc
import os
import re
import sys
import time
from typing import Any

import torch
from torch import nn

from jupyter_tracejit.core.diff import structural_diff
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined, canonical_text
from jupyter_tracejit.core.torchscript.check import MethodUnderCheck, check_graphs
from jupyter_tracejit.core.torchscript.extract import extract_graph
from jupyter_tracejit.core.torchscript.session import method_code

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from core_models import chain, mlp
from table import print_rows, verdict
from timing import DeadlineReached, Row, Section, Settings, add, deadline, fmt_s, main, med

LOCAL_DIFF_TARGET = 1.0  # torch / ours, at least ("not slower")
CHAIN_DIFF_TARGET = 15.0  # torch / ours, at least


# -- the two sides of the check diff ----------------------------------------------------------------


def _indent(s: str) -> str:
    return "\n".join(["\t" + line for line in s.splitlines()])


def torch_graph_diagnostic(traced_graph: torch._C.Graph, check_graph: torch._C.Graph) -> dict[str, Any]:
    """What ``torch.jit._trace._check_trace``'s ``graph_diagnostic_info`` does, statement for statement,
    plus building the ``TracingCheckError`` it raises when the graphs differ."""
    mod_canonicalized = torch._C._jit_pass_canonicalize(traced_graph)
    torch._C._jit_pass_inline(mod_canonicalized)
    torch._C._jit_pass_erase_shape_information(mod_canonicalized)
    mod_str = str(mod_canonicalized)
    mod_str = re.sub(r"___torch_mangle_[0-9]+\.", "", mod_str)
    check_canonicalized = torch._C._jit_pass_canonicalize(check_graph)
    torch._C._jit_pass_inline(check_canonicalized)
    torch._C._jit_pass_erase_shape_information(check_canonicalized)
    check_str = str(check_canonicalized)
    check_str = re.sub(r"___torch_mangle_[0-9]+\.", "", check_str)
    graph_diff_errors = None
    first: tuple[int, str] | None = None
    if mod_str != check_str:
        graph_diff = difflib.ndiff(mod_str.splitlines(True), check_str.splitlines(True))
        graph_diff_errors = "Graph diff:\n" + _indent("".join(graph_diff)) + "\n"
        for i, (n_mod, n_check) in enumerate(zip(mod_canonicalized.nodes(), check_canonicalized.nodes(), strict=False)):
            if str(n_mod) != str(n_check):
                graph_diff_errors += "First diverging operator:\n"
                node_diff = difflib.ndiff(str(n_mod).splitlines(True), str(n_check).splitlines(True))
                source_printout = "Node diff:\n" + _indent("".join(node_diff)) + "\n"
                mod_stack = n_mod.sourceRange()
                if mod_stack:
                    source_printout += "Trace source location:\n" + _indent(mod_stack) + "\n"
                check_stack = n_check.sourceRange()
                if check_stack:
                    source_printout += "Check source location:\n" + _indent(check_stack) + "\n"
                graph_diff_errors += source_printout
                first = (i, n_mod.kind())
                break
    tensor_compare_errors = None
    for n_mod, n_check in zip(mod_canonicalized.nodes(), check_canonicalized.nodes(), strict=False):
        if n_mod.kind() != n_check.kind():
            break
        if n_mod.kind() == "prim::Constant" and not (n_mod.mustBeNone() or n_check.mustBeNone()):
            if not n_mod.hasAttribute("value"):
                continue
            if n_mod.kindOf("value") != "t" or n_check.kindOf("value") != "t":
                continue
            try:
                torch.testing.assert_close(n_mod.t("value"), n_check.t("value"), equal_nan=True)
            except (RuntimeError, AssertionError) as e:
                tensor_compare_errors = "Node:\n" + _indent(str(n_mod)) + "\n" + _indent(str(e))
                break
    message_chars = 0
    if graph_diff_errors is not None or tensor_compare_errors is not None:
        message_chars = len(torch.jit._trace.TracingCheckError(graph_diff_errors, tensor_compare_errors).message)
    return {"first_node": first, "message_chars": message_chars, "lines": len(mod_str.splitlines())}


def ours_trace_side(ts_graph: torch._C.Graph, code: str) -> MethodUnderCheck:
    """What ``tj.trace`` does with the trace's graph before the check (session ``_trace``)."""
    canonical = canonical_inlined(ts_graph)
    extraction = extract_graph(canonical, method="forward", code=code)
    return MethodUnderCheck(
        name="forward",
        traced_graph=ts_graph,
        trace=extraction,
        canonical_text=canonical_text(canonical),
        run_traced=lambda inputs: None,
        run_python=lambda inputs: None,
    )


def ours_check_diff(traced: Any, check: Any, phases: dict[str, list[float]]) -> Any:
    """Our check's graph work: the trace side as ``tj.trace`` prepares it (``.code`` as the session takes it:
    skipped for modules with more than 1,000 submodules), then ``check_graphs`` on the re-trace (which keeps
    torch's text comparison as a boolean, and builds the check graph and its ``structural_diff`` only when the
    printouts differ); ``phases`` gets the time of each step."""
    t0 = time.perf_counter()
    trace_code = method_code(traced, traced if isinstance(traced, nn.Module) else None)
    t1 = time.perf_counter()
    method = ours_trace_side(traced.graph, trace_code)
    t2 = time.perf_counter()
    _, diff, _ = check_graphs(method, check.graph)
    t3 = time.perf_counter()
    for key, value in (("code", t1 - t0), ("trace_side", t2 - t1), ("check_graphs", t3 - t2)):
        phases.setdefault(key, []).append(value)
    return diff


# -- section 2: check diff ---------------------------------------------------------------------------


def bench_diff(reps: int, warmup: int, chain_reps: int, chain_budget: float, scaling: list[int]) -> None:
    print(
        "\n[2] check diff: ours (canonical_inlined + extract_graph of both graphs, check_graphs/structural_diff) vs "
        "torch's graph_diagnostic_info (canonicalize, inline, erase shapes, str, ndiff, first diverging node)",
        flush=True,
    )

    # -- a 2,000-layer MLP and the same with one activation changed
    t0 = time.perf_counter()
    x = torch.randn(4, 16)
    torch.manual_seed(0)
    base = torch.jit.trace(mlp(2000, 16, changed_layer=-1), (x,), check_trace=False)
    torch.manual_seed(0)
    changed = torch.jit.trace(mlp(2000, 16, changed_layer=1000), (x,), check_trace=False)
    print(f"  (traced the two 2,000-layer MLPs once, untimed: {fmt_s(time.perf_counter() - t0)})", flush=True)
    print_rows(
        _diff_pair(
            "MLP 2,000 x (Linear(16, 16), ReLU); layer 1000 ReLU -> Tanh",
            base,
            changed,
            reps=reps,
            warmup=warmup,
            target=(LOCAL_DIFF_TARGET, "not slower"),
            budget=None,
        )
    )
    del base, changed
    gc.collect()

    # -- all-changed chains: small ones where torch finishes (how ndiff scales), then the 12k-node one
    for n in scaling:
        a = torch.jit.trace(chain(torch.sin, n), (torch.randn(3),), check_trace=False)
        b = torch.jit.trace(chain(torch.cos, n), (torch.randn(3),), check_trace=False)
        print_rows(_diff_pair(f"chain sin vs cos, N={n:,}", a, b, reps=1, warmup=0, target=None, budget=chain_budget))
    t0 = time.perf_counter()
    a = torch.jit.trace(chain(torch.sin, 12_000), (torch.randn(3),), check_trace=False)
    b = torch.jit.trace(chain(torch.cos, 12_000), (torch.randn(3),), check_trace=False)
    print(f"  (traced the two 12,000-op chains once, untimed: {fmt_s(time.perf_counter() - t0)})", flush=True)
    print_rows(
        _diff_pair(
            "chain sin vs cos, N=12,000 (all changed)",
            a,
            b,
            reps=chain_reps,
            warmup=0,
            target=(CHAIN_DIFF_TARGET, "faster"),
            budget=chain_budget,
        )
    )


def _diff_pair(
    name: str,
    a: Any,
    b: Any,
    *,
    reps: int,
    warmup: int,
    target: tuple[float, str] | None,
    budget: float | None,
) -> list[Row]:
    """Time both sides on one pair of traces (interleaved, alternating order); the full-ratio row, and with a
    target also the structural_diff-alone row."""
    torch_times: list[float] = []
    ours_times: list[float] = []
    phases: dict[str, list[float]] = {}
    torch_info: dict[str, Any] = {}
    finished = True
    diff = None
    for rep in range(warmup + reps):
        order = ("torch", "ours") if rep % 2 == 0 else ("ours", "torch")
        for side in order:
            gc.collect()
            t0 = time.perf_counter()
            if side == "ours":
                diff = ours_check_diff(a, b, phases if rep >= warmup else {})
                elapsed = time.perf_counter() - t0
                if rep >= warmup:
                    ours_times.append(elapsed)
            elif finished:  # once torch ran past the budget, one lower bound is all there is to learn
                try:
                    with deadline(budget):
                        torch_info = torch_graph_diagnostic(a.graph, b.graph)
                except DeadlineReached:
                    finished = False
                elapsed = time.perf_counter() - t0
                if rep >= warmup or not finished:
                    torch_times.append(elapsed)
    assert diff is not None
    t_torch = med(torch_times) if finished else max(torch_times)
    t_ours = med(ours_times)
    ratio = t_torch / t_ours
    bound = "" if finished else ">= "

    # structural_diff alone, on graphs extracted beforehand
    method = ours_trace_side(a.graph, "")
    other = extract_graph(canonical_inlined(b.graph)).graph
    alone: list[float] = []
    for _ in range(max(reps, 3)):
        gc.collect()
        t0 = time.perf_counter()
        structural_diff(method.trace.graph, other)
        alone.append(time.perf_counter() - t0)
    t_alone = med(alone)
    ratio_alone = t_torch / t_alone

    roots, downstream = len(diff.roots), len(diff.downstream)
    first_root = diff.roots[0].reason if diff.roots else "-"
    if finished:
        first = torch_info.get("first_node")
        lines, chars = torch_info.get("lines", 0), torch_info.get("message_chars", 0)
        torch_says = f"torch: {lines:,} lines, TracingCheckError message {chars:,} chars"
        torch_says += f", 'first diverging operator' = node #{first[0]} ({first[1]})" if first else ""
    else:
        torch_says = f"torch: stopped after {fmt_s(t_torch)} (budget {budget:g} s) with ndiff still running"
    runs = f"{len(torch_times)} run" + ("s" if len(torch_times) != 1 else "")
    details = (
        f"torch {bound}{fmt_s(t_torch)} ({runs}) / ours {fmt_s(t_ours)} (median of {len(ours_times)}); "
        f"{len(method.trace.graph):,} nodes per graph\n"
        f"ours: trace .code {fmt_s(med(phases['code']))}, trace side (canonicalize, extract, text) "
        f"{fmt_s(med(phases['trace_side']))}, check_graphs (same + structural_diff) "
        f"{fmt_s(med(phases['check_graphs']))}"
        "\n"
        f"ours finds {roots} root(s) + {downstream:,} downstream; first root: {first_root}\n{torch_says}"
    )
    data = {
        "torch_s": torch_times,
        "torch_finished": finished,
        "ours_s": ours_times,
        "ours_phases_s": phases,
        "structural_diff_alone_s": alone,
        "ratio": ratio,
        "ratio_structural_diff_alone": ratio_alone,
        "roots": roots,
        "downstream": downstream,
        "nodes": len(method.trace.graph),
        "torch_message_chars": torch_info.get("message_chars"),
        "torch_first_node": torch_info.get("first_node"),
    }
    if target is None:
        details += f"\nstructural_diff alone {fmt_s(t_alone)}"
        return [add(Row("diff", name, f"{bound}{ratio:.1f}x", "(info: ndiff scaling)", "-", details, data))]
    goal, wording = target
    undecided = "n/a (raise --chain-budget)"
    if finished:
        status, status_alone = verdict(ratio >= goal), verdict(ratio_alone >= goal)
    else:  # a lower bound decides only when it already reaches the target
        status = "PASS" if ratio >= goal else undecided
        status_alone = "PASS" if ratio_alone >= goal else undecided
    return [
        add(Row("diff", name, f"{bound}{ratio:.2f}x", f">= {goal:g}x ({wording})", status, details, data)),
        add(
            Row(
                "diff",
                "  same, structural_diff alone (graphs pre-extracted)",
                f"{bound}{ratio_alone:.2f}x",
                f">= {goal:g}x",
                status_alone,
                f"structural_diff {fmt_s(t_alone)} (median of {len(alone)}) vs torch {bound}{fmt_s(t_torch)}",
                {"ratio": ratio_alone},
            )
        ),
    ]


def diff_section(settings: Settings, shared: dict[str, Any]) -> None:
    bench_diff(settings.diff_reps, settings.diff_warmup, settings.chain_reps, settings.chain_budget, settings.scaling)


SECTIONS: list[Section] = [("diff", diff_section)]

if __name__ == "__main__":
    sys.exit(main(__doc__, SECTIONS))
