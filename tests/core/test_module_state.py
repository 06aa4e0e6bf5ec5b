"""core/module_state.py: what a trace may change in the user's modules is saved and put back."""

from __future__ import annotations

import torch
import torch.nn as nn

from jupyter_tracejit.core.module_state import ModuleState


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.bn = nn.BatchNorm1d(3)
        self.shared = self.fc  # the same module under two names: saved once
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.steps += 1
        return self.bn(self.fc(x))


def test_changed_buffers_are_named_and_restored_with_the_flags():
    net = Net().eval()
    state = ModuleState([net])
    net.train()
    net(torch.rand(4, 3))
    assert sorted(state.changed_buffers()) == ["bn.num_batches_tracked", "bn.running_mean", "bn.running_var", "steps"]
    state.restore()
    assert not net.training and not net.bn.training
    assert state.changed_buffers() == [] and int(net.steps) == 0 and torch.equal(net.bn.running_mean, torch.zeros(3))


def test_buffers_only_or_flags_only():
    net = Net().eval()
    state = ModuleState([net])
    net.train()
    net(torch.rand(4, 3))
    state.restore_buffers()
    assert state.changed_buffers() == [] and net.training  # flags untouched
    state.restore_flags()
    assert not net.training


def test_parameters_are_saved_on_request_and_rebound_attributes_put_back():
    net = Net()
    weight = net.fc.weight
    state = ModuleState([net], parameters=True)
    with torch.no_grad():
        net.fc.weight.mul_(0)
    net.fc.weight = nn.Parameter(torch.ones(3, 3))  # user code rebinding the attribute
    state.restore()
    assert net.fc.weight is weight and not torch.equal(weight, torch.zeros(3, 3))
    assert len(state.params) == 4  # fc.weight, fc.bias, bn.weight, bn.bias: the shared fc counted once
    assert ModuleState([net]).params == []  # not saved unless asked


def test_a_rebound_buffer_comes_back_as_the_saved_tensor():
    net = Net()
    state = ModuleState([net])
    saved = net.steps
    net.steps = torch.zeros(5, dtype=torch.long)  # rebinding a buffer name keeps it a buffer
    assert net._buffers["steps"] is not saved
    state.restore()
    assert net._buffers["steps"] is saved
    assert net.steps.shape == () and int(net.steps) == 0
