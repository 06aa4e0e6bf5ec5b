"""Real models built from transformers configs (offline, small: 2 layers, d=64), compiled with a second call of
another length: every break torch's explain reports is in the run at the user's line, the first call's graphs are
explain's, the recompilations a counting back end sees are the run's, and the compiled outputs are the eager ones.
A debugging hook that prints (a break users really meet inside a library's model) is found at the hook's line."""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

from jupyter_tracejit.core.compile.request import compile as tj_compile
from jupyter_tracejit.core.run import TraceRun

from ...hf_models import bert_config, gpt2_config, whisper_config
from .truth import count_compiles, explain

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

Case = tuple[torch.nn.Module, dict[str, Any], dict[str, Any]]


def ids(length: int, batch: int = 2) -> torch.Tensor:
    return torch.randint(0, 100, (batch, length))


def bert() -> Case:
    config = bert_config(transformers, hidden=64)
    model = transformers.BertModel(config).eval()
    a, b = ids(8), ids(12)
    return (
        model,
        {"input_ids": a, "attention_mask": torch.ones_like(a)},
        {"input_ids": b, "attention_mask": torch.ones_like(b)},
    )


def gpt2() -> Case:
    config = gpt2_config(transformers, embd=64, n_positions=64, use_cache=False)
    return transformers.GPT2Model(config).eval(), {"input_ids": ids(8)}, {"input_ids": ids(12)}


def llama() -> Case:
    config = transformers.LlamaConfig(
        vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
        intermediate_size=128, max_position_embeddings=64, use_cache=False,
    )  # fmt: skip
    return transformers.LlamaModel(config).eval(), {"input_ids": ids(8)}, {"input_ids": ids(12)}


def t5() -> Case:
    config = transformers.T5Config(
        vocab_size=100, d_model=64, d_kv=32, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=2,
        use_cache=False,
    )  # fmt: skip
    a, b = ids(8), ids(12)
    return (
        transformers.T5Model(config).eval(),
        {"input_ids": a, "decoder_input_ids": a},
        {"input_ids": b, "decoder_input_ids": b},
    )


def vit() -> Case:
    config = transformers.ViTConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, image_size=32, patch_size=8
    )
    model = transformers.ViTModel(config).eval()
    return model, {"pixel_values": torch.randn(2, 3, 32, 32)}, {"pixel_values": torch.randn(3, 3, 32, 32)}


def whisper() -> Case:
    config = whisper_config(
        transformers, d_model=64, layers=2, decoder_layers=2, heads=2, ffn=128, mel_bins=16, source_positions=32,
        vocab_size=100, max_target_positions=32, use_cache=False, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=1,
    )  # fmt: skip
    model = transformers.WhisperModel(config).eval()
    first = {"input_features": torch.randn(1, 16, 64), "decoder_input_ids": ids(6, 1)}
    return model, first, {"input_features": torch.randn(1, 16, 64), "decoder_input_ids": ids(9, 1)}


MODELS: dict[str, Callable[[], Case]] = {
    "bert": bert, "gpt2": gpt2, "llama": llama, "t5": t5, "vit": vit, "whisper": whisper,
}  # fmt: skip


def run_quietly(model: torch.nn.Module, first: dict[str, Any], second: dict[str, Any]) -> TraceRun:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        return tj_compile(model, (), first, calls=[second])


def agrees_with_torch(model: torch.nn.Module, first: dict[str, Any], second: dict[str, Any]) -> TraceRun:
    run = run_quietly(model, first, second)
    assert run.error is None, run.error
    truth = explain(model, (), first, files=[__file__])
    lines = {(os.path.abspath(b.file), b.line) for b in run.compile.graph_breaks}
    assert set(truth.break_lines) <= lines, (truth.break_lines, lines)
    assert len([r for r in run.compile.regions if r.call == 0]) == truth.graph_count
    counted = count_compiles(model, [((), first), ((), second)])
    assert sum(1 for r in run.compile.recompilations if r.compile_id) == counted.recompiles
    assert len(run.compile.regions) == len(counted.compiles)
    assert run.check is not None and run.check.ok, run.check
    again = TraceRun.from_json(run.to_json())
    assert again.to_json() == run.to_json()
    return run


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_real_model_agrees_with_torch(name: str) -> None:
    torch.manual_seed(0)
    model, first, second = MODELS[name]()
    run = agrees_with_torch(model, first, second)
    for r in run.compile.recompilations:
        assert r.kind == "size" and " was " in r.reason and r.hint
        # named as the caller passed the input, not as dynamo's source for it
        assert "kwargs[" not in r.reason and "L[" not in r.reason
    parameters = {n.attributes["name"] for g in run.graphs.values() for n in g.nodes if n.role == "getattr"}
    assert parameters and parameters <= set(dict(model.named_parameters())) | set(dict(model.named_buffers()))


@pytest.mark.slow
def test_a_printing_hook_breaks_bert_at_the_hooks_line() -> None:
    torch.manual_seed(0)
    model, first, second = bert()

    def hook(module: torch.nn.Module, inputs: Any, output: Any) -> None:
        print("layer out", output[0].shape)  # the break

    handle = model.encoder.layer[0].register_forward_hook(hook)
    try:
        run = agrees_with_torch(model, first, second)
    finally:
        handle.remove()
    line = hook.__code__.co_firstlineno + 1
    (gb,) = [b for b in run.compile.graph_breaks if b.line == line and not b.skipped_frame]
    assert os.path.abspath(gb.file) == os.path.abspath(__file__) and gb.count == 1  # the hook is on one layer
    # the encoder's loop over its layers holds the break: dynamo gave up on the function that loops
    (skipped,) = [b for b in run.compile.graph_breaks if b.skipped_frame]
    assert skipped.line == line and any(f.kind == "skipped_function" for f in run.findings)
    assert any(f.package == "transformers" for f in gb.stack)  # called from inside the library's model
    assert gb.before is not None and gb.after is not None
    assert run.graphs[gb.before.graph].nodes[gb.before.node].scope.startswith("encoder.layer.0")
