"""core/plan.py: a call of tj.trace / tj.trace_module validated into a plan (what to trace, with which inputs,
checked how) or refused with a message and a fix; nothing here runs user code."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from jupyter_tracejit.core.options import TraceOptions
from jupyter_tracejit.core.plan import ArgumentProblem, plan_trace, plan_trace_module, target_of


class Two(nn.Module):
    def forward(self, x):
        return x

    def encode(self, x):
        return x


def f(x):
    return x


X = torch.zeros(2)


def test_a_function_is_checked_with_its_example_inputs_by_default():
    plan = plan_trace(f, X, None, TraceOptions())
    assert plan.func is f and plan.module is None and plan.inputs == {"forward": (X,)}
    assert plan.check_sets == [(X,)] and plan.check_labels == ["example inputs"]
    plan = plan_trace(f, (X,), None, TraceOptions(check_inputs=[(X,), (X,)]))
    assert plan.check_labels == ["check_inputs[0]", "check_inputs[1]"]
    assert plan_trace(f, (X,), None, TraceOptions(check_trace=False)).check_sets == []


def test_a_module_and_its_bound_forward_are_trace_module_of_forward():
    model = Two()
    for target in (model, model.forward):
        plan = plan_trace(target, (X,), None, TraceOptions(check_inputs=[(X,)]))
        assert plan.module is model and plan.inputs == {"forward": (X,)} and plan.check_sets == [{"forward": (X,)}]
    kw = plan_trace(model, None, {"x": X}, TraceOptions())
    assert kw.is_kwarg and kw.inputs == {"forward": {"x": X}}


def test_trace_module_plans_every_method():
    plan = plan_trace_module(Two(), {"forward": X, "encode": (X,)}, False, TraceOptions())
    assert plan.inputs == {"forward": (X,), "encode": (X,)} and plan.check_labels == ["example inputs"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: plan_trace(3, (X,), None, TraceOptions()), "tj.trace needs a function or nn.Module to trace, got int"),
        (lambda: plan_trace(f, None, None, TraceOptions()), "no example inputs"),
        (lambda: plan_trace(f, 3, None, TraceOptions()), "example inputs must be a tensor or a tuple"),
        (lambda: plan_trace(f, None, [X], TraceOptions()), "example_kwarg_inputs must be a dict"),
        (lambda: plan_trace(f, None, {"x": X}, TraceOptions(check_inputs=[(X,)])), "need dict check inputs"),
        (lambda: plan_trace(f, (X,), None, TraceOptions(strict="no")), "strict must be True or False, got 'no'"),
        (lambda: plan_trace_module(f, {"forward": (X,)}, False, TraceOptions()), "expects an nn.Module"),
        (lambda: plan_trace_module(Two(), {}, False, TraceOptions()), "non-empty dict"),
        (lambda: plan_trace_module(Two(), {"decode": (X,)}, False, TraceOptions()), "Two has no method 'decode'"),
        (lambda: plan_trace_module(Two(), {"forward": (X,)}, 1, TraceOptions()), "example_inputs_is_kwarg must be"),
        (lambda: plan_trace_module(Two(), {"forward": (X,)}, True, TraceOptions()), "example_inputs_is_kwarg=True"),
        (
            lambda: plan_trace_module(Two(), {"forward": (X,)}, False, TraceOptions(check_inputs=[(X,)])),
            "trace_module needs dicts",
        ),
    ],
)
def test_misuse_is_refused_with_a_message_and_a_fix(call, message):
    with pytest.raises(ArgumentProblem) as problem:
        call()
    assert message in problem.value.error.message and problem.value.error.hint
    assert problem.value.error.type == "ArgumentError" and problem.value.error.phase == "arguments"


def test_an_already_scripted_module_is_planned_as_is_for_trace_and_refused_for_trace_module():
    scripted = torch.jit.script(Two())
    assert plan_trace(scripted, (X,), None, TraceOptions()).func is scripted
    with pytest.raises(ArgumentProblem) as problem:
        plan_trace_module(scripted, {"forward": (X,)}, False, TraceOptions())
    assert problem.value.error.tag == "already_script"


class Hostile:
    def __getattr__(self, name):
        raise RuntimeError("no")


def test_targets_name_what_is_traced_and_never_raise():
    t = target_of(f)
    assert (t.name, t.kind, t.file) == ("f", "function", __file__) and t.line == f.__code__.co_firstlineno
    m = target_of(Two())
    assert (m.name, m.kind, m.type) == ("Two", "module", "Two") and m.file == __file__
    assert target_of(torch.jit.script(Two())).kind == "script"
    assert target_of(3).kind == "invalid"
    assert target_of(Hostile()).kind == "invalid"
    assert (
        ArgumentProblem.raised(RuntimeError("boom")).error.message
        == "inspecting what to trace raised RuntimeError: boom"
    )
