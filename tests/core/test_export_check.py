"""The export check: ``ep.module()`` against the eager Python code on ``check_inputs`` and at the minimum, middle and
maximum of each declared range, a failing guard recorded as a case's exception at the user's line, the module left
as found; and the session hook that runs it after an export."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import torch
import torch.nn as nn
from torch.export import Dim, export

import jupyter_tracejit as tj
import tests.models
from jupyter_tracejit.core.capture import drive
from jupyter_tracejit.core.export.check import MAX_DERIVED_BYTES, check_export, check_input_set, range_cases
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.core.export.session import ExportSession
from jupyter_tracejit.core.graph import Frame
from jupyter_tracejit.core.run import TraceRun
from jupyter_tracejit.core.validate import check_run
from jupyter_tracejit.render.text import format_run
from tests.models import LOOP_LINE, MLP, LinearBatchNorm, LoopOverRows, OneLinear

#: the export back end needs torch.export with Dim.AUTO (the floor torch of the matrix, 2.4, lacks it)
pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))

THIS_FILE = __file__
CALLER = Frame(file=THIS_FILE, line=1, func="<module>", code="")


class Pair(nn.Module):
    """Two inputs sharing the batch dim, one keyword input; returns a tuple."""

    def forward(self, x: torch.Tensor, y: torch.Tensor, *, scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x * scale, x.sum(dim=1) + y


class EvenOnly(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] % 2:  # always even for export, whose size is 2 * half
            raise ValueError("batch must be even")
        return x.view(-1, 2, x.shape[1]).sum(dim=1)


def line_of(marker: str) -> int:
    with open(THIS_FILE) as f:
        return next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}"))


def mlp_input(batch: int = 8) -> torch.Tensor:
    return torch.randn(batch, 16)


# -- the check itself ---------------------------------------------------------------------------------------------
def test_a_dynamic_batch_is_checked_at_its_minimum_middle_and_maximum() -> None:
    model = MLP()
    x = mlp_input()
    ep = export(model, (x,), dynamic_shapes={"x": {0: Dim("batch", min=2, max=64)}})
    report = check_export(ep, model, (x,), {}, check_inputs=[(mlp_input(5),)])
    assert report.cases[0].label == "check_inputs[0]"
    ranged = report.cases[1:]
    assert [c.inputs for c in ranged] == [["Float(2, 16)"], ["Float(33, 16)"], ["Float(64, 16)"]]
    assert [c.label.split(" (")[1].split(")")[0] for c in ranged] == ["min", "mid", "max"]
    assert all(c.label.startswith("range s") and "x.size()[0]" in c.label for c in ranged)
    assert report.ok, [str(c.exception) for c in report.cases]
    assert all(c.method == "forward" and c.exception is None for c in report.cases)
    outputs = [o for c in report.cases for o in c.outputs]
    assert len(outputs) == 4 and all(o.against == "python" and o.ok for o in outputs)
    assert [o.shape for o in outputs] == [[5, 4], [2, 4], [33, 4], [64, 4]]
    assert report.tolerance == outputs[0].rtol


def test_a_static_export_checked_at_another_batch_fails_naming_the_guard() -> None:
    model = MLP()
    x = mlp_input()
    ep = export(model, (x,))
    report = check_export(ep, model, (x,), {}, check_inputs=[(mlp_input(3),), (mlp_input(8),)], caller=CALLER)
    assert [c.ok for c in report.cases] == [False, True]  # no declared range: no derived cases
    error = report.cases[0].exception
    assert error is not None and error.phase == "check" and error.tag == "guard_failed"
    assert "Guard failed: x.size()[0] == 8" in error.message
    assert "Dim" in error.hint and "static" in error.hint
    # a static dim has no line of the user's that made it: the caller's line is named
    assert (error.file, error.line) == (THIS_FILE, 1)
    assert not report.ok and report.failed == [report.cases[0]]


@pytest.mark.parametrize("strict", [False, True])
def test_a_loop_specialised_silently_by_dim_auto_fails_at_the_loop_line(strict: bool) -> None:
    # strict export names the input flat_args[0], not x: the guard message's x.size()[0] must still find its line
    model = LoopOverRows()
    x = torch.randn(3, 4)
    ep = export(model, (x,), dynamic_shapes={"x": {0: Dim.AUTO}}, strict=strict)
    assert not ep.range_constraints  # the dim vanished: nothing to derive
    report = check_export(ep, model, (x,), {}, check_inputs=[(torch.randn(5, 4),)])
    assert len(report.cases) == 1
    error = report.cases[0].exception
    assert error is not None and "Guard failed: x.size()[0] == 3" in error.message
    assert (error.file, error.line) == (tests.models.__file__, LOOP_LINE)
    assert "range(x.size(0))" in error.code
    assert "line shown" in error.hint and "Dim.AUTO" in error.hint


def test_shared_symbols_change_together_and_keyword_inputs_and_tuples_are_checked() -> None:
    model = Pair()
    x, y, scale = torch.randn(4, 6), torch.randn(4), torch.tensor(2.0)
    batch = Dim("batch", min=2, max=10)
    ep = export(model, (x, y), {"scale": scale}, dynamic_shapes={"x": {0: batch}, "y": {0: batch}, "scale": None})
    report = check_export(ep, model, (x, y), {"scale": scale})
    assert [c.inputs for c in report.cases] == [
        ["Float(2, 6)", "Float(2)", "scale=Float()"],
        ["Float(6, 6)", "Float(6)", "scale=Float()"],
        ["Float(10, 6)", "Float(10)", "scale=Float()"],
    ]
    assert "x.size()[0], y.size()[0]" in report.cases[0].label
    assert report.ok and all(len(c.outputs) == 2 for c in report.cases)


def test_derived_inputs_keep_the_examples_values_where_shapes_overlap() -> None:
    model = MLP()
    x = mlp_input()
    ep = export(model, (x,), dynamic_shapes={"x": {0: Dim("batch", min=2, max=64)}})
    cases = range_cases(ep, (x,), {}, torch.Generator().manual_seed(0))
    small, big = cases[0].args[0], cases[-1].args[0]
    assert torch.equal(small, x[:2]) and torch.equal(big[:8], x)
    again = range_cases(ep, (x,), {}, torch.Generator().manual_seed(0))
    assert torch.equal(again[-1].args[0], big)  # seeded


def test_an_unbounded_maximum_is_checked_at_twice_the_example() -> None:
    model = MLP()
    x = mlp_input(5)
    ep = export(model, (x,), dynamic_shapes={"x": {0: Dim("batch")}})
    labels = [c.label for c in range_cases(ep, (x,), {}, torch.Generator().manual_seed(0))]
    assert labels[-1].startswith("range s") and "=10 (max, unbounded)" in labels[-1]


def test_a_huge_maximum_is_lowered_to_keep_memory_small() -> None:
    model = MLP()
    x = mlp_input()
    ep = export(model, (x,), dynamic_shapes={"x": {0: Dim("batch", min=2, max=10**8)}})
    cases = range_cases(ep, (x,), {}, torch.Generator().manual_seed(0))
    top = next(c for c in cases if "(max" in c.label and not c.offered)
    assert "lowered from 100000000" in top.label
    assert top.args[0].numel() * 4 <= MAX_DERIVED_BYTES
    # the maximum itself is offered, not built: its sizes said, no tensor made
    offered = cases[-1]
    assert offered.offered and offered.args == () and offered.inputs == ["Float(100000000, 16)"]


def test_a_size_the_python_code_rejects_is_skipped_not_failed() -> None:
    model = EvenOnly()
    x = torch.randn(4, 3)
    ep = export(model, (x,), dynamic_shapes={"x": {0: Dim("half", min=1, max=8) * 2}})
    report = check_export(ep, model, (x,), {}, check_inputs=[(torch.randn(5, 3),)])
    first = report.cases[0]  # a user's check input the code rejects is a failure, as torch.jit.trace's
    assert first.exception is not None and "batch must be even" in first.exception.message
    assert all(c.ok for c in report.cases[1:]) and len(report.cases) == 4


def test_a_range_case_the_python_code_rejects_is_labelled_skipped() -> None:
    linear = nn.Linear(16, 4)
    ep = export(linear, (torch.randn(4, 16),), dynamic_shapes={"input": {0: Dim("b", min=2, max=11)}})

    def eager(t: torch.Tensor) -> torch.Tensor:  # a Python function narrower than the declared range
        if t.shape[0] % 2:
            raise ValueError("odd")
        return linear(t)

    report = check_export(ep, eager, (torch.randn(4, 16),), {})
    labels = [c.label for c in report.cases]
    assert len(labels) == 3 and "(mid)" in labels[1] and not labels[1].endswith(")")
    assert labels[-1].endswith("skipped, the Python code rejects it (ValueError: odd)")
    assert [c.skipped for c in report.cases] == ["", "", "the Python code rejects it (ValueError: odd)"]
    assert report.ok and report.cases[-1].outputs == [] and report.cases[-1].exception is None


class Positions(nn.Module):
    """Learned positions for 8 steps: a declared length range past 8 is wider than what the code accepts."""

    def __init__(self) -> None:
        super().__init__()
        self.positions = nn.Embedding(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.positions(torch.arange(x.shape[1]))


def test_a_run_whose_range_cases_were_skipped_does_not_count_them_as_passed() -> None:
    seq = Dim("seq", min=2, max=64)
    run = tj.export(Positions(), (torch.randn(2, 5, 4),), dynamic_shapes={"x": {1: seq}})
    assert run.ok and run.check is not None and len(run.check.cases) == 3
    assert [bool(c.skipped) for c in run.check.cases] == [False, True, True]
    assert "IndexError" in run.check.cases[1].skipped
    # it said "check passed (3 input sets)" with one of them run
    assert run.summary().endswith("check passed (1 input set, 2 skipped)")
    assert "passed on 1 input set, 2 skipped" in run.verdict.reasons[0]
    assert format_run(run).splitlines()[-1].endswith(": skipped")
    data = run.to_json()
    check_run(data)
    assert TraceRun.from_json(data).to_json() == data


def test_the_modules_buffers_flags_and_grad_mode_are_left_as_found() -> None:
    model = LinearBatchNorm().train()
    x = torch.randn(6, 8)
    ep = export(model, (x,), dynamic_shapes={"x": {0: Dim("batch", min=2, max=16)}})
    before = {k: v.clone() for k, v in model.state_dict().items()}
    program_before = {k: v.clone() for k, v in ep.state_dict.items()}
    grad = torch.is_grad_enabled()
    report = check_export(ep, model, (x,), {}, check_inputs=[(torch.randn(4, 8),)])
    assert report.ok, [str(c.exception) for c in report.cases]
    assert model.training and torch.is_grad_enabled() == grad
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(torch.equal(program_before[k], v) for k, v in ep.state_dict.items())


def test_dropout_in_train_mode_draws_the_same_numbers_in_both_runs() -> None:
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5)).train()
    x = torch.randn(4, 8)
    ep = export(model, (x,))
    report = check_export(ep, model, (x,), {}, check_inputs=[(x,)], ranges=False)
    # the RNG is reseeded identically before each run: the same mask, so the same outputs
    assert len(report.cases) == 1 and report.ok, report.cases[0].outputs[0].message
    assert model.training


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (torch.zeros(2), 1),
        ((torch.zeros(2), torch.zeros(3)), 2),
        ([torch.zeros(2)], 1),
    ],
)
def test_check_input_sets_are_args_unless_a_dict_or_an_args_kwargs_pair(entry: Any, expected: int) -> None:
    args, kwargs = check_input_set(entry)
    assert len(args) == expected and kwargs == {}
    assert check_input_set({"x": torch.zeros(1)})[0] == ()
    pair_args, pair_kwargs = check_input_set(((torch.zeros(1),), {"m": 1}))
    assert len(pair_args) == 1 and pair_kwargs == {"m": 1}


# -- in the session -----------------------------------------------------------------------------------------------
def session_run(target: Any, args: Any, **options: Any) -> tuple[TraceRun, ExportSession]:
    session = ExportSession(target, args, caller=CALLER, **options)
    return drive(session.steps(time.perf_counter())), session


def test_the_session_checks_after_exporting_and_the_run_round_trips() -> None:
    model = LoopOverRows()
    run, _ = session_run(
        model, (torch.randn(3, 4),), dynamic_shapes={"x": {0: Dim.AUTO}}, check_inputs=[(torch.randn(5, 4),)]
    )
    assert run.error is None and run.check is not None and not run.check.ok
    assert "check" in run.timings and run.python_runs == 2  # the export's run, the check's eager run
    assert run.options["check_inputs"] == [["Float(5, 4)"]]
    case = run.check.cases[0]
    assert case.exception is not None and case.exception.line == LOOP_LINE
    assert not run.ok and run.verdict.label == "check failed"
    data = run.to_json()
    check_run(data)  # raises on a schema violation
    back = TraceRun.from_json(json.loads(json.dumps(data)))
    assert back.check is not None and back.check.to_json() == run.check.to_json()
    assert back.check.cases[0].exception is not None and back.check.cases[0].exception.line == LOOP_LINE


def test_a_passing_session_check_counts_each_eager_run() -> None:
    run, _ = session_run(MLP(), (mlp_input(),), dynamic_shapes={"x": {0: Dim("batch", min=2, max=32)}})
    assert run.check is not None and run.check.ok and len(run.check.cases) == 3
    assert run.python_runs == 4 and run.ok
    check_run(run.to_json())


def test_the_session_check_can_be_turned_off() -> None:
    run, _ = session_run(MLP(), (mlp_input(),), check=False)
    assert run.check is None and "check" not in run.timings and run.python_runs == 1


def test_the_programs_work_is_counted_from_its_graph() -> None:
    from jupyter_tracejit.core.export.check_cost import CaseCost, program_flops

    ep = export(OneLinear(512), (torch.randn(8, 512),), dynamic_shapes={"x": {0: Dim("batch", min=2, max=4096)}})
    assert program_flops(ep) == 2 * 8 * 512 * 512  # one linear layer at the example's batch of 8
    cost = CaseCost(ep, ((torch.randn(8, 512),), {}))
    assert cost.work(16 * 512) == pytest.approx(2 * cost.work(8 * 512))


def test_a_check_that_cannot_pay_for_any_size_offers_them_all_without_building_the_program(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model, x = OneLinear(512), torch.randn(2048, 512)
    ep = export(model, (x,), dynamic_shapes={"x": {0: Dim("batch", min=1024, max=4096)}})
    monkeypatch.setattr(type(ep), "module", lambda *a, **k: pytest.fail("the program was built"))
    timings: dict[str, float] = {}
    report = check_export(ep, model, (x,), budget=1e-6, timings=timings)
    assert report.cases and all(
        c.skipped.startswith("offered, not run: over the check's time budget") for c in report.cases
    )
    assert all(
        "about" in c.skipped and "pass check_inputs with inputs of these sizes (Float(" in c.skipped
        for c in report.cases
    )
    assert report.ok and report.passed_text().startswith("0 input sets") and not timings


def test_without_a_budget_every_size_of_the_range_runs_and_is_timed() -> None:
    model, x = OneLinear(512), torch.randn(8, 512)
    ep = export(model, (x,), dynamic_shapes={"x": {0: Dim("batch", min=2, max=16)}})
    timings: dict[str, float] = {}
    report = check_export(ep, model, (x,), timings=timings)
    assert [c.skipped for c in report.cases] == ["", "", ""] and report.ok
    assert sorted(timings) == ["check[0]", "check[1]", "check[2]"]
