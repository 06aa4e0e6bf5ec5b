"""Reading torch's words: graph-break reasons (with and without the registry's parts), the graph-break log's
records (2.13's and 2.4's), guards and guard failures in the inputs' terms. Torch's texts are quoted as its 2.13
writes them; the runs' tests check the same against torch itself."""

from __future__ import annotations

import pytest

from jupyter_tracejit.core.compile.breaks import (
    frame_skipped,
    parse_logged_break,
    plain_name,
    resumed_function,
    split_reason,
)
from jupyter_tracejit.core.compile.failures import read_failure, recompile_hint, source_value
from jupyter_tracejit.core.compile.guards import GuardLine, about_inputs, inputs_terms, readable_guard, resolve_file

PRINT_REASON = (
    "Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):\n\n"
    "Failed to trace builtin operator\n"
    "  Explanation: Dynamo does not know how to trace builtin operator `print` with argument types ['str'] "
    "(has_kwargs False)\n"
    "  Hint: Avoid calling builtin `print` with argument types ['str']. Consider using an equivalent alternative "
    "function/method to `print`.\n"
    "  Hint: If you are attempting to call a logging function (e.g. `print`), you can try adding it to "
    "`torch._dynamo.config.reorderable_logging_functions`.\n"
    "  Hint: Please report an issue to PyTorch.\n\n"
    "  Developer debug context: builtin print [<class 'torch._dynamo.variables.constant.ConstantVariable'>] False\n\n"
    " For more details about this graph break, please visit: "
    "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html"
)
LOOP_REASON = (
    "Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph break "
    "encountered:\n\nCall to `torch._dynamo.graph_break()`\n  Explanation: User-inserted graph break. Message: None\n"
    "  Hint: Remove the `torch._dynamo.graph_break()` call.\n\n  Developer debug context: Called "
    "`torch._dynamo.graph_break()` with args `[]`, kwargs `{}`\n\n For more details about this graph break, please "
    "visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html\n\n*** While handling this graph "
    "break, another graph break occurred: ***\n\ngraph break in loop\n  Explanation: torch.compile detected a graph "
    "break in a for/while loop. Skipping the frame and falling back to eager, as graph breaks in loops are not "
    "supported.\n  Hint: This graph break may have been caused by an earlier graph break. Resolving the earlier "
    "graph break may resolve this one.\n\n  Developer debug context: frame skipped: loopy (/w/m.py line 17)\n\n For "
    "more details about this graph break, please visit: "
    "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb7000.html"
)


def test_a_reason_is_its_type_explanation_hints_and_page() -> None:
    (parts,) = split_reason(PRINT_REASON)
    assert parts.gb_type == "Failed to trace builtin operator" and parts.gb_code == "GB0059"
    assert parts.explanation.startswith("Dynamo does not know how to trace builtin operator `print`")
    assert len(parts.hints) == 3 and parts.hints[1].endswith("`torch._dynamo.config.reorderable_logging_functions`.")
    assert parts.context.startswith("builtin print")


def test_a_reason_that_skipped_a_function_names_it() -> None:
    parts = split_reason(LOOP_REASON)
    assert [p.gb_type for p in parts] == ["Call to `torch._dynamo.graph_break()`", "graph break in loop"]
    assert [p.gb_code for p in parts] == ["GB0025", "GB7000"]
    assert frame_skipped(parts) == ("loopy", "/w/m.py", 17)
    assert frame_skipped(split_reason(PRINT_REASON)) is None


def test_a_one_line_reason_of_an_older_torch_is_its_type() -> None:
    (parts,) = split_reason("call_function BuiltinVariable(print) [ConstantVariable()] {}")
    assert parts.gb_type.startswith("call_function") and parts.gb_code == "" and parts.hints == []


def test_the_graph_break_logs_records() -> None:
    full = (
        f"Graph break in user code at /w/m.py:7\nGraph Break Reason: {PRINT_REASON}\n\nUser code traceback:\n"
        '  File "/w/run.py", line 3, in <module>\n    run()\n  File "/w/m.py", line 7, in forward\n'
        '    print("x")\n'
    )
    logged = parse_logged_break(full, call=2)
    assert logged is not None and (logged.file, logged.line, logged.call) == ("/w/m.py", 7, 2)
    assert logged.reason == PRINT_REASON and logged.frames[-1] == ("/w/m.py", 7, "forward")
    short = (
        "Graph break (user stack suppressed due to duplicate graph break) in user code at /w/m.py:7\n"
        f"Graph Break Reason: {PRINT_REASON}"
    )
    logged = parse_logged_break(short)
    assert logged is not None and logged.frames == [] and logged.reason == PRINT_REASON
    old = 'Graph break: call_function BuiltinVariable(print) from user code at:\n  File "/w/m.py", line 5, in f\n'
    logged = parse_logged_break(old)
    assert logged is not None and (logged.file, logged.line, logged.frames) == ("/w/m.py", 5, [("/w/m.py", 5, "f")])
    assert parse_logged_break("Restarting analysis due to ...") is None


