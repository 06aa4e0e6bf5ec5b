"""Corners where the product must do what torch.jit.trace does (torch's behaviour is asserted beside ours), and
say it in the user's terms: exceptions inside the check, already-scripted modules, nondeterministic ops that are
not random in this configuration, locations that would otherwise be torch's own files, and error hints."""

from __future__ import annotations

import sys
import warnings

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.caller import call_site
from jupyter_tracejit.core.torchscript.options import TRACE_TABLE

from ..models import ListOfDicts
from .oracle import torch_exception

HERE = __file__


# -- an exception inside torch's check ----------------------------------------------------------------------


def needs_grad(x):
    y = x * 2
    assert y.requires_grad  # false under the check's torch.no_grad()
    return y


def fails_on_the_check_input(x):
    if x.shape[0] > 3:
        raise ValueError("only batches of up to 3")
    return x + 1


def test_an_exception_in_the_check_is_the_run_error_as_torch_exception():
    x = torch.rand(3, requires_grad=True)
    assert isinstance(torch_exception(needs_grad, (x,)), AssertionError)
    run = tj.trace(needs_grad, (x,))
    assert not run.ok and run.traced is None
    assert run.error.phase == "check" and run.error.type == "AssertionError"
    assert run.error.file == HERE and run.error.line == needs_grad.__code__.co_firstlineno + 2
    assert "torch.no_grad()" in run.error.hint and "check_trace=False" in run.error.hint
    assert run.check is not None and run.check.cases[0].exception is not None  # kept for the explorer


def test_torch_stops_at_the_first_check_set_that_raises_and_so_do_we():
    x = torch.rand(2, 4)
    assert torch_exception(fails_on_the_check_input, (x,), check_inputs=[(torch.rand(5, 4),), (x,)]) is not None
    run = tj.trace(fails_on_the_check_input, (x,), check_inputs=[(torch.rand(5, 4),), (x,)])
    assert run.error.phase == "check" and "only batches of up to 3" in run.error.message
    assert len(run.check.cases) == 1
    assert run.python_runs == 2  # the trace and the re-trace that raised: the second set never ran


def test_check_inputs_of_the_wrong_arity_are_the_run_error():
    assert torch_exception(lambda x: x + 1, (torch.rand(2),), check_inputs=[(torch.rand(2), torch.rand(2))]) is not None
    run = tj.trace(lambda x: x + 1, (torch.rand(2),), check_inputs=[(torch.rand(2), torch.rand(2))])
    assert not run.ok and run.error.phase == "check" and run.traced is None


# -- an already-scripted module ----------------------------------------------------------------------------


def double(x):
    return x * 2


def test_a_scripted_function_is_traced_again_as_torch_does():
    scripted = torch.jit.script(double)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_torch = torch.jit.trace(scripted, (torch.rand(2),))
    run = tj.trace(scripted, (torch.rand(2),))
    assert (by_torch is scripted) is (run.traced is scripted) is False
    assert run.ok and type(run.traced) is type(by_torch)


# -- nondeterministic ops ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "random"),
    [
        (nn.LSTM(4, 4, 2).eval(), False),
        (nn.LSTM(4, 4, 2, dropout=0.0).train(), False),
        (nn.LSTM(4, 4, 2, dropout=0.5).train(), True),
        (nn.GRU(4, 4, 2, dropout=0.3).eval(), False),
        (nn.RNN(4, 4, 2, dropout=0.3).train(), True),
        (nn.Dropout(0.0).train(), False),
        (nn.AlphaDropout(0.5).eval(), False),
        (nn.AlphaDropout(0.5).train(), True),
        (nn.FeatureAlphaDropout(0.0).train(), False),
        (nn.Dropout2d(0.5).train(), True),
        (nn.RReLU().eval(), False),
        (nn.RReLU().train(), True),
    ],
    ids=lambda v: repr(v).replace("\n", "") if isinstance(v, nn.Module) else str(v),
)
def test_ops_are_flagged_only_when_random_in_this_configuration(module: nn.Module, random: bool):
    x = torch.rand(3, 1, 4) if isinstance(module, nn.RNNBase) else torch.rand(2, 3, 4, 4)
    run = tj.trace(module, (x,), check_trace=False)
    flagged = [f for f in run.findings if f.kind == "nondeterministic"]
    assert bool(flagged) is random, [n.kind for n in run.graph.nodes if n.nondeterministic]
    if not random:
        assert not any("eval()" in f.hint for f in run.findings)


