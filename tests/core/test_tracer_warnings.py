"""Warnings as data: every category is recognised in torch's own words (triggered here by real traces), the
recorder merges repeats across phases, hides what torch hides, moves warnings torch raises on the user's behalf to
the user's line, and each warning finds the nodes of its line."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn as nn

from jupyter_tracejit.core.graph import Graph
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined
from jupyter_tracejit.core.torchscript.extract import extract_graph
from jupyter_tracejit.core.torchscript.warning_recorder import WarningRecorder, nodes_for_line
from jupyter_tracejit.core.tracer_warnings import ADVICE, CATEGORIES, TraceWarning, classify

from ..models import line_of
from .oracle import torch_deprecates_jit_trace

HERE = __file__


def torch_warnings(fn: Any, *args: Any, **kwargs: Any) -> list[tuple[str, str]]:
    """(message, warning class) of every warning plain torch.jit.trace emits for this call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            torch.jit.trace(fn, *args, **kwargs)
        except torch.jit.TracingCheckError:
            pass  # torch warns before it raises
    return [(str(w.message), w.category.__name__) for w in caught]


def graph_of(fn: Any, *inputs: Any) -> Graph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, inputs, check_trace=False)
    return extract_graph(canonical_inlined(traced.graph)).graph


class Calls:
    n = 0


def retrace_differs(x):
    Calls.n += 1
    return x + Calls.n % 2


def in_place_on_a_view(x):
    y = x.clone()
    v = y[0]
    y.add_(1)
    return y + v


def user_warns(x):
    warnings.warn("careful with this", stacklevel=1)
    return x * 2


x3 = torch.rand(3)

#: category -> a real trace whose warnings include that category's text
TRIGGERS: dict[str, Any] = {
    "to_bool": lambda: torch_warnings(lambda x: x * 2 if x.sum() > 0 else x, (x3,), check_trace=False),
    "to_int": lambda: torch_warnings(lambda x: x * int(x.sum()), (x3,), check_trace=False),
    "to_float": lambda: torch_warnings(lambda x: x * float(x.sum()), (x3,), check_trace=False),
    "to_complex": lambda: torch_warnings(lambda x: x * complex(x.sum()).real, (x3,), check_trace=False),
    "to_number": lambda: torch_warnings(lambda x: x * x.sum().item(), (x3,), check_trace=False),
    "to_list": lambda: torch_warnings(lambda x: x * x.tolist()[0], (x3,), check_trace=False),
    "to_numpy": lambda: torch_warnings(lambda x: x * float(x.numpy()[0]), (x3,), check_trace=False),
    "tensor_const": lambda: torch_warnings(lambda x: x * torch.tensor([1.0, 2.0, 3.0]), (x3,), check_trace=False),
    "from_numpy_const": lambda: torch_warnings(
        lambda x: x * torch.from_numpy(np.ones(3, dtype=np.float32)), (x3,), check_trace=False
    ),
    "iterate": lambda: torch_warnings(lambda x: sum(r for r in x), (x3,), check_trace=False),
    "len": lambda: torch_warnings(lambda x: x * len(x), (x3,), check_trace=False),
    "live_refs": lambda: torch_warnings(in_place_on_a_view, (x3,), check_trace=False, _force_outplace=True),
    "nondeterministic": lambda: torch_warnings(lambda x: torch.dropout(x, 0.5, True), (torch.rand(100),)),
    "output_mismatch_python": lambda: torch_warnings(lambda x: torch.dropout(x, 0.5, True), (torch.rand(100),)),
    "output_mismatch_retrace": lambda: torch_warnings(retrace_differs, (torch.zeros(2),)),
    "list_output": lambda: torch_warnings(lambda x: [x, x], (x3,), check_trace=False),
    "already_script": lambda: torch_warnings(torch.jit.script(nn.Linear(3, 3)), (x3,)),
    "deprecated": lambda: torch_warnings(lambda x: x, (x3,), check_trace=False),
    "other": lambda: torch_warnings(user_warns, (x3,), check_trace=False),
}


def test_every_category_has_a_trigger() -> None:
    assert list(TRIGGERS) == list(CATEGORIES)
    assert set(ADVICE) == set(CATEGORIES)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")
