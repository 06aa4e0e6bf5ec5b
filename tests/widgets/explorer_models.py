"""The tiny torch models and inputs the TraceExplorer tests trace, and the settle time after which a result shows."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from jupyter_tracejit.widgets import TraceExplorer, explore

from .fakes import FakeClock

X = torch.randn(4, 8)
#: how long after its trace a result is shown (TraceExplorer's default settle)
SETTLE = 0.1


class Small(nn.Module):
    """Counts its calls, and runs ``hook`` once when one is set (to act in the middle of a trace)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 4)
        self.calls = 0
        self.hook: Any = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.hook is not None:
            hook, self.hook = self.hook, None
            hook()
        return torch.relu(self.lin(x))


class DictOut(nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"y": x * 2}


class ModeBranch(nn.Module):
    """A different graph in train and eval mode."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            return x * 2
        return torch.sigmoid(x) - 1


def data_branch(x: torch.Tensor) -> torch.Tensor:
    if x.sum() > 0:  # frozen by the tracer: the check with negative inputs diverges
        return x * 2
    return x - 1


def with_check_inputs(clock: FakeClock, model: nn.Module | None = None) -> TraceExplorer:
    checks = [(torch.randn(2, 8),), (torch.randn(3, 8),)]
    return explore(model or Small(), (X,), check_inputs=checks, scheduler=clock)
