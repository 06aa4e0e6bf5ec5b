"""The back-end seam (core/capture.py): what every capture back end shares, and TorchScript behind it."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
import torch
from torch import nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.capture import CAPTURE_LOCK, Backend, Steps, call_torch, drive, guest, stamp
from jupyter_tracejit.core.run import Target, TraceRun
from jupyter_tracejit.core.torchscript.plan import plan_trace
from jupyter_tracejit.core.torchscript.session import TraceSession


class CountingBackend:
    """The smallest back end: one torch call, made by the driver, its result recorded."""

    name: ClassVar[str] = "trace"

    def __init__(self, module: nn.Module) -> None:
        self.module = module
        self.seen: list[Any] = []

    def steps(self, started: float) -> Steps[TraceRun]:
        run = TraceRun(target=Target(name="counting", kind="module"), options={}, backend=self.name)
        with CAPTURE_LOCK, guest(self.module, "eval", no_grad=True):
            self.seen.append((self.module.training, torch.is_grad_enabled()))
            out = yield from call_torch((torch.zeros, (2,), {}))
            self.seen.append(out.shape)
        return stamp(run, started)


def test_a_back_end_runs_as_steps_the_driver_makes():
    module = nn.Linear(2, 2).train()
    backend: Backend = CountingBackend(module)
    run = drive(backend.steps(0.0))
    assert run.backend == "trace" and run.run_id and run.torch_version == torch.__version__
    assert backend.seen == [(False, False), torch.Size([2])]  # eval and no_grad during the capture
    assert module.training and torch.is_grad_enabled()  # and as found after it


def test_the_guest_restores_mode_grad_and_buffers_when_the_capture_raises():
    module = nn.BatchNorm1d(3).eval()
    before = module.running_mean.clone()
    with pytest.raises(RuntimeError, match="user code"), guest(module, "train", no_grad=True):
        module(torch.randn(4, 3) + 5)  # train mode: updates the running statistics
        raise RuntimeError("user code")
    assert not module.training and torch.is_grad_enabled()
    assert torch.equal(module.running_mean, before)


def test_torchscript_is_a_back_end_behind_the_seam():
    fn = torch.nn.Linear(3, 3)
    x = torch.randn(2, 3)
    session: Backend = TraceSession(plan_trace(fn, (x,), None, tj.core.TraceOptions()), {})
    run = drive(session.steps(0.0))
    assert TraceSession.name == run.backend == "trace"
    assert run.ok and run.graph is not None and {n.role for n in run.graph.nodes} <= {"op", "getattr", "constant"}
    assert tj.trace(fn, (x,)).backend == "trace"
