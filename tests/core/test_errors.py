"""Failures as data: each hint pattern recognises the text torch really raises (triggered here with
torch.jit.trace), outputs are named in words, the location is the user's line (never torch's or this package's),
torch's C++ trailer is cut, and misuse of the API is an ArgumentError."""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import jupyter_tracejit as tj
from jupyter_tracejit.core.errors import (
    _HINTS,
    TraceError,
    argument_error,
    describe_returned,
    error_from_exception,
    hint_for,
    user_location,
)
from jupyter_tracejit.core.inputs import make_tuple

from ..models import LinearWithEncode, line_of
from .oracle import torch_exception

HERE = __file__


def torch_raises(fn: Any, *args: Any, **kwargs: Any) -> BaseException:
    """The exception plain torch.jit.trace raises for this call."""
    e = torch_exception(fn, *args, **kwargs)
    assert e is not None, "torch.jit.trace did not raise"
    return e


def torch_warning_raised(fn: Any, *args: Any, text: str) -> BaseException:
    """The warning plain torch.jit.trace emits for this call, raised as an exception (as under ``-W error``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", message=text)
        try:
            torch.jit.trace(fn, *args)
        except Warning as w:
            return w
    raise AssertionError(f"torch.jit.trace did not warn {text!r}")


def scripted_linear() -> torch.jit.ScriptModule:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit.script is deprecated in torch 2.13, and still works
        return torch.jit.script(nn.Linear(3, 3))


@dataclasses.dataclass
class ModelOutput:
    logits: torch.Tensor


def kw(x, mask):
    return x * mask


CONSTANT = torch.ones(3, requires_grad=True)
x3 = torch.rand(3)


def hooked_linear() -> nn.Module:
    m = nn.Linear(3, 3)
    m.register_full_backward_hook(lambda *_: None)
    return m


TRIGGERS = [
    pytest.param(lambda: torch_raises(lambda x: {"y": x}, (x3,)), "dict_output", id="dict-output"),
    pytest.param(lambda: torch_raises(lambda x: ModelOutput(x), (x3,)), "output_type", id="dataclass-output"),
    pytest.param(lambda: torch_raises(lambda x: 3, (x3,)), "output_type", id="int-output"),
    pytest.param(lambda: torch_raises(lambda x: [{"a": x}], (x3,)), "output_type", id="list-of-dicts-output"),
    pytest.param(lambda: torch_raises(lambda x: None, (x3,)), "output_type", id="none-output"),
    pytest.param(lambda: torch_raises(lambda x, s: x, (x3, "s")), "input_type", id="str-input"),
    pytest.param(lambda: torch_raises(lambda x, n: x, (x3, 2)), "input_type", id="int-input"),
    pytest.param(lambda: torch_raises(lambda x: x * CONSTANT, (x3,)), "grad_constant", id="grad-constant"),
    pytest.param(lambda: torch_raises(LinearWithEncode(3).encode, (x3,)), "bound_method", id="bound-method"),
    pytest.param(
        lambda: torch_raises(kw, example_kwarg_inputs={"ids": x3, "mask": x3}), "kwarg_names", id="unexpected-kwarg"
    ),
    pytest.param(lambda: torch_raises(kw, example_kwarg_inputs={"x": x3}), "kwarg_names", id="missing-kwarg"),
    pytest.param(
        lambda: torch_raises(nn.Linear(3, 3), example_kwarg_inputs={"inp": x3}), "kwarg_names", id="module-kwarg"
    ),
    pytest.param(lambda: torch_raises(nn.Linear(4, 2), (x3,)), "shape_mismatch", id="mat1-mat2"),
    pytest.param(lambda: torch_raises(lambda x: x.view(2, 2), (x3,)), "shape_mismatch", id="view"),
    pytest.param(lambda: torch_raises(lambda x: x + torch.rand(4), (x3,)), "shape_mismatch", id="broadcast"),
    # needs two real devices: torch's text from c10 (TORCH_CHECK in TensorIterator / checkSameDevice)
    pytest.param(
        lambda: RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
            "(when checking argument for argument mat1 in method wrapper_CUDA_addmm)"
        ),
        "device_mismatch",
        id="device",
    ),
    pytest.param(
        lambda: RuntimeError("size mismatch for fc.weight: copying a param with shape torch.Size([2, 3])"),
        "shape_mismatch",
        id="size-mismatch",
    ),
    pytest.param(lambda: torch_raises(hooked_linear(), (x3,)), "backward_hooks", id="backward-hooks"),
    # torch warns (does not raise) when given a ScriptModule; its text raised as under -W error
    pytest.param(
        lambda: torch_warning_raised(scripted_linear(), (x3,), text="The input to trace is already a ScriptModule"),
        "already_script",
        id="script",
    ),
]


@pytest.mark.parametrize(("trigger", "tag"), TRIGGERS)
def test_hint_for_recognises_torchs_own_text(trigger, tag: str) -> None:
    e = trigger()
    found, hint = hint_for(type(e).__name__, str(e))
    assert found == tag
    assert hint in {h for _, t, h in _HINTS if t == tag}


def test_every_hint_pattern_is_exercised_above() -> None:
    assert {tag for _, tag, _ in _HINTS} == {p.values[1] for p in TRIGGERS}


def test_the_first_matching_pattern_wins() -> None:
    # torch's text for a dataclass output also says "Only tensors and (possibly nested) tuples ... inputs or outputs":
    # the specific output hint is given, not the input one
    e = torch_raises(lambda x: ModelOutput(x), (x3,))
    tag, hint = hint_for("RuntimeError", str(e))
    assert tag == "output_type" and hint.startswith("The traced code returns an object the tracer cannot represent")


def test_an_unknown_failure_has_no_tag_or_hint() -> None:
    assert hint_for("ValueError", "boom in user code") == ("", "")


def calls_a_missing_method(x):
    return SCRIPTED.missing(x)


def hooks_a_scripted_module(x):
    SCRIPTED.register_forward_hook(lambda *args: None)
    return x


SCRIPTED = scripted_linear()


@pytest.mark.parametrize(
    ("fn", "text"),
    [
        (calls_a_missing_method, "'RecursiveScriptModule' object has no attribute 'missing'"),
        (hooks_a_scripted_module, "register_forward_hook is not supported on ScriptModules"),
    ],
    ids=["missing-attribute", "unsupported-method"],
)
def test_errors_about_a_scripted_submodule_are_not_already_script(fn: Any, text: str) -> None:
    e = torch_raises(fn, (x3,))
    assert str(e) == text
    assert hint_for(type(e).__name__, str(e))[0] != "already_script"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (None, "None"),
        (3, "an int"),
        (2.5, "a float"),
        ("s", "a str"),
        (torch.ones(1), "a tensor"),
        (nn.Parameter(torch.ones(1)), "a tensor"),
        ({"a": 1}, "a dict"),
        ([], "a list"),
        ((), "a tuple"),
        ([{"boxes": 1}, {"boxes": 2}], "a list of dicts"),
        ((torch.ones(1), None), "a tuple of tensors and None"),
        ([1, 2.0, 3], "a list of ints and floats"),
        ([[1], (2,)], "a list of lists and tuples"),
        (ModelOutput(torch.ones(1)), "a ModelOutput"),
        # Hugging Face's ModelOutput is an OrderedDict subclass: named by its class, not "a dict"
        (type("CausalLMOutput", (collections.OrderedDict,), {})(logits=1), "a CausalLMOutput"),
        (collections.OrderedDict(a=1), "a dict"),
        (LinearWithEncode(), "a LinearWithEncode"),
        (object(), "an object"),
    ],
)
def test_describe_returned(value: Any, words: str) -> None:
    assert describe_returned(value) == words


# -- where: the user's line ------------------------------------------------------------------------------------


def raises_here(x):
    raise ValueError("boom in user code")  # raises here


def interpolates(x):
    return F.interpolate(x, scale_factor=2)  # torch raises inside


def packs(x):
    return make_tuple(x)  # the package raises inside


def test_user_location_is_the_raising_line_of_traced_code() -> None:
    e = torch_raises(raises_here, (x3,))
    line = line_of(raises_here, "# raises here")
    assert user_location(e) == (HERE, line, 'raise ValueError("boom in user code")  # raises here')


def test_user_location_skips_torchs_frames() -> None:
    e = torch_raises(interpolates, (x3,))
    frames = []
    tb = e.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert frames[-1].endswith("torch/nn/functional.py")  # torch raised it
    assert user_location(e)[:2] == (HERE, line_of(interpolates, "# torch raises inside"))


def test_user_location_skips_this_packages_frames() -> None:
    try:
        packs(3)
    except TypeError as e:
        assert e.__traceback__ is not None
        assert user_location(e)[:2] == (HERE, line_of(packs, "# the package raises inside"))
    else:
        raise AssertionError("make_tuple(3) did not raise")


def test_an_exception_never_raised_has_no_location() -> None:
    assert user_location(ValueError("never raised")) == ("", 0, "")


# -- the error of an exception ----------------------------------------------------------------------------------

#: what torch raises with TORCH_SHOW_CPP_STACKTRACES=1 (copied from torch 2.13, shortened)
WITH_CPP_TRAILER = (
    "shape '[2, 2]' is invalid for input of size 3\n"
    "Exception raised from infer_size_impl at /__w/pytorch/pytorch/aten/src/ATen/InferSize.h:99 "
    "(most recent call first):\n"
    "C++ CapturedTraceback:\n"
    "#4 std::_Function_handler<...>::_M_invoke(std::_Any_data const&) from Logging.cpp:0\n"
    "#5 c10::Error::Error(c10::SourceLocation, std::string) from ??:0\n"
)


def test_error_from_exception_cuts_torchs_cpp_trailer() -> None:
    err = error_from_exception(RuntimeError(WITH_CPP_TRAILER))
    assert err.message == "shape '[2, 2]' is invalid for input of size 3"
    assert err.tag == "shape_mismatch"
    assert "c10::Error" in err.traceback  # the full text stays in the traceback


#: run with torch's C++ stack traces switched on (read once, at import: so in a fresh interpreter)
REAL_TRAILER = """
import json, warnings
import torch
from jupyter_tracejit.core.errors import error_from_exception
warnings.simplefilter("ignore")
try:
    torch.jit.trace(lambda x: x.view(2, 2), (torch.rand(3),))