def test_sdpa_with_dropout_p_0_is_not_random():
    def attend(q):
        return torch.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.0)

    run = tj.trace(attend, (torch.rand(1, 2, 3, 4),), check_trace=False)
    assert not [f for f in run.findings if f.kind == "nondeterministic"]

    def attend_randomly(q):
        return torch.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)

    run = tj.trace(attend_randomly, (torch.rand(1, 2, 3, 4),), check_trace=False)
    assert [f for f in run.findings if f.kind == "nondeterministic"]


def drops(x):
    x = x + 1
    return torch.dropout(x, 0.5, True)  # the nondeterministic node's line


def test_torchs_nondeterministic_warning_is_at_the_nodes_line_in_torchs_words():
    x = torch.rand(64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.jit.trace(drops, (x,))
    torch_text = next(str(w.message) for w in caught if "nondeterministic nodes" in str(w.message))
    run = tj.trace(drops, (x,))
    (w,) = run.warnings_of("nondeterministic")
    assert w.line == drops.__code__.co_firstlineno + 2 and w.file == HERE
    assert w.message == torch_text
    assert [run.graph.nodes[i].kind for i in w.node_ids] == ["aten::dropout"]


# -- locations never inside torch ----------------------------------------------------------------------------


def test_nodes_recorded_only_inside_torch_are_at_the_callers_line():
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16)
    run = tj.trace(model.eval(), (torch.rand(5, 1, 8), torch.rand(4, 1, 8)), check_trace=False)
    line = sys._getframe().f_lineno - 1
    located = [n for n in run.graph.nodes if n.source is not None]
    assert located and all(n.source.file == HERE and n.source.line == line for n in located)
    assert any(n.scope.startswith("encoder.layers.0") for n in located)  # the module path is kept
    assert all(n.source.stack[-1].file == HERE for n in located) and located[0].source.stack[0].internal


def test_a_warning_about_a_torch_module_is_at_the_callers_line():
    seq = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).train()
    run = tj.trace(seq, (torch.rand(2, 4),))
    line = sys._getframe().f_lineno - 1
    mismatch = run.warnings_of("output_mismatch_python")
    assert mismatch and all(w.file == HERE and w.line == line for w in mismatch)


def test_front_ends_name_the_call_site():
    with call_site("model.py", 12, code="model = Net()"):
        run = tj.trace(nn.Sequential(nn.Linear(2, 2)), (torch.rand(2),))
    assert {(n.source.file, n.source.line) for n in run.graph.nodes if n.source} == {("model.py", 12)}


# -- hints that name what happened ----------------------------------------------------------------------------


def test_an_output_the_tracer_rejects_is_named():
    assert "Only tensors" in str(torch_exception(ListOfDicts(), (torch.rand(2, 4),)))
    run = tj.trace(ListOfDicts(), (torch.rand(2, 4),))
    assert run.error.tag == "output_type"
    assert run.error.hint.startswith("The traced code returns a list of dicts.")


def test_the_command_line_spells_advice_with_its_flags():
    hint = tj.trace(lambda x: {"y": x}, (torch.rand(2),)).error.hint
    assert "strict=False" in hint
    spelled = TRACE_TABLE.command_line_spelling(hint)
    assert "--non-strict" in spelled and "strict=False" not in spelled
