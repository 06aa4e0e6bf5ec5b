"""What the product reproduces of torch is read from the installed torch, and agrees with it on every torch of the
CI matrix: a torch that words or decides these differently fails here until the product follows."""

from __future__ import annotations

import inspect
import threading
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.jit._trace import TracerWarning

import jupyter_tracejit as tj
from jupyter_tracejit.core.torchscript import facts as torch_facts
from jupyter_tracejit.core.torchscript.check_steps import nondeterministic_message

from .oracle import torch_verdict

# -- torch's words and rules, read from it -------------------------------------------------------------------


def dropout_at_the_top(x):
    return F.dropout(x, 0.5, training=True)


def test_the_nondeterministic_warning_is_read_from_torchs_source_and_says_what_torch_says():
    read = torch_facts.read_nondeterministic_warning(inspect.getsource(torch.jit._trace._check_trace))
    assert read is not None, "torch's _check_trace is laid out differently: teach torch_facts to read it"
    assert read == torch_facts.nondeterministic_warning()
    theirs = [m for m in torch_verdict(dropout_at_the_top, (torch.rand(50),)).messages if "nondeterministic" in m]
    assert len(theirs) == 1
    nodes = [str(n) for n in torch.jit.trace(dropout_at_the_top, (torch.rand(50),), check_trace=False).graph.nodes()]
    random_nodes = [n for n in nodes if "aten::dropout" in n]
    assert nondeterministic_message(random_nodes) == theirs[0]


@pytest.mark.parametrize(
    ("release", "words"),
    [((2, 13), "Did you forget call .eval()"), ((2, 14), "Did you forget to call .eval()")],
)
def test_the_fallback_for_an_unreadable_torch_follows_the_version(monkeypatch, release, words):
    """Each branch of the version fallback (used only where torch's source cannot be read)."""
    monkeypatch.setattr(torch_facts, "TORCH_RELEASE", release)
    monkeypatch.setattr(torch_facts.inspect, "getsource", lambda _obj: "def _check_trace(): pass")
    torch_facts.nondeterministic_warning.cache_clear()
    try:
        assert words in torch_facts.nondeterministic_warning().message(["a"])
    finally:
        torch_facts.nondeterministic_warning.cache_clear()


def test_reading_is_refused_for_code_laid_out_otherwise():
    assert (
        torch_facts.read_nondeterministic_warning("def f():\n    warn(f'Trace had nondeterministic nodes {x}')") is None
    )
    source = 'def f():\n    w = "Trace had nondeterministic nodes. "\n    w += "a"\n    w += "b"\n'
    assert torch_facts.read_nondeterministic_warning(source) is None  # no node list: not the layout we know


def test_torchs_tracer_warning_filters_are_read_from_torch_and_are_the_ones_it_installs():
    filters = torch_facts.tracer_warning_filters()
    assert filters.modules and filters.messages
    assert filters.hides_module("torch.nn.functional") and not filters.hides_module("torch.jit._trace")
    # the filters are what torch put into the process's list on import (unless something reset that list)
    installed = [f for f in warnings.filters if f[0] == "ignore" and f[2] is TracerWarning and f[3] is not None]
    for pattern in filters.modules:
        assert not installed or any(f[3].pattern == pattern.pattern for f in installed)


# -- corners where the product must agree with torch ---------------------------------------------------------


