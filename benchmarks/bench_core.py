"""Benchmarks of the jupyter-tracejit core against plain ``torch.jit.trace``.

Run ``python benchmarks/bench_core.py [--quick] [--json out.json]``. Every figure is a ratio or a size
measured side by side in this one run (repetitions interleaved, median of N) and *printed* with its
target and PASS/MISS; nothing is asserted, so a slow or busy machine never fails a build.

1. overhead of ``tj.trace`` (+ ``json.dumps(run.to_json())``) over ``torch.jit.trace`` with the same options;
2. our structural check diff against torch's text diagnostic (``graph_diagnostic_info`` of ``_check_trace``);
3. JSON bytes per graph node of a run;
4. dense graphs and fixed costs: a 12,000-op chain with the check off, a check that fails on every op (both
   against ``torch.jit.trace``), ``extract_graph`` per node, and the fixed cost of a trivial trace and of a
   misuse error.

See ``benchmarks/README.md`` for what each figure means.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import gc
import json
import os
import platform
import re
import signal
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.diff import structural_diff
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined, canonical_text
from jupyter_tracejit.core.torchscript.check import MethodUnderCheck, check_graphs
from jupyter_tracejit.core.torchscript.extract import extract_graph
from jupyter_tracejit.core.torchscript.session import method_code

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from table import print_rows, verdict

OVERHEAD_TARGET = 1.15  # tj / torch, at most
LOCAL_DIFF_TARGET = 1.0  # torch / ours, at least ("not slower")
CHAIN_DIFF_TARGET = 15.0  # torch / ours, at least
BYTES_PER_NODE_TARGET = 150.0  # compact JSON bytes per node, at most
DENSE_TARGET = 1.5  # tj / torch on the dense chain with the check off, at most
BROAD_FAIL_TARGET = 5.0  # torch / tj on a check failing on every op, at least
EXTRACT_TARGET_US = 10.0  # µs per node of extract_graph on the dense chain, at most
DENSE_OPS = 12_000  # torch's interpreter crashes running chains this long, so their check stays off
BROAD_FAIL_OPS = 4_000  # short enough for torch's check to run the traced chain


# -- results ----------------------------------------------------------------------------------------


@dataclass
class Row:
    """One printed line: a figure, its measured value, its target and the verdict."""

    section: str
    name: str
    measured: str
    target: str
    status: str  # PASS, MISS or "-" (information only)
    details: str = ""
    data: dict[str, Any] = field(default_factory=dict)


ROWS: list[Row] = []


def add(row: Row) -> Row:
    ROWS.append(row)
    return row


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def fmt_s(seconds: float) -> str:
    return f"{seconds:.3f} s" if seconds < 10 else f"{seconds:.1f} s"


# -- timing ------------------------------------------------------------------------------------------


def interleaved(
    cases: dict[str, Callable[[], Any]], reps: int, warmup: int, *, collect: bool = True
) -> dict[str, list[float]]:
    """Time every case ``reps`` times, interleaved (the order rotates each repetition), after ``warmup`` rounds.

    ``gc.collect()`` runs before each call, outside the timed region, unless ``collect`` is False: a full
    collection walks the whole heap and leaves the caches cold, which swamps calls of a fraction of a millisecond.

    What a case returns is dropped after the clock stops: the figure is the call, not the teardown of its result.
    Teardown is not the same work on both sides: a run frees its traced graph with it (its own compilation unit),
    while torch.jit.trace leaves every trace in its global compilation unit for the life of the process.
    """
    names = list(cases)
    times: dict[str, list[float]] = {n: [] for n in names}
    for rep in range(warmup + reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            if collect:
                gc.collect()
            t0 = time.perf_counter()
            result = cases[name]()
            elapsed = time.perf_counter() - t0
            del result
            if rep >= warmup:
                times[name].append(elapsed)
    return times


def _with_timings(run: Any, into: list[dict[str, float]]) -> Any:
    into.append(run.timings)
    return run


def teardown_seconds(make: Callable[[], Any], reps: int) -> float:
    """Median time to drop what ``make`` returns (after a ``gc.collect()``)."""
    times = []
    for _ in range(reps):
        result = make()
        gc.collect()
        t0 = time.perf_counter()
        del result
        times.append(time.perf_counter() - t0)
    return med(times)


class _DeadlineReached(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Interrupt the (pure Python) code inside after ``seconds`` of wall time by raising ``_DeadlineReached``."""
    if seconds is None or not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise _DeadlineReached

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- models ------------------------------------------------------------------------------------------