@pytest.mark.parametrize("category", CATEGORIES)
def test_classify_recognises_torchs_own_text(category: str) -> None:
    if category == "deprecated" and not torch_deprecates_jit_trace():
        pytest.skip("this torch does not deprecate torch.jit.trace: it has no such text")
    found = {classify(message, cls) for message, cls in TRIGGERS[category]()}
    assert category in found


def test_classify_deprecation_notices_by_their_class() -> None:
    assert classify("`torch.jit.script` is deprecated. Please switch to `torch.compile`", "DeprecationWarning") == (
        "deprecated"
    )
    assert classify("torch.jit.trace will be removed", "FutureWarning") == "deprecated"
    # another library's notice says nothing about the trace either (it is told apart by its advice)
    assert classify("numpy.foo is deprecated", "DeprecationWarning") == "deprecated"
    assert classify("`old_flag` will be removed in v6", "PendingDeprecationWarning") == "deprecated"
    assert classify("torch.jit.trace will be removed", "UserWarning") == "other"


def test_a_value_frozen_in_an_installed_library_gets_advice_the_user_can_follow() -> None:
    site = "/env/lib/python3.11/site-packages/transformers/integrations/sdpa_attention.py"
    in_library = TraceWarning(category="to_bool", message="Converting a tensor to a Python boolean", file=site, line=9)
    assert in_library.advice.startswith("This line is in the installed package transformers, not in your code")
    assert "check_inputs" in in_library.advice
    mine = TraceWarning(
        category="to_bool", message="Converting a tensor to a Python boolean", file="/home/me/m.py", line=9
    )
    assert mine.advice.startswith("A Python `if`/`while` on a tensor is frozen")
    # a warning that is not about a frozen value keeps its advice wherever it is
    listed = TraceWarning(category="list_output", message="Encountering a list at the output", file=site, line=9)
    assert listed.advice == "A list output is treated as a fixed structure. Return a tuple."


def test_classify_takes_the_first_pattern() -> None:
    # torch.from_numpy's text also contains the torch.tensor phrase: the more specific category wins
    assert classify("torch.from_numpy results are registered as constants in the trace.", "TracerWarning") == (
        "from_numpy_const"
    )


# -- the recorder ------------------------------------------------------------------------------------------------


def warn_here(text: str = "careful") -> None:
    warnings.warn(text, stacklevel=1)  # the warning's line


def test_the_recorder_merges_repeats_and_counts_them_across_phases() -> None:
    recorder = WarningRecorder()
    with recorder.capture():
        for phase in ("trace", "trace", "check 1", "check 2"):
            recorder.phase = phase
            warn_here()
        warn_here("something else")
    found = recorder.collect({})
    assert len(found) == 2
    w = found[0]
    assert (w.category, w.message, w.file, w.line) == ("other", "careful", HERE, line_of(warn_here, "# the warning"))
    assert w.count == 4 and w.phases == ["trace", "check 1", "check 2"]
    assert (w.func, w.warning_class, w.torch_location) == ("warn_here", "UserWarning", "")
    assert w.code == "warnings.warn(text, stacklevel=1)  # the warning's line"
    assert (found[1].message, found[1].count, found[1].phases) == ("something else", 1, ["check 2"])


def test_deprecations_merge_into_one_whatever_their_text() -> None:
    recorder = WarningRecorder()
    with recorder.capture():
        warnings.warn("`torch.jit.trace` is deprecated.", DeprecationWarning, stacklevel=1)
        warnings.warn("`torch.jit.script` is deprecated.", DeprecationWarning, stacklevel=1)
    (w,) = recorder.collect({})
    assert w.category == "deprecated" and w.count == 2 and not w.is_user_problem


def test_capture_leaves_the_users_warning_machinery_as_it_was() -> None:
    filters, show = list(warnings.filters), warnings.showwarning
    recorder = WarningRecorder()
    with pytest.raises(ValueError), recorder.capture():
        warn_here()
        raise ValueError("the traced code failed")
    assert warnings.filters == filters and warnings.showwarning is show
    assert len(recorder.raw) == 1


