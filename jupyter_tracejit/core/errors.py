"""Failures of a trace as data: what broke, where in the user's code, and what to do about it."""

from __future__ import annotations

import collections
import os
import re
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .caller import installed_package
from .jsonio import JsonRecord
from .source import is_torch_file, source_line
from .words import with_article

if TYPE_CHECKING:
    from .options import OptionProblem

# (pattern on "ExceptionType: message", tag, hint). The first match wins.
_HINTS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(r"Encountering a dict at the output of the tracer"),
        "dict_output",
        "The traced code returns a dict, which strict mode rejects. Pass strict=False (the dict's keys are then "
        "frozen into the trace), or return a tuple of tensors.",
    ),
    (
        re.compile(r"(List|Dictionary) inputs to traced functions must have consistent (element )?type"),
        "input_type",
        "An example input is a list or dict that mixes tensors with other values. torch.jit.trace needs every "
        "element of a list or dict input to have one type: pass only tensors in it (e.g. torch.tensor(3) for a "
        "number), or bind the Python values with functools.partial or as module attributes.",
    ),
    (
        re.compile(r"Modules that have backward hooks assigned can't be compiled"),
        "backward_hooks",
        "torch.jit.trace cannot compile a module with backward hooks. Remove them before tracing "
        "(handle.remove() on what register_full_backward_hook returned) and register them again after, or trace a "
        "copy of the model without hooks.",
    ),
    (
        re.compile(r"Tracer cannot infer type of (\S+)"),
        "output_type",
        "The traced code returns an object the tracer cannot represent (a dataclass such as a Hugging Face "
        "ModelOutput, a custom class, or None). Return tensors or tuples of tensors: wrap the model in a small "
        "nn.Module whose forward returns e.g. `out.logits`, or pass return_dict=False where the model supports it.",
    ),
    (
        re.compile(
            r"Only tensors, lists, tuples of tensors, or dictionary of tensors can be output|"
            r"didn't return any values"
        ),
        "output_type",
        "torch.jit.trace can only return tensors and (nested) tuples, lists or dicts of tensors. Return only "
        "tensors, e.g. a tuple of the tensors inside; compute Python values outside the traced function.",
    ),
    (
        re.compile(
            r"Type '.*' cannot be traced|Only tensors or \(possibly nested\) dict or tuples of tensors can be inputs"
        ),
        "input_type",
        "An example input is not a tensor. Pass only tensors (or tuples/lists/dicts of tensors) as inputs; "
        "bind Python values with functools.partial or make them module attributes.",
    ),
    (
        re.compile(r"Cannot insert a Tensor that requires grad as a constant"),
        "grad_constant",
        "The traced code uses a tensor that requires grad but is neither an input nor a registered parameter, "
        "so it would be frozen as a constant. Register it with nn.Parameter / register_buffer on the module, "
        "pass it as an input, or .detach() it if it is truly constant.",
    ),
    (
        re.compile(r"trace doesn't support compiling individual module's functions"),
        "bound_method",
        "torch.jit.trace cannot trace a module's method other than forward. Use "
        "tj.trace_module(module, {'method_name': example_inputs}).",
    ),
    (
        re.compile(
            r"is not in forward\(\) method's arguments|got an unexpected keyword argument|"
            r"missing \d+ required positional argument"
        ),
        "kwarg_names",
        "The keys of the keyword example inputs do not match the function's parameter names. Use exactly the "
        "parameter names of the traced function as keys.",
    ),
    (
        re.compile(r"already a ScriptModule"),
        "already_script",
        "The object is already TorchScript (torch.jit.script or a previous trace): there is nothing to trace. "
        "Trace the original nn.Module, or inspect the scripted module's .graph directly.",
    ),
    (
        re.compile(
            r"size mismatch|shape .* is invalid for input of size|must match the size of tensor|"
            r"mat1 and mat2 shapes cannot be multiplied"
        ),
        "shape_mismatch",
        "A shape does not fit: check the example inputs' shapes against what the model expects.",
    ),
    (
        re.compile(r"Expected all tensors to be on the same device"),
        "device_mismatch",
        "Inputs and parameters live on different devices: move the example inputs to the model's device.",
    ),
)


