"""Every specialisation, refusal and failed check guard at the line that caused it, whatever the construct: a ``for``
or ``while`` over a size, a comparison, an ``assert``, ``min``, a ``view`` / ``reshape``, slicing, a guard made in
library code (``nn.LSTM``, ``nn.GRU``). torch's own verdict on each is the truth the run must agree with (same
outcome, same exception type); the run's line is checked against the line marked ``# CONSTRUCT``."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch
import torch.nn as nn
from torch.export import Dim

from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.core.export.request import export
from jupyter_tracejit.core.torch_logs import captured_torch_logs

pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))

THIS_FILE = __file__


class For(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(x.size(0)):  # CONSTRUCT
            x = x + i
        return x


class While(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = 0
        while n < x.size(0):  # CONSTRUCT
            n += 1
        return x * n


class If(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.size(0) > 4:  # CONSTRUCT
            return x + 1
        return x - 1


class Assert(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.size(0) == 6  # CONSTRUCT
        return x + 1


class Min(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[: min(x.size(0), 4)].sum() * torch.ones(min(x.size(0), 8))  # CONSTRUCT


class View(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(3, -1)  # CONSTRUCT


class Reshape(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.size(0) // 2, 2)  # CONSTRUCT


class Slice(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:4].view(2, 2)  # CONSTRUCT


class LSTM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.LSTM(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rnn(x.unsqueeze(-1))[0]  # CONSTRUCT


CONSTRUCTS = [For, While, If, Assert, Min, View, Reshape, Slice, LSTM]


def construct_line(cls: type) -> int:
    source, start = inspect.getsourcelines(cls)
    return next(start + i for i, text in enumerate(source) if text.rstrip().endswith("# CONSTRUCT"))


def torch_verdict(model: nn.Module, args: tuple[Any, ...], shapes: Any) -> str:
    """What torch.export.export itself says: ``ok`` or the type of what it raised."""
    with captured_torch_logs():
        try:
            torch.export.export(model, args, dynamic_shapes=shapes)
        except Exception as e:
            return type(e).__name__
    return "ok"


SPECS = {"Dim": lambda: Dim("n", min=2, max=16), "AUTO": lambda: Dim.AUTO}


@pytest.mark.parametrize("spec", list(SPECS))
@pytest.mark.parametrize("cls", CONSTRUCTS, ids=lambda c: c.__name__)
def test_each_construct_is_at_its_line_and_agrees_with_torch(cls: type, spec: str) -> None:
    model, x = cls().eval(), torch.randn(6)
    shapes = {"x": {0: SPECS[spec]()}}
    expected = torch_verdict(model, (x,), shapes)
    run = export(model, (x,), dynamic_shapes=shapes)
    line = construct_line(cls)
    assert ("ok" if run.error is None else run.error.type) == expected, run.error
    if run.error is not None:
        assert (run.error.file, run.error.line) == (THIS_FILE, line), run.error
        assert run.error.code.endswith("# CONSTRUCT")
        return
    assert run.export is not None
    # an accepted export: whatever it assumed of the size (a specialisation, a guard) is at the construct's line,
    # a specialisation with the nodes it concerns; a check input the program refuses fails at that line too
    at_line = [g for g in run.export.guards if g.kind != "runtime_assert" and g.line == line and g.file == THIS_FILE]
    elsewhere = [g for g in run.export.guards if g.kind != "runtime_assert" and g.file and g.line != line]
    assert not elsewhere, elsewhere
    for guard in (g for g in at_line if g.kind == "specialization"):
        assert guard.node_ids, guard
    assert run.check is not None
    for case in run.check.cases:
        if case.exception is not None:
            assert (case.exception.file, case.exception.line) == (THIS_FILE, line), case.exception


class GRU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(4, 8, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rnn(x)[0]  # CONSTRUCT


def test_a_gru_refusal_and_its_dim_auto_check_failure_are_at_the_models_line() -> None:
    line = construct_line(GRU)
    refused = export(GRU().eval(), (torch.randn(2, 7, 4),), dynamic_shapes={"x": {1: Dim("seq", min=2, max=64)}})
    assert refused.error is not None and (refused.error.file, refused.error.line) == (THIS_FILE, line)
    assert refused.export is not None and refused.export.advice
    advice = refused.export.advice[0]
    assert (
        advice.library == "torch.nn" and advice.library_file.endswith("rnn.py") and advice.fixes[0].kind == "model_fact"
    )
    # Dim.AUTO: export specialises silently; the check at another length fails at the model's line, not the call's
    run = export(
        GRU().eval(),
        (torch.randn(2, 7, 4),),
        dynamic_shapes={"x": {1: Dim.AUTO}},
        check_inputs=[(torch.randn(2, 9, 4),)],
    )
    assert run.error is None and run.check is not None and not run.check.ok
    failed = run.check.cases[0].exception
    assert failed is not None and failed.tag == "guard_failed"
    assert (failed.file, failed.line) == (THIS_FILE, line), failed
    assert "torch.nn's code" in failed.hint and "rewriting it is not the fix" in failed.hint
    spec = next(g for g in run.export.guards if g.kind == "specialization")  # type: ignore[union-attr]
    assert (spec.file, spec.line, spec.library) == (THIS_FILE, line, "torch.nn") and spec.node_ids
