"""core/check.py: torch's check redone as data: output comparisons worded as torch words them, graphs compared
structurally only when their printouts differ."""

from __future__ import annotations

import warnings

import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.check import (
    CheckCase,
    CheckReport,
    OutputComparison,
    compare_outputs,
    torch_mismatch_message,
)


def random_output(x):
    return x + torch.rand(x.shape)


def test_output_comparisons_follow_torch():
    ok, bad = compare_outputs([torch.ones(2), torch.ones(2)], [torch.ones(2), torch.zeros(2)], "python", 1e-5)
    assert ok.ok and not bad.ok and bad.index == 1 and bad.against == "python"
    assert bad.max_abs == 1.0 and bad.rtol == 1e-5 and bad.atol == 1e-5 and bad.shape == [2]
    assert bad.message.startswith("Tensor-likes are not close!")
    assert OutputComparison.from_json(bad.to_json()) == bad


def test_the_synthesized_mismatch_warning_is_torchs_text():
    x = torch.rand(4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.jit.trace(random_output, (x,))
    torch_texts = [str(w.message) for w in caught if "Output nr" in str(w.message)]
    run = tj.trace(random_output, (x,))
    ours = [w.message for w in run.warnings_of("output_mismatch_python")]
    assert torch_texts and ours
    # the numbers differ (random), the words and the structure are torch's
    for theirs, mine in zip(torch_texts, ours, strict=False):
        assert theirs.split("Detailed error:")[0] == mine.split("Detailed error:")[0]
        assert mine.split("\n")[3].startswith("Mismatched elements:")
    assert torch_mismatch_message(run.check.cases[0].outputs[0]).startswith("Output nr 1. of the traced function")
    # and torch's nondeterministic warning, word for word (it names the random node, aten::rand)
    (nondeterministic,) = run.warnings_of("nondeterministic")
    theirs = next(str(w.message) for w in caught if "nondeterministic" in str(w.message))
    assert nondeterministic.message.split("Nodes:")[0] == theirs.split("Nodes:")[0] and "aten::rand" in theirs


def test_a_passing_check_keeps_no_check_graph_and_a_failing_one_does():
    passing = tj.trace(lambda x: x * 2, (torch.rand(3),))
    (case,) = passing.check.cases
    assert case.ok and case.graph is None and case.diff is not None and case.diff.identical

    def loop(x):
        out = x[0]
        for row in x:
            out = out + row
        return out

    failing = tj.trace(loop, (torch.rand(3, 2),), check_inputs=[(torch.rand(4, 2),)])
    (case,) = failing.check.cases
    assert not case.ok and case.graph is not None and case.graphs_differ and case.diff.roots
    report = failing.check
    assert not report.ok and report.failed == [case] and report.first == (case, case.diff.roots[0])
    assert CheckReport.from_json(report.to_json()).to_json() == report.to_json()


def test_a_case_that_raised_is_not_ok_and_round_trips():
    case = CheckCase(index=0, method="forward", label="check_inputs[0]")
    assert case.ok
    case.exception = tj.TraceError(type="ValueError", message="boom")
    assert not case.ok and CheckCase.from_json(case.to_json()).exception == case.exception
    assert case.to_json()["ok"] is False
