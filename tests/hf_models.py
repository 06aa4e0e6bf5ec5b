"""The configs of the small transformers models the tests and benchmarks build (random weights: nothing is
downloaded), one builder a family: a test or benchmark gives the sizes it needs, and the rest is written once.

The benchmarks import this module too (from the repository root)."""

from __future__ import annotations

from typing import Any


def bert_config(transformers: Any, *, hidden: int = 32, heads: int = 2, vocab: int = 100, **more: Any) -> Any:
    """A 2-layer BERT ``hidden`` wide, its feed-forward twice that."""
    return transformers.BertConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=2,
        num_attention_heads=heads,
        intermediate_size=2 * hidden,
        **more,
    )


def gpt2_config(transformers: Any, *, embd: int = 32, heads: int = 2, vocab: int = 100, **more: Any) -> Any:
    """A 2-layer GPT-2 ``embd`` wide."""
    return transformers.GPT2Config(vocab_size=vocab, n_embd=embd, n_layer=2, n_head=heads, **more)


def whisper_config(
    transformers: Any,
    *,
    d_model: int,
    layers: int,
    heads: int,
    ffn: int,
    mel_bins: int,
    source_positions: int,
    decoder_layers: int = 1,
    **more: Any,
) -> Any:
    """A Whisper whose encoder and decoder have the same width, heads and feed-forward (``layers`` encoder layers)."""
    return transformers.WhisperConfig(
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=decoder_layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=ffn,
        decoder_ffn_dim=ffn,
        num_mel_bins=mel_bins,
        max_source_positions=source_positions,
        **more,
    )
