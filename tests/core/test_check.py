"""The check's parts against torch's own check: output comparisons and the warning text torch emits for them
(word for word), the graph comparison's fast path (equal printouts, equal tensor constants: no check graph) and its
divergent path, running the outputs, and the verdict properties of CheckCase / CheckReport."""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

import pytest
import torch

from jupyter_tracejit.core.check import CheckCase, CheckReport, OutputComparison
from jupyter_tracejit.core.diff import ROOT, Divergence, GraphDiff
from jupyter_tracejit.core.errors import TraceError
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined, canonical_text
from jupyter_tracejit.core.torchscript.check import (
    MethodUnderCheck,
    check_graphs,
    compare_outputs,
    run_outputs,
    torch_mismatch_message,
)
from jupyter_tracejit.core.torchscript.extract import extract_graph


def quiet_trace(fn: Any, inputs: tuple[Any, ...], **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.trace(fn, inputs, check_trace=False, **kwargs)


def torchs_mismatch_warnings(fn: Any, inputs: tuple[Any, ...], **kwargs: Any) -> list[str]:
    """The output-mismatch warnings plain torch.jit.trace emits (it may raise TracingCheckError after them)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            torch.jit.trace(fn, inputs, **kwargs)
        except torch.jit.TracingCheckError:
            pass
    return [str(w.message) for w in caught if str(w.message).startswith("Output nr")]


# -- output comparisons ----------------------------------------------------------------------------------------


def test_compare_outputs_pairs_outputs_in_order() -> None:
    a = [torch.ones(2, 3), torch.zeros(4, dtype=torch.float16), torch.ones(1)]
    b = [torch.ones(2, 3), torch.ones(4, dtype=torch.float16)]  # the extra output is not compared, as in torch
    out = compare_outputs(a, b, "python", 1e-3)
    assert [(o.index, o.against, o.ok, o.shape) for o in out] == [
        (0, "python", True, [2, 3]),
        (1, "python", False, [4]),
    ]
    assert (out[0].rtol, out[0].atol) == (1e-3, 1e-5)
    assert (out[1].max_abs, out[1].message.splitlines()[0]) == (1.0, "Tensor-likes are not close!")
    assert out[0].message == ""


def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def frozen_slice(x):
    return x[: int(x.sum())] * 2


class Calls:
    n = 0


def retrace_differs(x):
    Calls.n += 1
    return x + Calls.n % 2


def test_the_mismatch_warning_is_torchs_word_for_word_python() -> None:
    x, check = torch.ones(3), -2 * torch.ones(3)
    (torchs,) = torchs_mismatch_warnings(branchy, (x,), check_inputs=[(check,)])
    traced = quiet_trace(branchy, (x,))
    (comparison,) = compare_outputs([traced(check)], [branchy(check)], "python", 1e-5)
    assert torch_mismatch_message(comparison) == torchs


def test_the_mismatch_warning_is_torchs_word_for_word_shape() -> None:
    x, check = torch.ones(4), 0.5 * torch.ones(4)
    (torchs,) = torchs_mismatch_warnings(frozen_slice, (x,), check_inputs=[(check,)])
    assert "attribute 'shape'" in torchs
    traced = quiet_trace(frozen_slice, (x,))
    (comparison,) = compare_outputs([traced(check)], [frozen_slice(check)], "python", 1e-5)
    assert torch_mismatch_message(comparison) == torchs


def test_the_mismatch_warning_is_torchs_word_for_word_retrace() -> None:
    z = torch.zeros(2)
    Calls.n = 0
    (torchs,) = torchs_mismatch_warnings(retrace_differs, (z,))
    assert "output of the repeated trace" in torchs
    Calls.n = 0
    traced, retraced = quiet_trace(retrace_differs, (z,)), quiet_trace(retrace_differs, (z,))
    (comparison,) = compare_outputs([traced(z)], [retraced(z)], "retrace", 1e-5)
    assert torch_mismatch_message(comparison) == torchs


# -- comparing the graphs --------------------------------------------------------------------------------------


def method_for(fn: Any, inputs: tuple[Any, ...]) -> MethodUnderCheck:
    """What the session builds for a traced function."""
    traced = quiet_trace(fn, inputs)
    canonical = canonical_inlined(traced.graph)
    return MethodUnderCheck(
        name="forward",
        traced_graph=traced.graph,
        trace=extract_graph(canonical),
        canonical_text=canonical_text(canonical),
        run_traced=lambda args: traced(*args),
        run_python=lambda args: fn(*args),
    )


def retrace(fn: Any, inputs: tuple[Any, ...]) -> torch._C.Graph:
    return quiet_trace(fn, inputs, _store_inputs=False).graph


def test_identical_graphs_take_the_fast_path() -> None:
    method = method_for(branchy, (torch.ones(3),))
    graph, diff, text_differs = check_graphs(method, retrace(branchy, (torch.rand(5) + 1,)))
    assert graph is None and not text_differs
    assert diff.identical
    assert diff.matched == {i: i for i in range(len(method.trace.graph.nodes))}


def test_a_branch_taken_otherwise_keeps_the_check_graph_and_its_roots() -> None:
    method = method_for(branchy, (torch.ones(3),))
    graph, diff, text_differs = check_graphs(method, retrace(branchy, (-torch.ones(3),)))
    assert graph is not None and "aten::sub" in graph.kinds()
    assert not diff.identical and not text_differs
    (root,) = diff.roots
    assert root.reason == "aten::mul in the trace, aten::sub in the check trace"


def same_ops_other_lines(x):
    if x.sum() > 0:
        return x * 2
    return x * 2


def test_printouts_that_differ_without_a_structural_divergence() -> None:
    # torch compares printouts, which carry source lines: its check fails here; ours keeps the graph to show why
    method = method_for(same_ops_other_lines, (torch.ones(2),))
    graph, diff, text_differs = check_graphs(method, retrace(same_ops_other_lines, (-torch.ones(2),)))
    assert text_differs and diff.identical
    assert graph is not None
    case = CheckCase(index=0, method="forward", label="example inputs", graph=graph, diff=diff, text_differs=True)
    assert case.graphs_differ and not case.ok


def big_constant(x):
    values = [1.0] * 3000
    values[1500] = float(x.sum())
    return x + torch.tensor(values)


def test_tensor_constants_equal_in_print_but_not_in_value_are_compared() -> None:
    method = method_for(big_constant, (torch.ones(3000),))
    check = retrace(big_constant, (2 * torch.ones(3000),))
    assert canonical_text(canonical_inlined(check)) == method.canonical_text  # torch prints it as <Tensor>
    graph, diff, text_differs = check_graphs(method, check)
    assert graph is not None and not text_differs
    (constant,) = diff.constant_diffs
    assert constant.max_abs == 3000.0
    same = retrace(big_constant, (torch.ones(3000),))
    assert check_graphs(method, same)[0] is None


def constant_of_another_dtype(x):
    dtype = torch.float32 if x.sum() > 0 else torch.float64
    return x + torch.tensor([1.0, 2.0], dtype=dtype)


def same_on_both_sides(reason: str) -> bool:
    """A reason like "...: A vs B" whose A and B read the same (and so say nothing about what differs)."""
    m = re.search(r": (.+) vs (.+)$", reason)
    return m is not None and m.group(1) == m.group(2)


def test_a_constant_of_another_dtype_is_a_divergence_that_says_what_differs() -> None:
    a, b = torch.ones(2), -torch.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(torch.jit.TracingCheckError, match="attribute 'dtype' do not match"):
            torch.jit.trace(constant_of_another_dtype, (a,), check_inputs=[(b,)])
    method = method_for(constant_of_another_dtype, (a,))
    graph, diff, _ = check_graphs(method, retrace(constant_of_another_dtype, (b,)))
    assert graph is not None and not diff.identical and diff.roots
    assert not [d.reason for d in diff.roots if same_on_both_sides(d.reason)]


# -- running the outputs ---------------------------------------------------------------------------------------


def test_run_outputs_compares_with_python_then_the_retrace() -> None:
    method = method_for(branchy, (torch.ones(3),))
    case = CheckCase(index=0, method="forward", label="example inputs")
    run_outputs(case, method, (torch.ones(3),), lambda args: args[0] * 2, 1e-5)
    assert [(o.against, o.ok) for o in case.outputs] == [("python", True), ("retrace", True)]
    case = CheckCase(index=0, method="forward", label="example inputs")
    run_outputs(case, method, (torch.ones(3),), lambda args: args[0] * 3, 1e-5)
    assert [(o.against, o.ok) for o in case.outputs] == [("python", True), ("retrace", False)]


def test_the_retrace_does_not_run_when_python_disagrees() -> None:
    method = method_for(branchy, (torch.ones(3),))
    case = CheckCase(index=0, method="forward", label="check_inputs[0]")

    def must_not_run(args: Any) -> Any:
        raise AssertionError("the re-trace ran")

    run_outputs(case, method, (-2 * torch.ones(3),), must_not_run, 1e-5)
    assert case.exception is None
    assert [(o.against, o.ok) for o in case.outputs] == [("python", False)]


def raises_for_long_inputs(x):
    if x.shape[0] > 3:
        raise ValueError("only up to 3")
    return x + 1


def test_an_exception_while_running_names_what_was_running() -> None:
    method = method_for(raises_for_long_inputs, (torch.ones(2),))
    case = CheckCase(index=0, method="forward", label="check_inputs[0]")
    run_outputs(case, method, (torch.ones(5),), None, 1e-5)
    assert case.exception is not None and case.exception.phase == "check"
    assert case.exception.message == "running the Python function on these inputs raised ValueError: only up to 3"
    assert not case.ok
    loop = method_for(lambda x: x[0] + x[1] + x[2], (torch.ones(3),))
    case = CheckCase(index=0, method="forward", label="check_inputs[0]")
    run_outputs(case, loop, (torch.ones(2),), None, 1e-5)
    assert case.exception.message.startswith("running the trace on these inputs raised RuntimeError: ")


# -- the verdict ---------------------------------------------------------------------------------------------------


def ok_output(against: str = "python") -> OutputComparison:
    return OutputComparison(index=0, against=against, ok=True)


def bad_output(against: str = "python") -> OutputComparison:
    return OutputComparison(index=0, against=against, ok=False, max_abs=1.0, message="Tensor-likes are not close!")


def test_check_case_verdict() -> None:
    assert CheckCase(0, "forward", "example inputs", outputs=[ok_output()]).ok
    assert not CheckCase(0, "forward", "x", outputs=[ok_output(), bad_output("retrace")]).ok
    raised = TraceError(type="ValueError", message="boom", phase="check")
    assert not CheckCase(0, "forward", "x", exception=raised).ok
    diverged = GraphDiff(divergences=[Divergence(trace_node=1, check_node=1, kind=ROOT, reason="r")])
    assert CheckCase(0, "forward", "x", diff=diverged).graphs_differ
    assert not CheckCase(0, "forward", "x", diff=diverged).ok
    assert not CheckCase(0, "forward", "x", diff=GraphDiff()).graphs_differ


def test_check_report_properties() -> None:
    root = Divergence(trace_node=3, check_node=4, kind=ROOT, reason="aten::mul vs aten::sub")
    good = CheckCase(0, "forward", "example inputs", outputs=[ok_output()], diff=GraphDiff())
    mismatch = CheckCase(1, "forward", "check_inputs[0]", outputs=[bad_output()], diff=GraphDiff(divergences=[root]))
    report = CheckReport(cases=[good, mismatch], tolerance=1e-3)
    assert not report.ok
    assert report.failed == [mismatch]
    assert report.first == (mismatch, root)
    assert report.output_mismatches == [(mismatch, mismatch.outputs[0])]
    assert CheckReport(cases=[good]).ok and CheckReport().ok
    assert CheckReport(cases=[good]).first is None and CheckReport(cases=[good]).output_mismatches == []


def test_the_verdict_is_written_to_json_and_recomputed_on_read() -> None:
    raised = TraceError(type="ValueError", message="boom", phase="check")
    report = CheckReport(cases=[CheckCase(0, "forward", "x", outputs=[ok_output()], exception=raised)])
    data = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert data["ok"] is False and data["cases"][0]["ok"] is False
    data["ok"] = data["cases"][0]["ok"] = True  # derived: never read back
    again = CheckReport.from_json(data)
    assert not again.ok and again.cases[0].exception == raised
    assert again.to_json() == report.to_json()


@pytest.mark.parametrize("tolerance", [1e-5, 1e-2])
def test_compare_outputs_rtol_is_the_check_tolerance(tolerance: float) -> None:
    (o,) = compare_outputs([torch.tensor([1.001])], [torch.tensor([1.0])], "python", tolerance)
    assert o.rtol == tolerance and o.ok is (tolerance > 1e-3)
