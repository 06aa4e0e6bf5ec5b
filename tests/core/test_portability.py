"""A device baked into the graph, end to end: a note that leaves the badge green where the trace runs where it was
traced, a warning (amber) when it can matter for this run: a declared target device elsewhere, or inputs on another
device than the one baked in. Real models (BERT and GPT-2 built from configs, random weights) and, as the only
second device a CPU-only machine has, the meta device.

Not testable here: a trace made on CUDA (``cuda:0`` baked in) and served on ``"cuda"`` or on ``cuda:1``; the rule
for those is :func:`jupyter_tracejit.core.hazards.same_device`, tested on its own in ``test_hazards.py``."""

from __future__ import annotations

import os
import warnings

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj

from ..hf_models import bert_config

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")


def device_finding(run: tj.TraceRun):
    (found,) = [f for f in run.findings if f.kind == "device_constant"]
    return found


def device_reasons(run: tj.TraceRun) -> list[str]:
    """The verdict's reasons that make it amber for a baked device (the portability note is not one)."""
    return [r for r in run.verdict.reasons if "baked into the graph" in r and not r.startswith("portability: ")]


class GPT2Logits(nn.Module):
    """GPT-2 returns a dataclass, which the tracer refuses: a wrapper that returns the logits, as users write it."""

    def __init__(self) -> None:
        super().__init__()
        config = transformers.GPT2Config(n_embd=64, n_layer=2, n_head=2, use_cache=False, attn_implementation="eager")
        self.gpt2 = transformers.GPT2LMHeadModel(config).eval()

    def forward(self, ids):
        return self.gpt2(ids).logits


@pytest.fixture(scope="module")
def gpt2() -> nn.Module:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GPT2Logits()


def test_gpt2_traced_on_cpu_for_cpu_is_not_amber_for_its_position_ids(gpt2: nn.Module) -> None:
    # GPT-2 makes its position ids with torch.arange(n, device=input.device): "cpu" is baked into the graph
    ids = torch.randint(0, 1000, (2, 12))
    run = tj.trace(gpt2, (ids,), check_inputs=[(torch.randint(0, 1000, (3, 16)),)])
    assert run.ok
    finding = device_finding(run)
    assert finding.title == 'device "cpu" baked into the graph'
    assert finding.portability and finding.severity == "info" and finding.node_ids
    assert device_reasons(run) == []
    assert run.verdict.findings == 0
    assert any(r.startswith('portability: device "cpu" baked into the graph') for r in run.verdict.reasons)
    # what is left amber is honest: transformers' own frozen branch on a shape (masking_utils)
    assert [w.category for w in run.user_warnings] == ["to_bool"]

    served_on_gpu = run.request.run(target_device="cuda")
    assert served_on_gpu.options["target_device"] == "cuda"
    finding = device_finding(served_on_gpu)
    assert finding.severity == "warning" and 'The target device is "cuda"' in finding.message
    assert device_reasons(served_on_gpu) == ['warning: device "cpu" baked into the graph']
    assert served_on_gpu.verdict.problems == run.verdict.problems + 1


def test_gpt2_traced_on_another_device_bakes_that_device_and_is_amber_for_the_cpu() -> None:
    # the whole model and its inputs on meta (no data; torch's check cannot run there: transformers calls .item())
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_meta = GPT2Logits().to("meta")
    ids = torch.randint(0, 1000, (2, 12), device="meta")
    run = tj.trace(on_meta, (ids,), check_trace=False)
    assert run.error is None and device_finding(run).title == 'device "meta" baked into the graph'
    assert device_finding(run).severity == "info" and device_reasons(run) == []
    served_on_cpu = run.request.run(target_device="cpu")
    assert device_finding(served_on_cpu).severity == "warning"
    assert device_reasons(served_on_cpu) == ['warning: device "meta" baked into the graph']


def test_bert_traced_on_cpu_is_green_and_amber_for_a_gpu_target() -> None:
    torch.manual_seed(0)
    config = bert_config(transformers, hidden=64, vocab=30522, attn_implementation="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bert = transformers.BertModel(config).eval()
    ids = torch.randint(0, 1000, (2, 12))
    check = [(torch.randint(0, 1000, (3, 16)),)]
    run = tj.trace(bert, (ids,), strict=False, check_inputs=check)
    assert run.verdict.level == "ok" and run.verdict.problems == 0, run.verdict.reasons
    # with a padding mask, BERT builds its attention mask with the mask's device baked in
    mask = torch.ones(2, 12, dtype=torch.long)
    masked = dict(strict=False, check_inputs=[(check[0][0], torch.ones(3, 16, dtype=torch.long))])
    here = tj.trace(bert, (ids, mask), **masked)
    assert device_finding(here).severity == "info" and device_reasons(here) == []
    for target in ("cuda", "cuda:0"):
        served_on_gpu = tj.trace(bert, (ids, mask), target_device=target, **masked)
        assert served_on_gpu.verdict.level == "warning"
        assert device_reasons(served_on_gpu) == ['warning: device "cpu" baked into the graph']
    # "cpu" is where it was traced: the same device
    assert device_reasons(tj.trace(bert, (ids, mask), target_device="cpu", **masked)) == []


def positions_added(x):
    return x + torch.arange(x.shape[-1], device=x.device)


def times_one_on_cpu(x):
    return x * torch.ones((), device="cpu") + 1


def test_inputs_on_another_device_than_the_baked_one_are_amber() -> None:
    # a 0-dim CPU tensor combines with a tensor on any device: "cpu" baked in, the input on meta
    run = tj.trace(times_one_on_cpu, (torch.rand(2, 3, device="meta"),))
    finding = device_finding(run)
    assert finding.severity == "warning" and 'on "meta", not only "cpu"' in finding.message
    assert run.verdict.level == "warning" and device_reasons(run) == ['warning: device "cpu" baked into the graph']


def test_a_trace_made_on_one_device_is_green_there_and_amber_for_another() -> None:
    on_meta = (torch.rand(2, 3, device="meta"),)
    run = tj.trace(positions_added, on_meta, check_inputs=[(torch.rand(3, 5, device="meta"),)])
    assert run.verdict.level == "ok" and device_finding(run).severity == "info"
    elsewhere = tj.trace(positions_added, on_meta, target_device="cpu")
    assert elsewhere.verdict.level == "warning" and device_finding(elsewhere).severity == "warning"
    # and the warning is real: served on the CPU, the trace still makes its positions on meta
    with pytest.raises(RuntimeError, match="meta"):
        run.traced(torch.rand(2, 3))
