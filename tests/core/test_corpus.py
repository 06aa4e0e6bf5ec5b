"""A corpus of real tracing cases, written from the torch docs and torch/jit/_trace.py.

Each case asserts exact warning categories, counts and lines, check roots and errors, and that the
check verdict agrees with plain torch.jit.trace (the oracle).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import jupyter_tracejit as tj
from jupyter_tracejit.core.check import CheckReport

from ..models import LinearBatchNorm, LinearWithEncode, OneLinear, line_of
from .oracle import torch_deprecates_jit_trace, torch_verdict

torch.manual_seed(0)


def user_warnings(run: tj.TraceRun) -> list[tuple[str, int, int]]:
    return sorted((w.category, w.count, w.line) for w in run.user_warnings)


def roundtrip(run: tj.TraceRun) -> None:
    data = json.loads(json.dumps(run.to_json(), allow_nan=False))
    again = tj.TraceRun.from_json(data)
    assert again.to_json() == run.to_json()
    assert again.ok == run.ok


def kinds_of(graph: tj.Graph, ids: list[int]) -> list[str]:
    return [graph.nodes[i].kind for i in ids]


# -- data-dependent control flow ------------------------------------------------------------------


def branchy(x):
    if x.sum() > 0:  # branch
        return x * 2
    return x - 1


def test_data_dependent_branch_warns_once_with_count_and_maps_to_its_nodes():
    run = tj.trace(branchy, (torch.ones(3),))
    line = line_of(branchy, "# branch")
    assert user_warnings(run) == [("to_bool", 2, line)]  # trace + 1 re-trace
    w = run.user_warnings[0]
    assert w.file == __file__
    assert w.code == "if x.sum() > 0:  # branch"
    assert w.phases == ["trace", "check 1"]
    # the condition's nodes are dead code (removed by the tracer): the warning points at the frozen branch
    assert kinds_of(run.graph, w.node_ids) == ["aten::mul"]
    assert w.node_match == "next_line"
    assert run.ok and run.check is not None and run.check.ok
    assert torch_verdict(branchy, (torch.ones(3),)).outcome == "ok"
    roundtrip(run)


def test_branch_taken_differently_by_check_inputs_fails_like_torch():
    run = tj.trace(branchy, (torch.ones(3),), check_inputs=[(-2 * torch.ones(3),)])
    assert not run.ok
    case = run.check.cases[0]
    assert [(o.against, o.ok) for o in case.outputs] == [("python", False)]
    assert case.outputs[0].max_abs == pytest.approx(1.0)  # -4 vs -3
    roots = case.diff.roots
    assert len(roots) == 1
    assert run.graph.nodes[roots[0].trace_node].kind == "aten::mul"
    assert case.graph.nodes[roots[0].check_node].kind == "aten::sub"
    assert roots[0].reason == "aten::mul in the trace, aten::sub in the check trace"
    assert [w.category for w in run.user_warnings] == ["to_bool", "output_mismatch_python"]
    mismatch = run.warnings_of("output_mismatch_python")[0]
    assert kinds_of(run.graph, mismatch.node_ids) == ["aten::mul"]
    # shown where the outputs differ first (the branch's line), not at `def branchy` where torch's check reports it
    assert (mismatch.line, mismatch.code) == (line_of(branchy, "return x * 2"), "return x * 2")
    assert mismatch.placement.startswith("Shown where the graphs first differ (the check's first root divergence)")
    oracle = torch_verdict(branchy, (torch.ones(3),), check_inputs=[(-2 * torch.ones(3),)])
    assert oracle.check_failed
    roundtrip(run)


# -- the docs' loop_in_traced_fn ------------------------------------------------------------------


def loop_in_traced_fn(x):
    result = x[0]
    for i in range(x.size(0)):
        result = result * x[i]
    return result


def test_loop_over_a_dimension_root_is_the_extra_select():
    inputs = (torch.rand(3, 4, 5),)
    check_inputs = [(torch.rand(4, 5, 6),)]
    run = tj.trace(loop_in_traced_fn, inputs, check_inputs=check_inputs)
    assert not run.ok
    case = run.check.cases[0]
    roots = case.diff.roots
    assert len(roots) == 1
    root = roots[0]
    assert root.trace_node is None
    assert case.graph.nodes[root.check_node].kind == "aten::select"
    assert root.reason == "only in the check trace: aten::select"
    # the extra select is recorded at the loop body's line
    assert case.graph.nodes[root.check_node].source.line == line_of(loop_in_traced_fn, "result * x[i]")
    assert [case.graph.nodes[d.check_node].kind for d in case.diff.downstream] == ["aten::mul"]
    # no warning at all from torch for this, only the check catches it; shown at the returned value's line (the
    # root is only in the check trace: the trace's output producer stands for it)
    assert [w.category for w in run.user_warnings] == ["output_mismatch_python"]
    assert run.user_warnings[0].line == line_of(loop_in_traced_fn, "result * x[i]")
    assert run.user_warnings[0].placement.startswith("Shown at the line that computes the returned value")
    assert torch_verdict(loop_in_traced_fn, inputs, check_inputs=check_inputs).check_failed


def test_shape_baked_in_makes_running_the_trace_fail_on_check_inputs():
    run = tj.trace(loop_in_traced_fn, (torch.rand(3, 4, 5),), check_inputs=[(torch.rand(2, 3, 4),)])
    case = run.check.cases[0]
    assert case.exception is not None
    assert case.exception.message.startswith("running the trace on these inputs raised RuntimeError")
    assert case.diff.roots[0].check_node is None  # the trace has a select the check trace lacks
    oracle = torch_verdict(loop_in_traced_fn, (torch.rand(3, 4, 5),), check_inputs=[(torch.rand(2, 3, 4),)])
    assert oracle.outcome == "check_error"
    assert not run.ok


# -- every warning kind ---------------------------------------------------------------------------


def f_int(x):
    return x * int(x.sum())  # here


def f_float(x):
    return x * float(x.max())  # here


def f_complex(x):
    return x * complex(x.sum()).real  # here


def f_number(x):
    return x * x.sum().item()  # here


def f_list(x):
    return x * x.tolist()[0]  # here


def f_numpy(x):
    return x * x.numpy()[0]  # here


def f_tensor_const(x):
    return x + torch.tensor([1.0, 2.0])  # here


def f_from_numpy(x):
    return x + torch.from_numpy(np.ones(2, dtype=np.float32))  # here


def f_iterate(x):
    return sum(r for r in x)  # here


def f_len(x):
    return x * len(x)  # here


def f_user_warning(x):
    warnings.warn("careful with this", stacklevel=1)  # here
    return x * 2


@pytest.mark.parametrize(
    ("func", "category"),
    [
        (f_int, "to_int"),
        (f_float, "to_float"),
        (f_complex, "to_complex"),
        (f_number, "to_number"),
        (f_list, "to_list"),
        (f_numpy, "to_numpy"),
        (f_tensor_const, "tensor_const"),
        (f_from_numpy, "from_numpy_const"),
        (f_iterate, "iterate"),
        (f_len, "len"),
        (f_user_warning, "other"),
    ],
)
def test_each_warning_kind_is_classified_counted_and_located(func, category):
    run = tj.trace(func, (torch.rand(2),))
    line = line_of(func, "# here")
    # user warnings repeat per trace: once for the trace and once for the check's re-trace; a plain
    # warnings.warn also fires in the check's eager run
    count = 3 if category == "other" else 2
    assert user_warnings(run) == [(category, count, line)]
    w = run.user_warnings[0]
    assert w.node_ids or category == "other"
    if category == "other":  # warnings.warn(...) records no node: the next line's nodes are shown
        assert w.node_match == "next_line"
        assert kinds_of(run.graph, w.node_ids) == ["aten::mul"]
    else:
        assert w.node_match == "line"
        assert all(run.graph.nodes[i].source.line == line for i in w.node_ids)
    assert w.advice or category == "other"
    roundtrip(run)


def f_asarray(x):
    return x + torch.from_numpy(np.asarray(x) * 2)  # here


def test_np_asarray_warning_raised_inside_torch_is_attributed_to_the_user_line():
    run = tj.trace(f_asarray, (torch.rand(2),))
    line = line_of(f_asarray, "# here")
    assert user_warnings(run) == [("from_numpy_const", 2, line), ("to_numpy", 2, line)]
    to_numpy = run.warnings_of("to_numpy")[0]
    assert to_numpy.file == __file__
    assert to_numpy.torch_location.endswith("torch/_tensor.py:" + to_numpy.torch_location.rsplit(":", 1)[1])
    assert "_tensor.py" in to_numpy.torch_location


def f_live_refs(x):
    y = x.clone()
    v = y[0]
    y.add_(1)  # here
    return y + v


def test_live_references_warning_needs_force_outplace():
    plain = tj.trace(f_live_refs, (torch.rand(2),))
    assert [w.category for w in plain.user_warnings] == []
    forced = tj.trace(f_live_refs, (torch.rand(2),), force_outplace=True)
    line = line_of(f_live_refs, "# here")
    assert ("live_refs", 2, line) in user_warnings(forced)
    assert forced.options["force_outplace"] is True


def f_dropout(x):
    return F.dropout(x, 0.5, training=True)


def test_top_level_dropout_gets_torchs_nondeterministic_warning_and_a_finding():
    run = tj.trace(f_dropout, (torch.rand(50),))
    categories = [w.category for w in run.user_warnings]
    assert categories == ["nondeterministic", "output_mismatch_python"]
    nondet = run.warnings_of("nondeterministic")[0]
    assert kinds_of(run.graph, nondet.node_ids) == ["aten::dropout"]
    finding = next(f for f in run.findings if f.kind == "nondeterministic")
    assert kinds_of(run.graph, finding.node_ids) == ["aten::dropout"]
    oracle = torch_verdict(f_dropout, (torch.rand(50),))
    assert oracle.outcome == "mismatch"
    assert any(m.startswith("Trace had nondeterministic nodes") for m in oracle.messages)


class Counter:
    def __init__(self):
        self.calls = 0


counter = Counter()


def f_retrace_differs(x):
    counter.calls += 1
    return x + counter.calls % 2


def test_retrace_mismatch_when_python_agrees_but_the_retrace_does_not():
    counter.calls = 0
    run = tj.trace(f_retrace_differs, (torch.zeros(2),))
    case = run.check.cases[0]
    assert [(o.against, o.ok) for o in case.outputs] == [("python", True), ("retrace", False)]
    assert [w.category for w in run.user_warnings] == ["output_mismatch_retrace"]
    # the Python int became a 0-dim tensor constant: a value difference, reported at its consumer
    assert len(case.diff.constant_diffs) == 1 and case.diff.constant_diffs[0].max_abs == 1.0
    root = case.diff.roots[0]
    assert run.graph.nodes[root.trace_node].kind == "aten::add"
    assert case.graph.nodes[root.check_node].kind == "aten::add"
    assert root.reason == "input 1 of aten::add differs: tensor constant 1 vs 0"
    assert not case.text_differs
    assert run.python_runs == 3 and counter.calls == 3
    counter.calls = 0
    assert torch_verdict(f_retrace_differs, (torch.zeros(2),)).outcome == "check_error"


def f_list_output(x):
    return [x * 2, x + 1]


def f_dict_output(x):
    return {"double": x * 2}


def test_strict_list_output_is_only_a_warning():
    run = tj.trace(f_list_output, (torch.rand(2),))
    assert run.error is None
    assert [w.category for w in run.user_warnings] == ["list_output"]
    assert run.ok == (torch_verdict(f_list_output, (torch.rand(2),)).outcome == "ok")


def test_strict_dict_output_is_an_error_with_a_hint_and_non_strict_traces():
    run = tj.trace(f_dict_output, (torch.rand(2),))
    assert not run.ok and run.traced is None
    assert run.error.tag == "dict_output"
    assert "strict=False" in run.error.hint
    assert torch_verdict(f_dict_output, (torch.rand(2),)).outcome == "error"
    relaxed = tj.trace(f_dict_output, (torch.rand(2),), strict=False)
    assert relaxed.ok and relaxed.error is None
    assert relaxed.options["strict"] is False
    roundtrip(run)


def test_an_already_scripted_module_is_returned_unchanged_like_torch_does():
    scripted = torch.jit.script(OneLinear(4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        returned = torch.jit.trace(scripted, (torch.rand(2, 4),))
    assert returned is scripted and any("already a ScriptModule" in str(w.message) for w in caught)
    run = tj.trace(scripted, (torch.rand(2, 4),))
    assert run.ok and run.error is None and run.traced is scripted
    assert run.check is None  # torch returns before checking
    assert [w.category for w in run.user_warnings] == ["already_script"]
    assert "aten::linear" in run.graph.kinds()


def test_the_deprecation_notice_is_recorded_once_and_not_as_a_user_problem():
    run = tj.trace(branchy, (torch.ones(3),))
    deprecated = run.warnings_of("deprecated")
    if not torch_deprecates_jit_trace():
        assert not deprecated  # this torch gives no notice, and none is made up
        return
    assert len(deprecated) == 1
    assert deprecated[0].count == 2  # the trace and the check's re-trace
    assert not deprecated[0].is_user_problem
    assert deprecated[0] not in run.user_warnings


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


# Not tests.models.LinearWithEncode: the second method reads a parameter (the conv's kernel) rather than calling
# the module's forward path, and takes 4-d inputs of a conv.
class TwoMethods(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 1, 3)

    def forward(self, x):
        return self.conv(x)

    def weighted_kernel_sum(self, weight):
        return weight * self.conv.weight


def test_trace_module_with_two_methods():
    model = TwoMethods()
    inputs = {"forward": torch.rand(1, 1, 3, 3), "weighted_kernel_sum": torch.rand(1, 1, 3, 3)}
    run = tj.trace_module(model, inputs)
    assert run.ok
    assert sorted(run.graphs) == ["forward", "weighted_kernel_sum"]
    assert run.graph is run.graphs["forward"]
    assert "aten::_convolution" in run.graphs["forward"].kinds()
    assert "aten::mul" in run.graphs["weighted_kernel_sum"].kinds()
    assert [(c.method, c.ok) for c in run.check.cases] == [("forward", True), ("weighted_kernel_sum", True)]
    assert run.python_runs == 2 + 2 + 2  # 2 traces, 2 re-traces, 2 eager runs
    assert run.inputs == {"forward": ["Float(1, 1, 3, 3)"], "weighted_kernel_sum": ["Float(1, 1, 3, 3)"]}
    assert torch_verdict(TwoMethods(), inputs, module=True).outcome == "ok"
    roundtrip(run)


def test_trace_module_check_inputs_must_cover_every_method():
    model = TwoMethods()
    inputs = {"forward": torch.rand(1, 1, 3, 3), "weighted_kernel_sum": torch.rand(1, 1, 3, 3)}
    run = tj.trace_module(model, inputs, check_inputs=[{"forward": torch.rand(1, 1, 4, 4)}])
    assert not run.ok
    assert "no inputs for method(s) weighted_kernel_sum" in run.check.cases[0].exception.message


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


def test_check_report_json_keeps_the_verdict():
    run = tj.trace(loop_in_traced_fn, (torch.rand(3, 4, 5),), check_inputs=[(torch.rand(4, 5, 6),)])
    again = CheckReport.from_json(json.loads(json.dumps(run.check.to_json())))
    assert again.ok is False
    assert again.cases[0].diff.roots == run.check.cases[0].diff.roots
    assert again.cases[0].graph.to_json() == run.check.cases[0].graph.to_json()


def test_a_run_remembers_its_request_and_can_trace_again_with_other_options():
    run = tj.trace(f_dict_output, (torch.rand(2),))
    assert run.request.kind == "trace" and run.request.options.strict is True
    relaxed = run.request.run(strict=False)
    assert relaxed.ok and relaxed.options["strict"] is False
    assert relaxed.request.options.strict is False
    with pytest.raises(TypeError, match="unknown trace option"):
        run.request.run(stict=False)
    module_run = tj.trace_module(TwoMethods(), {"forward": torch.rand(1, 1, 3, 3)}, check_trace=False)
    assert module_run.request.kind == "trace_module"
    assert module_run.request.run(check_trace=True).check is not None
    assert tj.TraceRun.from_json(run.to_json()).request is None
