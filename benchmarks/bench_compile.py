"""What ``tj.compile`` costs over what a user runs by hand for the same answers: ``torch.compile(backend="eager")``
called with the same inputs (its recompilations) plus ``torch._dynamo.explain`` on the first ones (its breaks).

Prints its figures (it asserts nothing). Each ratio is measured side by side in one run: the two cases take turns
within each repetition, the order rotating, after warm-up rounds; the median counts. Before each by-hand case
dynamo is reset (a user's first compile of the model); ``tj.compile`` needs no reset (its runs start from nothing
learned and leave nothing behind). The target: at most 1.15x.

    .venv/bin/python benchmarks/bench_compile.py            # about 4 minutes on a 2-core machine
    .venv/bin/python benchmarks/bench_compile.py --quick    # 1 warm-up round and 3 repetitions
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import statistics
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from jupyter_tracejit.core.compile.request import compile as tj_compile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import interleaved

from tests.hf_models import bert_config

TARGET = 1.15
Inputs = tuple[tuple[Any, ...], Mapping[str, Any]]


def bert() -> tuple[torch.nn.Module, list[Inputs]]:
    import transformers

    config = bert_config(transformers, hidden=64, vocab=1000)
    model = transformers.BertModel(config).eval()
    calls = []
    for length in (8, 12, 16):
        ids = torch.randint(0, 1000, (2, length))
        calls.append(((), {"input_ids": ids, "attention_mask": torch.ones_like(ids)}))
    return model, calls


class ConvNet(torch.nn.Module):
    """A small vision model: three conv-batchnorm-relu blocks, pooling and a classifier."""

    def __init__(self) -> None:
        super().__init__()
        layers: list[torch.nn.Module] = []
        for cin, cout in ((3, 16), (16, 32), (32, 64)):
            layers += [torch.nn.Conv2d(cin, cout, 3, padding=1), torch.nn.BatchNorm2d(cout), torch.nn.ReLU()]
            layers.append(torch.nn.MaxPool2d(2))
        self.features = torch.nn.Sequential(*layers)
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.features(x)
        return self.head(h.mean(dim=(2, 3)))


def convnet() -> tuple[torch.nn.Module, list[Inputs]]:
    return ConvNet().eval(), [((torch.randn(n, 3, 32, 32),), {}) for n in (2, 4, 8)]


def by_hand(model: torch.nn.Module, calls: Sequence[Inputs]) -> Any:
    """What a user runs: torch.compile with the eager back end on every input set, then explain on the first."""
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="eager")
    for args, kwargs in calls:
        compiled(*args, **kwargs)
    args, kwargs = calls[0]
    return torch._dynamo.explain(model)(*args, **kwargs)


def with_tj(model: torch.nn.Module, calls: Sequence[Inputs]) -> Any:
    (args, kwargs), rest = calls[0], calls[1:]
    run = tj_compile(model, args, dict(kwargs) or None, calls=[dict(k) if k else a for a, k in rest])
    if run.error is not None:
        raise RuntimeError(str(run.error))
    return run


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 warm-up round and 3 repetitions")
    options = parser.parse_args(argv)
    warmup, reps = (1, 3) if options.quick else (2, 7)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    print(
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"torch {torch.__version__}, 1 thread; load {os.getloadavg()[0]:.2f}; {warmup} warm-up + {reps} repetitions"
    )
    print(f"  {'model':<10} {'by hand (s)':>12} {'tj.compile (s)':>15} {'ratio':>7} {'paired':>7}  target  verdict")
    worst = 0.0
    for name, make in (("BERT-2L", bert), ("convnet", convnet)):
        model, calls = make()
        run = with_tj(model, calls)
        regions, breaks, recompiles = (
            len(run.compile.regions),
            len(run.compile.graph_breaks),
            len(run.compile.recompilations),
        )
        with contextlib.redirect_stdout(io.StringIO()):
            seconds = interleaved(
                {"by hand": lambda m=model, c=calls: by_hand(m, c), "tj": lambda m=model, c=calls: with_tj(m, c)},
                reps,
                warmup,
            )
        hand, tj = statistics.median(seconds["by hand"]), statistics.median(seconds["tj"])
        paired = statistics.median(t / h for t, h in zip(seconds["tj"], seconds["by hand"], strict=True))
        ratio = tj / hand
        worst = max(worst, ratio)
        verdict = "PASS" if ratio <= TARGET else "MISS"
        print(f"  {name:<10} {hand:>12.3f} {tj:>15.3f} {ratio:>6.2f}x {paired:>6.2f}x  <= {TARGET}x  {verdict}")
        print(f"  {'':<10} ({len(calls)} calls: {regions} graphs, {breaks} breaks, {recompiles} recompilations)")
    print(f"load {os.getloadavg()[0]:.2f} at the end; worst ratio {worst:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