#: "not known" for :func:`error_from_exception`'s ``returned`` (None is a value that can be returned)
_NOTHING: Any = object()


@dataclass
class TraceError(JsonRecord):
    """Why a trace failed. ``phase`` is ``arguments`` (misuse of our API), ``trace`` or ``check``."""

    type: str
    message: str
    phase: str = "trace"
    #: stable tag of the recognised failure (``dict_output``, ``bound_method``, ...), ``""`` when unknown
    tag: str = ""
    hint: str = ""
    file: str = ""
    line: int = 0
    code: str = ""
    traceback: str = ""

    def __str__(self) -> str:
        where = f" ({self.file}:{self.line})" if self.file else ""
        hint = f"\nHint: {self.hint}" if self.hint else ""
        return f"{self.type}: {self.message}{where}{hint}"


def describe_returned(value: Any) -> str:
    """What a traced function returned, in words: ``None``, ``an int``, ``a list of dicts``, ``a ModelOutput``."""

    def noun(v: Any) -> str:
        if v is None:
            return "None"
        if isinstance(v, dict):
            # a dict subclass is named by its class: a Hugging Face ModelOutput is an OrderedDict, not "a dict"
            return "dict" if type(v) in (dict, collections.OrderedDict) else type(v).__name__
        if isinstance(v, (list, tuple)):
            return type(v).__name__
        name = type(v).__name__
        return "tensor" if name in ("Tensor", "Parameter") else name

    if isinstance(value, (list, tuple)) and value:
        kinds = list(dict.fromkeys(noun(v) for v in value))
        items = " and ".join(k if k == "None" else f"{k}s" for k in kinds)
        return f"{with_article(type(value).__name__)} of {items}"
    return with_article(noun(value))


def hint_for(type_name: str, message: str) -> tuple[str, str]:
    text = f"{type_name}: {message}"
    for pattern, tag, hint in _HINTS:
        if pattern.search(text):
            return tag, hint
    return "", ""


def user_location(exc: BaseException) -> tuple[str, int, str]:
    """The innermost traceback frame outside torch and this package (the user's line)."""
    return _user_frame(traceback.extract_tb(exc.__traceback__))


def _user_frame(frames: traceback.StackSummary) -> tuple[str, int, str]:
    own = os.path.dirname(os.path.abspath(__file__)) + os.sep
    for fs in reversed(frames):
        if is_torch_file(fs.filename) or fs.filename.startswith(own):
            continue
        code = source_line(fs.filename, fs.lineno or 0)
        if fs.filename.startswith("<") and not code:  # code generated at run time (torch's "<string>" lambdas)
            continue
        return fs.filename, fs.lineno or 0, code
    return "", 0, ""


_MIXED_CAUSE = re.compile(r"^:?((List|Dictionary) inputs to traced functions must have consistent .*)$", re.M)

#: the "consistent type" cause belongs to the outputs (torch words both alike): hint for that case
_MIXED_OUTPUT_HINT = (
    "The traced code returns a list or dict that mixes tensors with other values (or nests such values). "
    "torch.jit.trace can only return tensors and tuples, lists or dicts of tensors: return only the tensors and "
    "compute the Python values outside the traced function."
)
#: how each phase ran the user's code, for the hints of an exception raised in it
_HOW_IT_RAN = {
    "trace": "while torch.jit.trace ran {it} once on the example inputs, as it would run eagerly",
    "export": "while torch.export ran {it} on the example inputs' shapes (fake tensors: sizes and dtypes, no values)",
}
#: what an exception in the user's code means, when nothing more specific is known
_GENERIC_HINT = (
    "Your code raised {how}: fix the error at the line shown, or check that the example inputs are what the code "
    "expects."
)
#: the same for an exception raised inside an installed library: the line shown is the library's, not the user's
_LIBRARY_HINT = (
    "The exception was raised inside {owner} code, not yours, {how}: rewriting that line is not the fix. Check what "
    "your code passes to {package} (the example inputs' shapes and dtypes, the arguments and the configuration it "
    "expects); the traceback shows the call from your code."
)
#: an output holding a cache object (a Hugging Face model's past key/values): return_dict=False still returns it
CACHE_HINT = (
    "The cache object is the model's past key/values (a Hugging Face model returns it when use_cache is on, "
    "return_dict=False or not): pass use_cache=False in the call (kwargs={'use_cache': False}, or model(x, "
    "use_cache=False) in %export; setting config.use_cache after the model is built does not reach every part of "
    "it: T5's decoder keeps its own), or wrap the model in a small nn.Module whose forward returns only the tensors "
    "you need, e.g. `out[0]`."
)


