"""Where an export failed and what to say about it: the user's frame quoted in torch's message or attached by
dynamo (``real_stack``), and the run's error with its tag and hint (:func:`export_error`)."""

from __future__ import annotations

import os
import re

from ..caller import is_own_file
from ..errors import CACHE_HINT, TraceError, error_from_exception
from ..graph import Frame
from ..source import is_torch_file, source_line

# -- where a failure is -----------------------------------------------------------------------------------------------
_MESSAGE_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def message_frame(message: str) -> tuple[str, int] | None:
    """The innermost user frame quoted in an export error's message (strict mode's "from user code:" block,
    non-strict's "The following call raised this error:"): the last ``File "...", line N`` outside torch, this
    package and generated code, or None."""
    found = None
    for m in _MESSAGE_FRAME.finditer(message):
        file = m.group("file")
        if file.startswith("<") or is_torch_file(file) or is_own_file(os.path.abspath(file)):
            continue
        found = (file, int(m.group("line")))
    return found


def real_stack_frame(exc: BaseException) -> tuple[str, int] | None:
    """The innermost user frame of the ``real_stack`` dynamo attaches to a strict export's exception (or to one it
    was raised from): the frames of the traced code, which the traceback (dynamo's own frames, then the caller's)
    lacks, and which a message such as "RuntimeError when making fake tensor call" does not quote."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = None
        try:
            frames = list(getattr(current, "real_stack", None) or [])
        except TypeError:  # not a stack
            frames = []
        for frame in frames:  # outermost first
            file, line = str(getattr(frame, "filename", "") or ""), int(getattr(frame, "lineno", 0) or 0)
            if not file or not line or file.startswith("<") or is_torch_file(file):
                continue
            if is_own_file(os.path.abspath(file)):
                continue
            found = (file, line)
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
    return None


#: (pattern on "ExceptionType: message", tag, hint) for export's failures; the first match wins
_EXPORT_HINTS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(r"GuardOnDataDependentSymNode|Data-dependent branching|data-dependent expression"),
        "data_dependent",
        "The code branches on a tensor's value (or uses it as a size), which export cannot record: it has no "
        "value, only a shape. Use torch.cond(pred, true_fn, false_fn, operands) for a branch, torch.where to "
        "compute both sides, or torch._check(...) to tell export what the value is.",
    ),
    (
        # a range only some of whose sizes the code takes (a view by 4, a stride of 8); "specialized it to be a
        # constant" is the hint after this one, also when a message says both
        re.compile(r"Constraints violated(?![\s\S]*specialized it to be a constant)[\s\S]*Not all values of"),
        "constraint_violation",
        "The code works for only some sizes in a range marked dynamic (Dim): torch's guard in the message says "
        "which (a size divisible by 8, say). Declare the dimension so that it holds only those, as torch's "
        "suggested fixes say (a multiple: 8 * Dim('k', min=..., max=...); a narrower min or max), or give it as "
        "Dim.AUTO (export then records the condition itself).",
    ),
    (
        re.compile(r"Constraints violated"),
        "constraint_violation",
        "A dimension marked dynamic (Dim) was turned into a constant by the code, e.g. a Python loop or branch over "
        "x.size(0). Rewrite that code with tensor operations, or give the dimension as Dim.AUTO (export then "
        "specialises it silently) or leave it static.",
    ),
    (
        re.compile(r"in output, which is not a known type|Encountered unrecognized type .* at output"),
        "output_type",
        "The model returns an object of a class torch.export cannot take apart into tensors (torch's pytree does "
        "not know it). Return tensors, or tuples, lists and dicts of them (wrap the model in a small nn.Module "
        "whose forward returns what you need), or register the class with torch.utils._pytree.register_pytree_node "
        "(a dataclass: torch.export.register_dataclass).",
    ),
)
#: the class named in an ``output_type`` error: non-strict's ``<class 'a.b.C'>``, strict's ``...Variable(C)``
_OUTPUT_CLASS = re.compile(r"<class '(?:[\w.]*\.)?(\w+)'> in output|Variable\((\w+)\) at output")


def export_error(exc: BaseException, caller: Frame | None) -> TraceError:
    """The run's error for an exception raised by ``torch.export.export``: the user's line from the message's
    quoted frames, else from dynamo's ``real_stack`` (strict mode), else from the traceback, else the caller's."""
    error = error_from_exception(exc, phase="export")
    at = message_frame(error.message) or real_stack_frame(exc)
    if at is not None:
        error.file, error.line = at
        error.code = source_line(*at)
    elif not error.file and caller is not None:
        error.file, error.line, error.code = caller.file, caller.line, caller.code
    if not error.tag:
        text = f"{error.type}: {error.message}"
        for pattern, tag, hint in _EXPORT_HINTS:
            if pattern.search(text):
                error.tag, error.hint = tag, hint
                break
        returned = _OUTPUT_CLASS.search(error.message) if error.tag == "output_type" else None
        if returned is not None and (returned.group(1) or returned.group(2)).endswith("Cache"):
            error.hint = CACHE_HINT
    return error


#: torch's messages for ``dynamic_shapes`` that do not follow the inputs (an argument error, not the model's)
DYNAMIC_SHAPES_MISMATCH = re.compile(
    r"`dynamic_shapes` is specified as a dict, its top-level keys must be|mismatch between the structure of "
    r"`inputs` and `dynamic_shapes`"
)


#: torch's assertion when dynamic_shapes meets a forward's ``**kwargs`` (in 2.13, whatever the structure)
TREE_NAME = "Must provide a tree_name when there might be a mismatch"


__all__ = ["DYNAMIC_SHAPES_MISMATCH", "TREE_NAME", "export_error", "message_frame", "real_stack_frame"]
