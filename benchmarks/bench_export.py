"""What the export back end costs over torch.export itself, and what matching a trace against an export costs.

Prints its figures (it asserts nothing; see README.md "Export benchmarks"). Each ratio is measured side by side in
one run: the cases take turns within each repetition, the order rotating, after warm-up rounds; the median counts.
The same script runs against another checkout of the package (``PYTHONPATH=/path/to/checkout``) for a before/after
on the same machine: it uses only ``tj.export``'s options every version has (``draft="never"``, the default).

    .venv/bin/python benchmarks/bench_export.py            # about 6 minutes on a 2-core machine
    .venv/bin/python benchmarks/bench_export.py --quick    # fewer repetitions
    .venv/bin/python benchmarks/bench_export.py --with-draft   # also the old default: the draft on every refusal
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
from torch.export import Dim

import jupyter_tracejit as tj
from jupyter_tracejit.core.capture_diff import compare_captures
from jupyter_tracejit.core.export.request import export
from jupyter_tracejit.core.torch_logs import captured_torch_logs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import interleaved

from tests.hf_models import bert_config, gpt2_config, whisper_config


def side_by_side(cases: dict[str, Callable[[], Any]], warmup: int, reps: int) -> dict[str, float]:
    """Median seconds per case, the cases interleaved and their order rotated each repetition."""
    return {name: statistics.median(values) for name, values in interleaved(cases, reps, warmup).items()}


def torch_export(model: torch.nn.Module, args: tuple[Any, ...], shapes: Any) -> Callable[[], Any]:
    """torch.export.export, a refusal caught (its time counts), its log kept off the terminal as tj's is."""

    def call() -> Any:
        with captured_torch_logs():
            try:
                return torch.export.export(model, args, dynamic_shapes=shapes)
            except Exception as e:
                return e

    return call


# -- models (built from configs: nothing downloaded) -----------------------------------------------------------------
def bert(transformers: Any) -> torch.nn.Module:
    config = bert_config(transformers, hidden=128, heads=4, vocab=1000)
    return transformers.BertModel(config).eval()


def gpt2(transformers: Any) -> torch.nn.Module:
    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            config = gpt2_config(transformers, embd=128, heads=4, vocab=1000, n_positions=64)
            self.gpt2 = transformers.GPT2Model(config)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.gpt2(x, use_cache=False).last_hidden_state

    return LastHidden().eval()


def whisper_encoder(transformers: Any) -> torch.nn.Module:
    """Whisper-tiny's encoder (4 layers, d_model 384, 80 mel bins, 1500 positions: 3000 frames), random weights."""
    config = whisper_config(transformers, d_model=384, layers=4, heads=6, ffn=1536, mel_bins=80, source_positions=1500)

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = transformers.models.whisper.modeling_whisper.WhisperEncoder(config)

        def forward(self, features: torch.Tensor) -> torch.Tensor:
            return self.encoder(features).last_hidden_state

    return Encoder().eval()


def resnet(transformers: Any) -> torch.nn.Module:
    """A ResNet-18 (basic blocks, 2-2-2-2, 64..512 channels), random weights."""
    config = transformers.ResNetConfig(
        embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2], layer_type="basic"
    )
    return transformers.ResNetModel(config).eval()


def row(figure: str, value: str, target: str, verdict: str) -> None:
    print(f"  {figure:<62} {value:>22}  {target:>18}  {verdict}")


def ratio_row(figure: str, medians: dict[str, float], tj_case: str, target: float, extra_ms: float = 0.0) -> None:
    ratio, extra = medians[tj_case] / medians["torch"], medians[tj_case] - medians["torch"]
    ok = medians[tj_case] <= target * medians["torch"] + extra_ms / 1000
    goal = f"<= {target:.2f}x" + (f" + {extra_ms:.0f} ms" if extra_ms else "")
    row(figure, f"{ratio:.2f}x ({extra * 1000:+.0f} ms)", goal, "PASS" if ok else "MISS")
    times = ", ".join(f"{name} {seconds * 1000:.0f} ms" for name, seconds in medians.items())
    print(f"      {times}")


