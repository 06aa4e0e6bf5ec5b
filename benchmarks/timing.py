"""What every core benchmark script shares: the figures it prints (``Row``, ``ROWS``), interleaved timing with a
median, a wall-time deadline for torch's slow diagnostics, the machine header and the ``main`` that runs a script's
sections and prints the summary (``--quick``, ``--json``, ``--only``, ``--chain-budget``).

See ``benchmarks/README.md`` for how the benchmarks measure.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import signal
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

import jupyter_tracejit as tj

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from table import print_rows

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


def with_timings(run: Any, into: list[dict[str, float]]) -> Any:
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


class DeadlineReached(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Interrupt the (pure Python) code inside after ``seconds`` of wall time by raising ``DeadlineReached``."""
    if seconds is None or not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise DeadlineReached

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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


@dataclass
class Settings:
    """How many repetitions a run makes (``--quick``: fewer) and how long torch's ndiff may run."""

    quick: bool
    reps: int
    warmup: int
    diff_reps: int
    diff_warmup: int
    chain_reps: int
    scaling: list[int]
    chain_budget: float


Section = tuple[str, Callable[[Settings, dict[str, Any]], None]]


def main(doc: str, sections: list[Section], argv: list[str] | None = None) -> int:
    """Run ``sections`` (each a name for ``--only`` and a function of the settings and a dict the sections share)
    in order, then print the summary of every figure and, with ``--json``, write them."""
    names = list(dict.fromkeys(name for name, _ in sections))
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--json", metavar="PATH", help="also write every figure and raw timing to PATH")
    parser.add_argument(
        "--chain-budget",
        type=float,
        default=None,
        help="seconds torch's ndiff may run on the all-changed chain before it is stopped (default 60, quick 20)",
    )
    if len(names) > 1:
        parser.add_argument(
            "--only",
            choices=names,
            help="run one section ([3] JSON sizes comes with overhead, whose runs it measures)",
        )
    args = parser.parse_args(argv)
    only = getattr(args, "only", None)

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # printing only: tj records warnings under its own filters
    torch.manual_seed(0)
    started = time.perf_counter()
    if args.quick:
        reps, warmup, diff_reps, diff_warmup, chain_reps, scaling = 2, 1, 1, 0, 1, [50]
    else:
        reps, warmup, diff_reps, diff_warmup, chain_reps, scaling = 7, 2, 5, 1, 3, [50, 100, 200]
    chain_budget = args.chain_budget if args.chain_budget is not None else (20.0 if args.quick else 60.0)
    settings = Settings(args.quick, reps, warmup, diff_reps, diff_warmup, chain_reps, scaling, chain_budget)

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

    shared: dict[str, Any] = {}
    for name, section in sections:
        if only in (None, name):
            section(settings, shared)

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