def transformer_encoder() -> nn.Module:
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False).eval()


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        if stride != 1 or cin != cout:
            self.shortcut: nn.Module = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
            )
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + self.shortcut(x))


class ResNet18Like(nn.Module):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        blocks: list[nn.Module] = []
        cin = 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def mlp(layers: int, width: int, changed_layer: int | None = None) -> nn.Sequential:
    """``layers`` Linear(width, width), each followed by a ReLU except the last (with ``changed_layer``: that
    layer's ReLU is a Tanh instead, and every layer has an activation)."""
    mods: list[nn.Module] = []
    for i in range(layers):
        mods.append(nn.Linear(width, width))
        if changed_layer is not None:
            mods.append(nn.Tanh() if i == changed_layer else nn.ReLU())
        elif i < layers - 1:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods)


def chain(op: Callable[[torch.Tensor], torch.Tensor], n: int) -> Callable[[torch.Tensor], torch.Tensor]:
    def chain_fn(x: torch.Tensor) -> torch.Tensor:
        for _ in range(n):
            x = op(x)
        return x

    return chain_fn


def flipping_chain(n: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """``n`` sins for a batch of 2, ``n`` cosines otherwise: traced at 2 and checked at 3, every op diverges."""

    def chain_fn(x: torch.Tensor) -> torch.Tensor:
        op = torch.sin if x.shape[0] == 2 else torch.cos
        for _ in range(n):
            x = op(x)
        return x

    return chain_fn


class WithEncode(nn.Module):
    """A module with a second method: ``tj.trace(model.encode, ...)`` is the misuse torch rejects."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) * 2


def double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


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


# -- section 1: overhead -----------------------------------------------------------------------------


@dataclass
class OverheadCase:
    name: str
    model: nn.Module
    inputs: tuple[Any, ...]
    no_grad: bool = False


def _grad_context(no_grad: bool) -> contextlib.AbstractContextManager[Any]:
    return torch.no_grad() if no_grad else contextlib.nullcontext()


def bench_overhead(cases: list[OverheadCase], reps: int, warmup: int, breakdown: bool) -> dict[str, Any]:
    print(
        f"\n[1] overhead: tj.trace(model, (x,)) + json.dumps(run.to_json()) vs torch.jit.trace(model, (x,)), "
        f"both check_trace=True; median of {reps} interleaved repetitions after {warmup} warm-up",
        flush=True,
    )
    kept_runs: dict[str, Any] = {}
    rows: list[Row] = []
    for case in cases:
        torch_check_failed: list[bool] = []
        tj_parts: list[dict[str, float]] = []
        last: dict[str, Any] = {}

        def torch_side(case: OverheadCase = case, failed: list[bool] = torch_check_failed) -> Any:
            with _grad_context(case.no_grad):
                try:
                    traced = torch.jit.trace(case.model, case.inputs)
                    failed.append(False)
                    return traced
                except torch.jit.TracingCheckError:
                    failed.append(True)
                    return None

        def torch_trace_only(case: OverheadCase = case) -> Any:
            with _grad_context(case.no_grad):
                return torch.jit.trace(case.model, case.inputs, check_trace=False)

        def tj_side(case: OverheadCase = case, parts: list[dict[str, float]] = tj_parts, last: dict = last) -> Any:
            with _grad_context(case.no_grad):
                run = tj.trace(case.model, case.inputs)
                t0 = time.perf_counter()
                text = json.dumps(run.to_json())
                serialize = time.perf_counter() - t0
            parts.append({**run.timings, "serialize": serialize})
            last.setdefault("runs", []).append(run)  # kept: dropping one inside a later call would time its teardown
            return text

        sides: dict[str, Callable[[], Any]] = {"torch": torch_side, "tj": tj_side}
        if breakdown:  # torch.jit.trace(check_trace=False) as a third interleaved case: torch's trace vs check
            sides["torch_trace_only"] = torch_trace_only
        times = interleaved(sides, reps=reps, warmup=warmup)
        run = last["runs"][-1]
        last.clear()
        kept_runs[case.name] = run
        tj_parts = tj_parts[warmup:]
        t_torch, t_tj = med(times["torch"]), med(times["tj"])
        ratio = t_tj / t_torch
        paired = med([a / b for a, b in zip(times["tj"], times["torch"], strict=True)])
        torch_failed = any(torch_check_failed)
        tj_failed = not run.check.ok
        nodes = sum(len(g) for g in run.graphs.values())
        check_nodes = sum(len(c.graph) for c in run.check.cases if c.graph is not None)
        phase = {k: med([p.get(k, 0.0) for p in tj_parts]) for k in ("trace", "extract", "check", "serialize")}
        rest = t_tj - sum(phase.values())
        # our own graph work on this model, timed separately (what the overhead is made of)
        ts_method = run.traced._c._get_method("forward")
        micro: dict[str, list[float]] = {
            "code": [],
            "canonical_inlined": [],
            "canonical_text": [],
            "extract_graph": [],
            "structural_diff": [],
        }
        for _ in range(3):
            tc = time.perf_counter()
            ts_graph, code = ts_method.graph, ts_method.code
            t0 = time.perf_counter()
            canonical = canonical_inlined(ts_graph)
            t1 = time.perf_counter()
            canonical_text(canonical)
            t2 = time.perf_counter()
            graph = extract_graph(canonical, code=code).graph
            t3 = time.perf_counter()
            structural_diff(graph, graph)
            t4 = time.perf_counter()
            for key, value in zip(micro, (t0 - tc, t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                micro[key].append(value)
        micro_med = {k: med(v) for k, v in micro.items()}
        verdicts = "check fails" if tj_failed else "check passes"
        agree = "agrees with torch" if tj_failed == torch_failed else "DISAGREES with torch"
        stored = f" + {check_nodes} in the stored check graph" if check_nodes else ""
        raised = ", torch raised TracingCheckError" if torch_failed else ""
        if breakdown:
            t_trace_only = med(times["torch_trace_only"])
            torch_line = (
                f"torch: trace {fmt_s(t_trace_only)} + check {fmt_s(t_torch - t_trace_only)} "
                "(= total - check_trace=False)"
            )
        else:
            torch_line = "torch: trace/check split not measured with --quick"
        details = "\n".join(
            [
                f"tj {fmt_s(t_tj)} / torch {fmt_s(t_torch)}  (paired median {paired:.2f}x); "
                f"{nodes} nodes{stored}; {verdicts} ({agree}{raised})",
                torch_line,
                f"tj:    trace {fmt_s(phase['trace'])}, extract {fmt_s(phase['extract'])}, "
                f"check {fmt_s(phase['check'])}, serialize {fmt_s(phase['serialize'])}, rest {fmt_s(rest)}",
                f"our graph work per graph: method.code {fmt_s(micro_med['code'])}, "
                f"canonical_inlined {fmt_s(micro_med['canonical_inlined'])}, "
                f"canonical_text {fmt_s(micro_med['canonical_text'])}, "
                f"extract_graph {fmt_s(micro_med['extract_graph'])}, "
                f"structural_diff {fmt_s(micro_med['structural_diff'])}",
            ]
        )
        row = add(
            Row(
                "overhead",
                case.name,
                f"{ratio:.2f}x",
                f"<= {OVERHEAD_TARGET:.2f}x",
                verdict(ratio <= OVERHEAD_TARGET),
                details,
                {
                    "ratio": ratio,
                    "paired_ratio": paired,
                    "tj_s": times["tj"],
                    "torch_s": times["torch"],
                    "torch_trace_only_s": times.get("torch_trace_only"),
                    "tj_phases_median_s": phase,
                    "tj_rest_s": rest,
                    "our_graph_work_s": micro_med,
                    "nodes": nodes,
                    "check_graph_nodes": check_nodes,
                    "tj_check_ok": not tj_failed,
                    "torch_raised": torch_failed,
                },
            )
        )
        rows.append(row)
        print_rows([row])
    return kept_runs


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
                except _DeadlineReached:
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


# -- section 3: JSON size ----------------------------------------------------------------------------


def bench_json(runs: dict[str, Any]) -> None:
    print(
        "\n[3] JSON size: len(json.dumps(run.to_json(), separators=(',', ':'))) / nodes of run.graphs "
        "(check graphs are stored only when the check diverged)",
        flush=True,
    )
    rows: list[Row] = []
    for name, run in runs.items():
        doc = run.to_json()
        compact = len(json.dumps(doc, separators=(",", ":")))
        default = len(json.dumps(doc))
        nodes = sum(len(g) for g in run.graphs.values())
        check_nodes = sum(len(c.graph) for c in run.check.cases if c.graph is not None) if run.check else 0
        graphs_only = sum(len(json.dumps(g.to_json(), separators=(",", ":"))) for g in run.graphs.values())
        data = {
            "compact_bytes": compact,
            "default_bytes": default,
            "nodes": nodes,
            "check_graph_nodes": check_nodes,
            "graphs_only_bytes": graphs_only,
        }
        if not check_nodes:
            per = compact / nodes
            rows.append(
                add(
                    Row(
                        "json",
                        name,
                        f"{per:.0f} B/node",
                        f"<= {BYTES_PER_NODE_TARGET:.0f}",
                        verdict(per <= BYTES_PER_NODE_TARGET),
                        f"{compact:,} B compact, {default:,} B default json.dumps ({default / nodes:.0f} B/node); "
                        f"{nodes:,} nodes; graphs alone {graphs_only / nodes:.0f} B/node",
                        {**data, "bytes_per_node": per},
                    )
                )
            )
            continue
        per_traced = compact / nodes
        per_stored = compact / (nodes + check_nodes)
        rows.append(
            add(
                Row(
                    "json",
                    f"{name} [diverged: holds a check graph]",
                    f"{per_traced:.0f} B/node",
                    "(info: per traced node)",
                    "-",
                    f"{compact:,} B compact, {default:,} B default json.dumps ({default / nodes:.0f} B/traced node); "
                    f"{nodes:,} traced nodes + {check_nodes:,} check-graph nodes",
                    {**data, "bytes_per_node": per_traced},
                )
            )
        )
        rows.append(
            add(
                Row(
                    "json",
                    f"{name} [per stored node, trace + check graph]",
                    f"{per_stored:.0f} B/node",
                    f"<= {BYTES_PER_NODE_TARGET:.0f}",
                    verdict(per_stored <= BYTES_PER_NODE_TARGET),
                    f"default json.dumps: {default / (nodes + check_nodes):.0f} B/stored node",
                    {**data, "bytes_per_stored_node": per_stored},
                )
            )
        )
    print_rows(rows)


# -- section 4: dense graphs and fixed costs ---------------------------------------------------------


def _torch_raising(fn: Callable[[], Any]) -> Callable[[], None]:
    """``fn`` with the exception torch raises caught: the error path is what is timed."""

    def call() -> None:
        with contextlib.suppress(Exception):
            fn()

    return call


def bench_dense(reps: int, warmup: int, budget: float) -> None:
    print(
        f"\n[4] dense graphs and fixed costs: tj.trace vs torch.jit.trace side by side (median of {reps} "
        f"interleaved repetitions after {warmup} warm-up); extract_graph alone per node",
        flush=True,
    )
    rows: list[Row] = []
    x = torch.randn(3)

    # -- (a) the dense chain, check off on both sides
    dense = chain(torch.sin, DENSE_OPS)
    tj_phases: list[dict[str, float]] = []
    times = interleaved(
        {
            "torch": lambda: torch.jit.trace(dense, (x,), check_trace=False),
            "tj": lambda: _with_timings(tj.trace(dense, (x,), check_trace=False), tj_phases),
        },
        reps=reps,
        warmup=warmup,
    )
    t_torch, t_tj = med(times["torch"]), med(times["tj"])
    ratio = t_tj / t_torch
    phase = {k: med([p.get(k, 0.0) for p in tj_phases[warmup:]]) for k in ("trace", "extract")}
    teardown = teardown_seconds(lambda: tj.trace(dense, (x,), check_trace=False), max(2, reps // 2))
    rows.append(
        add(
            Row(
                "dense",
                f"chain of {DENSE_OPS:,} sin, check off: tj / torch",
                f"{ratio:.2f}x",
                f"<= {DENSE_TARGET}x",
                verdict(ratio <= DENSE_TARGET),
                f"tj {fmt_s(t_tj)} / torch {fmt_s(t_torch)}; tj: trace {fmt_s(phase['trace'])}, extract "
                f"{fmt_s(phase['extract'])} (canonical_inlined, .code, extract_graph), rest "
                f"{fmt_s(t_tj - sum(phase.values()))}\n"
                f"not timed: dropping the run frees its TorchScript graph ({fmt_s(teardown)}); torch.jit.trace's "
                "function stays in torch's global compilation unit",
                {
                    "ratio": ratio,
                    "tj_s": times["tj"],
                    "torch_s": times["torch"],
                    "tj_phases_median_s": phase,
                    "tj_teardown_s": teardown,
                },
            )
        )
    )
    print_rows(rows[-1:])

    # -- (b) a check that fails on every op: torch's ndiff gets a time budget
    flipping = flipping_chain(BROAD_FAIL_OPS)
    x2, x3 = torch.randn(2), torch.randn(3)
    tj_times: list[float] = []
    for rep in range(warmup + max(1, reps // 2)):
        gc.collect()
        t0 = time.perf_counter()
        run = tj.trace(flipping, (x2,), check_inputs=[(x3,)])
        if rep >= warmup:
            tj_times.append(time.perf_counter() - t0)
    assert run.check is not None
    case = run.check.cases[0]
    diverging = len(case.diff.divergences) if case.diff is not None else 0
    gc.collect()
    t0 = time.perf_counter()
    finished = True
    try:
        with deadline(budget):
            _torch_raising(lambda: torch.jit.trace(flipping, (x2,), check_inputs=[(x3,)]))()
    except _DeadlineReached:
        finished = False
    t_torch = time.perf_counter() - t0
    t_tj = med(tj_times)
    speedup = t_torch / t_tj
    if finished or speedup >= BROAD_FAIL_TARGET:
        status = verdict(speedup >= BROAD_FAIL_TARGET)
    else:
        status = "n/a (raise --chain-budget)"
    rows.append(
        add(
            Row(
                "dense",
                f"check failing on every op ({BROAD_FAIL_OPS:,}-op sin/cos chain): torch / tj",
                f"{'' if finished else '>= '}{speedup:.1f}x",
                f">= {BROAD_FAIL_TARGET:.0f}x",
                status,
                f"tj {fmt_s(t_tj)} (ok={run.ok}, {diverging:,} diverging nodes) / torch {fmt_s(t_torch)}"
                + ("" if finished else " (stopped at the budget: still in difflib.ndiff)"),
                {"speedup": speedup, "torch_finished": finished, "torch_s": t_torch, "tj_s": tj_times},
            )
        )
    )
    print_rows(rows[-1:])
    del run, case
    gc.collect()

    # -- (c) extract_graph alone, per node
    models: list[tuple[str, Any, tuple[Any, ...], bool]] = [
        (f"chain of {DENSE_OPS:,} sin", dense, (x,), True),
        ("TransformerEncoder x12, eval", transformer_encoder(), (torch.randn(2, 16, 256),), False),
        ("ResNet-18-like, eval", ResNet18Like().eval(), (torch.randn(1, 3, 64, 64),), False),
    ]
    for name, model, inputs, judged in models:
        canonical = canonical_inlined(torch.jit.trace(model, inputs, check_trace=False).graph)
        nodes = len(extract_graph(canonical).graph)
        t = interleaved({"extract": lambda canonical=canonical: extract_graph(canonical)}, reps, warmup)["extract"]
        per_node = med(t) / nodes * 1e6
        # as a program runs it: no collection before, and the graphs kept (as runs keep them), so the collector's
        # own schedule decides when a full collection falls inside an extraction
        kept: list[Any] = []
        t_kept = interleaved(
            {"extract": lambda canonical=canonical, kept=kept: kept.append(extract_graph(canonical))},
            reps,
            warmup,
            collect=False,
        )["extract"]
        per_node_kept = med(t_kept) / nodes * 1e6
        kept.clear()
        gc.collect()
        rows.append(
            add(
                Row(
                    "dense",
                    f"extract_graph per node: {name} ({nodes:,} nodes)",
                    f"{per_node:.1f} µs",
                    f"<= {EXTRACT_TARGET_US:.0f} µs" if judged else "(info)",
                    verdict(per_node <= EXTRACT_TARGET_US) if judged else "-",
                    f"{fmt_s(med(t))} per graph; {per_node_kept:.1f} µs per node (max "
                    f"{max(t_kept) / nodes * 1e6:.1f}) with no collection before and the graphs kept",
                    {"us_per_node": per_node, "nodes": nodes, "seconds": t, "seconds_kept": t_kept},
                )
            )
        )
        print_rows(rows[-1:])

    # -- (d) fixed cost per call
    module = WithEncode()
    small = torch.randn(2, 4)
    costs = interleaved(
        {
            "torch trivial": lambda: torch.jit.trace(double, (small,), check_trace=False),
            "tj trivial": lambda: tj.trace(double, (small,), check_trace=False),
            "torch misuse": _torch_raising(lambda: torch.jit.trace(module.encode, (small,))),
            "tj misuse": lambda: tj.trace(module.encode, (small,)),
        },
        reps=reps * 30,  # sub-millisecond calls: many repetitions, and no full collection before each
        warmup=warmup * 10,
        collect=False,
    )
    for what, label in (("trivial", "a trivial trace, check off"), ("misuse", "tracing model.encode (an error)")):
        ours, theirs = med(costs[f"tj {what}"]), med(costs[f"torch {what}"])
        rows.append(
            add(
                Row(
                    "dense",
                    f"fixed cost of {label}: tj - torch",
                    f"{(ours - theirs) * 1e3:.2f} ms",
                    "(info)",
                    "-",
                    f"tj {ours * 1e3:.3f} ms / torch {theirs * 1e3:.3f} ms",
                    {"tj_s": costs[f"tj {what}"], "torch_s": costs[f"torch {what}"]},
                )
            )
        )
    print_rows(rows[-2:])


# -- main --------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "jupyter_tracejit": tj.__version__,
        "torch_threads": torch.get_num_threads(),
        "loadavg_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (about 1.5 minutes on 2 cores)")
    parser.add_argument("--json", metavar="PATH", help="also write every figure and raw timing to PATH")
    parser.add_argument(
        "--chain-budget",
        type=float,
        default=None,
        help="seconds torch's ndiff may run on the all-changed chain before it is stopped (default 60, quick 20)",
    )
    parser.add_argument(
        "--only",
        choices=["overhead", "diff", "dense"],
        help="run one section ([3] JSON sizes comes with overhead, whose runs it measures)",
    )
    args = parser.parse_args(argv)

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # printing only: tj records warnings under its own filters
    torch.manual_seed(0)
    started = time.perf_counter()
    if args.quick:
        reps, warmup, diff_reps, diff_warmup, chain_reps, scaling = 2, 1, 1, 0, 1, [50]
    else:
        reps, warmup, diff_reps, diff_warmup, chain_reps, scaling = 7, 2, 5, 1, 3, [50, 100, 200]
    chain_budget = args.chain_budget if args.chain_budget is not None else (20.0 if args.quick else 60.0)

    info = machine()
    load = info["loadavg_start"]
    print("jupyter-tracejit core benchmarks (figures are printed, never asserted)")
    print(
        f"machine: {info['platform']}; {info['cpu_count']} CPUs ({info['cpus_usable']} usable); "
        f"Python {info['python']}; torch {info['torch']}; jupyter-tracejit {info['jupyter_tracejit']}"
    )
    print(
        f"torch.set_num_threads(1) for stable numbers (torch threads: {info['torch_threads']}); "
        f"warnings suppressed (printing only); mode: {'--quick' if args.quick else 'default'}"
        + (f"; load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}" if load else "")
    )

    x_tr = torch.randn(2, 16, 256)
    encoder = transformer_encoder()
    cases = [
        OverheadCase("TransformerEncoder x12, eval, no_grad", encoder, (x_tr,), no_grad=True),
        OverheadCase("TransformerEncoder x12, eval (check fails)", encoder, (x_tr,)),
        OverheadCase("ResNet-18-like, eval", ResNet18Like().eval(), (torch.randn(1, 3, 64, 64),)),
        OverheadCase("MLP 500 Linear(64, 64)", mlp(500, 64), (torch.randn(8, 64),)),
    ]
    if args.only in (None, "overhead"):
        runs = bench_overhead(cases, reps, warmup, breakdown=not args.quick)
    if args.only in (None, "diff"):
        bench_diff(diff_reps, diff_warmup, chain_reps, chain_budget, scaling)
    if args.only in (None, "overhead"):
        bench_json(runs)
    if args.only in (None, "dense"):
        bench_dense(reps, warmup, chain_budget)

    elapsed = time.perf_counter() - started
    end_load = os.getloadavg() if hasattr(os, "getloadavg") else None
    judged = [r for r in ROWS if r.status in ("PASS", "MISS")]
    print("\nsummary")
    print_rows([Row(r.section, r.name.strip(), r.measured, r.target, r.status) for r in ROWS if r.status != "-"])
    undecided = sum(r.status.startswith("n/a") for r in ROWS)
    print(
        f"{sum(r.status == 'PASS' for r in judged)} PASS, {sum(r.status == 'MISS' for r in judged)} MISS"
        + (f", {undecided} undecided" if undecided else "")
        + f" of {len(judged) + undecided} targets; took {elapsed:.0f} s"
        + (f"; load average at end {end_load[0]:.2f} {end_load[1]:.2f} {end_load[2]:.2f}" if end_load else "")
    )
    if args.json:
        out = {
            "machine": {**info, "loadavg_end": end_load},
            "mode": "quick" if args.quick else "default",
            "repetitions": {
                "overhead": reps,
                "overhead_warmup": warmup,
                "diff": diff_reps,
                "diff_warmup": diff_warmup,
                "chain": chain_reps,
            },
            "chain_budget_s": chain_budget,
            "elapsed_s": elapsed,
            "figures": [r.__dict__ for r in ROWS],
        }
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
