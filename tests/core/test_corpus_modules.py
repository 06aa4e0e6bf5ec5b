"""A corpus of real tracing cases, written from the torch docs and torch/jit/_trace.py: modules (scopes, train
mode, hazards), keyword inputs, bad inputs and failures in user code, and leaving no trace in the process.

Each case asserts exact warning categories, counts and lines, check roots and errors, and that the
check verdict agrees with plain torch.jit.trace (the oracle).
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj

from ..models import LinearBatchNorm, LinearWithEncode, OneLinear, line_of
from .corpus import kinds_of, roundtrip
from .oracle import torch_verdict

torch.manual_seed(0)


# -- modules: scopes, train mode, hazards -----------------------------------------------------------


class WithDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))

    def forward(self, x):
        return self.body(x)


def test_dropout_in_a_submodule_in_train_mode_torch_misses_it_we_flag_it():
    model = WithDropout().train()
    x = torch.rand(16, 8)
    run = tj.trace(model, (x,))
    assert [w.category for w in run.user_warnings] == ["output_mismatch_python"]  # no nondeterministic warning
    finding = next(f for f in run.findings if f.kind == "nondeterministic")
    assert kinds_of(run.graph, finding.node_ids) == ["aten::dropout"]
    assert run.graph.nodes[finding.node_ids[0]].scope == "body.1"
    assert "only scans the top level" in finding.message
    oracle = torch_verdict(model, (x,))
    assert oracle.outcome == "mismatch"
    assert not any(m.startswith("Trace had nondeterministic") for m in oracle.messages)
    assert not run.ok
    assert model.training  # restored
    eval_run = tj.trace(model, (x,), module_mode="eval")
    assert eval_run.ok and not any(f.kind == "nondeterministic" for f in eval_run.findings)
    assert model.training and model.body[1].training  # module mode was for that trace only


def test_batchnorm_in_train_mode_is_reported_and_its_statistics_put_back():
    model = LinearBatchNorm(4).train()
    run = tj.trace(model, (torch.rand(8, 4),))
    assert run.python_runs == 3
    # torch updates the statistics on the 3 Python runs plus 2 runs of the traced module by the check (it shares
    # the buffers); a guest puts them back
    assert int(model.bn.num_batches_tracked) == 0
    torch_model = LinearBatchNorm(4).train()
    torch_verdict(torch_model, (torch.rand(8, 4),))
    assert int(torch_model.bn.num_batches_tracked) == 5
    kinds = {f.kind: f for f in run.findings}
    assert "train_mode_batchnorm" in kinds
    runs = kinds["python_runs"]
    assert runs.severity == "warning"
    assert "bn.running_mean" in runs.message and "bn.num_batches_tracked" in runs.message
    assert run.ok  # batch statistics are deterministic: the check passes, as in torch
    assert torch_verdict(LinearBatchNorm(4).train(), (torch.rand(8, 4),)).outcome == "ok"
    unchecked = tj.trace(LinearBatchNorm(4).train(), (torch.rand(8, 4),), check_trace=False)
    assert unchecked.python_runs == 1 and unchecked.check is None


def make_encoder(layers=2):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)


def test_transformer_encoder_in_eval_mode_fails_the_check_because_of_the_fast_path():
    enc = make_encoder().eval()
    x = torch.randn(2, 5, 32)
    run = tj.trace(enc, (x,))
    assert not run.ok
    case = run.check.cases[0]
    assert case.outputs_ok  # outputs agree: only the graphs differ
    roots = case.diff.roots
    assert len(roots) == 1
    assert case.graph.nodes[roots[0].check_node].kind == "aten::_transformer_encoder_layer_fwd"
    assert run.graph.nodes[roots[0].trace_node].scope.startswith("layers.0")
    fast = next(f for f in run.findings if f.kind == "transformer_fastpath")
    assert "no_grad" in fast.hint
    # nothing leaks from torch.nn's own shape checks
    assert run.user_warnings == []
    assert torch_verdict(enc, (x,)).outcome == "check_error"
    fixed = tj.trace(enc, (x,), no_grad=True)
    assert fixed.ok
    assert torch.is_grad_enabled()


def test_mangled_class_names_alone_are_not_divergences():
    # two instances of the same class get different ___torch_mangle_N names when traced separately
    enc = make_encoder(1).eval()
    x = torch.randn(2, 5, 32)
    with torch.no_grad():
        run = tj.trace(enc, (x,))
    assert run.ok, run.summary()
    assert run.check.cases[0].graph is None  # identical: not stored


# -- keyword inputs -----------------------------------------------------------------------------------


def f_kwargs(x, scale):
    return x * scale


class KwModel(nn.Module):
    def forward(self, input_ids, mask):
        return input_ids * mask


def test_example_kwarg_inputs_for_functions_and_modules():
    run = tj.trace(f_kwargs, example_kwarg_inputs={"x": torch.rand(2), "scale": torch.rand(2)})
    assert run.ok, run.summary()
    assert run.inputs == {"forward": ["x=Float(2)", "scale=Float(2)"]}
    assert [run.graph.values[v].name for v in run.graph.inputs] == ["x", "scale"]
    mod = tj.trace(KwModel(), example_kwarg_inputs={"input_ids": torch.rand(2), "mask": torch.rand(2)})
    assert mod.ok, mod.summary()
    checked = tj.trace(
        KwModel(),
        example_kwarg_inputs={"input_ids": torch.rand(2), "mask": torch.rand(2)},
        check_inputs=[{"input_ids": torch.rand(3), "mask": torch.rand(3)}],
    )
    assert checked.ok and checked.check.cases[0].label == "check_inputs[0]"


def test_kwarg_keys_that_do_not_match_the_parameters_give_a_hint():
    run = tj.trace(KwModel(), example_kwarg_inputs={"ids": torch.rand(2), "mask": torch.rand(2)})
    assert not run.ok
    assert run.error.tag == "kwarg_names"
    assert "parameter names" in run.error.hint


# -- bad inputs and failures in user code --------------------------------------------------------------


def f_returns_none(x):
    x * 2


def f_raises(x):
    raise ValueError("boom in user code")  # here


class UsesGradTensor(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.ones(2, requires_grad=True)  # not registered as a parameter

    def forward(self, x):
        return x * self.scale


@pytest.mark.parametrize(
    ("args", "kwargs", "tag", "phrase"),
    [
        ((42, (torch.rand(2),)), {}, "bad_argument", "needs a function or nn.Module"),
        ((f_kwargs,), {}, "bad_argument", "no example inputs"),
        ((f_kwargs, (torch.rand(2),)), {"check_inputs": torch.rand(2)}, "bad_argument", "check_inputs must be a list"),
        ((f_kwargs, (torch.rand(2),)), {"check_tolerance": -1.0}, "bad_argument", "check_tolerance"),
        ((f_kwargs, (torch.rand(2),)), {"check_tolerance": float("nan")}, "bad_argument", "check_tolerance"),
        ((f_kwargs, (torch.rand(2),)), {"strict": "yes"}, "bad_argument", "strict must be True or False"),
        ((f_kwargs, (torch.rand(2),)), {"module_mode": "inference"}, "bad_argument", "module_mode"),
        ((f_kwargs,), {"example_kwarg_inputs": [1]}, "bad_argument", "must be a dict"),
    ],
)
def test_misuse_of_our_api_is_a_recorded_clear_error(args, kwargs, tag, phrase):
    run = tj.trace(*args, **kwargs)
    assert not run.ok
    assert run.error.phase == "arguments" and run.error.tag == tag
    assert phrase in run.error.message
    assert run.error.hint
    roundtrip(run)


def test_non_tensor_input_gets_a_hint():
    run = tj.trace(f_kwargs, (torch.rand(2), "two"))
    assert run.error.tag == "input_type"
    assert "not a tensor" in run.error.hint


def test_none_output_gets_a_hint():
    run = tj.trace(f_returns_none, (torch.rand(2),))
    assert run.error.tag == "output_type"


def test_exception_in_user_code_is_recorded_at_the_users_line():
    run = tj.trace(f_raises, (torch.rand(2),))
    assert run.error.type == "ValueError"
    assert run.error.message == "boom in user code"
    assert run.error.file == __file__ and run.error.line == line_of(f_raises, "# here")
    assert run.error.code.startswith('raise ValueError("boom in user code")')
    assert "Traceback" in run.error.traceback


def test_grad_tensor_constant_gets_a_hint():
    run = tj.trace(UsesGradTensor(), (torch.rand(2),))
    assert run.error.tag == "grad_constant"
    assert "register_buffer" in run.error.hint


def test_tracing_a_bound_method_points_to_trace_module():
    model = LinearWithEncode()
    run = tj.trace(model.encode, (torch.rand(2),))
    assert run.error.tag == "bound_method"
    assert "trace_module" in run.error.hint
    fixed = tj.trace_module(model, {"encode": (torch.rand(2),)})
    assert fixed.ok and list(fixed.graphs) == ["encode"]


def test_trace_module_argument_errors():
    assert tj.trace_module(f_kwargs, {"forward": torch.rand(2)}).error.message.startswith("trace_module expects")
    assert "no method 'decode'" in tj.trace_module(LinearWithEncode(), {"decode": torch.rand(2)}).error.message
    assert tj.trace_module(torch.jit.script(OneLinear(4)), {"forward": torch.rand(2, 4)}).error.tag == "already_script"
    bad = tj.trace_module(LinearWithEncode(), {"forward": torch.rand(2)}, check_inputs=[torch.rand(2)])
    assert "check_inputs[0] is a Tensor" in bad.error.message


# -- leaving no trace in the user's process --------------------------------------------------------------


def test_state_is_restored_on_success_and_failure():
    filters_before = list(warnings.filters)
    show_before = warnings.showwarning
    model = WithDropout().eval()
    with torch.no_grad():
        tj.trace(model, (torch.rand(2, 8),), module_mode="train")
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()
    tj.trace(f_raises, (torch.rand(2),), no_grad=True)
    assert torch.is_grad_enabled()
    assert not model.training and not model.body[1].training
    assert warnings.filters == filters_before
    assert warnings.showwarning is show_before
