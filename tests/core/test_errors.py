"""core/errors.py: failures as data, tagged with what they mean and how to fix them, located in the user's code."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn as nn

from jupyter_tracejit.core.errors import (
    TraceError,
    argument_error,
    describe_returned,
    error_from_exception,
    has_mixed_container,
    hint_for,
    user_location,
)


def torch_error(fn, *args, **kwargs) -> Exception:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.jit.trace(fn, *args, **kwargs)
        except Exception as e:
            return e
    raise AssertionError("torch traced it")


class TwoMethods(nn.Module):
    def forward(self, x):
        return x

    def encode(self, x):
        return x * 2


GRAD_CONSTANT = torch.rand(2, requires_grad=True)


@pytest.mark.parametrize(
    ("make", "tag"),
    [
        (lambda: torch_error(lambda x: {"y": x}, (torch.rand(2),)), "dict_output"),
        (lambda: torch_error(lambda x: None, (torch.rand(2),)), "output_type"),
        (lambda: torch_error(lambda x: 3, (torch.rand(2),)), "output_type"),
        (lambda: torch_error(lambda x: x, ("s",)), "input_type"),
        (lambda: torch_error(lambda x: x * GRAD_CONSTANT, (torch.rand(2),)), "grad_constant"),
        (lambda: torch_error(TwoMethods().encode, (torch.rand(2),)), "bound_method"),
        (lambda: torch_error(nn.Linear(2, 2), (torch.rand(3),)), "shape_mismatch"),
        (lambda: torch_error(lambda xs: xs[0], ([torch.rand(2), 3],)), "input_type"),
    ],
)
def test_torchs_real_errors_get_their_tag_and_a_hint(make, tag):
    exc = make()
    assert hint_for(type(exc).__name__, str(exc))[0] == tag
    err = error_from_exception(exc)
    assert err.tag == tag and err.hint and "Exception raised from" not in err.message


def test_unknown_errors_in_the_users_code_get_the_generic_hint_of_their_phase():
    err = error_from_exception(ValueError("bad"), phase="trace")
    assert err.tag == "" and "fix the error at the line shown" in err.hint
    assert error_from_exception(ValueError("bad"), phase="internal").hint == ""


def test_mixed_containers_and_what_was_returned():
    assert has_mixed_container([torch.zeros(1), 3]) and has_mixed_container(({"a": [1, "b"]},))
    assert not has_mixed_container((torch.zeros(1), [torch.zeros(1)])) and not has_mixed_container(3)
    assert describe_returned(None) == "None" and describe_returned(3) == "an int"
    assert describe_returned([{"a": 1}]) == "a list of dicts"
    assert describe_returned((torch.zeros(1), 2)) == "a tuple of tensors and ints"
    exc = torch_error(lambda x: (x, [1, {"a": "b"}]), (torch.rand(2),))
    as_output = error_from_exception(exc, inputs=[(torch.rand(2),)])
    assert as_output.tag == "output_type" and as_output.message.endswith("(in what the traced code returns)")
    as_input = error_from_exception(exc)
    assert as_input.message.endswith("(in the example inputs)")


def raise_here():
    raise RuntimeError("here")  # the user's line


def test_the_users_line_is_found_past_torch_and_package_frames():
    try:
        raise_here()
    except RuntimeError as e:
        file, line, code = user_location(e)
    assert file == __file__ and code == 'raise RuntimeError("here")  # the user\'s line'
    assert line == raise_here.__code__.co_firstlineno + 1


def test_a_torch_message_loses_its_cpp_trailer_and_the_record_round_trips():
    err = error_from_exception(RuntimeError("head\nException raised from foo at bar.cpp:12 (most recent call)"))
    assert err.message == "head" and err.traceback.startswith("RuntimeError: head")  # the details are kept
    assert TraceError.from_json(err.to_json()) == err
    arg = argument_error("x must be y", "Pass y.")
    assert (arg.type, arg.phase, arg.tag) == ("ArgumentError", "arguments", "bad_argument")
    assert str(arg) == "ArgumentError: x must be y\nHint: Pass y."