class Unclosed:
    """Garbage that speaks when collected, as an unclosed file or socket of earlier work does."""

    def __init__(self) -> None:
        self.cycle = self  # only the collector frees it, whenever a collection falls

    def __del__(self) -> None:
        warnings.warn("unclosed <socket of an earlier cell>", ResourceWarning, stacklevel=1)


def traced_code_that_collects(x: Any) -> Any:
    gc.collect()  # where an automatic collection falls inside the capture
    warn_here("the trace's own")
    return x


def test_a_finalizer_speaking_mid_capture_is_not_the_traces_and_keeps_the_users_filters() -> None:
    # the leak once seen between tests: a long-lived kernel's garbage, collected during a trace, was counted as
    # the trace's "other warnings"; it is the user's, shown as their own filters say
    shown: list[str] = []

    def show(message: Any, *args: Any, **kwargs: Any) -> None:
        shown.append(str(message))

    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)  # Python's default for ResourceWarning
            warnings.showwarning = show
            Unclosed()
            recorder = WarningRecorder()
            with recorder.capture():
                traced_code_that_collects(1)
            assert shown == []  # hidden as it would have been without the capture
            warnings.simplefilter("always", ResourceWarning)  # a user (or pytest) who shows them
            Unclosed()
            with recorder.capture():
                traced_code_that_collects(1)
            assert shown == ["unclosed <socket of an earlier cell>"]
    finally:
        gc.enable()
    assert [w.message for w in recorder.collect({})] == ["the trace's own"]
    assert recorder.collect({})[0].count == 2


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(4, 2)

    def forward(self, q):
        return self.attn(q, q, q)[0]


def test_tracer_warnings_raised_inside_torchs_own_code_are_hidden() -> None:
    model, q = Attention().eval(), torch.rand(3, 1, 4)
    by_torch = torch_warnings(model, (q,), check_trace=False)
    assert any(cls == "TracerWarning" and "Python boolean" in m for m, cls in by_torch)  # in torch/nn/functional.py
    recorder = WarningRecorder()
    with recorder.capture():
        torch.jit.trace(model, (q,), check_trace=False)
    notice = [("deprecated", HERE)] if torch_deprecates_jit_trace() else []
    assert [(w.category, w.file) for w in recorder.collect({})] == notice


def to_numpy_and_back(x):
    return x + torch.from_numpy(np.asarray(x) * 2)  # asarray line


def test_a_warning_torch_raises_on_the_users_behalf_moves_to_the_users_line() -> None:
    recorder = WarningRecorder()
    with recorder.capture():
        torch.jit.trace(to_numpy_and_back, (torch.rand(2),), check_trace=False)
    to_numpy = next(w for w in recorder.collect({}) if w.category == "to_numpy")
    assert (to_numpy.file, to_numpy.line) == (HERE, line_of(to_numpy_and_back, "# asarray line"))
    assert to_numpy.func == "to_numpy_and_back"
    file, _, line = to_numpy.torch_location.rpartition(":")
    assert file.endswith("torch/_tensor.py") and int(line) > 0


def test_synthetic_warnings_are_collected_like_emitted_ones() -> None:
    recorder = WarningRecorder()
    recorder.add_synthetic("Output nr 1. of the traced function does not match", "TracerWarning", HERE, 7, "check 1")
    recorder.add_synthetic("Output nr 1. of the traced function does not match", "TracerWarning", HERE, 7, "check 2")
    (w,) = recorder.collect({})
    assert (w.category, w.line, w.count, w.phases) == ("other", 7, 2, ["check 1", "check 2"])


def two_ops(x):
    y = x * 2  # mul line
    return y.relu()  # relu line


def warns_then_subtracts(x):
    warnings.warn("about the next line", stacklevel=1)  # warn line
    return x - 1  # sub line


