"""The generalization probe on real traces: frozen values, unrolled loops, frozen branches, state hygiene."""

from __future__ import annotations

import json
import threading
import warnings
from typing import Any

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.torchscript.probe import (
    AGREE,
    DISAGREE,
    SKIPPED,
    TRACE_ERROR,
    ProbeCase,
    ProbeReport,
    run_probe,
    tensor_type_str,
)


def _trace(fn: Any, inputs: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.trace(fn, inputs, check_trace=False, **kwargs)


def _by_name(report: ProbeReport) -> dict[str, ProbeCase]:
    return {c.name: c for c in report.cases}


def pick_from_list(x: torch.Tensor) -> torch.Tensor:
    lst = [10.0, 20.0, 30.0, 40.0]
    return x * lst[x.argmax()]


def loop_sum(x: torch.Tensor) -> torch.Tensor:
    s = x[0]
    for i in range(1, x.size(0)):
        s = s + x[i]
    return s


def branchy(x: torch.Tensor) -> torch.Tensor:
    if x.sum() > 0:
        return x * 2
    return x - 1


def clean(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) * 2 + y


def masked(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return x.masked_fill(mask, 0.0).sum(-1)


def test_list_indexed_by_argmax_is_found_by_a_values_case() -> None:
    x = torch.tensor([1.0, 5.0, 2.0, 3.0])
    report = run_probe(pick_from_list, _trace(pick_from_list, (x,)), (x,))
    cases = _by_name(report)
    assert [c.name for c in report.cases[:3]] == ["values:randn", "values:negated", "values:shuffled"]
    assert cases["values:shuffled"].status == DISAGREE
    assert cases["values:shuffled"].message.startswith("output: ")
    assert cases["values:shuffled"].max_abs is not None and cases["values:shuffled"].max_abs > 1.0
    assert not report.ok
    assert cases["values:shuffled"] in report.findings
    assert cases["values:shuffled"].input_shapes == ["Float(4)"]


def test_unrolled_loop_is_found_by_size_cases() -> None:
    x = torch.arange(1.0, 5.0)
    report = run_probe(loop_sum, _trace(loop_sum, (x,)), (x,))
    cases = _by_name(report)
    assert report.dims == {"arg0": [0]}
    # one dim varied: no "all" case, and the value cases agree (the loop depends on the size only)
    assert "size:all+1" not in cases
    assert all(cases[n].status == AGREE for n in ("values:randn", "values:negated", "values:shuffled"))
    grow, shrink = cases["size:arg0.dim0+1"], cases["size:arg0.dim0-1"]
    assert grow.status == DISAGREE
    assert grow.input_shapes == ["Float(5)"]
    assert shrink.status == TRACE_ERROR
    assert shrink.input_shapes == ["Float(3)"]
    assert shrink.message.startswith("RuntimeError: ")
    assert "out of range" in shrink.message
    assert {c.name for c in report.findings} == {"size:arg0.dim0+1", "size:arg0.dim0-1"}


def test_frozen_branch_is_found_by_negation() -> None:
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    report = run_probe(branchy, _trace(branchy, (x,)), (x,))
    negated = _by_name(report)["values:negated"]
    assert negated.status == DISAGREE
    # x * 2 and x - 1 coincide at -1 only
    assert negated.message.startswith("output: 3 of 4 elements differ")
    assert negated.input_shapes == ["Float(2, 2)"]


def test_clean_function_agrees_everywhere() -> None:
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    report = run_probe(clean, _trace(clean, (x, y)), (x, y))
    cases = _by_name(report)
    assert report.ok
    assert report.findings == []
    assert {c.status for c in report.cases} <= {AGREE, SKIPPED}
    # dim 0 of both inputs (no module: only the batch dim); changing one alone breaks broadcasting
    assert report.dims == {"arg0": [0], "arg1": [0]}
    assert cases["size:all+1"].status == AGREE
    assert cases["size:all+1"].input_shapes == ["Float(4, 4)", "Float(4, 4)"]
    assert cases["size:arg0.dim0+1"].status == SKIPPED
    assert "eager function rejects" in cases["size:arg0.dim0+1"].message
    assert cases["values:randn"].max_abs == 0.0


def test_all_dims_change_together_for_inputs_that_must_agree() -> None:
    x = torch.randn(2, 3, 5)
    mask = torch.zeros(2, 3, 5, dtype=torch.bool)
    mask[0, 1] = True
    report = run_probe(masked, _trace(masked, (x, mask)), (x, mask), dims={0: [0, 1], 1: [0, -2]})
    cases = _by_name(report)
    assert report.dims == {"arg0": [0, 1], "arg1": [0, 1]}
    assert cases["size:all+1"].input_shapes == ["Float(3, 4, 5)", "Bool(3, 4, 5)"]
    assert cases["size:all+1"].status == AGREE
    assert cases["size:arg0.dim1+1"].status == SKIPPED
    assert report.ok


# Not tests.models.OneLinear: 8 inputs and 4 outputs, so that the parameter-sized dim (8) is told from the others.
class LinearNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x)


def test_parameter_sized_dims_are_not_varied() -> None:
    torch.manual_seed(0)
    net = LinearNet().eval()
    x = torch.randn(3, 8)
    report = run_probe(net, _trace(net, (x,)), (x,), module=net)
    names = [c.name for c in report.cases]
    assert report.dims == {"arg0": [0]}
    assert "size:arg0.dim0+1" in names and "size:arg0.dim0-1" in names
    assert not any("dim1" in n for n in names)
    assert report.ok
    # a sequence length that matches no parameter size is varied
    seq = torch.randn(2, 6, 8)
    report = run_probe(net, _trace(net, (seq,)), (seq,), module=net)
    assert report.dims == {"arg0": [0, 1]}
    assert _by_name(report)["size:all+1"].input_shapes == ["Float(3, 7, 8)"]
    assert report.ok


class BNNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)
        self.bn = torch.nn.BatchNorm1d(4)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.bn(self.lin(x)))


