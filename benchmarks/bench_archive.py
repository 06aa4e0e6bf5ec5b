"""What opening a saved TorchScript archive with ``tj.load`` costs over ``torch.jit.load`` + ``print(m.graph)``.

Prints its figures (it asserts nothing; see README.md "Archive benchmark"). The ratio is measured side by side in
one run: the two cases take turns within each repetition, the order rotating, after warm-up rounds; the median
counts. ``--profile`` prints cProfile's top functions of ``tj.load`` instead (where the time goes).

    .venv/bin/python benchmarks/bench_archive.py            # about a minute on a 2-core machine
    .venv/bin/python benchmarks/bench_archive.py --quick    # 1 warm-up round, 5 repetitions
    .venv/bin/python benchmarks/bench_archive.py --profile  # cProfile of tj.load on the same archive
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.torchscript.saved.load import method_names

sys.path.insert(0, str(Path(__file__).resolve().parent))
from core_models import transformer_encoder
from timing import interleaved, machine

#: the target: tj.load's median over torch.jit.load + print(m.graph)'s
TARGET = 1.2


def save_archive(folder: Path) -> tuple[Path, int]:
    """The 12-layer TransformerEncoder of bench_core traced without ``no_grad`` (its slow path, about 1,300 inlined
    nodes), saved with debug information: a shipped trace of the size the issue names."""
    model = transformer_encoder()
    x = torch.randn(2, 16, 256)
    traced = torch.jit.trace(model, (x,), check_trace=False)
    path = folder / "encoder.pt"
    torch.jit.save(traced, str(path))
    run = tj.load(path)
    assert run.ok and run.graph is not None, run.summary()
    return path, len(run.graph.nodes)


def torch_side(path: Path) -> Any:
    module = torch.jit.load(str(path), map_location="cpu")
    print(module.graph, file=io.StringIO())
    return module


def torch_restoring(path: Path) -> Any:
    """The fair baseline, what tj.load asks of torch for its graphs: the load with the stored example inputs' types
    restored (``_restore_shapes``, which loads the inputs and propagates their shapes), and the inlined graph of
    every method the run shows (inlining compiles every submodule's method: TorchScript compiles them lazily)."""
    module = torch.jit.load(str(path), map_location="cpu", _restore_shapes=True)
    return [getattr(module, name).inlined_graph for name in method_names(module)]


def torch_floor(path: Path) -> Any:
    """The fair baseline plus every node's ``sourceRange()``, the text the run's original lines come from (its
    first call on a loaded graph unpickles the archive's debug ranges): what torch does for tj.load, before any
    of tj.load's own work."""
    graphs = torch_restoring(path)
    return [[n.sourceRange() for n in graph.nodes()] for graph in graphs]


def ours(path: Path) -> Any:
    return tj.load(path)


def profile(path: Path, top: int) -> None:
    ours(path)  # warm: the first load pays for imports and torch's op registry
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(3):
        ours(path)
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 warm-up round and 5 repetitions (default 2 and 15)")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions of tj.load instead")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures and raw timings here")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as folder:
        path, nodes = save_archive(Path(folder))
        if args.profile:
            profile(path, 25)
            return 0
        warmup, reps = (1, 5) if args.quick else (2, 15)
        info = machine()
        print(
            f"{info['platform']}, {info['cpus_usable']} CPUs, Python {info['python']}, torch {info['torch']}, 1 thread"
        )
        print(f"archive: {path.stat().st_size / 1e6:.1f} MB, {nodes} inlined nodes in forward; {warmup} + {reps} reps")
        cases = {
            "torch": lambda: torch_side(path),
            "restore": lambda: torch_restoring(path),
            "floor": lambda: torch_floor(path),
            "tj.load": lambda: ours(path),
        }
        times = interleaved(cases, reps, warmup)
        runs = [ours(path) for _ in range(3)]
        torch_s, ours_s = statistics.median(times["torch"]), statistics.median(times["tj.load"])
        ratio = ours_s / torch_s
        paired = statistics.median(o / t for o, t in zip(times["tj.load"], times["torch"], strict=True))
        phases = {k: statistics.median(r.timings.get(k, 0.0) for r in runs) for k in ("load", "extract", "findings")}
        verdict = "PASS" if ratio <= TARGET else "MISS"
        print(f"torch.jit.load + print(m.graph)   {torch_s * 1e3:7.1f} ms")
        restore_s = statistics.median(times["restore"])
        print(f"tj.load                           {ours_s * 1e3:7.1f} ms")
        floor_s = statistics.median(times["floor"])
        print(
            "  fair baseline: torch.jit.load(_restore_shapes=True) + every shown method's inlined_graph "
            f"{restore_s * 1e3:.1f} ms ({restore_s / torch_s:.2f}x the torch side); tj.load over it "
            f"{ours_s / restore_s:.2f}x"
        )
        print(
            f"  torch's floor: the fair baseline + every node's sourceRange() {floor_s * 1e3:.1f} ms "
            f"({floor_s / torch_s:.2f}x the torch side); tj.load over it {ours_s / floor_s:.2f}x"
        )
        print(
            "  of which: "
            + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in phases.items())
            + " (torch.jit.load is inside 'load')"
        )
        print(f"ratio {ratio:.2f}x (paired median {paired:.2f}x), target <= {TARGET}x: {verdict}")
        if args.json:
            figures = {
                "nodes": nodes,
                "torch_s": torch_s,
                "ours_s": ours_s,
                "restore_s": restore_s,
                "floor_s": floor_s,
                "ratio": ratio,
                "fair_ratio": ours_s / restore_s,
            }
            args.json.write_text(json.dumps({"machine": info, "figures": figures, "phases": phases, "raw": times}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