def holds_cache(value: Any) -> bool:
    """Whether ``value`` is or holds (in tuples, lists, dicts) a cache object: its class or a base is ``*Cache``
    (transformers' ``DynamicCache``, ``EncoderDecoderCache``)."""
    if isinstance(value, dict):
        return any(holds_cache(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(holds_cache(v) for v in value)
    return any(cls.__name__.endswith("Cache") for cls in type(value).__mro__)


def _clean_message(message: str) -> str:
    # torch appends its C++ stack and a Python-style trace to some messages: keep the first paragraph
    return message.split("\nException raised from", 1)[0].strip()


def has_mixed_container(value: Any) -> bool:
    """Whether a list or dict inside ``value`` holds values of different types (torch's "consistent type")."""
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        return False
    if isinstance(value, (list, dict)) and len({type(v).__name__ for v in items}) > 1:
        return True
    return any(has_mixed_container(v) for v in items)


def error_from_exception(
    exc: BaseException, phase: str = "trace", *, returned: Any = _NOTHING, inputs: Any = _NOTHING
) -> TraceError:
    """The error of an exception. ``returned`` is what the traced code returned and ``inputs`` the example inputs,
    when known: they name the output in the hint of an output the tracer cannot represent, and tell whether torch's
    "consistent type" complaint is about the inputs or the outputs (torch words both alike)."""
    type_name = type(exc).__name__
    message = _clean_message(str(exc)) or type_name
    tag, hint = hint_for(type_name, message)
    cause = _MIXED_CAUSE.search(message)
    if cause is not None and message.startswith("Tracer cannot infer type of"):
        # "Tracer cannot infer type of (<the whole value>)\n:List inputs ... Found Tensor and int": torch's words
        # stay whole (code may match on them, as on torch's); ours say which side the mixed value is on
        container = "list" if cause.group(2) == "List" else "dict"
        if inputs is not _NOTHING and not has_mixed_container(inputs):
            message, tag, hint = (
                f"{message}\n(the {container} with mixed types is in what the traced code returns)",
                "output_type",
                _MIXED_OUTPUT_HINT,
            )
        else:
            message = f"{message}\n(the {container} with mixed types is in the example inputs)"
    # what traceback.format_exception(exc) builds; its stack is traceback.extract_tb's, so the traceback is read once
    formatted = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    file, line, code = _user_frame(formatted.stack)
    if not hint and phase in _HOW_IT_RAN:
        package = installed_package(file) if file else None
        if package:
            owner = f"{package}'" if package.endswith("s") else f"{package}'s"
            hint = _LIBRARY_HINT.format(package=package, owner=owner, how=_HOW_IT_RAN[phase].format(it="the model"))
        elif file or phase == "trace":  # an export failure with no user frame is torch's own: no "your code"
            hint = _GENERIC_HINT.format(how=_HOW_IT_RAN[phase].format(it="it"))
    if tag == "output_type" and returned is not _NOTHING:
        hint = f"The traced code returns {describe_returned(returned)}. " + (
            CACHE_HINT if holds_cache(returned) else hint
        )
    return TraceError(
        type=type_name,
        message=message,
        phase=phase,
        tag=tag,
        hint=hint,
        file=file,
        line=line,
        code=code,
        traceback="".join(formatted.format()),
    )


def argument_error(message: str, hint: str, tag: str = "bad_argument") -> TraceError:
    """A misuse of ``tj.trace`` itself, recorded rather than raised."""
    return TraceError(type="ArgumentError", message=message, phase="arguments", tag=tag, hint=hint)


def option_error(found: OptionProblem | None) -> TraceError | None:
    """An option's value that is not allowed as the ``ArgumentError`` a run records (the fix as its hint, the
    option's tag), or None."""
    return None if found is None else argument_error(found.message, found.hint, tag=found.tag)
