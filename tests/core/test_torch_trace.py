"""core/torch_trace.py: the one call of torch.jit.trace / trace_module gives what torch gives for the same
arguments, and re-traces for the check the way torch's own check makes them."""

from __future__ import annotations

import warnings

import torch
import torch.nn as nn

from jupyter_tracejit.core.from_torchscript import canonical_inlined, canonical_text
from jupyter_tracejit.core.torch_trace import trace_call


def torch_trace(*args, **kwargs):
    """Make the call trace_call describes, as the session does."""
    fn, fn_args, fn_kwargs = trace_call(*args, **kwargs)
    return fn(*fn_args, **fn_kwargs)


class Two(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)

    def encode(self, x):
        return self.fc(x) * 2


def text(graph) -> str:
    return canonical_text(canonical_inlined(graph))


def double(t):
    return t * 2


def test_the_same_graph_as_torch_for_functions_modules_and_keyword_inputs():
    x = torch.rand(2)
    model = Two()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_torch = torch.jit.trace(model, (x,), check_trace=False)
        by_torch_fn = torch.jit.trace(double, (x,), check_trace=False)
        by_torch_kw = torch.jit.trace(model, example_kwarg_inputs={"x": x}, check_trace=False)
        ours = torch_trace(
            model, {"forward": (x,), "encode": (x,)}, methods=True, is_kwarg=False, strict=True, force_outplace=False
        )
        ours_fn = torch_trace(double, (x,), methods=False, is_kwarg=False, strict=True, force_outplace=False)
        ours_kw = torch_trace(model, {"x": x}, methods=False, is_kwarg=True, strict=True, force_outplace=False)
    assert text(ours.graph) == text(by_torch.graph)
    assert "aten::mul" in text(ours._c._get_method("encode").graph)
    assert text(ours_fn.graph) == text(by_torch_fn.graph)
    assert text(ours_kw.graph) == text(by_torch_kw.graph)


def test_re_traces_for_the_check_are_modules_of_their_own_with_the_same_graph():
    x, model = torch.rand(2), Two()
    options = {"methods": True, "is_kwarg": False, "strict": True, "force_outplace": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = torch_trace(model, {"forward": (x,)}, **options)
        checks = [torch_trace(model, {"forward": (x,)}, **options, for_check=True) for _ in range(2)]
    assert checks[0] is not checks[1] is not kept
    assert {text(c.graph) for c in checks} == {text(kept.graph)}
    assert torch.equal(checks[0](x), kept(x))
