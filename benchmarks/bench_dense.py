"""[4] dense graphs and fixed costs: a 12,000-op chain with the check off, a check that fails on every op (both
against ``torch.jit.trace``), ``extract_graph`` per node, and the fixed cost of a trivial trace and of a misuse
error.

Run ``python benchmarks/bench_dense.py [--quick] [--chain-budget S] [--json out.json]`` (``bench_core.py`` runs it
with the other core figures). See ``benchmarks/README.md`` for what each figure means.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined
from jupyter_tracejit.core.torchscript.extract import extract_graph

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from core_models import ResNet18Like, chain, double, flipping_chain, transformer_encoder
from table import print_rows, verdict
from timing import (
    DeadlineReached,
    Row,
    Section,
    Settings,
    add,
    deadline,
    fmt_s,
    interleaved,
    main,
    med,
    teardown_seconds,
    with_timings,
)

from tests.models import LinearWithEncode

DENSE_TARGET = 1.5  # tj / torch on the dense chain with the check off, at most
BROAD_FAIL_TARGET = 5.0  # torch / tj on a check failing on every op, at least
EXTRACT_TARGET_US = 10.0  # µs per node of extract_graph on the dense chain, at most
DENSE_OPS = 12_000  # torch's interpreter crashes running chains this long, so their check stays off
BROAD_FAIL_OPS = 4_000  # short enough for torch's check to run the traced chain


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
            "tj": lambda: with_timings(tj.trace(dense, (x,), check_trace=False), tj_phases),
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
    except DeadlineReached:
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
    module = LinearWithEncode(4)  # a module with a second method: tj.trace(module.encode, ...) is the misuse
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


def dense_section(settings: Settings, shared: dict[str, Any]) -> None:
    bench_dense(settings.reps, settings.warmup, settings.chain_budget)


SECTIONS: list[Section] = [("dense", dense_section)]

if __name__ == "__main__":
    sys.exit(main(__doc__, SECTIONS))