class WithExportedMethod(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        # nothing of the product is on the module while it is traced
        assert not self._forward_hooks and not self._forward_pre_hooks
        return self.lin(x)

    @torch.jit.export
    def helper(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


def test_a_module_with_jit_export_methods_traces_as_in_torch():
    x = torch.rand(2, 4)
    model = WithExportedMethod()
    assert torch_verdict(model, (x,)).outcome == "ok"
    before = set(vars(model))
    run = tj.trace(model, (x,))
    assert run.ok, run.error
    assert run.check is not None and run.check.ok
    assert set(vars(model)) == before and not model._forward_hooks


class ReturnsAString(nn.Module):
    def forward(self, x):
        return x, "label"


def test_a_rejected_output_is_still_named_without_a_hook_on_the_module():
    run = tj.trace(ReturnsAString(), (torch.rand(2),))
    assert run.error is not None and run.error.tag == "output_type"
    assert "returns a tuple of tensors and strs" in run.error.hint
    # the global hook the product used is gone
    assert not torch.nn.modules.module._global_forward_hooks


def frozen_size(x):
    return x.view(int(x.size(0)) * int(x.size(1)))  # the trace keeps 8; a 3x4 input has 12 elements


def test_an_exception_running_the_trace_on_check_inputs_is_a_tracing_check_error_as_in_torch():
    x, other = torch.rand(2, 4), torch.rand(3, 4)
    theirs = torch_verdict(frozen_size, (x,), check_inputs=[(other,)])
    assert theirs.outcome == "check_error"
    run = tj.trace(frozen_size, (x,), check_inputs=[(other,)])
    assert run.error is not None and run.error.phase == "check"
    assert run.error.type == type(theirs.exception).__name__ == "TracingCheckError"
    # the inner exception's type and message stay in the message and the hint
    assert run.error.message.startswith("running the trace on these inputs raised RuntimeError: ")
    assert "is invalid for input of size 12" in run.error.message
    assert run.error.hint.startswith("RuntimeError raised inside the check")


def test_an_exception_while_re_tracing_keeps_its_own_type_as_in_torch():
    def needs_grad(x):
        assert (x * 2).requires_grad  # false under the check's torch.no_grad()
        return x

    x = torch.rand(3, requires_grad=True)
    theirs = torch_verdict(needs_grad, (x,))
    assert theirs.outcome == "error" and isinstance(theirs.exception, AssertionError)
    assert tj.trace(needs_grad, (x,)).error.type == "AssertionError"


# -- a guest of the process, with threads too ---------------------------------------------------------------


def warns_its_name(x, name):
    warnings.warn(f"from {name}", UserWarning, stacklevel=1)
    return x + 1


def test_thirty_concurrent_traces_get_their_own_warnings_and_leave_the_warning_machinery_as_found():
    inputs = [torch.rand(3) for _ in range(30)]
    filters_before = list(warnings.filters)
    show_before = warnings.showwarning
    rng_before = torch.get_rng_state()
    runs: dict[int, object] = {}
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            runs[i] = tj.trace(lambda x, i=i: warns_its_name(x, f"thread {i}"), (inputs[i],), probe=True)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, run in runs.items():
        others = [w.message for w in run.warnings if w.category == "other"]  # type: ignore[attr-defined]
        assert others == [f"from thread {i}"], (i, others)
    assert warnings.showwarning is show_before
    assert warnings.filters == filters_before
    assert torch.equal(torch.get_rng_state(), rng_before)  # the probes put torch's RNG back
    # and a warning after them still reaches the process's machinery
    with pytest.warns(UserWarning, match="still printed"):
        warnings.warn("still printed", UserWarning, stacklevel=1)


def test_another_threads_warning_during_a_trace_is_not_the_traces_and_goes_where_it_went(monkeypatch):
    shown: list[str] = []
    monkeypatch.setattr(warnings, "showwarning", lambda message, *args, **kwargs: shown.append(str(message)))
    started, release = threading.Event(), threading.Event()

    def slow(x):
        started.set()
        release.wait(10)
        return x + 1

    result = {}
    tracer = threading.Thread(target=lambda: result.setdefault("run", tj.trace(slow, (torch.rand(2),))))
    tracer.start()
    assert started.wait(10)
    warnings.warn("from the main thread", UserWarning, stacklevel=1)  # while the trace captures
    release.set()
    tracer.join()
    assert "from the main thread" in shown
    assert not [w for w in result["run"].warnings if "main thread" in w.message]
