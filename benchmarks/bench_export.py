"""What the export back end costs over torch.export itself, and what matching a trace against an export costs.

Prints its figures (it asserts nothing; see README.md "Export benchmarks"). Each ratio is measured side by side in
one run: the cases take turns within each repetition, the order rotating, after warm-up rounds; the median counts.

    .venv/bin/python benchmarks/bench_export.py            # about 2 minutes on a 2-core machine
    .venv/bin/python benchmarks/bench_export.py --quick    # fewer repetitions
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import warnings
from collections.abc import Callable
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.capture_diff import compare_captures
from jupyter_tracejit.core.export.request import export

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_core import interleaved


def side_by_side(cases: dict[str, Callable[[], Any]], warmup: int, reps: int) -> dict[str, float]:
    """Median seconds per case, the cases interleaved and their order rotated each repetition."""
    return {name: statistics.median(values) for name, values in interleaved(cases, reps, warmup).items()}


def bert(transformers: Any) -> torch.nn.Module:
    config = transformers.BertConfig(
        hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256, vocab_size=1000
    )
    return transformers.BertModel(config).eval()


def gpt2(transformers: Any) -> torch.nn.Module:
    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            config = transformers.GPT2Config(n_embd=128, n_layer=2, n_head=4, vocab_size=1000, n_positions=64)
            self.gpt2 = transformers.GPT2Model(config)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.gpt2(x, use_cache=False).last_hidden_state

    return LastHidden().eval()


def row(figure: str, value: str, target: str, verdict: str) -> None:
    print(f"  {figure:<58} {value:>22}  {target:>18}  {verdict}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 warm-up round and 3 repetitions")
    args = parser.parse_args(argv)
    warmup, reps = (1, 3) if args.quick else (2, 7)
    try:
        import transformers
    except ImportError:
        print("transformers is not installed: pip install -e '.[tutorials]'", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, 1 thread")
    print(f"  {'figure':<58} {'value':>22}  {'target':>18}  verdict")
    torch.manual_seed(0)
    model = bert(transformers)
    ids = torch.randint(0, 1000, (2, 32))
    seq = torch.export.Dim("seq", min=2, max=64)
    for label, shapes in (("static", None), ("Dim('seq', 2, 64), check at min/mid/max", {"input_ids": {1: seq}})):
        medians = side_by_side(
            {
                "torch": lambda s=shapes: torch.export.export(model, (ids,), dynamic_shapes=s),
                "tj": lambda s=shapes: export(model, (ids,), dynamic_shapes=s, draft="never").to_json(),
            },
            warmup,
            reps,
        )
        ratio, extra = medians["tj"] / medians["torch"], medians["tj"] - medians["torch"]
        ok = medians["tj"] <= 1.10 * medians["torch"] + 0.050
        row(
            f"[1] export over torch.export.export, BERT-2L {label}",
            f"{ratio:.2f}x (+{extra * 1000:.0f} ms)",
            "<= 1.10x + 50 ms",
            ("PASS" if ok else "MISS") if shapes is None else "-",
        )
        print(f"      torch {medians['torch'] * 1000:.0f} ms, tj {medians['tj'] * 1000:.0f} ms (JSON included)")
    for name, make, inputs in (("BERT-2L", bert, (ids,)), ("GPT-2 (2 layers)", gpt2, (ids,))):
        m = make(transformers)
        traced = tj.trace(m, inputs, strict=False)
        exported = export(m, inputs, draft="never")
        assert traced.graph is not None and exported.graph is not None
        medians = side_by_side({"compare": lambda t=traced, e=exported: compare_captures(t.graph, e.graph)}, 1, reps)
        comparison = compare_captures(traced.graph, exported.graph)
        row(
            f"[2] trace vs export matched, {name}",
            f"{medians['compare'] * 1000:.1f} ms",
            "< 500 ms",
            "PASS" if medians["compare"] < 0.5 else "MISS",
        )
        print(f"      {comparison.summary()}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
