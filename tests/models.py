"""Little models that several test files trace, defined once.

Each class says what it is there to show. A test that needs a model of its own (a name that an assertion spells,
a shape a check depends on, a method with another signature) keeps it next to itself and says why.

The tracer records the file and line of every op. A test that pins the line of an op written in this module finds it
with :func:`line_of` (by the text on the line), so moving code here never breaks an assertion; the file is
``tests.models.__file__``.

A model a notebook cell (browser tests) or a file for the command line (CLI tests) defines is written here too, and
the cell or the file holds its source text (:func:`source_of`): the kernel or the subprocess runs what is written
here, and a test finds a line of it in that text with :func:`line_in`. Not here, on purpose: the models of
tests/frontend_fixtures.py, whose file paths and lines the front-end fixtures and their vitest expectations record
(a browser test that shows the same model takes its source from there).
"""

from __future__ import annotations

import inspect
import textwrap
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


def source_of(*definitions: Any) -> str:
    """The source text of classes and functions, one after another: what a notebook cell or a model file for the
    command line defines them with."""
    return "\n\n".join(textwrap.dedent(inspect.getsource(d)) for d in definitions)


def line_in(source: str, marker: str) -> int:
    """Line number (from 1) of the first line of ``source`` (a cell's or a file's text) that contains ``marker``."""
    for number, text in enumerate(source.splitlines(), start=1):
        if marker in text:
            return number
    raise AssertionError(f"marker {marker!r} not found in {source[:80]!r}")


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


class LinearBatchNorm(nn.Module):
    """A Linear then a BatchNorm1d: traced in train mode, its batch statistics are right for the example inputs
    (the check passes) but a finding says the trace is wrong for inference, and the running statistics are module
    state that running the forward changes (and that is put back)."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.bn = nn.BatchNorm1d(width)

    def forward(self, x):
        return self.bn(self.fc(x))


class LoopOverRows(nn.Module):
    """Adds each row's index in a Python loop over the batch: exported, the loop's trip count fixes the batch to the
    example's (a specialisation at the ``for`` line, :data:`LOOP_LINE`), and a dynamic batch is refused there."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(x.size(0)):
            x = x + i
        return x


#: the line of :class:`LoopOverRows`'s loop (in ``tests.models.__file__``)
LOOP_LINE = line_of(LoopOverRows.forward, "for i in range(x.size(0)):")


class Tagger(nn.Module):
    """An LSTM over a sequence: exported with a dynamic length, ``nn.LSTM``'s own code fixes the length, and the
    refusal or specialisation is shown at the user's line that called it (:data:`TAGGER_LINE`)."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.LSTM(4, 8, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rnn(x)[0]


#: the line of :class:`Tagger` that calls its LSTM (in ``tests.models.__file__``)
TAGGER_LINE = line_of(Tagger.forward, "return self.rnn(x)[0]")


def relu_twice(x):
    """A ReLU and a scale; :func:`relu_twice_renamed` is the same ops with another name for the value between them:
    a structural comparison sees one graph, torch's printouts (which keep debug names) two."""
    y = torch.relu(x)
    return y * 2


def relu_twice_renamed(x):
    """:func:`relu_twice` with its value named ``renamed`` (not ``y``)."""
    renamed = torch.relu(x)
    return renamed * 2


# -- what the browser tests' notebook cells define (with source_of), loop_in_traced_fn traced elsewhere too ------


class Block(nn.Module):
    """A Linear and a ReLU with the input added back: what :class:`Net` repeats."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x)) + x


class Net(nn.Module):
    """Blocks in a Sequential and a head, behind a data-dependent branch: the explorer's everyday model (modules
    to group, a tracer warning at the ``if``); with many blocks, a graph that opens with its modules collapsed."""

    def __init__(self, blocks: int = 2) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*[Block() for _ in range(blocks)])
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        if x.sum() > 0:
            x = x * 2
        return self.head(self.blocks(x))


class DictNet(Net):
    """:class:`Net` returning a dict: ``strict=True`` (the default) refuses that output, ``strict=False`` traces it."""

    def forward(self, x):
        return {"out": super().forward(x)}


def loop_in_traced_fn(x):
    """A product over the rows: a loop the tracer unrolls for the batch it saw, so a check with another batch size
    fails (one root divergence, more downstream)."""
    result = x[0]
    for i in range(x.size(0)):
        result = result * x[i]
    return result


class ScaledBlock(nn.Module):
    """Five ops (a Linear, a ReLU, a scale, the input added back, a shift): thirty in a Sequential put 150 ops under
    the root, a graph big enough to open collapsed, the blocks as one box."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x)) * 0.5 + x - 1


class Frozen(nn.Module):
    """A branch the tracer freezes and a loop it unrolls for the batch size: checked with a negative batch of another
    size, the check fails (red) at both."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        if x.sum() > 0:  # a branch the tracer freezes
            x = self.fc(x)
        y = x[0]
        for i in range(x.size(0)):  # a loop the tracer unrolls for this batch size
            y = y * x[i]
        return y


class Gate(nn.Module):
    """A Linear, then a branch on the values it computed: torch.export refuses it at the ``if`` (a guard on a
    data-dependent value), with the hint to write ``torch.cond`` or ``torch._check``."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        if h.sum() > 0:  # a branch on a value
            return h.relu()
        return h


class Dropped(nn.Module):
    """The frontend fixtures' ``ShapeAndFrozen`` with a dropout after its first layer: exported as it is (train
    mode) the dropout is there, re-exported in eval mode it is gone."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.1)
        self.out = nn.Linear(8, 4)

    def forward(self, x):
        h = self.drop(torch.relu(self.fc(x)))  # a dropout, in train mode only
        h = h.view(h.size(0), -1).contiguous()
        return self.out(h) + torch.tensor(x.shape[0])
