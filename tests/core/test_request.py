"""core/request.py: tj.trace / tj.trace_module never raise, record what they were asked, and a request traces
again with some options changed."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.options import TraceOptions


class Two(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)

    def encode(self, x):
        return self.fc(x).relu()


def test_a_request_keeps_what_was_asked_and_traces_again_with_changes():
    x, x2 = torch.rand(2), torch.rand(2)
    model = Two()
    run = tj.trace(model, (x,), check_inputs=[(x2,)], check_tolerance=1e-3)
    request = run.request
    assert (request.kind, request.target, request.inputs) == ("trace", model, (x,))
    assert request.options == TraceOptions(check_inputs=[(x2,)], check_tolerance=1e-3)
    again = request.run(strict=False, check_trace=False)
    assert (
        again.request.options.strict is False and again.check is None and again.request.options.check_tolerance == 1e-3
    )
    assert again.run_id != run.run_id and again.request.target is model
    with pytest.raises(TypeError, match="unknown trace option"):
        request.run(stricter=True)


def test_trace_module_requests_and_what_a_run_records():
    x = torch.rand(2)
    run = tj.trace_module(Two(), {"forward": (x,), "encode": (x,)})
    assert run.request.kind == "trace_module" and sorted(run.graphs) == ["encode", "forward"]
    assert run.options["example_inputs_is_kwarg"] is False and "example_kwarg_inputs" not in run.options
    again = run.request.run(module_mode="eval")
    assert again.ok and again.options["module_mode"] == "eval"
    kw = tj.trace(Two(), example_kwarg_inputs={"x": x})
    assert kw.options["example_kwarg_inputs"] == ["x"] and kw.request.example_kwarg_inputs == {"x": x}


def test_a_refused_call_is_a_run_with_its_request_and_stamp():
    run = tj.trace(3, (torch.rand(2),))
    assert run.error.phase == "arguments" and run.request.target == 3
    assert run.run_id and run.created and run.torch_version == torch.__version__ and run.timings["total"] >= 0