# -- the figures --------------------------------------------------------------------------------------------------
def refused(transformers: Any, warmup: int, reps: int, with_draft: bool) -> None:
    model = whisper_encoder(transformers)
    features = torch.randn(1, 80, 3000)
    shapes = {"features": {2: Dim("frames", min=2, max=3000)}}
    cases = {
        "torch": torch_export(model, (features,), shapes),
        "tj": lambda: export(model, (features,), dynamic_shapes=shapes),
    }
    if with_draft:  # what the default did before: draft_export before the refusal is shown
        cases["tj, draft on failure"] = lambda: export(model, (features,), dynamic_shapes=shapes, draft="on_failure")
    medians = side_by_side(cases, warmup, reps)
    ratio_row("[1] refused export, Whisper encoder, Dim('frames'), default", medians, "tj", 1.2)
    run = export(model, (features,), dynamic_shapes=shapes)
    where = f"{os.path.basename(run.error.file)}:{run.error.line}" if run.error is not None else "-"
    print(f"      refused at {where}: {run.error.hint[:110] if run.error is not None else run.summary()}...")
    if with_draft:
        ratio_row("    the old default (draft_export on every refusal)", medians, "tj, draft on failure", 1.2)


def checked(transformers: Any, warmup: int, reps: int) -> None:
    ids = torch.randint(0, 1000, (2, 32))
    for label, model, args, shapes in (
        ("BERT-2L, Dim('seq', 2, 64)", bert(transformers), (ids,), {"input_ids": {1: Dim("seq", min=2, max=64)}}),
        (
            "ResNet-18, Dim('batch', 1, 32), 3x64x64",
            resnet(transformers),
            (torch.randn(2, 3, 64, 64),),
            {"pixel_values": {0: Dim("batch", min=1, max=32)}},
        ),
        (
            "Whisper encoder, Dim('batch', 2, 16)",
            whisper_encoder(transformers),
            (torch.randn(2, 80, 3000),),
            {"features": {0: Dim("batch", min=2, max=16)}},
        ),
    ):
        medians = side_by_side(
            {
                "torch": torch_export(model, args, shapes),
                "tj": lambda m=model, a=args, s=shapes: export(m, a, dynamic_shapes=s).to_json(),
            },
            warmup,
            reps,
        )
        ratio_row(f"[2] accepted export + its default check, {label}", medians, "tj", 1.3)
        run = export(model, args, dynamic_shapes=shapes)
        cases = run.check.cases if run.check is not None else []
        check_ms = run.timings.get("check", 0.0) * 1000
        print(
            f"      check: {run.summary().split('; ', 1)[-1]}, {check_ms:.0f} ms; cases: "
            + "; ".join(c.label for c in cases)
        )


def never(transformers: Any, warmup: int, reps: int) -> None:
    model = bert(transformers)
    ids = torch.randint(0, 1000, (2, 32))
    medians = side_by_side(
        {
            "torch": torch_export(model, (ids,), None),
            "tj": lambda: export(model, (ids,), draft="never").to_json(),
        },
        warmup,
        reps,
    )
    ratio_row("[3] draft='never', BERT-2L static (JSON included)", medians, "tj", 1.10, 50)


def compared(transformers: Any, reps: int) -> None:
    ids = torch.randint(0, 1000, (2, 32))
    for name, make in (("BERT-2L", bert), ("GPT-2 (2 layers)", gpt2)):
        m = make(transformers)
        traced = tj.trace(m, (ids,), strict=False)
        exported = export(m, (ids,), draft="never")
        assert traced.graph is not None and exported.graph is not None
        medians = side_by_side({"compare": lambda t=traced, e=exported: compare_captures(t.graph, e.graph)}, 1, reps)
        comparison = compare_captures(traced.graph, exported.graph)
        row(
            f"[4] trace vs export matched, {name}",
            f"{medians['compare'] * 1000:.1f} ms",
            "< 500 ms",
            "PASS" if medians["compare"] < 0.5 else "MISS",
        )
        print(f"      {comparison.summary()}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 warm-up round and 3 repetitions")
    parser.add_argument("--with-draft", action="store_true", help="also time the old default (draft on refusal)")
    args = parser.parse_args(argv)
    warmup, reps = (1, 3) if args.quick else (2, 7)
    try:
        import transformers
    except ImportError:
        print("transformers is not installed: pip install -e '.[tutorials]'", file=sys.stderr)
        return 2
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    print(f"jupyter_tracejit from {os.path.dirname(tj.__file__)}")
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, 1 thread")
    print(f"  {'figure':<62} {'value':>22}  {'target':>18}  verdict")
    refused(transformers, warmup, reps, args.with_draft)
    checked(transformers, warmup, reps)
    never(transformers, warmup, reps)
    compared(transformers, reps)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
