"""What a run says where a torch lacks what 2.13 has (the CI matrix runs 2.4.1): without the graph-break log, the
breaks are the ones the graphs end at and the run says what it could not know; without the registry's words for a
skipped function, the top function that compiled into nothing while a break was met in it is the skipped one."""

from __future__ import annotations

import contextlib
import io
import os
import warnings

import pytest
import torch

from jupyter_tracejit.core.compile import hygiene
from jupyter_tracejit.core.compile.break_table import skipped_top
from jupyter_tracejit.core.compile.records import GraphBreak, StackFrame
from jupyter_tracejit.core.compile.request import compile as tj_compile

from . import models
from .truth import explain


def test_without_the_graph_break_log_the_breaks_are_the_graphs_and_the_run_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hygiene, "_graph_break_loggers", lambda: [])
    x = torch.randn(3, 4)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        run = tj_compile(models.Branching(), (x,))
    truth = explain(models.Branching(), (x,), files=[models.__file__])
    lines = {(os.path.abspath(b.file), b.line) for b in run.compile.graph_breaks}
    assert set(truth.break_lines) <= lines and truth.break_lines
    assert any("graph-break log" in u for u in run.compile.unknown)


def test_a_top_function_that_compiled_into_nothing_was_skipped() -> None:
    code = models.InLoop.forward.__code__
    frame = StackFrame(code.co_filename, code.co_firstlineno + 3, "forward")
    gb = GraphBreak(file=frame.file, line=frame.line, func="forward", stack=[frame], calls=[0])
    skipped_top([gb], [], code)
    assert (gb.skipped_frame, gb.skipped_line) == ("forward", frame.line)
    other = GraphBreak(file=frame.file, line=frame.line, func="forward", stack=[frame], calls=[1])
    skipped_top([other], [], code)
    assert other.skipped_frame == ""  # met only in a later call: not what skipped the first one