def test_collect_finds_nodes_in_the_graph_of_the_phases_method() -> None:
    graphs = {"forward": graph_of(two_ops, x3), "encode": graph_of(warns_then_subtracts, x3)}
    by_phase = {}
    for phase in ("trace", "check 1"):
        recorder = WarningRecorder()
        with recorder.capture():
            recorder.phase = phase
            warns_then_subtracts(x3)
        (by_phase[phase],) = recorder.collect(graphs, {"check 1": "encode"})
    in_check = by_phase["check 1"]
    assert in_check.method == "encode" and in_check.line == line_of(warns_then_subtracts, "# warn line")
    assert in_check.node_match == "next_line"
    assert [graphs["encode"].nodes[i].kind for i in in_check.node_ids] == ["aten::sub"]
    in_trace = by_phase["trace"]  # forward's graph: two_ops records nothing of this function
    assert in_trace.method == "forward" and (in_trace.node_ids, in_trace.node_match) == ([], "")


# -- nodes_for_line -------------------------------------------------------------------------------------------


def branchy(x):
    if x.sum() > 0:  # if line
        x = x * 2  # taken line
    return x  # return line


class Inner(nn.Module):
    def forward(self, x):
        return torch.tanh(x) + 1  # inner line


class Outer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x)  # call line


def test_nodes_recorded_at_the_line_ops_before_constants() -> None:
    g = graph_of(two_ops, x3)
    at_line = g.nodes_at(HERE, line_of(two_ops, "# mul line"))
    assert sorted(g.nodes[i].kind for i in at_line) == ["aten::mul", "prim::Constant"]
    ids, how = nodes_for_line(g, HERE, line_of(two_ops, "# mul line"))
    assert how == "line" and [g.nodes[i].kind for i in ids] == ["aten::mul"]


def test_nodes_of_a_call_are_found_on_their_stack() -> None:
    g = graph_of(Outer(), x3)
    ids, how = nodes_for_line(g, HERE, line_of(Outer.forward, "# call line"))
    assert how == "stack"
    assert sorted(g.nodes[i].kind for i in ids) == ["aten::add", "aten::tanh"]
    assert all(g.nodes[i].source.line == line_of(Inner.forward, "# inner line") for i in ids)


def test_a_folded_condition_points_at_the_next_line_of_its_function() -> None:
    g = graph_of(branchy, torch.ones(3))
    if_line = line_of(branchy, "# if line")
    assert g.nodes_at(HERE, if_line) == []  # the tracer removed the condition's nodes
    ids, how = nodes_for_line(g, HERE, if_line, "branchy")
    assert how == "next_line" and [g.nodes[i].kind for i in ids] == ["aten::mul"]
    assert nodes_for_line(g, HERE, if_line) == ([], "")  # without the function, no guess
    assert nodes_for_line(g, HERE, if_line, "another_function") == ([], "")


def test_a_line_after_every_node_has_none() -> None:
    g = graph_of(branchy, torch.ones(3))
    assert nodes_for_line(g, HERE, line_of(branchy, "# return line"), "branchy") == ([], "")
    assert nodes_for_line(g, "elsewhere.py", line_of(branchy, "# taken line"), "branchy") == ([], "")


def test_each_warning_carries_its_advice_into_the_json() -> None:
    """The explorer shows the fix the CLI and the HTML report print: one definition (ADVICE), written as data."""
    import html

    import jupyter_tracejit as tj
    from jupyter_tracejit.render.html import to_html
    from jupyter_tracejit.render.text import format_run

    def branch(x):
        if x.sum() > 0:
            return x * 2
        return x

    run = tj.trace(branch, (torch.ones(2),), check_inputs=[(-torch.ones(2),)])
    data = run.to_json()
    by_category = {w["category"]: w for w in data["warnings"]}
    assert by_category["to_bool"]["advice"] == ADVICE["to_bool"]
    assert by_category["output_mismatch_python"]["advice"] == ADVICE["output_mismatch_python"]
    assert ADVICE["to_bool"] in format_run(run)
    page = to_html(run, graph=False)
    assert html.escape(ADVICE["to_bool"]) in page
    # the HTML fallback shows torch's numbers for the mismatch too, not just "Detailed error:"
    assert "Greatest absolute difference" in page
    # torch's detailed numbers stay in the message (the explorer shows them under the first line)
    assert "Greatest absolute difference" in by_category["output_mismatch_python"]["message"]
    again = tj.TraceRun.from_json(data)
    assert again.to_json() == data
