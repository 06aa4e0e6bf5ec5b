"""The fixed cost of one ``tj.trace`` call: many tiny traces against ``torch.jit.trace`` side by side.

A tiny function costs torch a few milliseconds to trace and check; whatever ``tj.trace`` adds per call (finding the
caller, guarding module state and warnings, the run's records, its JSON) is what this measures. Prints its figures
(asserts nothing): blocks of calls interleaved, the order rotating, the median per call; and the extra time per call
in microseconds. Run it against another checkout (``PYTHONPATH=...``) for a before/after on the same machine.

    .venv/bin/python benchmarks/bench_calls.py            # about 2 minutes
    .venv/bin/python benchmarks/bench_calls.py --quick
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable

import torch

import jupyter_tracejit as tj


def tiny(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) * 2 + 1


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x).relu()


def per_call(calls: dict[str, Callable[[], object]], block: int, blocks: int) -> dict[str, list[float]]:
    """Seconds per call of each case, one figure per block of ``block`` calls, the cases interleaved by block."""
    names = list(calls)
    for name in names:  # warm-up
        for _ in range(block):
            calls[name]()
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for b in range(blocks):
        for name in names[b % len(names) :] + names[: b % len(names)]:
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(block):
                calls[name]()
            seconds[name].append((time.perf_counter() - t0) / block)
    return seconds


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer blocks")
    args = parser.parse_args(argv)
    block, blocks = (20, 5) if args.quick else (50, 9)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    print(f"jupyter_tracejit from {os.path.dirname(tj.__file__)}")
    print(f"torch {torch.__version__}, load {os.getloadavg()[0]:.2f}, 1 thread, {blocks} blocks of {block} calls")
    x = torch.randn(3, 4)
    module = Tiny().eval()
    for label, target in (("a function (relu, mul, add)", tiny), ("a module (Linear + relu)", module)):
        for check in (True, False):
            seconds = per_call(
                {
                    "torch": lambda t=target, c=check: torch.jit.trace(t, (x,), check_trace=c),
                    "tj": lambda t=target, c=check: tj.trace(t, (x,), check_trace=c),
                },
                block,
                blocks,
            )
            ours, theirs = statistics.median(seconds["tj"]), statistics.median(seconds["torch"])
            paired = statistics.median(a / b for a, b in zip(seconds["tj"], seconds["torch"], strict=True))
            print(
                f"  tj.trace vs torch.jit.trace, {label}, check_trace={check}: {ours / theirs:.2f}x "
                f"(paired {paired:.2f}x), +{(ours - theirs) * 1e6:.0f} us per call "
                f"(torch {theirs * 1e3:.2f} ms, tj {ours * 1e3:.2f} ms)"
            )
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
