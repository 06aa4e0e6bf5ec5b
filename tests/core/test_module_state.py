"""ModuleState puts back what running the user's forward may change: train/eval flags, buffers (BatchNorm running
statistics), parameters when asked, attributes the code rebound; shared submodules count once, and changed buffers
are named by their dotted paths."""

from __future__ import annotations

import torch
import torch.nn as nn

from jupyter_tracejit.core.module_state import ModuleState

from ..models import LinearBatchNorm


# Net stays here: beside BatchNorm's running statistics (in its LinearBatchNorm layers), a counter buffer the forward
# changes and a None buffer are what ModuleState puts back; no shared model has these.
class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.layers = nn.Sequential(LinearBatchNorm(4), LinearBatchNorm(4))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        self.register_buffer("nothing", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.steps += 1
        return self.layers(self.stem(x))


def snapshot(m: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


def same_state(m: nn.Module, saved: dict[str, torch.Tensor]) -> bool:
    now = m.state_dict()
    return now.keys() == saved.keys() and all(torch.equal(now[k], saved[k]) for k in saved)


def test_flags_are_restored_for_every_submodule() -> None:
    net = Net().eval()
    net.layers[1].bn.train()
    before = {name: m.training for name, m in net.named_modules()}
    state = ModuleState([net])
    net.train()
    net.layers[0].eval()
    state.restore_flags()
    assert {name: m.training for name, m in net.named_modules()} == before


def test_batchnorm_statistics_changed_by_train_mode_forwards_are_named_and_restored() -> None:
    torch.manual_seed(0)
    net = Net().train()
    saved = snapshot(net)
    mean = net.layers[0].bn.running_mean
    state = ModuleState([net])
    assert state.changed_buffers() == []
    for _ in range(3):
        net(torch.rand(8, 4))
    assert state.changed_buffers() == [
        "steps",
        "layers.0.bn.running_mean",
        "layers.0.bn.running_var",
        "layers.0.bn.num_batches_tracked",
        "layers.1.bn.running_mean",
        "layers.1.bn.running_var",
        "layers.1.bn.num_batches_tracked",
    ]
    state.restore()
    assert same_state(net, saved)
    assert net.layers[0].bn.running_mean is mean  # restored in place: references the user holds stay valid
    assert state.changed_buffers() == []


def test_eval_mode_forwards_change_nothing() -> None:
    block = LinearBatchNorm(4).eval()
    state = ModuleState([block])
    block(torch.rand(2, 4))
    assert state.changed_buffers() == []
    block.train()(torch.rand(2, 4))
    assert state.changed_buffers() == ["bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]


def test_parameters_are_restored_only_when_asked() -> None:
    net = Net()
    saved = snapshot(net)
    weight = net.stem.weight
    without, with_params = ModuleState([net]), ModuleState([net], parameters=True)
    assert without.params == [] and len(with_params.params) == len(list(net.parameters()))
    with torch.no_grad():
        net.stem.weight.add_(1.0)
    without.restore()
    assert not torch.equal(net.stem.weight, saved["stem.weight"])
    with_params.restore()
    assert same_state(net, saved)
    assert net.stem.weight is weight and net.stem.weight.requires_grad


def test_rebound_attributes_get_their_original_tensors_back() -> None:
    net = Net()
    bn = net.layers[0].bn
    mean, weight = bn.running_mean, net.stem.weight
    saved = snapshot(net)
    state = ModuleState([net], parameters=True)
    bn.running_mean = torch.full((4,), 7.0)
    net.stem.weight = nn.Parameter(torch.zeros(4, 4))
    assert "layers.0.bn.running_mean" not in state.changed_buffers()  # the saved tensor itself did not change
    state.restore()
    assert bn.running_mean is mean and net.stem.weight is weight
    assert same_state(net, saved)


def test_a_buffer_whose_shape_changed_is_restored() -> None:
    net = Net()
    var = net.layers[1].bn.running_var
    state = ModuleState([net])
    var.data = torch.ones(7)
    assert state.changed_buffers() == ["layers.1.bn.running_var"]
    state.restore_buffers()
    assert net.layers[1].bn.running_var is var and torch.equal(var, torch.ones(4))


def test_shared_submodules_and_tensors_are_counted_once() -> None:
    shared = LinearBatchNorm(4)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    other = nn.Sequential(shared)
    state = ModuleState([seq, other], parameters=True)
    modules = [m for m, _ in state.flags]
    assert len(modules) == len({id(m) for m in modules}) == 6  # seq, LinearBatchNorm, fc, bn, ReLU, other: shared once
    assert len(state.buffers) == 3 and len(state.params) == 4
    shared.train()(torch.rand(3, 4))
    # the first path under which the buffer was met
    assert state.changed_buffers() == ["0.bn.running_mean", "0.bn.running_var", "0.bn.num_batches_tracked"]


class Stubborn(torch.Tensor):
    """A tensor whose in-place copy raises, as exotic tensor subclasses may."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.Tensor.copy_:
            raise RuntimeError("no in-place copy")
        return super().__torch_function__(func, types, args, kwargs or {})


def test_one_buffer_that_cannot_be_restored_does_not_stop_the_others() -> None:
    m = nn.Module()
    m.register_buffer("stubborn", torch.zeros(2).as_subclass(Stubborn))  # met first
    m.register_buffer("plain", torch.zeros(2))
    state = ModuleState([m])
    m.stubborn.add_(1)
    m.plain.add_(1)
    assert state.changed_buffers() == ["stubborn", "plain"]
    state.restore()
    assert torch.equal(m.plain, torch.zeros(2))
    assert torch.equal(m.stubborn.as_subclass(torch.Tensor), torch.ones(2))


def test_meta_buffers_have_no_values_that_could_change() -> None:
    bn = nn.BatchNorm1d(4, device="meta")
    state = ModuleState([bn], parameters=True)
    assert state.changed_buffers() == []
