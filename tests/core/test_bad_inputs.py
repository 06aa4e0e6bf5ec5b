"""A corpus of bad input, as people feed half-finished code to a notebook tool: every case gives one clear message
that names the problem and the fix (or traces fine where torch does), never raises out of ``tj.trace``, and leaves
grad mode and the model's train/eval flags as they were."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj

from ..models import LinearWithEncode, ListOfDicts


class Hooked(LinearWithEncode):
    def __init__(self) -> None:
        super().__init__()
        self.fc.register_full_backward_hook(lambda *args: None)


class SharedWeights(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(self.a(x))


class ReturnsDataclassLike(nn.Module):
    def forward(self, x):
        return {"logits": x}


class NeedsTwo(nn.Module):
    def forward(self, x, y):
        return x + y


class HostileGetattr:
    def __getattr__(self, name):
        raise RuntimeError("nope")

    def __call__(self, x):
        return x


def raises(x):
    raise ValueError("the input is bad")


def raises_on_other_shapes(x):
    if x.shape[0] != 2:
        raise ValueError("only batches of 2")
    return x + 1


def recurses(x):
    return recurses(x)


def prints_a_lot(x):
    print("line\n" * 1_000_000)
    return x + 1


def generator(x):
    yield x


def uses_grad_constant(x):
    return x * WEIGHT


WEIGHT = torch.rand(2, requires_grad=True)


def needs_grad(x):
    y = x * 2
    assert y.requires_grad
    return y


@dataclass
class Case:
    name: str
    call: Callable[[], tj.TraceRun]
    #: a substring of the error message, or None when the trace must succeed
    message: str | None
    #: the error's tag where one is expected
    tag: str = ""
    module: nn.Module | None = None
    notes: list[str] = field(default_factory=list)


def x2() -> torch.Tensor:
    return torch.rand(2)


LIN = LinearWithEncode()
CASES = [
    # misuse of the API itself
    Case("not callable", lambda: tj.trace(3, (x2(),)), "needs a function or nn.Module", "bad_argument"),
    Case("the output of a call", lambda: tj.trace(LIN(x2()), (x2(),)), "needs a function or nn.Module"),
    Case("no inputs", lambda: tj.trace(LIN), "no example inputs"),
    Case("check_inputs not a list", lambda: tj.trace(LIN, (x2(),), check_inputs=x2()), "check_inputs must be"),
    Case("tolerance negative", lambda: tj.trace(LIN, (x2(),), check_tolerance=-1), "check_tolerance must be"),
    Case("tolerance nan", lambda: tj.trace(LIN, (x2(),), check_tolerance=float("nan")), "check_tolerance must be"),
    Case("strict as a string", lambda: tj.trace(LIN, (x2(),), strict="no"), "strict must be True or False"),
    Case("unknown module mode", lambda: tj.trace(LIN, (x2(),), module_mode="inference"), "module_mode must be"),
    Case("probe_dims a list", lambda: tj.trace(LIN, (x2(),), probe=True, probe_dims=[1]), "probe_dims must be"),
    Case("kwarg inputs not a dict", lambda: tj.trace(LIN, example_kwarg_inputs=[x2()]), "must be a dict"),
    Case(
        "kwarg inputs with list check inputs",
        lambda: tj.trace(LIN, example_kwarg_inputs={"x": x2()}, check_inputs=[(x2(),)]),
        "need dict check inputs",
    ),
    Case("trace_module of a function", lambda: tj.trace_module(raises, {"forward": (x2(),)}), "expects an nn.Module"),
    Case("trace_module without a dict", lambda: tj.trace_module(LIN, (x2(),)), "non-empty dict"),
    Case("trace_module of a missing method", lambda: tj.trace_module(LIN, {"decode": (x2(),)}), "no method 'decode'"),
    Case(
        "trace_module kwarg flag not a bool",
        lambda: tj.trace_module(LIN, {"forward": (x2(),)}, example_inputs_is_kwarg="yes"),
        "example_inputs_is_kwarg must be True or False",
    ),
    Case("hostile __getattr__", lambda: tj.trace(HostileGetattr(), (x2(),)), "inspecting what to trace raised"),
    # the user's code fails
    Case("raises while tracing", lambda: tj.trace(raises, (x2(),)), "the input is bad"),
    Case(
        "raises only in the check",
        lambda: tj.trace(raises_on_other_shapes, (x2(),), check_inputs=[(torch.rand(3),)]),
        "only batches of 2",
    ),
    Case("recursion", lambda: tj.trace(recurses, (x2(),)), "maximum recursion depth"),
    Case("a generator function", lambda: tj.trace(generator, (x2(),)), "cannot infer type", "output_type"),
    Case("returns None", lambda: tj.trace(lambda x: None, (x2(),)), "didn't return any values", "output_type"),
    Case("returns an int", lambda: tj.trace(lambda x: 3, (x2(),)), "Only tensors", "output_type"),
    Case("returns a string", lambda: tj.trace(lambda x: "s", (x2(),)), "Only tensors", "output_type"),
    Case(
        "returns nested non-tensors",
        lambda: tj.trace(lambda x: (x, [1, {"a": "b"}]), (x2(),)),
        "with mixed types is in what the traced code returns)",
        "output_type",
    ),
    Case("returns a dict (strict)", lambda: tj.trace(ReturnsDataclassLike(), (x2(),)), "dict", "dict_output"),
    Case("returns a list of dicts", lambda: tj.trace(ListOfDicts(2), (x2(),)), "", "output_type"),
    Case("a string input", lambda: tj.trace(lambda x: x, ("s",)), "cannot be traced", "input_type"),
    Case("an int input", lambda: tj.trace(lambda x: x, (3,)), "cannot be traced", "input_type"),
    Case(
        "a list mixing tensors and ints",
        lambda: tj.trace(lambda xs: xs[0], ([x2(), 3],)),
        "mixed types is in the example inputs",
    ),
    Case("a dict mixing tensors and ints", lambda: tj.trace(lambda d: d["a"], ({"a": x2(), "b": 3},)), "Dictionary"),
    Case("wrong keyword", lambda: tj.trace(LIN, example_kwarg_inputs={"y": x2()}), "", "kwarg_names"),
    Case("too few inputs", lambda: tj.trace(NeedsTwo(), (x2(),)), "missing 1 required positional", "kwarg_names"),
    Case("shape mismatch", lambda: tj.trace(LIN, (torch.rand(3),)), "", "shape_mismatch"),
    Case(
        "check input of another arity",
        lambda: tj.trace(LIN, (x2(),), check_inputs=[(x2(), x2())]),
        "re-tracing with check_inputs[0] raised",
    ),
    Case(
        "check input of another shape",
        lambda: tj.trace(LIN, (x2(),), check_inputs=[(torch.rand(5),)]),
        "re-tracing with check_inputs[0] raised",
    ),
    Case("a bound method", lambda: tj.trace(LIN.encode, (x2(),)), "", "bound_method"),
    Case("backward hooks", lambda: tj.trace(Hooked(), (x2(),)), "backward hooks", "backward_hooks"),
    Case("a grad-requiring constant", lambda: tj.trace(uses_grad_constant, (x2(),)), "", "grad_constant"),
    Case("the check runs under no_grad", lambda: tj.trace(needs_grad, (torch.rand(2, requires_grad=True),)), ""),
    # fine, as for torch
    Case("inputs on the meta device", lambda: tj.trace(lambda x: x * 2, (torch.empty(2, device="meta"),)), None),
    Case("already scripted", lambda: tj.trace(torch.jit.script(LinearWithEncode()), (x2(),)), None),
    Case("shared parameters", lambda: tj.trace(SharedWeights(), (x2(),)), None),
    Case("a zero-size tensor", lambda: tj.trace(lambda x: x * 2, (torch.rand(0, 3),)), None),
    Case("a huge tensor", lambda: tj.trace(lambda x: x * 2, (torch.empty(2**27),), check_trace=False), None),
    Case("prints a million lines", lambda: tj.trace(prints_a_lot, (x2(),), check_trace=False), None),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_gives_one_clear_message_and_changes_nothing(case: Case) -> None:
    assert len(CASES) >= 40
    LIN.train()
    grad = torch.is_grad_enabled()
    with contextlib.redirect_stdout(io.StringIO()):
        run = case.call()  # never raises
    assert torch.is_grad_enabled() == grad and LIN.training
    if case.message is None:
        assert run.ok, run.error
        return
    assert not run.ok and run.error is not None, run.summary()
    error = run.error
    assert case.message in error.message, error.message
    if case.tag:
        assert error.tag == case.tag, (error.tag, error.message)
    assert error.hint and len(error.hint) > 30, error  # names the fix
    assert "\n" not in run.summary()  # one line
    assert error.phase in ("arguments", "trace", "check")
    if error.phase != "arguments":
        assert error.traceback  # the details are kept


def interrupts(x):
    raise KeyboardInterrupt


def exits(x):
    raise SystemExit(3)


@pytest.mark.parametrize("fn", [interrupts, exits])
def test_an_interrupt_or_exit_in_the_traced_code_propagates_like_in_a_cell_and_restores_state(fn: Any) -> None:
    model = LinearWithEncode().eval()
    model.forward = fn  # type: ignore[method-assign]
    grad = torch.is_grad_enabled()
    with pytest.raises((KeyboardInterrupt, SystemExit)), torch.no_grad():
        tj.trace(model, (x2(),), module_mode="train")
    assert torch.is_grad_enabled() == grad and not model.training
