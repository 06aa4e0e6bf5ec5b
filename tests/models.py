"""Little models that several test files trace, defined once.

Each class says what it is there to show. A test that needs a model of its own (a name that an assertion spells,
a shape a check depends on, a method with another signature) keeps it next to itself and says why.

The tracer records the file and line of every op. A test that pins the line of an op written in this module finds it
with :func:`line_of` (by the text on the line), so moving code here never breaks an assertion; the file is
``tests.models.__file__``.

Not here, on purpose: the models written into browser tests' cell sources and into the CLI tests' model file (text a
kernel or a subprocess runs, shown to the user as written), and those of tests/frontend_fixtures.py, whose file
paths and lines the front-end fixtures and their vitest expectations record.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
import torch.nn as nn


def line_of(func: Any, marker: str) -> int:
    """Line number of the first source line of ``func`` (a function, method or class) that contains ``marker``."""
    lines, start = inspect.getsourcelines(func)
    for offset, text in enumerate(lines):
        if marker in text:
            return start + offset
    raise AssertionError(f"marker {marker!r} not found in {func.__qualname__}")


class OneLinear(nn.Module):
    """Nothing but one ``nn.Linear`` named ``fc``: the smallest module with a parameter, to script, or to name a
    submodule (``fc``) where a method is expected."""

    def __init__(self, width: int = 2) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return self.fc(x)


class LinearWithEncode(nn.Module):
    """A module with a second method, ``encode``, beside ``forward``: what ``trace_module`` traces (one method or
    both, a method it lacks), and what a bound method passed to ``trace`` comes from."""

    def __init__(self, width: int = 2) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return self.fc(x)

    def encode(self, x):
        return self.fc(x) * 2


class LinearReLU(nn.Module):
    """A Linear then a ReLU (4 wide): a real little layer, to trace twice (each trace of one class gets its own
    mangled type name) or to explore."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


class ListOfDicts(nn.Module):
    """Returns what a detection model returns, a list of dicts of tensors: an output torch's tracer refuses, so the
    run fails with ``output_type`` and a hint."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.head = nn.Linear(width, width)

    def forward(self, x):
        return [{"boxes": self.head(x), "scores": x.sum(-1)}]


MARKUP_NAME = "<img src=x onerror=alert(1)>"


class MarkupEverywhere(nn.Module):
    """Markup in the user text a report carries: a submodule named like an HTML tag (it reaches scopes, labels and
    the inspector) and a data-dependent branch (always taken: the sum is over 8 small values) whose source line,
    shown with the warning, closes a script element and opens a comment."""

    def __init__(self) -> None:
        super().__init__()
        self.add_module(MARKUP_NAME, nn.Linear(4, 4))

    def forward(self, x):
        h = getattr(self, MARKUP_NAME)(x)
        if h.sum() > -100:  # </script><script>alert("branch")</script><!-- & <b>bold</b>
            h = h * 2
        return h


class MLP(nn.Module):
    """Two linear layers and a softmax, the export back end's plain model (a graph with no surprises: what an export
    records, checks and round-trips when nothing goes wrong)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x))).softmax(dim=-1)


class ShippedHead(nn.Module):
    """A linear head behind a dropout, with the batch reshaped by a literal: traced in train mode and saved with
    ``torch.jit.save``, the archive a file opened in JupyterLab shows findings for (a training-mode dropout, a size
    frozen by the trace)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.fc(x.view(4, -1)))


def save_shipped_head(path: Any) -> Any:
    """Trace :class:`ShippedHead` in train mode at batch 4 and ``torch.jit.save`` it to ``path``; returns ``path``."""
    torch.manual_seed(0)
    with torch.no_grad():
        traced = torch.jit.trace(ShippedHead().train(), torch.randn(4, 2, 3), check_trace=False)
    torch.jit.save(traced, str(path))
    return path
