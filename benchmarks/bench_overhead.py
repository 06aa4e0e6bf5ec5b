"""[1] the overhead of ``tj.trace`` (+ ``json.dumps(run.to_json())``) over ``torch.jit.trace`` with the same
options, and [3] the JSON bytes per graph node of those runs.

Run ``python benchmarks/bench_overhead.py [--quick] [--json out.json]`` (``bench_core.py`` runs it with the other
core figures). See ``benchmarks/README.md`` for what each figure means.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.diff import structural_diff
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined, canonical_text
from jupyter_tracejit.core.torchscript.extract import extract_graph

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from core_models import ResNet18Like, mlp, transformer_encoder
from table import print_rows, verdict
from timing import Row, Section, Settings, add, fmt_s, interleaved, main, med

OVERHEAD_TARGET = 1.15  # tj / torch, at most
BYTES_PER_NODE_TARGET = 150.0  # compact JSON bytes per node, at most


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


def overhead_cases() -> list[OverheadCase]:
    x_tr = torch.randn(2, 16, 256)
    encoder = transformer_encoder()
    return [
        OverheadCase("TransformerEncoder x12, eval, no_grad", encoder, (x_tr,), no_grad=True),
        OverheadCase("TransformerEncoder x12, eval (check fails)", encoder, (x_tr,)),
        OverheadCase("ResNet-18-like, eval", ResNet18Like().eval(), (torch.randn(1, 3, 64, 64),)),
        OverheadCase("MLP 500 Linear(64, 64)", mlp(500, 64), (torch.randn(8, 64),)),
    ]


def overhead_section(settings: Settings, shared: dict[str, Any]) -> None:
    shared["runs"] = bench_overhead(overhead_cases(), settings.reps, settings.warmup, breakdown=not settings.quick)


def json_section(settings: Settings, shared: dict[str, Any]) -> None:
    bench_json(shared["runs"])


SECTIONS: list[Section] = [("overhead", overhead_section), ("overhead", json_section)]

if __name__ == "__main__":
    sys.exit(main(__doc__, SECTIONS))
