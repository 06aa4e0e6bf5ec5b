"""The models the shell's browser tests define in their notebooks: LinearBatchNorm (tests/models.py) and Slow, whose
every call sleeps (a trace that takes a while, to cancel or interrupt)."""

from __future__ import annotations

from ..models import LinearBatchNorm, source_of

MODELS = (
    source_of(LinearBatchNorm)
    + """
import time

class Slow(nn.Module):
    # each call sleeps: a trace with the check off takes about `delay` seconds
    def __init__(self, delay=4.0):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.delay = delay

    def forward(self, x):
        time.sleep(self.delay)
        return torch.relu(self.fc(x))
"""
)