except RuntimeError as e:
    err = error_from_exception(e)
    print(json.dumps({"raw": str(e), "message": err.message, "tag": err.tag, "traceback": err.traceback}))
"""


def test_error_from_exception_cuts_the_trailer_torch_really_appends() -> None:
    env = {**os.environ, "TORCH_SHOW_CPP_STACKTRACES": "1", "TORCH_DISABLE_ADDR2LINE": "1"}
    done = subprocess.run([sys.executable, "-c", REAL_TRAILER], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["message"] == "shape '[2, 2]' is invalid for input of size 3"
    assert out["tag"] == "shape_mismatch"
    if "\nException raised from " not in out["raw"]:
        pytest.skip("this torch does not append its C++ stack to the message here: nothing to cut")
    assert "C++ CapturedTraceback" in out["raw"]
    assert "C++ CapturedTraceback" in out["traceback"]


def test_error_from_exception_of_a_real_failure() -> None:
    e = torch_raises(raises_here, (x3,))
    err = error_from_exception(e, phase="check")
    assert (err.type, err.message, err.phase, err.tag, err.hint) == (
        "ValueError",
        "boom in user code",
        "check",
        "",
        "",
    )
    assert (err.file, err.line) == (HERE, line_of(raises_here, "# raises here"))
    assert err.code.startswith('raise ValueError("boom in user code")')
    assert err.traceback.startswith("Traceback (most recent call last):") and "raises_here" in err.traceback
    assert str(err) == f"ValueError: boom in user code ({HERE}:{err.line})"


def test_an_empty_message_is_the_type_name() -> None:
    assert error_from_exception(KeyboardInterrupt()).message == "KeyboardInterrupt"
    assert error_from_exception(RuntimeError("   \n")).message == "RuntimeError"


@pytest.mark.parametrize(
    ("returned", "opening"),
    [
        (None, "The traced code returns None. "),
        ([{"a": 1}], "The traced code returns a list of dicts. "),
        (ModelOutput(torch.ones(1)), "The traced code returns a ModelOutput. "),
    ],
)
def test_what_was_returned_opens_an_output_hint(returned: Any, opening: str) -> None:
    e = torch_raises(lambda x: ModelOutput(x), (x3,))
    plain = error_from_exception(e)
    named = error_from_exception(e, returned=returned)
    assert named.hint == opening + plain.hint


def test_what_was_returned_is_not_named_for_other_failures() -> None:
    e = torch_raises(lambda x: {"y": x}, (x3,))
    assert error_from_exception(e, returned={"y": 1}).hint == error_from_exception(e).hint


def test_argument_error() -> None:
    err = argument_error("tj.trace needs a function", "Pass the model.")
    assert err == TraceError(
        type="ArgumentError",
        message="tj.trace needs a function",
        phase="arguments",
        tag="bad_argument",
        hint="Pass the model.",
    )
    assert argument_error("m", "h", tag="already_script").tag == "already_script"
    assert str(err) == "ArgumentError: tj.trace needs a function\nHint: Pass the model."


def test_trace_error_json_round_trip() -> None:
    err = error_from_exception(torch_raises(lambda x: {"y": x}, (x3,)))
    assert TraceError.from_json(err.to_json()) == err


class EncoderDecoderCache:
    """Stands for transformers' cache class (what a Hugging Face model returns when use_cache is on)."""


