"""core/options.py: the one definition of the trace options, their validation wording and their command-line
spelling, and that the API's signatures cannot drift from it."""

from __future__ import annotations

import argparse
import inspect
import math

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.options import (
    COMMAND_LINE,
    LIVE,
    SPECS,
    CommandLineError,
    TraceOptions,
    add_command_line,
    command_line_spelling,
    from_command_line,
    parse_tolerance,
)

BAD_VALUES = {
    "check_trace": "yes",
    "check_inputs": torch.rand(2),
    "check_tolerance": -1.0,
    "strict": 1,
    "force_outplace": None,
    "module_mode": "inference",
    "no_grad": "False",
    "probe": 0,
    "probe_dims": [1],
}


def test_the_dataclass_the_specs_and_the_api_signatures_agree():
    assert TraceOptions.names() == tuple(SPECS)
    assert TraceOptions().as_dict() == {name: spec.default for name, spec in SPECS.items()}
    for fn, extra in ((tj.trace, {"example_kwarg_inputs"}), (tj.trace_module, {"example_inputs_is_kwarg"})):
        keywords = {p.name: p.default for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY}
        assert set(keywords) - extra == set(SPECS), fn
        assert all(keywords[name] == SPECS[name].default for name in SPECS), fn
    assert set(LIVE) <= set(SPECS)


@pytest.mark.parametrize("name", list(BAD_VALUES))
def test_every_option_refuses_a_bad_value_with_what_it_expects_and_a_fix(name):
    assert SPECS[name].problem(SPECS[name].default) is None
    problem = TraceOptions(**{name: BAD_VALUES[name]}).problem()
    assert problem is not None and problem.name == name
    assert problem.message.startswith(f"{name} must be {SPECS[name].expects}, got ")
    assert problem.hint


def test_from_kwargs_and_replace_refuse_unknown_names_naming_the_known_ones():
    with pytest.raises(TypeError, match=r"unknown trace option\(s\): strictness; known: .*check_tolerance"):
        TraceOptions.from_kwargs(strictness=True)
    changed = TraceOptions().replace(strict=False, check_tolerance=1e-3)
    assert (changed.strict, changed.check_tolerance, changed.check_trace) == (False, 1e-3, True)
    with pytest.raises(TypeError, match="unknown trace option"):
        TraceOptions().replace(tol=1)


def test_to_json_describes_live_values_and_records_bad_ones_by_their_repr():
    options = TraceOptions(check_inputs=[(torch.rand(2, 3),), {"x": torch.rand(1)}], probe_dims={0: 1, "mask": [0, 2]})
    data = options.to_json()
    assert data["check_inputs"] == [["Float(2, 3)"], ["x=Float(1)"]]
    assert data["probe_dims"] == {"0": [1], "mask": [0, 2]}
    assert data["check_tolerance"] == 1e-5 and data["module_mode"] == "as_is"
    bad = TraceOptions(check_tolerance=math.inf, strict="no", probe_dims=[1]).to_json()
    assert (bad["check_tolerance"], bad["strict"], bad["probe_dims"]) == ("inf", "'no'", "[1]")


def parse(*argv: str) -> tuple[dict, str | None]:
    parser = argparse.ArgumentParser()
    add_command_line(parser.add_argument)
    return from_command_line(parser.parse_args(list(argv)))


def test_the_command_line_sets_only_what_is_given():
    assert parse() == ({}, None)
    given, expr = parse(
        "--no-check", "--tol", "1e-3", "--non-strict", "--force-outplace", "--eval", "--no-grad", "--probe"
    )
    assert given == {
        "check_trace": False,
        "check_tolerance": 1e-3,
        "strict": False,
        "force_outplace": True,
        "module_mode": "eval",
        "no_grad": True,
        "probe": True,
    }
    assert expr is None
    assert parse("--check-inputs", "[(x, y)]") == ({}, "[(x, y)]")  # evaluated by the front end, not here
    assert {f.flag for f in COMMAND_LINE} >= {"--tol", "--check-inputs", "--eval", "--train"}


@pytest.mark.parametrize("text", ["-1", "nan", "inf", "abc", ""])
def test_a_bad_tolerance_names_the_flag_what_it_needs_and_what_it_got(text):
    with pytest.raises(CommandLineError) as err:
        parse_tolerance(text)
    assert err.value.flag == "--tol"
    assert str(err.value) == f"--tol needs a finite number >= 0 (torch's check_tolerance, default 1e-5), got {text!r}"


def test_contradicting_modes_are_refused():
    with pytest.raises(CommandLineError, match="--eval and --train contradict each other"):
        parse("--eval", "--train")


def test_advice_is_spelled_for_the_command_line():
    assert command_line_spelling("Pass strict=False, or check_trace=False.") == "Pass --non-strict, or --no-check."
    assert command_line_spelling("module_mode='eval' and no_grad=True") == "--eval and --no-grad"
    assert command_line_spelling("check_tolerance=1e-3, check_inputs=[(x,)]") == "--tol 1e-3, --check-inputs [(x,)]"
    assert command_line_spelling("strict=Falsey stays") == "strict=Falsey stays"
