"""Advice that knows library code (core/export/advice.py, refusal.py, places.py): a dim refused or specialised in
``nn.LSTM``, in transformers' Whisper encoder or in Wav2Vec2's convolutions is shown at the user's line that called
into it, beside the library's line, with the fixes that apply there ranked (a model fact first; Dim.AUTO where the
guards hold for every size and torch only failed to prove them; torch's suggested fix in the user's own
dynamic_shapes); and the draft, no longer run before the refusal, is offered and joins the run on request."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
import torch
import torch.nn as nn
from torch.export import Dim

import jupyter_tracejit as tj
from jupyter_tracejit.core.export.advice import suggested_spec
from jupyter_tracejit.core.export.dims import GivenShapes
from jupyter_tracejit.core.export.guard_eval import shape_of, sizes_where
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.core.export.request import export
from jupyter_tracejit.core.run import TraceRun

from .. import models
from ..hf_models import whisper_config
from ..models import TAGGER_LINE, Tagger

pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

THIS_FILE = __file__


def line_of(marker: str) -> int:
    with open(THIS_FILE) as f:
        return next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}"))


def test_an_lstm_fixes_the_length_and_the_advice_says_so_at_the_users_line() -> None:
    run = export(Tagger().eval(), (torch.randn(2, 7, 4),), dynamic_shapes={"x": {1: Dim("seq", min=2, max=64)}})
    assert run.error is not None and (run.error.file, run.error.line) == (models.__file__, TAGGER_LINE)
    assert run.export is not None
    (advice,) = run.export.advice
    assert (advice.kind, advice.source, advice.input, advice.dim) == ("refused", "x.size()[1]", "x", 1)
    assert advice.given == "Dim('seq', min=2, max=64)" and re.fullmatch(r"Eq\(s\d+, 7\)", advice.exprs[0])
    assert advice.library == "torch.nn" and advice.library_file.endswith("torch/nn/modules/rnn.py")
    assert advice.library_line > 0 and advice.library_code
    kinds = [f.kind for f in advice.fixes]
    assert kinds[0] == "model_fact" and "rewrite" not in kinds  # a library's line is not the user's to rewrite
    assert "nn.LSTM fixes the sequence length under export" in advice.fixes[0].text
    assert advice.fixes[0].dynamic_shapes == "{'x': None}"  # static: in the user's own dynamic_shapes
    assert "torch.nn's code (torch/nn/modules/rnn.py:" in run.error.hint and "called from this line" in run.error.hint


@pytest.fixture(scope="module")
def transformers() -> Any:
    module = pytest.importorskip("transformers")
    module.logging.set_verbosity_error()
    return module


class Encoder(nn.Module):
    """The user's own wrapper around transformers' Whisper encoder."""

    def __init__(self, transformers: Any) -> None:
        super().__init__()
        config = whisper_config(
            transformers,
            d_model=32,
            layers=1,
            heads=2,
            ffn=32,
            mel_bins=8,
            source_positions=16,
            max_target_positions=16,
        )
        self.encoder = transformers.models.whisper.modeling_whisper.WhisperEncoder(config)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.encoder(features).last_hidden_state  # WHISPER LINE


def test_whisper_needs_twice_its_source_positions_frames(transformers: Any) -> None:
    model = Encoder(transformers).eval()
    frames = Dim("frames", min=2, max=64)
    run = export(model, (torch.randn(1, 8, 32),), dynamic_shapes={"features": {2: frames}})
    assert run.error is not None and run.error.tag == "constraint_violation"
    assert (run.error.file, run.error.line) == (THIS_FILE, line_of("WHISPER LINE")), run.error
    assert run.export is not None
    (advice,) = run.export.advice
    assert advice.library == "transformers" and advice.library_file.endswith("whisper/modeling_whisper.py")
    assert "expected_seq_length" in advice.library_code
    fact = advice.fixes[0]
    assert fact.kind == "model_fact" and "2 x max_source_positions = 32 input frames" in fact.text
    assert fact.spec == "None" and fact.dynamic_shapes == "{'features': None}"
    assert "rewrite" not in [f.kind for f in advice.fixes]
    assert "transformers' code (transformers/models/whisper/modeling_whisper.py:" in run.error.hint
    # Dim.AUTO: accepted, the frame count a constant at the same places, with the same fact
    auto = export(model, (torch.randn(1, 8, 32),), dynamic_shapes={"features": {2: Dim.AUTO}})
    assert auto.error is None and auto.export is not None
    spec = next(g for g in auto.export.guards if g.kind == "specialization")
    assert (spec.file, spec.line, spec.library) == (THIS_FILE, line_of("WHISPER LINE"), "transformers")
    found = next(f for f in auto.findings if f.kind == "dim_specialized")
    assert "in transformers' code" in found.message and "2 x max_source_positions" in found.hint
    assert "Dim.AUTO" not in found.hint  # it was Dim.AUTO already


def test_wav2vec2_guards_hold_for_every_size_and_torch_only_failed_to_prove_them(transformers: Any) -> None:
    config = transformers.Wav2Vec2Config(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        conv_dim=(8, 8),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        vocab_size=32,
    )
    model = transformers.Wav2Vec2Model(config).eval()
    samples = Dim("samples", min=100, max=4000)
    run = export(model, (torch.randn(1, 400),), dynamic_shapes={"input_values": {1: samples}})
    assert run.error is not None and run.export is not None and run.error.file == THIS_FILE
    (advice,) = run.export.advice
    assert advice.holds is True and advice.library == "transformers"
    assert advice.suggested == "10*Dim('_samples', min=10, max=400)"  # torch's samples = 10*_samples, in Dims
    auto, suggested = advice.fixes[0], next(f for f in advice.fixes if f.kind == "suggested")
    assert auto.kind == "auto" and "hold for every size of samples's range [100, 4000]" in auto.text
    assert auto.dynamic_shapes == "{'input_values': {1: Dim.AUTO}}"
    assert "narrower than needed" in suggested.text
    assert suggested.dynamic_shapes == "{'input_values': {1: 10*Dim('_samples', min=10, max=400)}}"
    assert "which holds for every size of its range" in run.error.hint


def test_torchs_suggested_fix_is_written_as_a_spec() -> None:
    text = "\n  _n = Dim('_n', min=1, max=16)\n  n = 4*_n\n"
    assert suggested_spec(text, "n") == "4*Dim('_n', min=1, max=16)"
    assert suggested_spec("\n  frames = 32\n", "frames") == "None"
    assert suggested_spec(text, "other") is None
    shapes = GivenShapes({"x": {0: Dim("b"), 1: Dim("n", min=2, max=64)}, "mask": None}, ["x", "mask"])
    assert shapes.with_spec("x", 1, "4*Dim('_n', min=1, max=16)") == (
        "{'x': {0: Dim('b', min=0), 1: 4*Dim('_n', min=1, max=16)}, 'mask': None}"
    )
    assert shapes.with_spec("x", 1, None) == "{'x': {0: Dim('b', min=0)}, 'mask': None}"
    assert [(i, d) for i, d, _ in shapes.named("n")] == [("x", 1)]
    positional = GivenShapes(({0: Dim.AUTO},), ["x"])
    assert positional.with_spec("x", 0, None) == "(None,)"


def test_guards_are_judged_size_by_size() -> None:
    import sympy

    s = sympy.Symbol("s0", integer=True, positive=True)
    from torch.utils._sympy.functions import FloorDiv, Mod

    assert shape_of(sizes_where([sympy.Eq(Mod(s, 4), 0)], "s0", 2, 64) or [], 2, 64) == ("multiple", 4, 64, 4)
    assert shape_of(sizes_where([s <= 448], "s0", 2, 1000) or [], 2, 1000) == ("range", 2, 448, 1)
    holds = sizes_where([sympy.Ne(Mod(1, FloorDiv(s, 10) - 1), 0)], "s0", 100, 4000)
    assert holds is not None and shape_of(holds, 100, 4000)[0] == "all"
    assert sizes_where([s > 1], "s0", 2, 10**9) is None  # too wide to judge: no claim made


class Loop(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(x.size(0)):  # LOOP LINE
            x = x + i
        return x


def test_the_draft_is_offered_and_joins_the_run_on_request() -> None:
    run = tj.export(Loop(), (torch.randn(3),), dynamic_shapes={"x": {0: Dim("n", min=2, max=8)}})
    assert run.error is not None and run.error.line == line_of("LOOP LINE") and not run.graphs
    assert run.export is not None and run.export.draft is None and "draft" not in run.timings
    offer = run.export.draft_offer
    assert offer is not None and offer.status == "offered" and offer.how == "run.draft()" and offer.adds
    assert run.draft() is run
    assert run.export.draft_offer is not None and run.export.draft_offer.status == "ran"
    assert run.export.draft is not None and run.graph is not None and run.timings["draft"] > 0
    assert run.error.line == line_of("LOOP LINE") and run.export.advice  # the refusal's advice kept
    assert TraceRun.from_json(run.to_json()).to_json() == run.to_json()
    with pytest.raises(ValueError, match="no live model"):
        TraceRun.from_json(run.to_json()).draft()
    with pytest.raises(ValueError, match="a trace run has no draft"):
        tj.trace(torch.relu, (torch.randn(2),)).draft()
    never = tj.export(Loop(), (torch.randn(3),), dynamic_shapes={"x": {0: Dim("n", min=2, max=8)}}, draft="never")
    assert never.export is not None and never.export.draft_offer is None


def test_a_refused_loop_compared_with_its_trace_points_at_the_refused_line() -> None:
    shapes = {"x": {0: Dim("n", min=2, max=8)}}
    run = tj.export(Loop(), (torch.randn(3),), dynamic_shapes=shapes, compare_trace=True)
    assert run.compared is None  # nothing exported to compare with, until the draft
    assert any(f.kind == "compare_trace" for f in run.findings)
    run.draft()
    assert run.compared is not None and not any(f.kind == "compare_trace" for f in run.findings)
    first = run.compared.comparison.lines[0]
    assert (first.reason, first.file, first.line) == ("refused", THIS_FILE, line_of("LOOP LINE"))
    summary = run.compared.comparison.summary()
    # the draft unrolled the loop as the trace did: said so, never a reassuring "N of N matched (100%)"
    assert summary.startswith(f"export refused line {line_of('LOOP LINE')}") and "100%" not in summary
    assert "draft_export's graph" in summary and "example's sizes only" in summary
    at_once = tj.export(Loop(), (torch.randn(3),), dynamic_shapes=shapes, compare_trace=True, draft="on_failure")
    assert at_once.compared is not None and at_once.compared.comparison.lines[0].reason == "refused"
    assert TraceRun.from_json(at_once.to_json()).to_json() == at_once.to_json()


@pytest.mark.slow  # ~12 s: a Funnel export and its check
def test_every_specialisation_of_funnel_has_its_line(transformers: Any) -> None:
    config = transformers.FunnelConfig(
        vocab_size=100, block_sizes=[1, 1], d_model=16, n_head=2, d_head=8, d_inner=32, num_decoder_layers=1
    )
    model = transformers.FunnelModel(config).eval()
    ids, mask = torch.randint(0, 100, (2, 16)), torch.ones(2, 16, dtype=torch.long)
    auto = {0: Dim.AUTO, 1: Dim.AUTO}
    run = export(model, (ids,), {"attention_mask": mask}, dynamic_shapes={"input_ids": auto, "attention_mask": auto})
    assert run.error is None and run.export is not None, run.error
    specialised = run.export.guards_of("specialization")
    assert len(specialised) >= 2  # the sequence length, fixed at several places of Funnel's code
    for guard in specialised:  # the second one had no line (a replacement torch made without a guard)
        assert guard.file == THIS_FILE and guard.library == "transformers" and guard.library_line, guard
        assert guard.node_ids, guard
    assert {g.library_file.rsplit("/", 1)[-1] for g in specialised} == {"modeling_funnel.py"}


class Masked(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return x * mask


def test_one_dim_given_to_two_inputs_is_one_symbol() -> None:
    batch = Dim("batch", min=2, max=8)
    run = export(Masked(), (torch.randn(3, 4), torch.randn(3, 4)), dynamic_shapes={"x": {0: batch}, "mask": {0: batch}})
    assert run.export is not None
    assert [s.sources for s in run.export.symbols] == [["x.size()[0]", "mask.size()[0]"]]
