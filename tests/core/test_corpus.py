"""A corpus of real tracing cases, written from the torch docs and torch/jit/_trace.py: control flow, loops, every
warning kind, outputs, several methods, what a run keeps (modules, keyword inputs, failures in user code:
test_corpus_modules.py).

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

from ..models import OneLinear, line_of
from .corpus import kinds_of, roundtrip, user_warnings
from .oracle import torch_deprecates_jit_trace, torch_verdict

torch.manual_seed(0)


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


# -- several methods: trace_module -----------------------------------------------------------------------


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


# -- what a run keeps: its check report and its request -----------------------------------------------


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
