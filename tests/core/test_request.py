"""The API keeps what was asked: tj.trace / tj.trace_module record a TraceRequest with every option as given,
never raise, and TraceRequest.run(**changes) traces again with some options changed (refusing names that are not
options); describe() is what a run records of the request."""

from __future__ import annotations

import math

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.torchscript.options import SPECS, TraceOptions
from jupyter_tracejit.core.torchscript.request import TraceRequest

from ..models import LinearWithEncode


def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def masked(x, mask):
    return x * mask


def test_every_option_given_to_trace_is_recorded() -> None:
    given = {
        "check_trace": False,
        "check_inputs": [(torch.rand(3),)],
        "check_tolerance": 1e-3,
        "strict": False,
        "force_outplace": True,
        "module_mode": "eval",
        "no_grad": True,
        "probe": False,
        "probe_dims": {0: [0]},
        "target_device": "cuda",
    }
    assert set(given) == set(SPECS)
    x = torch.rand(2)
    run = tj.trace(branchy, (x,), **given)
    request = run.request
    assert (request.kind, request.target, request.inputs) == ("trace", branchy, (x,))
    assert request.options == TraceOptions(**given)
    assert run.options == request.describe()
    module_run = tj.trace_module(LinearWithEncode(3), {"forward": (torch.rand(3),)}, **given | {"check_inputs": None})
    assert module_run.request.kind == "trace_module"
    assert module_run.request.options == TraceOptions(**given | {"check_inputs": None})


def test_run_traces_again_with_changed_options() -> None:
    run = tj.trace(branchy, (torch.ones(3),), check_trace=False)
    assert run.ok and run.check is None
    again = run.request.run(check_inputs=[(-2 * torch.ones(3),)], check_trace=True)
    assert not again.ok and again.check is not None and not again.check.ok
    assert again.request.options.check_trace is True and len(again.request.options.check_inputs) == 1
    assert again.options["check_inputs"] == [["Float(3)"]]
    assert run.request.options.check_trace is False  # the original request is unchanged
    assert again.request.target is branchy and again.request.inputs is run.request.inputs


def test_run_refuses_names_that_are_not_options() -> None:
    run = tj.trace(branchy, (torch.ones(3),))
    with pytest.raises(TypeError) as raised:
        run.request.run(check=False)
    assert str(raised.value).startswith("unknown trace option(s): check; known: check_inputs, check_tolerance")
    with pytest.raises(TypeError, match="unknown trace option"):
        run.request.run(example_kwarg_inputs={"x": torch.ones(3)})  # not an option: part of the request


def test_keyword_inputs_are_kept_for_the_next_run() -> None:
    inputs = {"x": torch.rand(2), "mask": torch.rand(2)}
    run = tj.trace(masked, example_kwarg_inputs=inputs, check_trace=False)
    assert run.ok and run.request.example_kwarg_inputs is inputs
    again = run.request.run(check_trace=True)
    assert again.ok and again.check is not None and again.inputs == {"forward": ["x=Float(2)", "mask=Float(2)"]}


def test_trace_module_requests_run_trace_module_again() -> None:
    model = LinearWithEncode(3)
    run = tj.trace_module(model, {"encode": (torch.rand(3),)}, check_trace=False)
    again = run.request.run(check_trace=True)
    assert again.ok and list(again.graphs) == ["encode"] and again.check is not None
    assert again.request.kind == "trace_module" and again.request.target is model
    kw = tj.trace_module(model, {"forward": {"x": torch.rand(3)}}, example_inputs_is_kwarg=True)
    assert kw.ok and kw.request.run(strict=False).request.example_inputs_is_kwarg is True


def test_a_request_built_by_hand_runs_with_the_default_options() -> None:
    run = TraceRequest("trace", branchy, (torch.ones(3),)).run()
    assert run.ok and run.request.options == TraceOptions()
    assert run.check is not None and len(run.check.cases) == 1


def test_describe_a_trace_request() -> None:
    x = torch.rand(2)
    plain = TraceRequest("trace", masked, (x, x), TraceOptions(check_tolerance=math.inf))
    assert plain.describe() == {**TraceOptions(check_tolerance=math.inf).to_json(), "example_kwarg_inputs": None}
    assert plain.describe()["check_tolerance"] == "inf"  # not allowed: recorded by its repr
    kw = TraceRequest("trace", masked, None, example_kwarg_inputs={"x": x, "mask": x})
    assert kw.describe()["example_kwarg_inputs"] == ["mask", "x"]
    bad = TraceRequest("trace", masked, None, example_kwarg_inputs=[x])
    assert bad.describe()["example_kwarg_inputs"] == repr([x])
    assert "example_inputs_is_kwarg" not in kw.describe()


def test_describe_a_trace_module_request() -> None:
    request = TraceRequest(
        "trace_module", LinearWithEncode(3), {"forward": (torch.rand(3),)}, example_inputs_is_kwarg=True
    )
    assert request.describe() == {**TraceOptions().to_json(), "example_inputs_is_kwarg": True}
    odd = TraceRequest("trace_module", LinearWithEncode(3), {}, example_inputs_is_kwarg="yes")
    assert odd.describe()["example_inputs_is_kwarg"] == "'yes'"
    assert "example_kwarg_inputs" not in odd.describe()


def test_misuse_is_a_run_with_its_request_never_an_exception() -> None:
    run = tj.trace(branchy, (torch.ones(3),), check_tolerance=-1)
    assert not run.ok and run.error.phase == "arguments"
    assert run.options["check_tolerance"] == "-1" and run.request.options.check_tolerance == -1
    fixed = run.request.run(check_tolerance=1e-4)
    assert fixed.ok and fixed.options["check_tolerance"] == 1e-4
    not_a_module = tj.trace_module(branchy, {"forward": (torch.ones(3),)})
    assert not_a_module.error.phase == "arguments" and not_a_module.request.kind == "trace_module"
    assert not_a_module.target.kind == "function" and not_a_module.run_id
