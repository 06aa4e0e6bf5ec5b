"""Models with the graph breaks users meet, one each (the line of each break is marked ``# BREAK``), and a few
that recompile. The tests find every line torch reports and check the run puts its break there."""

from __future__ import annotations

import copy
import logging
import warnings

import numpy as np
import torch
from torch import nn

log = logging.getLogger("tests.compile.models")


class OneLayer(nn.Module):
    """One ``Linear(4, 4)`` named ``fc``: what the models below that run a layer before they break (or not) share."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)


class Clean(OneLayer):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x)) * 2


class Printing(OneLayer):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        print("shape", h.shape)  # BREAK
        return h.relu()


class Branching(OneLayer):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        if h.sum() > 0:  # BREAK
            h = h * 2
        return h.relu()


class Item(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 2
        scale = h.abs().max().item()  # BREAK
        return h / scale


class Logging(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 2
        log.debug("h is %s", h.shape)  # BREAK
        return h + 1


class Warning_(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 2
        warnings.warn("the model warns", stacklevel=1)  # BREAK
        return h + 1


class Deepcopy(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 2
        kept = copy.deepcopy(h)  # BREAK
        return h + kept


class Numpy(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 2
        mean = float(np.asarray(h.detach()).mean())  # BREAK
        return h - mean


class Explicit(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        torch._dynamo.graph_break()  # BREAK
        return h.cos()


def noisy(h: torch.Tensor) -> torch.Tensor:
    print("in a helper")  # BREAK
    return h + 1


class InHelper(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 3
        h = noisy(h)
        return h.relu()


class Noisy(OneLayer):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        print("in a submodule")  # BREAK
        return h.tanh()


class InSubmodule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Noisy()
        self.out = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.inner(x * 2))


class InLoop(nn.Module):
    """A break directly in a ``for`` loop of the compiled function: dynamo skips the whole function."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = x + 1
            torch._dynamo.graph_break()  # BREAK
        return x * 2


class Layers(nn.Module):
    """A loop over layers whose ``forward`` breaks: the layer's break is hit once per layer."""

    def __init__(self, n: int = 3) -> None:
        super().__init__()
        self.layers = nn.ModuleList([Noisy() for _ in range(n)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x * 2
        for layer in self.layers:
            x = layer(x)
        return x + 1


class Counting(nn.Module):
    """A forward that writes a Python attribute on every call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return x * self.calls


class Scaled(nn.Module):
    """A Python value that changes between calls: each new value compiles again."""

    def forward(self, x: torch.Tensor, k: int) -> torch.Tensor:
        return x * k


def double(x: torch.Tensor) -> torch.Tensor:
    return x.sum(0) * 2


#: the models with breaks (each takes a batch of 4-wide rows)
BREAKING = {
    "print": Printing,
    "branch": Branching,
    "item": Item,
    "logging": Logging,
    "warnings": Warning_,
    "deepcopy": Deepcopy,
    "numpy": Numpy,
    "graph_break": Explicit,
    "helper": InHelper,
    "submodule": InSubmodule,
    "loop": InLoop,
    "layers": Layers,
}


def marked_lines() -> dict[str, int]:
    """``class name -> line`` of the ``# BREAK`` line in each model's forward (and the helper's)."""
    import inspect

    lines: dict[str, int] = {}
    source, start = inspect.getsourcelines(__import__(__name__, fromlist=["*"]))
    owner = ""
    for i, text in enumerate(source, start=start or 1):
        stripped = text.strip()
        if stripped.startswith(("class ", "def ")) and not text.startswith(" "):
            owner = stripped.split()[1].split("(")[0].rstrip(":")
        if stripped.endswith("# BREAK"):
            lines[owner] = i
    return lines
