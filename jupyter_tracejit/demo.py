"""A bundled example: a small model with the mistakes torch.jit.trace records silently.

``python -m jupyter_tracejit demo`` traces it and prints what the core found.
"""

from __future__ import annotations

import torch
import torch.nn as nn

import jupyter_tracejit as tj


class Gate(nn.Module):
    """Scales its input by a factor picked with Python control flow on tensor data."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.factors = [0.5, 1.0, 2.0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.proj(x))
        if h.mean() > 0.5:  # a data-dependent branch: frozen into the trace
            h = h * 2
        # a Python list indexed with a tensor: the index becomes a constant, with no warning
        return h * self.factors[int(x.argmax()) % 3]


class DemoModel(nn.Module):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Dropout(0.1))
        self.gate = Gate(width)
        self.head = nn.Linear(width, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.encoder(x)
        for i in range(x.size(0)):  # unrolled for this batch size
            h[i] = h[i] * (i + 1)
        return self.head(self.gate(h))


def demo_run(*, probe: bool = True) -> tj.TraceRun:
    """Trace :class:`DemoModel` in train mode with a check input of another batch size."""
    torch.manual_seed(0)
    model = DemoModel().train()
    x = torch.rand(3, 8)
    return tj.trace(model, (x,), check_inputs=[(torch.rand(4, 8),)], probe=probe)
