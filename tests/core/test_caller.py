"""core/caller.py: where the trace was asked for, found past this package, torch and installed libraries, or
named by a front end."""

from __future__ import annotations

import sys

import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.caller import call_site, find_caller


def test_the_caller_is_this_line():
    here = find_caller()
    assert here is not None and here.file == __file__ and here.line == sys._getframe().f_lineno - 1
    assert here.func == "test_the_caller_is_this_line" and "find_caller()" in here.code and not here.internal


def test_a_front_end_names_the_call_site_nested_blocks_restore_the_outer_one():
    with call_site("model.py", 3, code="model = Net()"):
        assert (find_caller().file, find_caller().line, find_caller().code) == ("model.py", 3, "model = Net()")
        with call_site("cell", 9):
            assert find_caller().line == 9
        assert find_caller().line == 3
    assert find_caller().file == __file__


def test_traces_see_the_line_that_called_tj_trace():
    run = tj.trace(torch.nn.Sequential(torch.nn.ReLU()), (torch.rand(2),))
    line = sys._getframe().f_lineno - 1
    assert {(n.source.file, n.source.line) for n in run.graph.nodes if n.source} == {(__file__, line)}