def test_module_state_rng_and_grad_mode_are_left_alone() -> None:
    torch.manual_seed(0)
    net = BNNet().train()
    x = torch.randn(5, 8)
    traced = _trace(net, (x,))
    net.lin.eval()  # a mixed tree (Linear ignores the flag): the flags must come back exactly
    before = {k: v.clone() for k, v in net.state_dict().items()}
    flags = [m.training for m in net.modules()]
    rng = torch.get_rng_state()
    assert torch.is_grad_enabled()
    report = run_probe(net, traced, (x,), module=net)
    assert torch.equal(torch.get_rng_state(), rng)
    assert torch.is_grad_enabled()
    assert [m.training for m in net.modules()] == flags
    after = net.state_dict()
    assert set(after) == set(before)
    for k, v in before.items():
        assert torch.equal(after[k], v), k
    assert int(net.bn.num_batches_tracked) == 1  # the trace's own forward, none of the probe's
    # dropout is reseeded identically for both runs, so train mode does not make everything disagree
    assert _by_name(report)["values:randn"].status == AGREE
    assert report.ok, [c.message for c in report.findings]
    # the check above can fail: a forward in train mode does move the running statistics
    with torch.no_grad():
        net(torch.randn(5, 8))
    assert not torch.equal(net.bn.running_mean, before["bn.running_mean"])


def test_explicit_dims_are_honoured_and_validated() -> None:
    x = torch.randn(2, 3)
    traced = _trace(clean, (x, x))
    report = run_probe(clean, traced, (x, x), dims={0: [1]})
    assert report.dims == {"arg0": [1]}
    assert [c.name for c in report.cases if c.name.startswith("size:")] == ["size:arg0.dim1+1", "size:arg0.dim1-1"]
    with pytest.raises(ValueError, match=r"arg0 \(Float\(2, 3\)\) has no dim 2; valid dims are 0\.\.1"):
        run_probe(clean, traced, (x, x), dims={0: [2]})
    with pytest.raises(ValueError, match=r"input 5 does not exist; valid positional input indices are 0\.\.1"):
        run_probe(clean, traced, (x, x), dims={5: [0]})
    with pytest.raises(ValueError, match=r"'z' is not a keyword input; the keyword inputs are 'x', 'y'"):
        run_probe(clean, traced, {"x": x, "y": x}, is_kwarg=True, dims={"z": [0]})


