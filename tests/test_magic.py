"""``%trace`` through IPython's own shell: the magic's line (the call, every option, methods, ``--help``) and the
one-line errors of the magic itself."""

from __future__ import annotations

import pytest
import torch
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import jupyter_tracejit as tj
from jupyter_tracejit import magic
from jupyter_tracejit.widgets import PROGRESS_MIME, RUN_MIME, TraceExplorer, run_from_mime

from .magic_shell import (
    WIDGET_MIME,
    relu_fn,
    run_magic,
    traced,
)

OPTIONS = (
    "-o",
    "--method",
    "--no-check",
    "--check-inputs",
    "--tol",
    "--non-strict",
    "--force-outplace",
    "--eval",
    "--train",
    "--no-grad",
    "--probe",
    "--target-device",
    "--static",
    "--quiet",
)


def nondeterministic(run: tj.TraceRun) -> bool:
    return any(f.kind == "nondeterministic" for f in run.findings)


# -- the default form -----------------------------------------------------------------------------------


def test_trace_shows_a_live_explorer_and_stores_the_run_in_underscore_trace(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = set(ip.user_ns)
    result, shown = run_magic(ip, monkeypatch, "relu_fn(x)")
    assert result is None  # nothing for Out[] / `_`: the explorer is already on screen
    run = ip.user_ns["_trace"]
    assert run.ok and run.request.kind == "trace" and run.request.target is relu_fn
    assert run.request.inputs == (ip.user_ns["x"],)
    # the namespace gains the run and its explorer, nothing else
    assert set(ip.user_ns) - before == {"_trace", "_trace_explorer"}
    (explorer,) = shown.final
    assert isinstance(explorer, TraceExplorer) and explorer.live and explorer.run is run
    assert ip.user_ns["_trace_explorer"] is explorer
    # what it traces while it traces (its phases: tracing, then checking), then the explorer in its place
    placeholder, checking, bundle = shown.bundles
    assert placeholder[PROGRESS_MIME]["phase"] == "tracing" and checking[PROGRESS_MIME]["phase"] == "checking"
    assert bundle[WIDGET_MIME] and run_from_mime(bundle[RUN_MIME]) == run.to_json()
    assert {WIDGET_MIME, RUN_MIME, "text/html", "text/plain"} <= bundle.keys()
    assert bundle["text/html"] == run.to_html()
    assert bundle["text/plain"] == run.summary()
    assert shown.stdout == shown.stderr == ""


def test_dict_and_brace_arguments_are_not_variable_expanded(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = traced(ip, monkeypatch, "pick({'a': x})")
    assert run.ok
    assert run.request.inputs == ({"a": ip.user_ns["x"]},)


def test_a_failure_inside_the_traced_code_is_recorded_not_reported_as_a_magic_error(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, shown = run_magic(ip, monkeypatch, "boom(x)")
    assert shown.stderr == ""
    run = ip.user_ns["_trace"]
    assert not run.ok and run.error is not None and run.error.type == "ValueError"
    (explorer,) = shown.final
    assert isinstance(explorer, TraceExplorer) and explorer.run is run


def test_o_stores_the_run_under_that_name_only(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    before = set(ip.user_ns)
    run = traced(ip, monkeypatch, "-o first relu_fn(x)", name="first")
    assert "_trace" not in ip.user_ns
    assert set(ip.user_ns) - before == {"first", "_trace_explorer"}
    second = traced(ip, monkeypatch, "-osecond relu_fn(x)", name="second")
    assert second is not run


def test_keyword_arguments_become_example_kwarg_inputs(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "masked(input_ids=ids, mask=m)")
    assert run.ok, run.summary()
    assert run.options["example_kwarg_inputs"] == ["input_ids", "mask"]
    assert run.request.kind == "trace" and run.request.target is ip.user_ns["masked"]
    assert run.request.inputs is None
    assert run.request.example_kwarg_inputs == {"input_ids": ip.user_ns["ids"], "mask": ip.user_ns["m"]}
    run = traced(ip, monkeypatch, "add(x=x, y=x2[:2])")
    assert run.ok and run.options["example_kwarg_inputs"] == ["x", "y"]


# -- methods ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["--method encode net.encode(x)", "--method encode net(x)", "net.encode(x)"])
def test_a_module_method_is_traced_with_trace_module(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str
) -> None:
    run = traced(ip, monkeypatch, line)
    assert run.ok, run.summary()
    assert run.request.kind == "trace_module"
    assert run.request.target is ip.user_ns["net"]
    assert run.request.inputs == {"encode": (ip.user_ns["x"],)}
    assert list(run.graphs) == ["encode"]


def test_method_with_check_inputs_and_keyword_inputs(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--check-inputs [(x2,), x3] net.encode(x)")
    assert run.ok and len(run.check.cases) == 2
    assert run.request.options.check_inputs == [{"encode": (ip.user_ns["x2"],)}, {"encode": (ip.user_ns["x3"],)}]
    run = traced(ip, monkeypatch, "--method forward masked(input_ids=ids, mask=m)")
    assert run.ok and run.request.kind == "trace_module"
    assert run.request.example_inputs_is_kwarg is True
    assert run.request.inputs == {"forward": {"input_ids": ip.user_ns["ids"], "mask": ip.user_ns["m"]}}


def test_forward_called_as_a_method_traces_the_module(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--eval net.forward(x)")
    assert run.ok and run.request.kind == "trace" and run.request.target is ip.user_ns["net"]
    assert run.target.kind == "module"


# -- every option ---------------------------------------------------------------------------------------


def test_no_check(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--no-check relu_fn(x)")
    assert run.options["check_trace"] is False and run.check is None
    assert traced(ip, monkeypatch, "relu_fn(x)").options["check_trace"] is True


def test_check_inputs_and_tol(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--check-inputs [(x2,), (x3,)] --tol 1e-3 relu_fn(x)")
    assert run.ok
    assert run.options["check_inputs"] == [["Float(3, 4)"], ["Float(5, 4)"]]
    assert run.request.options.check_inputs == [(ip.user_ns["x2"],), (ip.user_ns["x3"],)]
    assert [c.label for c in run.check.cases] == ["check_inputs[0]", "check_inputs[1]"]
    assert run.options["check_tolerance"] == 1e-3 and run.check.tolerance == 1e-3
    # = glued values, and a list of dicts for keyword calls
    run = traced(ip, monkeypatch, "--tol=0 --check-inputs=[dict(x=x2,y=x2)] add(x=x, y=x2[:2])")
    assert run.options["check_tolerance"] == 0.0
    assert run.request.options.check_inputs == [{"x": ip.user_ns["x2"], "y": ip.user_ns["x2"]}]


def test_non_strict(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    strict = traced(ip, monkeypatch, "returns_a_dict(x)")
    assert strict.options["strict"] is True and not strict.ok
    run = traced(ip, monkeypatch, "--non-strict returns_a_dict(x)")
    assert run.options["strict"] is False and run.request.options.strict is False
    assert run.ok, run.summary()


def test_force_outplace(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--force-outplace relu_fn(x)")
    assert run.options["force_outplace"] is True and run.request.options.force_outplace is True


def test_eval_is_for_this_trace_only(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    net = ip.user_ns["net"]
    assert net.training
    assert nondeterministic(traced(ip, monkeypatch, "--no-check net(x)"))  # dropout in train mode
    run = traced(ip, monkeypatch, "--eval net(x)")
    assert run.options["module_mode"] == "eval"
    assert not nondeterministic(run) and run.ok
    assert net.training and net.drop.training  # back in train mode


def test_train_is_for_this_trace_only(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    net = ip.user_ns["net"].eval()
    assert not nondeterministic(traced(ip, monkeypatch, "net(x)"))
    run = traced(ip, monkeypatch, "--train --no-check net(x)")
    assert run.options["module_mode"] == "train" and nondeterministic(run)
    assert not net.training and not net.drop.training


def test_no_grad(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    run = traced(ip, monkeypatch, "--no-grad --eval net(x)")
    assert run.options["no_grad"] is True and run.request.options.no_grad is True
    assert torch.is_grad_enabled()


def test_target_device(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    ip.user_ns["on_cpu"] = lambda x: x + torch.ones(x.shape[-1], device="cpu")
    here = traced(ip, monkeypatch, "on_cpu(x)")
    assert here.options["target_device"] is None and here.verdict.level == "ok"
    run = traced(ip, monkeypatch, "--target-device cuda on_cpu(x)")
    assert run.options["target_device"] == "cuda" and run.request.options.target_device == "cuda"
    assert run.verdict.level == "warning" and run.verdict.reasons == ['warning: device "cpu" baked into the graph']


def test_probe(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    assert traced(ip, monkeypatch, "relu_fn(x)").probe is None
    run = traced(ip, monkeypatch, "--probe relu_fn(x)")
    assert run.options["probe"] is True and run.probe is not None


def test_quiet_prints_one_line(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    _, shown = run_magic(ip, monkeypatch, "--quiet relu_fn(x)")
    run = ip.user_ns["_trace"]
    assert shown.stdout == run.summary() + "\n"
    assert shown.bundles == [] and shown.objects == [] and shown.stderr == ""
    assert "_trace_explorer" not in ip.user_ns  # nothing on screen to follow


def test_help_documents_every_option(ip: InteractiveShell) -> None:
    with capture_output() as cap:
        ip.run_cell("%trace?")
    text = cap.stdout
    assert "%trace [-o NAME]" in text  # the usage block
    for option in OPTIONS:
        assert option in text, option
    for example in ("%trace model(x)", "%trace --method encode model.encode(x)", "%%trace", "_trace"):
        assert example in text, example


# -- errors of the magic itself ---------------------------------------------------------------------------

LINE_ERRORS = [
    # (line, what the message must name, the example it gives)
    ("relu_fn(x", "is not a Python expression", "%trace model(x)"),
    ("", "missing CALL", "%trace model(x)"),
    ("relu_fn", "single call expression", "%trace model(x)"),
    ("relu_fn(x) + 1", "single call expression", "%trace model(x)"),
    ("modle(x)", "unknown name in the callee 'modle'", "%trace model(x)"),
    ("relu_fn(undefined_x)", "unknown name in argument 'undefined_x'", "%trace model(x)"),
    ("add(x=x, y=nope)", "unknown name in keyword argument y 'nope'", "%trace model(x)"),
    ("relu_fn(x[99])", "IndexError", "%trace model(x)"),
    ("x(x)", "'x' is a Tensor, which cannot be called", "%trace model(x)"),
    ("--tol abc relu_fn(x)", "--tol needs a finite number >= 0", "%trace --tol 1e-4 model(x)"),
    ("--tol -1 relu_fn(x)", "got '-1'", "%trace --tol 1e-4 model(x)"),
    ("--tol nan relu_fn(x)", "got 'nan'", "%trace --tol 1e-4 model(x)"),
    ("--tol", "option --tol needs a value", "%trace --tol 1e-4 model(x)"),
    (
        "--target-device gpu relu_fn(x)",
        "--target-device needs a device name such as 'cuda', 'cuda:0' or 'cpu', got 'gpu'",
        "%trace --target-device cuda model(x)",
    ),
    ("--check-inputs x relu_fn(x)", "must evaluate to a list", "%trace --check-inputs [(x2,), (x3,)] model(x)"),
    ("--check-inputs (x2,) relu_fn(x)", "got a tuple", "%trace --check-inputs [(x2,), (x3,)] model(x)"),
    ("--check-inputs [1] relu_fn(x)", "item 0 is a int", "%trace --check-inputs [(x2,), (x3,)] model(x)"),
    ("--check-inputs [(x2,)] add(x=x, y=x)", "must be a dict", "%trace --check-inputs [dict(x=x2), dict(x=x3)]"),
    ("--check-inputs [(nope,)] relu_fn(x)", "unknown name in --check-inputs", "%trace --check-inputs [(x2,)"),
    ("--check-inputs [(x2,) relu_fn(x)", "--check-inputs has an unclosed bracket", "%trace --check-inputs [(x2,)"),
    ("--check-inputs [(x2,)]] relu_fn(x)", "is not a Python expression", "%trace --check-inputs [(x2,)"),
    ("--eval --train net(x)", "--eval and --train contradict", "%trace --eval model(x)"),
    ("--static --quiet net(x)", "--static and --quiet contradict", "%trace --static model(x)"),
    ("--bogus net(x)", "unknown option '--bogus'", "%trace --no-check model(x)"),
    ("--no net(x)", "unknown option '--no'", "%trace --no-check model(x)"),
    ("--eval=1 net(x)", "option --eval takes no value", "%trace --eval model(x)"),
    ("-o 1x net(x)", "-o needs a Python variable name", "%trace -o run model(x)"),
    ("-o", "option -o needs a value", "%trace -o run model(x)"),
    ("add(x, y=x)", "mixes positional and keyword arguments", "%trace model(input_ids=ids, mask=m)"),
    ("add(*xs)", "unpacks arguments", "%trace f(x, y)"),
    ("add(**{'x': x, 'y': x})", "unpacks arguments", "%trace f(x, y)"),
    ("--method decode net.encode(x)", "CALL calls 'net.encode' (method 'encode')", "%trace --method encode"),
    ("--method nothere net(x)", "Net has no method 'nothere'", "%trace --method encode model.encode(x)"),
    ("--method encode relu_fn(x)", "needs CALL to call an nn.Module", "%trace --method encode model.encode(x)"),
    ("--method 2 net(x)", "--method needs a method name", "%trace --method encode model.encode(x)"),
]


@pytest.mark.parametrize(("line", "problem", "example"), LINE_ERRORS, ids=[e[0] or "empty" for e in LINE_ERRORS])
def test_a_magic_error_is_one_line_and_changes_nothing(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, problem: str, example: str
) -> None:
    previous = traced(ip, monkeypatch, "relu_fn(x)")
    before = dict(ip.user_ns)
    training = ip.user_ns["net"].training
    result, shown = run_magic(ip, monkeypatch, line)
    assert result is None
    message = shown.usage_error
    assert "\n" not in message, message
    assert message.startswith("%trace: ") and problem in message and f"Example: {example}" in message, message
    assert "Traceback" not in message
    assert shown.stdout == shown.stderr == "" and shown.bundles == [] and shown.objects == []
    assert ip.user_ns["_trace"] is previous
    assert ip.user_ns == before
    assert ip.user_ns["net"].training == training


CELL_ERRORS = [
    # (first line, body, problem, example)
    ("relu_fn(x)", "relu_fn(x)\n", "%%trace takes only options on its first line", "%%trace (newline)"),
    ("--tol abc", "relu_fn(x)\n", "--tol needs a finite number", "%trace --tol 1e-4 model(x)"),
    ("", "def h(x):\n    return x.relu(\nh(x)\n", "syntax error on line 3 of the cell", "%%trace (newline)"),
    ("", "def h(x):\n    return x\ny = h(x)\n", "last line of a %%trace cell must be the call", "%%trace (newline)"),
    ("", "def h(x):\n    return x\nh\n", "last line of a %%trace cell must be the call", "%%trace (newline)"),
    ("", "\n", "the cell has no code", "%%trace (newline)"),
    ("", "def h(x):\n    return x\nh(*xs)\n", "unpacks arguments", "%trace f(x, y)"),
    ("", "def h(x):\n    return x\nh(nope)\n", "unknown name in argument 'nope'", "%trace model(x)"),
]


@pytest.mark.parametrize(("line", "body", "problem", "example"), CELL_ERRORS)
def test_a_cell_magic_error_is_one_line_and_changes_nothing(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, body: str, problem: str, example: str
) -> None:
    previous = traced(ip, monkeypatch, "relu_fn(x)")
    ip.user_ns.pop("h", None)
    _, shown = run_magic(ip, monkeypatch, line, body)
    message = shown.usage_error
    assert "\n" not in message and message.startswith("%%trace: "), message
    assert problem in message and f"Example: {example}" in message, message
    assert shown.stdout == shown.stderr == "" and shown.bundles == []
    assert ip.user_ns["_trace"] is previous
    # a bad call is found before anything runs, so the cell's definitions did not run; an unknown name in the call
    # is found only once they ran (the name could have been defined by the cell)
    assert ("h" in ip.user_ns) == ("nope" in body)


# -- the command line ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "words", "call"),
    [
        ("model(x)", [], "model(x)"),
        (
            "--check-inputs [(x2,), (x3,)] --tol 1e-4 -o run model(a, b)",
            ["--check-inputs=[(x2,), (x3,)]", "--tol=1e-4", "-orun"],
            "model(a, b)",
        ),
        ("--tol=1e-4 --eval  model( x ) ", ["--tol=1e-4", "--eval"], "model( x )"),
        ("--check-inputs {'a': ' b '} f(x)", ["--check-inputs={'a': ' b '}"], "f(x)"),
        ("--tol -1 f(x)", ["--tol=-1"], "f(x)"),
        ("--eval -- f(x)", ["--eval"], "f(x)"),
        ("--tol", ["--tol"], ""),
        # quoted values, as IPython users write values with blanks: read by IPython's shell-like rules
        ("--check-inputs '[(-x2, x3)]' f(x)", ["--check-inputs=[(-x2, x3)]"], "f(x)"),
        ('--tol "1e-4" -o "run" f(x)', ["--tol=1e-4", "-orun"], "f(x)"),
        (
            "--check-inputs='[(x2,)]' --method 'encode' m.encode(x)",
            ["--check-inputs=[(x2,)]", "--method=encode"],
            "m.encode(x)",
        ),
        ("--check-inputs [(' a b ',)] f(x)", ["--check-inputs=[(' a b ',)]"], "f(x)"),
    ],
)
def test_split_line(line: str, words: list[str], call: str) -> None:
    from jupyter_tracejit.core.registry import backend
    from jupyter_tracejit.magic_line import grammar_of

    assert magic.split_line(line, grammar_of(backend("trace"))) == (words, call)


@pytest.mark.parametrize("quote", ["'", '"', ""])
def test_quoted_and_unquoted_option_values_trace_alike(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, quote: str
) -> None:
    run = traced(
        ip, monkeypatch, f"--check-inputs {quote}[(-torch.ones(3, 4),)]{quote} --tol {quote}1e-3{quote} relu_fn(x)"
    )
    assert run.options["check_inputs"] == [["Float(3, 4)"]] and run.options["check_tolerance"] == 1e-3


def test_load_ext_registers_line_and_cell_magics(ip: InteractiveShell) -> None:
    assert ip.find_line_magic("trace") is not None
    assert ip.find_cell_magic("trace") is not None