def test_resume_functions_are_named_after_what_they_resume() -> None:
    assert resumed_function("torch_dynamo_resume_in_forward_at_13") == ("forward", 13)
    assert resumed_function("torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_3_at_9") == ("f", 9)
    assert resumed_function("forward") is None
    assert plain_name("Layer.torch_dynamo_resume_in_forward_at_9") == "Layer.forward"


def test_sources_in_the_inputs_terms() -> None:
    assert inputs_terms("L['x'].size()[0] <= 4") == "x.size()[0] <= 4"
    assert inputs_terms("L['self']._modules['fc']._parameters['weight']") == "self.fc.weight"
    assert inputs_terms("L['___stack0'].size()[1]") == "the value before the break.size()[1]"
    assert inputs_terms("G['torch'].float32") == "torch.float32"


def test_guards_about_the_inputs_and_their_words() -> None:
    tensor = GuardLine(
        "TENSOR_MATCH",
        "check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), "
        "torch.float32, device=None, requires_grad=False, size=[None, 2], stride=[2, 1])",
    )
    assert about_inputs(tensor)
    assert readable_guard(tensor) == "x is a float32 tensor of size [any, 2], requires_grad=False"
    param = GuardLine("TENSOR_MATCH", tensor.expr.replace("L['x']", "L['self']._modules['fc']._parameters['weight']"))
    assert not about_inputs(param)
    assert about_inputs(GuardLine("EQUALS_MATCH", "L['self'].scale == 3"))
    assert not about_inputs(GuardLine("ID_MATCH", "___check_obj_id(G['torch'], 140), type=<class 'module'>"))
    assert not about_inputs(GuardLine("DIMENSION_DYNAMIC_MARKING_GUARD", "hasattr(L['x'], '_dynamo_dynamic_indices')"))
    assert readable_guard(GuardLine("TYPE_MATCH", "___check_type_id(L['k'], 94), type=<class 'int'>")) == "k is an int"


def test_torchs_shortened_files_are_found_again() -> None:
    known = ["/work/proj/model.py", "/tmp/other/model.py", "/work/proj/sub/x.py"]
    assert resolve_file("proj/model.py", known) == "/work/proj/model.py"
    assert resolve_file("ork/proj/sub/x.py", known) == "/work/proj/sub/x.py"  # one letter of the top folder cut
    assert resolve_file("nowhere.py", known) == ""


@pytest.mark.parametrize(
    ("text", "kind", "reason"),
    [
        ("0/0: tensor 'x' size mismatch at index 0. expected 3, actual 5", "size", "x.size()[0] was 3, now 5"),
        ("0/0: tensor 'x' stride mismatch at index 1. expected 1, actual 2", "size", "x.stride()[1] was 1, now 2"),
        ("1/0: tensor '___stack0' size mismatch at index 1. expected 4, actual 6", "size",
         "the value before the break.size()[1] was 4, now 6"),
        ("0/0: tensor 'x' requires_grad mismatch. expected requires_grad=0", "requires_grad",
         "x.requires_grad was False, now True"),
        ("0/0: tensor 'x' dtype mismatch. expected Float, actual Double", "type", "x's dtype was Float, now Double"),
        ("0/0: tensor 'x' rank mismatch. expected 2, actual 3", "size", "x.dim() was 2, now 3"),
        ("0/1: k == 2  # return x * k  # w/m.py:5 in f", "value", "k was 2, now 3"),
        ("0/2: ___check_type_id(k, 1403), type=<class 'int'>  # y = x * k  # w/m.py:3 in f (HINT: type int)",
         "type", "k was an int, now an int"),
        ("0/0: ___check_obj_id(self.fc, 1403)", "identity", "self.fc is another object"),
        ("0/0: L['x'].size()[0] <= 4", "size", "x.size()[0] <= 4 no longer holds (x.size()[0] = 3)"),
    ],
)  # fmt: skip
def test_guard_failures_in_the_inputs_terms(text: str, kind: str, reason: str) -> None:
    import torch

    inputs = {"x": torch.zeros(3, 2), "k": 3}
    failure = read_failure(text, ["/w/m.py"], lambda source: source_value(source, inputs))
    assert (failure.kind, failure.reason) == (kind, reason)
    assert failure.compile_id == text.split(":", 1)[0]


def test_a_failure_with_a_user_stack_is_at_its_line() -> None:
    text = (
        '0/1: k == 2  # y = x * k  # mp/m.py:3 in f\nUser stack trace:\n  File "/w/m.py", line 3, in f\n    y = x * k'
    )
    failure = read_failure(text, [])
    assert (failure.file, failure.line, failure.reason) == ("/w/m.py", 3, "k was 2, now another value")
    shortened = read_failure("0/1: k == 2  # y = x * k  # w/m.py:3 in f", ["/w/m.py"])
    assert (shortened.file, shortened.line) == ("/w/m.py", 3)


def test_each_kind_has_its_fix() -> None:
    size = read_failure("0/0: tensor 'x' size mismatch at index 0. expected 3, actual 5", [])
    assert "dynamic=False" in recompile_hint(size, False, True)
    assert "mark_dynamic" in recompile_hint(size, None, True)
    assert "constant" in recompile_hint(size, None, False)
    value = read_failure("0/1: k == 2", [])
    assert "torch.tensor" in recompile_hint(value, None, True)