def test_an_output_holding_a_cache_names_use_cache_not_return_dict() -> None:
    """T5 with return_dict=False still returns its cache: the hint said "pass return_dict=False" again."""

    class WithCache(nn.Module):
        def forward(self, x):
            return x * 2, EncoderDecoderCache()

    err = tj.trace(WithCache(), (x3,)).error
    assert err is not None and err.tag == "output_type"
    assert err.hint.startswith("The traced code returns a tuple of tensors and EncoderDecoderCaches. ")
    assert "use_cache=False" in err.hint and "return_dict=False" in err.hint  # (named as what did not help)
    assert "pass return_dict=False where" not in err.hint


def test_a_real_t5_returning_its_cache_gets_the_use_cache_hint() -> None:
    transformers = pytest.importorskip("transformers")
    config = transformers.T5Config(
        d_model=16, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=2, d_kv=8, vocab_size=50
    )

    class T5Tuple(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.t5 = transformers.T5Model(config).eval()

        def forward(self, ids, decoder_ids):
            return self.t5(input_ids=ids, decoder_input_ids=decoder_ids, return_dict=False)

    ids = torch.randint(0, 50, (1, 4))
    err = tj.trace(T5Tuple().eval(), (ids, ids)).error
    assert err is not None and "EncoderDecoderCache" in err.hint and "use_cache=False" in err.hint
    # set after building, the config does not reach T5's decoder: the hint says to pass it to the call
    assert "pass use_cache=False in the call" in err.hint and "does not reach every part" in err.hint


def test_an_exception_inside_an_installed_library_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "site-packages" / "fakelib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("def forward(x):\n    raise ValueError('bad config')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
    import fakelib

    err = tj.trace(lambda x: fakelib.forward(x), (x3,)).error
    assert err is not None and err.file == str(lib / "__init__.py")
    assert err.hint.startswith("The exception was raised inside fakelib's code, not yours")
    # a library whose name ends in s: transformers' code
    assert "inside transformers' code" in error_from_exception(_raised_in("transformers")).hint
    # the user's own code keeps the plain hint
    assert tj.trace(lambda x: x.no_such_method(), (x3,)).error.hint.startswith("Your code raised")


def _raised_in(package: str) -> BaseException:
    """An exception whose innermost frame is a file of the installed ``package``."""
    code = compile("raise RuntimeError('inside')", f"/env/lib/python3.11/site-packages/{package}/x.py", "exec")
    try:
        exec(code)
    except RuntimeError as e:
        return e
    raise AssertionError("did not raise")


def test_a_library_exception_hint_names_what_ran_the_model() -> None:
    exported = error_from_exception(_raised_in("transformers"), phase="export").hint
    assert "inside transformers' code" in exported and "while torch.export ran the model" in exported
    assert "torch.jit.trace" not in exported
    assert "while torch.jit.trace ran the model" in error_from_exception(_raised_in("transformers")).hint
    # our own failure is not the library's fault, whatever file it ended in
    assert error_from_exception(_raised_in("transformers"), phase="internal").hint == ""


def test_a_frame_of_generated_code_is_not_the_users_line() -> None:
    try:
        exec(compile("(lambda: 1 / 0)()", "<string>", "exec"))
    except ZeroDivisionError as e:
        err = error_from_exception(e)
    assert err.file == __file__ and "exec(compile(" in err.code
