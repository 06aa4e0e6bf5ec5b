"""What tracing and exporting cost over torch on a CUDA device (issue 28, item 6: at most 1.10x torch on real models,
as on CPU). Skipped, with a line saying so, where there is no CUDA device.

Prints its figures (asserts nothing). Each ratio is measured side by side in one run: the cases take turns within
each repetition, the order rotating, after warm-up rounds; the median counts, and the paired ratios' median is
printed beside it. ``torch.cuda.synchronize()`` ends every timed call, so work queued on the device is counted on the
side that queued it.

    .venv/bin/python benchmarks/bench_cuda.py            # GPT-2 (12 layers) and BERT-base on cuda:0
    .venv/bin/python benchmarks/bench_cuda.py --quick    # fewer repetitions
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
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.export.request import export
from jupyter_tracejit.core.torch_logs import captured_torch_logs


def timed(fn: Callable[[], Any]) -> float:
    gc.collect()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def side_by_side(cases: dict[str, Callable[[], Any]], warmup: int, reps: int) -> dict[str, list[float]]:
    names = list(cases)
    for _ in range(warmup):
        for name in names:
            cases[name]()
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(reps):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        for name in order:
            seconds[name].append(timed(cases[name]))
    return seconds


def report(figure: str, seconds: dict[str, list[float]], tj_case: str, target: float) -> None:
    ours, theirs = seconds[tj_case], seconds["torch"]
    ratio = statistics.median(ours) / statistics.median(theirs)
    paired = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
    verdict = "PASS" if ratio <= target else "MISS"
    print(f"  {figure:<58} {ratio:>6.2f}x (paired {paired:.2f}x)  <= {target:.2f}x  {verdict}")
    print(f"      torch {statistics.median(theirs) * 1000:.0f} ms, tj {statistics.median(ours) * 1000:.0f} ms")


def models(transformers: Any, device: torch.device) -> list[tuple[str, torch.nn.Module, tuple[Any, ...]]]:
    class GPT2(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gpt2 = transformers.GPT2Model(transformers.GPT2Config(use_cache=False))

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.gpt2(ids, use_cache=False).last_hidden_state

    class Bert(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = transformers.BertModel(transformers.BertConfig())

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.bert(ids).last_hidden_state

    ids = torch.randint(0, 1000, (2, 64), device=device)
    return [("GPT-2 (12 layers)", GPT2().eval().to(device), (ids,)), ("BERT-base", Bert().eval().to(device), (ids,))]


def torch_export(model: torch.nn.Module, args: tuple[Any, ...]) -> Callable[[], Any]:
    def call() -> Any:
        with captured_torch_logs():
            try:
                return torch.export.export(model, args)
            except Exception as e:  # a refusal's time counts too
                return e

    return call


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 warm-up round and 3 repetitions")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA device: the CUDA benchmark is skipped (run it on a machine with one)")
        return 0
    try:
        import transformers
    except ImportError:
        print("transformers is not installed: pip install -e '.[tutorials]'", file=sys.stderr)
        return 2
    transformers.logging.set_verbosity_error()
    warnings.simplefilter("ignore")
    warmup, reps = (1, 3) if args.quick else (2, 9)
    device = torch.device("cuda", 0)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(device)}, load {os.getloadavg()[0]:.2f}")
    torch.manual_seed(0)
    for name, model, inputs in models(transformers, device):
        seconds = side_by_side(
            {
                "torch": lambda m=model, a=inputs: torch.jit.trace(m, a, strict=False),
                "tj": lambda m=model, a=inputs: tj.trace(m, a, strict=False).to_json(),
            },
            warmup,
            reps,
        )
        report(f"tj.trace (checked) vs torch.jit.trace, {name}", seconds, "tj", 1.10)
        run = tj.trace(model, inputs, strict=False)
        print(f"      tj.trace timings: {', '.join(f'{k} {v * 1000:.0f} ms' for k, v in run.timings.items())}")
        seconds = side_by_side(
            {"torch": torch_export(model, inputs), "tj": lambda m=model, a=inputs: export(m, a).to_json()},
            warmup,
            reps,
        )
        report(f"tj.export (checked) vs torch.export.export, {name}", seconds, "tj", 1.10)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
