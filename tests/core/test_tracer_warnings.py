"""core/tracer_warnings.py: warnings captured, classified with torch's real texts, deduplicated across the
trace and the check, moved to the user's line when torch raises them on the user's behalf, and mapped to nodes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.tracer_warnings import CATEGORIES, WarningRecorder, classify, nodes_for_line


def to_bool(x):
    if x.sum() > 0:  # to_bool line
        return x * 2
    return x


def to_int(x):
    return x * int(x.sum())


def to_float(x):
    return x * float(x.sum())


def to_number(x):
    return x * x.sum().item()


def to_list(x):
    return x * x.tolist()[0]


def tensor_const(x):
    return x + torch.tensor([x.shape[0]])


def from_numpy_const(x):
    return x + torch.from_numpy(np.ones(2, dtype=np.float32))


def to_numpy(x):
    return x + np.asarray(x).sum()  # to_numpy line


def iterate(x):
    return sum(row for row in x)


def length(x):
    return x * len(x)


REAL = {
    "to_bool": to_bool,
    "to_int": to_int,
    "to_float": to_float,
    "to_number": to_number,
    "to_list": to_list,
    "tensor_const": tensor_const,
    "from_numpy_const": from_numpy_const,
    "to_numpy": to_numpy,
    "iterate": iterate,
    "len": length,
}


@pytest.mark.parametrize("category", list(REAL))
def test_torchs_real_warnings_are_classified(category):
    run = tj.trace(REAL[category], (torch.rand(2, 2),), check_trace=False)
    assert category in [w.category for w in run.user_warnings], [w.message for w in run.warnings]


def test_every_category_has_a_pattern_or_a_rule():
    texts = {
        "to_complex": "Converting a tensor to a Python complex might cause the trace to be incorrect.",
        "live_refs": "There are 2 live references to the data region being modified when tracing in-place operator",
        "nondeterministic": "Trace had nondeterministic nodes. Did you forget call .eval() on your model?",
        "output_mismatch_python": "Output nr 1. ... the corresponding output of the Python function. Detailed error",
        "output_mismatch_retrace": "Output nr 1. ... the corresponding output of the repeated trace. Detailed error",
        "list_output": "Encountering a list at the output of the tracer might cause the trace to be incorrect",
        "already_script": "The input to trace is already a ScriptModule, tracing it is a no-op.",
    }
    for category, text in texts.items():
        assert classify(text, "TracerWarning") == category
    assert classify("`torch.jit.trace` is deprecated.", "DeprecationWarning") == "deprecated"
    assert classify("something else", "UserWarning") == "other"
    assert set(texts) | set(REAL) | {"deprecated", "other", "to_number"} == set(CATEGORIES)


def test_a_warning_repeated_by_the_check_is_one_record_with_its_count_and_phases():
    run = tj.trace(to_bool, (torch.ones(3),), check_inputs=[(torch.ones(3),), (torch.ones(3),)])
    (w,) = run.warnings_of("to_bool")
    assert w.count == 3 and w.phases == ["trace", "check 1", "check 2"]
    assert w.file == __file__ and w.code == "if x.sum() > 0:  # to_bool line"
    # the `if` recorded nothing at its own line: the nodes of the branch it froze
    assert w.node_match == "next_line" and [run.graph.nodes[i].kind for i in w.node_ids] == ["aten::mul"]


def test_np_asarray_is_moved_from_torch_to_the_users_line():
    run = tj.trace(to_numpy, (torch.rand(2),), check_trace=False)
    (w,) = run.warnings_of("to_numpy")
    assert w.file == __file__ and w.code.endswith("# to_numpy line")
    assert w.torch_location.replace("\\", "/").split(":")[0].endswith("torch/_tensor.py")


def test_torchs_own_library_warnings_stay_hidden_and_filters_are_restored():
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16)
    before = list(warnings.filters)
    run = tj.trace(layer.train(), (torch.rand(3, 1, 8),), check_trace=False)
    assert run.user_warnings == [] and warnings.filters == before
    recorder = WarningRecorder()
    with recorder.capture():
        warnings.warn("mine", UserWarning, stacklevel=1)
    assert [r.message for r in recorder.raw] == ["mine"] and warnings.filters == before


def test_nodes_for_a_line_by_line_by_stack_and_none():
    run = tj.trace(to_int, (torch.rand(2),), check_trace=False)
    graph = run.graph
    line = to_int.__code__.co_firstlineno + 1
    ids, how = nodes_for_line(graph, __file__, line)
    assert how == "line" and ids and all(not graph.nodes[i].foldable for i in ids)
    assert nodes_for_line(graph, __file__, 1) == ([], "")
    assert nodes_for_line(graph, "elsewhere.py", line) == ([], "")
