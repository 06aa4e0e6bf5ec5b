"""From a tj.trace / tj.trace_module call to a validated plan, running no user code: every misuse is an
ArgumentProblem with its message, hint and tag; check sets and their labels; a bound forward is its module; and
target_of describes any object without raising."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import pytest
import torch
import torch.nn as nn

from jupyter_tracejit.core.run import Target
from jupyter_tracejit.core.target import target_of
from jupyter_tracejit.core.torchscript.options import TraceOptions
from jupyter_tracejit.core.torchscript.plan import ArgumentProblem, plan_trace, plan_trace_module

from .. import models
from ..models import LinearWithEncode

HERE = __file__


def double(x):
    return x * 2


def scripted() -> torch.jit.ScriptModule:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.script(LinearWithEncode())


def problem(call: Any, *args: Any, **kwargs: Any) -> ArgumentProblem:
    with pytest.raises(ArgumentProblem) as raised:
        call(*args, **kwargs)
    return raised.value


x = torch.rand(2)
DEFAULT = TraceOptions()

# -- misuse ------------------------------------------------------------------------------------------------------

TRACE_PROBLEMS = [
    pytest.param(
        (double, (x,), None, TraceOptions(check_tolerance=-1)),
        "check_tolerance must be a finite number >= 0, got -1",
        "bad_argument",
        id="bad-option",
    ),
    pytest.param(
        (42, (x,), None, TraceOptions(module_mode="inference")),
        "module_mode must be one of 'as_is', 'train', 'eval', got 'inference'",
        "bad_argument",
        id="options-first",
    ),
    pytest.param(
        (42, (x,), None, DEFAULT),
        "tj.trace needs a function or nn.Module to trace, got int",
        "bad_argument",
        id="not-callable",
    ),
    pytest.param(
        (LinearWithEncode()(x), (x,), None, DEFAULT),
        "tj.trace needs a function or nn.Module to trace, got Tensor",
        "bad_argument",
        id="called-model",
    ),
    pytest.param(
        (double, None, [x], DEFAULT),
        "example_kwarg_inputs must be a dict of keyword inputs, got list",
        "bad_argument",
        id="kwargs-not-dict",
    ),
    pytest.param(
        (double, None, None, DEFAULT),
        "no example inputs: torch.jit.trace runs the function once on example inputs",
        "bad_argument",
        id="no-inputs",
    ),
    pytest.param(
        (double, None, {"x": x}, TraceOptions(check_inputs=[{"x": x}, (x,)])),
        "check_inputs[1] is a tuple, but keyword example inputs need dict check inputs",
        "bad_argument",
        id="kwargs-check-inputs",
    ),
    pytest.param(
        (double, 3, None, DEFAULT),
        "example inputs must be a tensor or a tuple of inputs, got int",
        "bad_argument",
        id="inputs-not-iterable",
    ),
    pytest.param(
        (LinearWithEncode(), 3, None, DEFAULT),
        "example inputs must be a tensor or a tuple of inputs, got int",
        "bad_argument",
        id="module-inputs-not-iterable",
    ),
]


def test_an_option_problem_carries_its_specs_hint() -> None:
    p = problem(plan_trace, double, (x,), None, TraceOptions(probe_dims=[0]))
    assert p.error.hint == "probe_dims maps an argument index (or keyword name) to dimensions of that input, " + (
        "e.g. probe_dims={0: [1]}."
    )


TRACE_MODULE_PROBLEMS = [
    pytest.param(
        (LinearWithEncode(), {"forward": (x,)}, False, TraceOptions(strict="no")),
        "strict must be True or False, got 'no'",
        "bad_argument",
        id="bad-option",
    ),
    pytest.param(
        (double, {"forward": (x,)}, False, DEFAULT),
        "trace_module expects an nn.Module, got function",
        "bad_argument",
        id="function",
    ),
    pytest.param(
        (scripted(), {"forward": (x,)}, False, DEFAULT),
        "RecursiveScriptModule is already TorchScript; there is nothing to trace",
        "already_script",
        id="scripted",
    ),
    pytest.param(
        (LinearWithEncode(), (x,), False, DEFAULT),
        "trace_module expects a non-empty dict of {method_name: example_inputs}",
        "bad_argument",
        id="not-a-dict",
    ),
    pytest.param(
        (LinearWithEncode(), {}, False, DEFAULT),
        "trace_module expects a non-empty dict of {method_name: example_inputs}",
        "bad_argument",
        id="empty",
    ),
    pytest.param(
        (LinearWithEncode(), {"decode": (x,)}, False, DEFAULT),
        "LinearWithEncode has no method 'decode'",
        "bad_argument",
        id="no-method",
    ),
    pytest.param(
        (LinearWithEncode(), {0: (x,)}, False, DEFAULT),
        "LinearWithEncode has no method 0",
        "bad_argument",
        id="key-not-str",
    ),
    pytest.param(
        (LinearWithEncode(), {"forward": (x,)}, 1, DEFAULT),
        "example_inputs_is_kwarg must be True or False, got 1",
        "bad_argument",
        id="kwarg-flag-not-bool",
    ),
    pytest.param(
        (LinearWithEncode(), {"forward": (x,)}, True, DEFAULT),
        "example_inputs_is_kwarg=True but the inputs of 'forward' are a tuple",
        "bad_argument",
        id="kwarg-inputs-not-dicts",
    ),
    pytest.param(
        (LinearWithEncode(), {"forward": (x,)}, False, TraceOptions(check_inputs=[(x,)])),
        "check_inputs[0] is a tuple; trace_module needs dicts like its inputs",
        "bad_argument",
        id="check-inputs-not-dicts",
    ),
    pytest.param(
        (LinearWithEncode(), {"forward": 3}, False, DEFAULT),
        "example inputs must be a tensor or a tuple of inputs, got int",
        "bad_argument",
        id="inputs-not-iterable",
    ),
]


@pytest.mark.parametrize(
    ("plan", "args", "message", "tag"),
    [pytest.param(plan_trace, *p.values, id=f"trace-{p.id}") for p in TRACE_PROBLEMS]
    + [pytest.param(plan_trace_module, *p.values, id=f"trace_module-{p.id}") for p in TRACE_MODULE_PROBLEMS],
)
def test_plan_problems(plan: Any, args: tuple[Any, ...], message: str, tag: str) -> None:
    p = problem(plan, *args)
    assert str(p) == message
    assert (p.error.type, p.error.phase, p.error.message, p.error.tag) == ("ArgumentError", "arguments", message, tag)
    assert p.error.hint


def test_planning_runs_no_user_code() -> None:
    calls = []

    class Watched(LinearWithEncode):
        def forward(self, x):
            calls.append("forward")
            return super().forward(x)

    plan_trace(Watched(), (x,), None, DEFAULT)
    plan_trace_module(Watched(), {"forward": (x,), "encode": (x,)}, False, DEFAULT)
    assert calls == []


# -- plans -------------------------------------------------------------------------------------------------------


def test_a_function_plan() -> None:
    plan = plan_trace(double, x, None, DEFAULT)
    assert plan.func is double and plan.module is None and not plan.is_kwarg
    assert plan.inputs == {"forward": (x,)}
    assert plan.check_sets == [(x,)] and plan.check_labels == ["example inputs"]
    assert plan.target == Target(
        name="double", kind="function", file=HERE, line=double.__code__.co_firstlineno, type=""
    )


def test_given_check_inputs_are_labelled_by_index() -> None:
    a, b = (torch.rand(3),), (torch.rand(4),)
    plan = plan_trace(double, (x,), None, TraceOptions(check_inputs=[a, b]))
    assert plan.check_sets == [a, b]
    assert plan.check_labels == ["check_inputs[0]", "check_inputs[1]"]


def test_no_check_sets_without_the_check() -> None:
    plan = plan_trace(double, (x,), None, TraceOptions(check_trace=False, check_inputs=[(x,)]))
    assert plan.check_sets == [] and plan.check_labels == []


def test_a_module_plan_is_trace_module_of_forward() -> None:
    model = LinearWithEncode()
    plan = plan_trace(model, x, None, DEFAULT)
    assert plan.module is model and plan.func is None
    assert plan.inputs == {"forward": (x,)}
    assert plan.check_sets == [{"forward": x}] and plan.check_labels == ["example inputs"]
    checked = plan_trace(model, (x,), None, TraceOptions(check_inputs=[(torch.rand(3, 2),)]))
    assert len(checked.check_sets) == 1 and set(checked.check_sets[0]) == {"forward"}
    assert checked.check_labels == ["check_inputs[0]"]


def test_a_bound_forward_becomes_its_module() -> None:
    model = LinearWithEncode()
    plan = plan_trace(model.forward, (x,), None, DEFAULT)
    assert plan.module is model and plan.func is None
    assert plan.inputs == {"forward": (x,)}
    bound_other = plan_trace(model.encode, (x,), None, DEFAULT)  # torch refuses it; the plan leaves that to torch
    assert bound_other.module is None and bound_other.func == model.encode


def test_keyword_inputs() -> None:
    plan = plan_trace(double, None, {"x": x}, TraceOptions(check_inputs=[{"x": torch.rand(3)}]))
    assert plan.is_kwarg and plan.inputs == {"forward": {"x": x}}
    assert plan.check_labels == ["check_inputs[0]"]
    module_plan = plan_trace(LinearWithEncode(), None, {"x": x}, DEFAULT)
    assert module_plan.is_kwarg and module_plan.inputs == {"forward": {"x": x}}
    assert module_plan.check_sets == [{"forward": {"x": x}}]


def test_positional_inputs_win_over_keyword_inputs_for_a_module() -> None:
    plan = plan_trace(LinearWithEncode(), (x,), {"x": torch.rand(5)}, DEFAULT)
    assert plan.inputs == {"forward": (x,)}


def test_a_scripted_module_is_planned_to_be_returned_unchanged() -> None:
    module = scripted()
    plan = plan_trace(module, (x,), None, DEFAULT)
    assert plan.func is module and plan.module is None
    assert plan.inputs == {} and plan.check_sets == []
    assert plan.target.kind == "script"


def test_a_trace_module_plan() -> None:
    model = LinearWithEncode()
    inputs = {"forward": x, "encode": (x,)}
    plan = plan_trace_module(model, inputs, False, DEFAULT)
    assert plan.module is model and plan.inputs == {"forward": (x,), "encode": (x,)}
    assert plan.check_sets == [inputs] and plan.check_labels == ["example inputs"]
    given = [{"forward": torch.rand(3, 2), "encode": (torch.rand(3, 2),)}]
    checked = plan_trace_module(model, inputs, False, TraceOptions(check_inputs=given))
    assert checked.check_sets == given and checked.check_labels == ["check_inputs[0]"]
    kw = plan_trace_module(model, {"forward": {"x": x}}, True, DEFAULT)
    assert kw.is_kwarg and kw.inputs == {"forward": {"x": x}}


# -- target_of -----------------------------------------------------------------------------------------------------


class Hostile:
    """Callable, but every attribute lookup beyond the class raises."""

    def __call__(self, x):
        return x

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name} here")


class HostileModule(nn.Module):
    def forward(self, x):
        return x

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("hostile")


def test_target_of_functions_lambdas_and_builtins() -> None:
    assert target_of(double) == Target("double", "function", "", HERE, double.__code__.co_firstlineno)
    lam = lambda v: v  # noqa: E731
    assert target_of(lam).name == "test_target_of_functions_lambdas_and_builtins.<locals>.<lambda>"
    assert target_of(lam).line == inspect.getsourcelines(lam)[1]
    assert target_of(LinearWithEncode().encode).name == "LinearWithEncode.encode"
    builtin = target_of(torch.relu)
    assert builtin.name.endswith("relu") and (builtin.kind, builtin.file, builtin.line) == ("function", "", 0)


def test_target_of_modules_points_at_forward() -> None:
    t = target_of(LinearWithEncode())
    assert (t.name, t.kind, t.type, t.file) == ("LinearWithEncode", "module", "LinearWithEncode", models.__file__)
    assert t.line == LinearWithEncode.forward.__code__.co_firstlineno
    seq = target_of(nn.Sequential(nn.Linear(2, 2)))
    assert (seq.name, seq.kind, seq.type) == ("Sequential", "module", "Sequential")
    assert seq.file.endswith("torch/nn/modules/container.py")


def test_target_of_scripted_modules() -> None:
    t = target_of(scripted())
    assert (t.name, t.kind, t.type) == ("LinearWithEncode", "script", "RecursiveScriptModule")


@pytest.mark.parametrize(
    ("obj", "name"), [(42, "42"), (torch.ones(1), repr(torch.ones(1))), ("x" * 200, repr("x" * 200)[:80])]
)
def test_target_of_non_callables(obj: Any, name: str) -> None:
    assert target_of(obj) == Target(name=name, kind="invalid")


def test_target_of_never_raises() -> None:
    assert target_of(Hostile()) == Target(name="Hostile", kind="invalid")
    module = target_of(HostileModule())
    assert (module.name, module.kind) == ("HostileModule", "module")