def test_keyword_inputs() -> None:
    x = torch.tensor([[1.0, -2.0], [3.0, 4.0]])
    y = torch.ones(2, 2)
    traced = _trace(branchy, (), example_kwarg_inputs={"x": x})
    report = run_probe(branchy, traced, {"x": x}, is_kwarg=True)
    cases = _by_name(report)
    assert report.dims == {"x": [0]}
    assert cases["values:negated"].status == DISAGREE
    assert cases["values:negated"].input_shapes == ["x=Float(2, 2)"]
    traced = _trace(clean, (), example_kwarg_inputs={"x": x, "y": y})
    report = run_probe(clean, traced, {"x": x, "y": y}, is_kwarg=True, dims={"y": [1]})
    assert report.ok
    assert report.dims == {"y": [1]}
    assert _by_name(report)["size:y.dim1+1"].input_shapes == ["x=Float(2, 2)", "y=Float(2, 3)"]


def test_integer_and_bool_inputs_and_nested_outputs() -> None:
    def f(x: torch.Tensor, idx: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        return x[idx], [x * keep, idx + 1]

    x = torch.randn(6)
    idx = torch.tensor([0, 2, 5])
    keep = torch.tensor([True, False, True, True, False, True])
    report = run_probe(f, _trace(f, (x, idx, keep)), (x, idx, keep))
    cases = _by_name(report)
    assert cases["values:randn"].input_shapes == ["Float(6)", "Long(3)", "Bool(6)"]
    assert {c.status for c in report.cases} <= {AGREE, SKIPPED}
    assert report.ok


def test_output_count_mismatch_is_a_disagreement() -> None:
    def f(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(x[i] * 2 for i in range(x.size(0)))  # a tuple as long as the input

    x = torch.arange(3.0)
    report = run_probe(f, _trace(f, (x,)), (x,))
    grow = _by_name(report)["size:arg0.dim0+1"]
    assert grow.status == DISAGREE
    assert grow.message.startswith("the eager function returns 4 value(s)")


def test_max_cases_caps_and_seed_reproduces() -> None:
    x = torch.tensor([1.0, 5.0, 2.0, 3.0])
    traced = _trace(pick_from_list, (x,))
    report = run_probe(pick_from_list, traced, (x,), max_cases=2)
    assert [c.name for c in report.cases] == ["values:randn", "values:negated"]
    assert report.dims == {}
    a = run_probe(pick_from_list, traced, (x,), seed=3)
    b = run_probe(pick_from_list, traced, (x,), seed=3)
    assert a == b


def test_json_round_trip() -> None:
    x = torch.arange(1.0, 5.0)
    report = run_probe(loop_sum, _trace(loop_sum, (x,)), (x,))
    report.cases.append(ProbeCase("x", "inf values", ["Float(1)"], DISAGREE, float("inf"), float("-inf"), "m"))
    text = json.dumps(report.to_json(), allow_nan=False)
    back = ProbeReport.from_json(json.loads(text))
    assert back == report
    assert back.ok is False
    assert back.findings == report.findings


def test_tensor_type_str() -> None:
    assert tensor_type_str(torch.zeros(4, 8)) == "Float(4, 8)"
    assert tensor_type_str(torch.zeros(4, dtype=torch.long)) == "Long(4)"
    assert tensor_type_str(torch.tensor(1.0, dtype=torch.float64)) == "Double()"


class WarnsFromAThread(torch.nn.Module):
    """Warns from another thread on every run (a data loader's, a logger's): not the trace's to drop."""

    runs = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        WarnsFromAThread.runs += 1
        other = threading.Thread(target=lambda: warnings.warn("from another thread", stacklevel=1))
        other.start()
        other.join()
        return x * 2


def test_other_threads_warnings_are_shown_while_the_probe_runs_the_model() -> None:
    """The probe drops its own runs' warnings through the trace's recorder, not with a process-wide "ignore"."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        WarnsFromAThread.runs = 0
        run = tj.trace(WarnsFromAThread(), (torch.randn(3, 4),), probe=True, probe_dims={0: [0]})
    assert run.probe is not None and run.probe.cases, run.error
    assert sum(str(w.message) == "from another thread" for w in seen) == WarnsFromAThread.runs >= 3
