"""The warning categories, defined once: one row each, with everything any part of the product says or decides about
a category. Python reads the rows here; the run schema's ``category`` enum and its ``x-categories`` table are written
from them (``python -m jupyter_tracejit.core.registry``, which writes every generated part of the schema;
``tests/core/test_categories.py`` fails when the schema is stale), and the explorer's titles and rules are generated
from the schema (``npm run build:protocol``). A new category is a new row.

Torch-free: a saved run's warnings are read without torch.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class WarningCategory:
    name: str
    #: the heading it is listed under (the Warnings tab, the Check tab's causes)
    title: str
    #: what a user can do about it, shown beside the message
    advice: str
    #: a substring of torch's message that classifies a warning into it (the first match wins); "" for categories
    #: found otherwise (the warning's class: deprecation notices; nothing matched: other)
    torch_text: str = ""
    #: counted in the Warnings tab and the verdict (a deprecation notice says nothing about this trace: not counted)
    counted: bool = True
    #: says the trace may be wrong (turns the badge amber); a library's own warning or an already-scripted module
    #: are counted but do not
    about_the_trace: bool = True
    #: a value of this trace frozen into it by the line the warning names (library advice applies there)
    frozen: bool = False
    #: may explain a divergence of the check at its line (the mismatches are what divergences cause, not why)
    explains_divergences: bool = True


_FROZEN_IF = "A Python `if`/`while` on a tensor is frozen into the trace: only the branch taken now is recorded. "

#: every category, in the order the explorer lists them
WARNING_CATEGORIES: tuple[WarningCategory, ...] = (
    WarningCategory(
        "to_bool",
        "tensor → Python bool (frozen branch)",
        _FROZEN_IF + "Use torch.where, or script this function (torch.jit.script) and call it from the traced code.",
        "Converting a tensor to a Python boolean",
        frozen=True,
    ),
    WarningCategory(
        "to_int",
        "tensor → Python int",
        "The integer is baked in as a constant. Keep it a tensor (e.g. use x.size(0) without int(), or tensor ops) if "
        "it depends on the input.",
        "Converting a tensor to a Python integer",
        frozen=True,
    ),
    WarningCategory(
        "to_float",
        "tensor → Python float",
        "The float is baked in as a constant. Keep the computation in tensor ops if it depends on the input.",
        "Converting a tensor to a Python float",
        frozen=True,
    ),
    WarningCategory(
        "to_complex",
        "tensor → Python complex",
        "The complex number is baked in as a constant. Keep the computation in tensor ops.",
        "Converting a tensor to a Python complex",
        frozen=True,
    ),
    WarningCategory(
        "to_number",
        "tensor → Python number (.item())",
        "The number (.item()) is baked in as a constant. Keep the computation in tensor ops.",
        "Converting a tensor to a Python number",
        frozen=True,
    ),
    WarningCategory(
        "to_list",
        "tensor → Python list",
        "tolist() values are baked in as constants. Index or slice the tensor instead.",
        "Converting a tensor to a Python list",
        frozen=True,
    ),
    WarningCategory(
        "to_numpy",
        "tensor → NumPy",
        "NumPy computations are invisible to the tracer; their results become constants. Use torch ops.",
        "Converting a tensor to a NumPy array",
        frozen=True,
    ),
    WarningCategory(
        "tensor_const",
        "torch.tensor(...) frozen as a constant",
        "torch.tensor(...) built from input-dependent values is frozen. Build it from tensors (torch.stack, ops on "
        "the input) or ignore the warning if the values are truly constant.",
        "results are registered as constants in the trace",
        frozen=True,
    ),
    WarningCategory(
        "from_numpy_const",
        "torch.from_numpy(...) frozen as a constant",
        "torch.from_numpy(...) results are frozen. Compute them with torch ops if they depend on the input.",
        "torch.from_numpy results are registered as constants",
        frozen=True,
    ),
    WarningCategory(
        "iterate",
        "iterating over a tensor",
        "Iterating over a tensor unrolls the loop for this input's length. Use tensor ops (e.g. unbind inside "
        "scripted code) or check with inputs of other lengths (check_inputs).",
        "Iterating over a tensor",
        frozen=True,
    ),
    WarningCategory(
        "len",
        "len(tensor)",
        "len(tensor) is baked in as a constant; use x.size(0) to keep it dynamic.",
        "Using len to get tensor shape",
        frozen=True,
    ),
    WarningCategory(
        "live_refs",
        "in-place op on a viewed tensor",
        "An in-place op modified a tensor that other views still reference; the trace may be wrong. Use the "
        "out-of-place op.",
        "live references to the data region",
    ),
    WarningCategory(
        "nondeterministic",
        "nondeterministic nodes",
        "The graph contains random ops (dropout in train mode, rand). Call model.eval() before tracing, or pass "
        "check_trace=False.",
        "Trace had nondeterministic nodes",
    ),
    WarningCategory(
        "output_mismatch_python",
        "trace ≠ Python function",
        "The trace does not compute what the Python code computes on these inputs. Where the check's graphs differ, "
        "its divergences say where; where they agree, the numbers differ: random ops (dropout in train mode: call "
        "model.eval()) or a check_tolerance too tight for the model.",
        "the corresponding output of the Python function",
        explains_divergences=False,
    ),
    WarningCategory(
        "output_mismatch_retrace",
        "trace ≠ re-trace",
        "Re-tracing gives a graph that computes something else: where the graphs agree, random ops are the usual "
        "cause (call model.eval()); else see the divergences.",
        "the corresponding output of the repeated trace",
        explains_divergences=False,
    ),
    WarningCategory(
        "list_output",
        "list output",
        "A list output is treated as a fixed structure. Return a tuple.",
        "Encountering a list at the output of the tracer",
    ),
    WarningCategory(
        "already_script",
        "already TorchScript",
        "The input is already TorchScript; tracing is a no-op. Pass the original nn.Module.",
        "The input to trace is already a ScriptModule",
        about_the_trace=False,
        explains_divergences=False,
    ),
    WarningCategory(
        "deprecated",
        "deprecation notice",
        "torch 2.13 marks torch.jit.trace as deprecated; tracing still works.",
        counted=False,
        about_the_trace=False,
        explains_divergences=False,
    ),
    WarningCategory(
        "other",
        "other warnings",
        "",
        about_the_trace=False,
        explains_divergences=False,
    ),
)

BY_NAME: dict[str, WarningCategory] = {c.name: c for c in WARNING_CATEGORIES}


# -- the schema's copy --------------------------------------------------------------------------------------------

SCHEMA_PATH = Path(__file__).with_name("run.schema.json")
#: the rows' fields the explorer reads (advice travels in each warning's JSON, as the CLI and HTML print it)
_SCHEMA_FIELDS = ("title", "counted", "about_the_trace", "explains_divergences")
#: what is written: the category enum of ``definitions.TraceWarning`` and, beside it, its ``x-categories`` table
_ENUM_LINE = re.compile(r'^(?P<indent> *)"enum": \["to_bool".*\],?$', re.M)
_TABLE_BLOCK = re.compile(r'^ *"x-categories": \{\n(?: .*\n)*? *\}\n', re.M)


def schema_rows() -> dict[str, dict[str, object]]:
    """The table as the schema carries it (``x-categories``)."""
    return {c.name: {f: getattr(c, f) for f in _SCHEMA_FIELDS} for c in WARNING_CATEGORIES}


def write_schema(text: str) -> str:
    """``run.schema.json``'s text with the category enum and ``x-categories`` written from the table (the rest of
    the hand-laid-out file as it is)."""
    text = _TABLE_BLOCK.sub("", text)
    enum = _ENUM_LINE.search(text)
    if enum is None:
        raise ValueError("run.schema.json: the TraceWarning category enum line was not found")
    indent = enum.group("indent")
    names = json.dumps([c.name for c in WARNING_CATEGORIES], ensure_ascii=False)
    rows = ",\n".join(
        f"{indent}  {json.dumps(name)}: {json.dumps(row, ensure_ascii=False)}" for name, row in schema_rows().items()
    )
    written = f'{indent}"enum": {names},\n{indent}"x-categories": {{\n{rows}\n{indent}}}'
    return text[: enum.start()] + written + text[enum.end() :]


__all__ = ["BY_NAME", "WARNING_CATEGORIES", "WarningCategory", "schema_rows", "write_schema"]
