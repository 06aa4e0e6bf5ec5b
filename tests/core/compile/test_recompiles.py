"""Recompilations against torch's own count (a counting back end: a compile torch numbers ``n/1`` or later is a
recompile), each read in the inputs' terms at the line that uses the guarded value, with its fix."""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from jupyter_tracejit.core.compile.request import compile as tj_compile
from jupyter_tracejit.core.run import TraceRun

from . import models
from .truth import count_compiles

MODELS_FILE = os.path.abspath(models.__file__)


def run_quietly(model: Any, args: tuple[Any, ...], **options: Any) -> TraceRun:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        return tj_compile(model, args, **options)


def as_calls(first: tuple[Any, ...], calls: Sequence[Any]) -> list[tuple[Sequence[Any], Mapping[str, Any]]]:
    return [(first, {})] + [((c, {}) if isinstance(c, tuple) else ((), c)) for c in calls]


def recompiled(run: TraceRun) -> int:
    """The run's recompilations that made a graph (the ones a counting back end sees)."""
    return sum(1 for r in run.compile.recompilations if r.compile_id)


def test_a_size_that_changes_recompiles_once_by_default() -> None:
    model = models.Clean()
    first, calls = (torch.randn(3, 4),), [(torch.randn(5, 4),), (torch.randn(7, 4),)]
    run = run_quietly(model, first, calls=calls)
    truth = count_compiles(model, as_calls(first, calls))
    assert recompiled(run) == truth.recompiles == 1
    (r,) = run.compile.recompilations
    assert (r.call, r.kind, r.reason) == (1, "size", "x.size()[0] was 3, now 5")
    assert r.func == "forward" and r.compile_id.endswith("/1")
    assert (os.path.abspath(r.file), r.code) == (MODELS_FILE, "return torch.relu(self.fc(x)) * 2")
    assert "mark_dynamic" in r.hint
    assert [reg.call for reg in run.compile.regions] == [0, 1]
    assert run.compile.regions[1].runs == [0, 1, 1]  # the dynamic graph serves the third call too
    assert any(g.expr == "2 <= x.size()[0]" for g in run.compile.regions[1].guards)
    assert run.check is not None and run.check.ok and len(run.check.cases) == 3


def test_dynamic_false_recompiles_every_new_size_and_says_the_fix() -> None:
    model = models.Clean()
    first, calls = (torch.randn(3, 4),), [(torch.randn(5, 4),), (torch.randn(7, 4),), (torch.randn(5, 4),)]
    run = run_quietly(model, first, calls=calls, dynamic=False)
    truth = count_compiles(model, as_calls(first, calls), dynamic=False)
    assert recompiled(run) == truth.recompiles == 2
    assert [r.reason for r in run.compile.recompilations] == ["x.size()[0] was 3, now 5", "x.size()[0] was 5, now 7"]
    (found,) = [f for f in run.findings if f.kind == "specialized_dim"]
    assert "x.size()[0]" in found.title and found.fix == {"dynamic": None}
    assert "dynamic=False" in run.compile.recompilations[0].hint


def test_a_python_value_recompiles_with_its_old_and_new_value() -> None:
    model = models.Scaled()
    x = torch.randn(3, 4)
    first, calls = (x, 2), [(x, 3), (x, 4)]
    run = run_quietly(model, first, calls=calls)
    truth = count_compiles(model, as_calls(first, calls))
    assert recompiled(run) == truth.recompiles >= 1
    r = run.compile.recompilations[0]
    assert (r.call, r.kind, r.reason) == (1, "value", "k was 2, now 3")
    assert r.line and "x * k" in r.code
    assert "tensor" in r.hint


def test_requires_grad_that_changes_recompiles() -> None:
    model = models.double
    first, calls = (torch.randn(3, 4),), [(torch.randn(3, 4, requires_grad=True),)]
    run = run_quietly(model, first, calls=calls)
    truth = count_compiles(model, as_calls(first, calls))
    assert recompiled(run) == truth.recompiles == 1
    (r,) = run.compile.recompilations
    assert (r.kind, r.reason) == ("requires_grad", "x.requires_grad was False, now True")


def test_the_recompile_limit_is_a_finding() -> None:
    model = models.Clean()
    sizes = [2, 3, 4, 5, 6]
    first, calls = (torch.randn(sizes[0], 4),), [(torch.randn(n, 4),) for n in sizes[1:]]
    name = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") else "cache_size_limit"
    with torch._dynamo.config.patch(**{name: 3}):
        run = run_quietly(model, first, calls=calls, dynamic=False)
        truth = count_compiles(model, as_calls(first, calls), dynamic=False)
    assert recompiled(run) == truth.recompiles == 2
    assert run.compile.recompile_limit == 3 and run.compile.limit_hit == ["forward"]
    (found,) = [f for f in run.findings if f.kind == "recompile_limit"]
    assert found.title == "torch runs forward eagerly" and "After 3 compilations" in found.message
    assert run.check is not None and run.check.ok  # eagerly, the outputs are still right


def test_a_forward_that_writes_an_attribute_is_a_side_effect() -> None:
    model = models.Counting()
    x = torch.randn(3, 4)
    run = run_quietly(model, (x,), calls=[(x,), (x,)])
    (found,) = [f for f in run.findings if f.kind == "side_effect"]
    assert found.title == "the model writes self.calls"
    truth = count_compiles(models.Counting(), as_calls((x,), [(x,), (x,)]))
    assert recompiled(run) == truth.recompiles
    assert [r.reason for r in run.compile.recompilations] == ["self.calls was 0, now 1", "self.calls was 1, now 2"][
        : len(run.compile.recompilations)
    ]
    assert all(r.kind == "value" for r in run.compile.recompilations)


def test_keyword_calls_are_made_by_keyword() -> None:
    model = models.Scaled()
    x = torch.randn(3, 4)
    run = run_quietly(model, (x,), kwargs={"k": 2}, calls=[{"x": x, "k": 2}])
    assert run.ok and run.compile.recompilations == [] and run.options["calls"] == [["x=Float(3, 4)", "k=2"]]


def _wrapped(forward: Any) -> Any:
    """A decorator as libraries write them (transformers' ``can_return_tuple``): forward's inputs arrive as
    ``*args, **kwargs``, so dynamo guards on how many are positional."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return forward(*args, **kwargs)

    return wrapper


class Wrapped(models.OneLayer):
    @_wrapped
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


def test_calls_passed_otherwise_than_the_first_are_a_finding_with_the_way_to_call() -> None:
    """The first call by keyword, the next positional: dynamo recompiles for the arguments' count alone (torch's own
    count says so), and the finding names both ways and how to call the same way."""
    model, x, x5 = Wrapped(), torch.randn(3, 4), torch.randn(5, 4)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        mixed = tj_compile(model, (), {"x": x}, calls=[(x5,)])
        same = tj_compile(model, (), {"x": x}, calls=[{"x": x5}])
    truth = count_compiles(Wrapped(), [((), {"x": x}), ((x5,), {})])
    assert recompiled(mixed) == truth.recompiles >= 1
    (found,) = [f for f in mixed.findings if f.kind == "call_form"]
    assert "The first call passes x=; call 1 passes 1 positional" in found.message
    assert "calls=[{'input_ids': ids2" in found.hint
    assert not [f for f in same.findings if f.kind == "call_form"]
