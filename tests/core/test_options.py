"""The options, defined once: TraceOptions' defaults, validation and JSON come from SPECS; the command line (the
%trace magic and the tracejit command) parses to the same options; and the signatures of tj.trace /
tj.trace_module cannot drift from SPECS."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import math

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.check import DEFAULT_TOLERANCE, DEFAULT_TOLERANCE_TEXT
from jupyter_tracejit.core.options import MODULE_MODES, CommandLineError, OptionProblem
from jupyter_tracejit.core.torchscript.options import (
    COMMAND_LINE,
    LIVE,
    SPECS,
    TRACE_TABLE,
    TraceOptions,
    parse_tolerance,
)

add_command_line = TRACE_TABLE.add_command_line
command_line_spelling = TRACE_TABLE.command_line_spelling

# -- TraceOptions --------------------------------------------------------------------------------------------


def test_defaults_are_the_specs_defaults_field_for_field() -> None:
    options = TraceOptions()
    assert TraceOptions.names() == tuple(SPECS)
    assert options.as_dict() == {name: spec.default for name, spec in SPECS.items()}
    assert options.check_tolerance == DEFAULT_TOLERANCE == 1e-5
    # one definition, torch-free, that must stay torch's own default
    assert inspect.signature(torch.jit.trace).parameters["check_tolerance"].default == DEFAULT_TOLERANCE
    assert float(DEFAULT_TOLERANCE_TEXT) == DEFAULT_TOLERANCE
    assert options.first_problem() is None


def test_every_live_option_is_an_option() -> None:
    assert set(LIVE) <= set(SPECS)
    assert len(set(LIVE)) == len(LIVE)


def test_from_kwargs_refuses_unknown_names_and_names_the_known_ones() -> None:
    with pytest.raises(TypeError) as raised:
        TraceOptions.from_kwargs(strict=False, stict=False, tol=1e-3)
    message = str(raised.value)
    assert message == f"unknown trace option(s): stict, tol; known: {', '.join(sorted(SPECS))}"
    assert TraceOptions.from_kwargs(strict=False, probe=True) == TraceOptions(strict=False, probe=True)


def test_replace_returns_a_changed_copy_and_refuses_unknown_names() -> None:
    options = TraceOptions(check_tolerance=1e-3)
    changed = options.replace(strict=False, module_mode="eval")
    assert changed == TraceOptions(check_tolerance=1e-3, strict=False, module_mode="eval")
    assert options == TraceOptions(check_tolerance=1e-3)  # frozen: the original is untouched
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.strict = False  # type: ignore[misc]
    with pytest.raises(TypeError, match="unknown trace option"):
        options.replace(no_check=True)


#: one bad value per option, and how its message shows it
BAD_VALUES = [
    ("check_trace", "yes", "'yes'"),
    ("check_trace", 1, "1"),
    ("check_inputs", {"x": 1}, "{'x': 1}"),
    ("check_inputs", "x2", "'x2'"),
    ("check_tolerance", -1, "-1"),
    ("check_tolerance", math.nan, "nan"),
    ("check_tolerance", math.inf, "inf"),
    ("check_tolerance", True, "True"),
    ("check_tolerance", "1e-3", "'1e-3'"),
    ("strict", None, "None"),
    ("force_outplace", "False", "'False'"),
    ("module_mode", "inference", "'inference'"),
    ("module_mode", "Eval", "'Eval'"),
    ("no_grad", 0, "0"),
    ("probe", [True], "[True]"),
    ("probe_dims", [0], "[0]"),
    ("probe_dims", {0: "1"}, "{0: '1'}"),
    ("probe_dims", {True: [1]}, "{True: [1]}"),
    ("probe_dims", {0: [1.5]}, "{0: [1.5]}"),
    ("probe_dims", {0: [True]}, "{0: [True]}"),
    ("probe_dims", {1.0: [0]}, "{1.0: [0]}"),
    ("target_device", "gpu", "'gpu'"),
    ("target_device", "cuda:x", "'cuda:x'"),
    ("target_device", torch.device("cuda"), "device(type='cuda')"),
]


@pytest.mark.parametrize(("name", "value", "shown"), BAD_VALUES)
def test_a_bad_value_is_a_problem_worded_from_its_spec(name: str, value: object, shown: str) -> None:
    problem = TraceOptions(**{name: value}).first_problem()
    spec = SPECS[name]
    assert problem == OptionProblem(name, value, spec.expects, spec.hint)
    assert problem.message == f"{name} must be {spec.expects}, got {shown}"
    assert spec.problem(value) == problem


def test_every_spec_has_a_bad_value_above() -> None:
    assert {name for name, _, _ in BAD_VALUES} == set(SPECS)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("check_inputs", []),
        ("check_inputs", ((torch.rand(2),),)),
        ("check_tolerance", 0),
        ("check_tolerance", 1e-3),
        ("check_tolerance", 10),
        *(("module_mode", m) for m in MODULE_MODES),
        ("probe_dims", {0: 1, "mask": [0, -1]}),
        ("probe_dims", {}),
    ],
)
def test_good_values_are_not_problems(name: str, value: object) -> None:
    assert TraceOptions(**{name: value}).first_problem() is None


def test_the_message_of_a_long_value_names_its_type() -> None:
    value = list(range(100))
    assert TraceOptions(check_inputs=tuple(value), probe_dims=value).first_problem().message == (
        "probe_dims must be a dict of {argument index or keyword name: [dims]}, got a list"
    )


def test_the_type_named_for_a_long_value_takes_its_article() -> None:
    assert TraceOptions(strict=10**100).first_problem().message == "strict must be True or False, got an int"


def test_problem_reports_the_first_bad_option_in_field_order() -> None:
    problem = TraceOptions(probe=2, check_trace="no", module_mode="x").first_problem()
    assert problem is not None and problem.name == "check_trace"


def test_to_json_of_the_defaults() -> None:
    assert TraceOptions().to_json() == {
        "check_trace": True,
        "check_inputs": None,
        "check_tolerance": 1e-5,
        "strict": True,
        "force_outplace": False,
        "module_mode": "as_is",
        "no_grad": False,
        "probe": False,
        "probe_dims": None,
        "target_device": None,
    }


def test_to_json_describes_check_inputs_and_normalizes_probe_dims() -> None:
    options = TraceOptions(
        check_inputs=[(torch.rand(4, 3),), (torch.rand(2, 3), 5), {"forward": (torch.zeros(1, dtype=torch.long),)}],
        probe_dims={0: 1, "mask": (0, 2)},
        check_tolerance=1e-3,
    )
    out = options.to_json()
    assert out["check_inputs"] == [["Float(4, 3)"], ["Float(2, 3)", "5"], ["forward=(Long(1),)"]]
    assert out["probe_dims"] == {"0": [1], "mask": [0, 2]}
    assert out["check_tolerance"] == 1e-3
    json.dumps(out, allow_nan=False)  # strict JSON


def test_to_json_records_bad_values_by_their_repr() -> None:
    out = TraceOptions(
        check_tolerance=math.nan, module_mode="inference", check_inputs=torch.ones(2), probe_dims=[0], strict="yes"
    ).to_json()
    assert out["check_tolerance"] == "nan"
    assert out["module_mode"] == "'inference'"
    assert out["check_inputs"] == repr(torch.ones(2))
    assert out["probe_dims"] == "[0]"
    assert out["strict"] == "'yes'"
    json.dumps(out, allow_nan=False)


# -- the signatures of tj.trace / tj.trace_module -----------------------------------------------------------


@pytest.mark.parametrize("api", [tj.trace, tj.trace_module], ids=["trace", "trace_module"])
def test_the_api_keyword_defaults_are_the_specs_defaults(api) -> None:
    params = inspect.signature(api).parameters
    keyword_only = {name for name, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    torch_only = {"example_kwarg_inputs", "example_inputs_is_kwarg"}
    assert keyword_only - torch_only == set(SPECS)
    for name, spec in SPECS.items():
        assert params[name].default == spec.default, name
        assert type(params[name].default) is type(spec.default), name


# -- the command line ----------------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tracejit", exit_on_error=False)
    add_command_line(p.add_argument)
    return p


def parse(*argv: str) -> tuple[dict[str, object], str | None]:
    given, expressions = TRACE_TABLE.from_command_line(parser().parse_args(list(argv)))
    return given, expressions.get("check_inputs")


def test_every_flag_belongs_to_an_option_and_is_declared() -> None:
    assert {f.option for f in COMMAND_LINE} <= set(SPECS)
    help_text = parser().format_help()
    for f in COMMAND_LINE:
        assert f.flag in help_text
    assert len({f.flag for f in COMMAND_LINE}) == len(COMMAND_LINE)


def test_no_flags_set_no_options() -> None:
    assert parse() == ({}, None)


@pytest.mark.parametrize(
    ("argv", "given"),
    [
        (["--no-check"], {"check_trace": False}),
        (["--non-strict"], {"strict": False}),
        (["--force-outplace"], {"force_outplace": True}),
        (["--eval"], {"module_mode": "eval"}),
        (["--train"], {"module_mode": "train"}),
        (["--no-grad"], {"no_grad": True}),
        (["--probe"], {"probe": True}),
        (["--tol", "1e-3"], {"check_tolerance": 1e-3}),
        (["--tol=0"], {"check_tolerance": 0.0}),
        (["--non-strict", "--no-grad", "--tol", "2"], {"strict": False, "no_grad": True, "check_tolerance": 2.0}),
    ],
)
def test_each_flag_sets_its_option(argv: list[str], given: dict[str, object]) -> None:
    options, expr = parse(*argv)
    assert options == given and expr is None
    assert TraceOptions().replace(**options).first_problem() is None


def test_check_inputs_text_is_returned_unevaluated() -> None:
    options, expr = parse("--check-inputs", "[(torch.rand(5, 4),)]")
    assert options == {}
    assert expr == "[(torch.rand(5, 4),)]"


def test_eval_and_train_contradict_each_other() -> None:
    with pytest.raises(CommandLineError) as raised:
        parse("--eval", "--train")
    assert raised.value.flag == "--eval"  # the first of the two: where the contradiction starts
    assert str(raised.value) == (
        "--eval and --train contradict each other (each sets module_mode for this trace); give one"
    )
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize("text", ["-1", "nan", "inf", "-inf", "abc", ""])
def test_a_bad_tolerance_names_the_flag(text: str) -> None:
    with pytest.raises(CommandLineError) as raised:
        parse(f"--tol={text}")
    assert raised.value.flag == "--tol"
    assert str(raised.value) == (
        f"--tol needs a finite number >= 0 (torch's check_tolerance, default 1e-5), got {text!r}"
    )


def test_a_negative_tolerance_given_as_its_own_argument() -> None:
    with pytest.raises(CommandLineError) as raised:
        parse("--tol", "-1")
    assert raised.value.flag == "--tol" and str(raised.value).endswith("got '-1'")


def test_parse_tolerance_names_the_flag_it_is_given() -> None:
    assert parse_tolerance("1e-4") == 1e-4
    with pytest.raises(CommandLineError) as raised:
        parse_tolerance("-0.5", "--check-tolerance")
    assert raised.value.flag == "--check-tolerance"
    assert str(raised.value).startswith("--check-tolerance needs a finite number >= 0")


@pytest.mark.parametrize(
    ("api", "cli"),
    [
        ("Pass strict=False, or return a tuple.", "Pass --non-strict, or return a tuple."),
        ("Pass check_trace=False to run the code once.", "Pass --no-check to run the code once."),
        ("relax it: check_tolerance=1e-3", "relax it: --tol 1e-3"),
        ("Pass check_inputs=[(x2,), (x3,)].", "Pass --check-inputs [(x2,), (x3,)]."),
        ("use module_mode='eval' or module_mode='train'", "use --eval or --train"),
        ("Trace under no_grad=True (or probe=True)", "Trace under --no-grad (or --probe)"),
        ("force_outplace=True", "--force-outplace"),
        # no flag spells these: left as they are
        ("strict=True", "strict=True"),
        ("module_mode='as_is'", "module_mode='as_is'"),
        ("non_strict=False and _force_outplace=True", "non_strict=False and _force_outplace=True"),
        ("strict=Falsey", "strict=Falsey"),
        ("module_mode='evaluate'", "module_mode='evaluate'"),
    ],
)
def test_command_line_spelling(api: str, cli: str) -> None:
    assert command_line_spelling(api) == cli


def test_the_specs_hints_read_well_on_the_command_line() -> None:
    assert command_line_spelling(SPECS["check_trace"].hint) == "Pass check_trace=True or --no-check."
    assert command_line_spelling(SPECS["check_inputs"].hint) == (
        "Pass a list with one tuple per input set, e.g. --check-inputs [(x2,), (x3,)]."
    )
