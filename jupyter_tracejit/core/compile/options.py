"""The options of a ``torch.compile`` run (:class:`CompileOptions`), as the compile back end's table of the options
framework (:data:`COMPILE_TABLE`, :mod:`..options`): what each means, what is allowed, how a run records them, and
their command-line spelling (for the ``tracejit compile`` command and the ``%compile`` magic)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..inputs import describe_inputs
from ..options import (
    BackendOptions,
    Flag,
    OptionProblem,
    OptionSpec,
    OptionTable,
    bool_spec,
    choice_spec,
    mode_flags,
    module_mode_spec,
    specs_by_name,
)
from .records import COMPILE_BACKENDS


def is_input_set(value: Any) -> bool:
    """One entry of ``calls``: a tuple of positional inputs, or a dict of keyword inputs."""
    return isinstance(value, (tuple, Mapping))


def _is_calls(value: Any) -> bool:
    return value is None or (isinstance(value, Sequence) and not isinstance(value, (str, bytes, torch.Tensor, Mapping)))


def _is_dynamic(value: Any) -> bool:
    return value is None or isinstance(value, bool)


#: every compile option, what it means and allows (defaults are :class:`CompileOptions`' own)
COMPILE_SPECS = specs_by_name(
    OptionSpec(
        "calls",
        None,
        "a list of input sets",
        "the further inputs the compiled model is called with after the first, in order (each a tuple of "
        "positional inputs or a dict of keyword inputs), so recompilations show; a re-compile keeps them",
        "Pass calls=[(x2,), (x3,)]: each entry is the positional inputs of one more call (a tuple), or its "
        "keyword inputs (a dict, e.g. {'input_ids': ids}).",
        "calls",
        _is_calls,
    ),
    OptionSpec(
        "dynamic",
        None,
        "None, True or False",
        "torch.compile's dynamic: None compiles for the first sizes and makes a size dynamic when it changes, "
        "True makes every size dynamic from the start, False compiles again for every new size",
        "dynamic=None (torch's default) compiles for the first sizes and makes a dim dynamic when it changes; "
        "dynamic=True makes every dim dynamic from the start; dynamic=False compiles again for every new size.",
        "dynamic",
        _is_dynamic,
        choices=(None, True, False),
        choice_labels={None: "dynamic: auto", True: "dynamic: all sizes", False: "dynamic: off"},
    ),
    bool_spec(
        "fullgraph", False, "torch.compile's fullgraph: the first graph break is an error at its line", "fullgraph"
    ),
    choice_spec(
        "backend",
        COMPILE_BACKENDS,
        "the back end that compiles dynamo's graphs: eager runs them as they are (fast, no C++ compiler), "
        "aot_eager through AOT autograd, inductor as torch.compile does by default (its compile time recorded)",
        "backend='eager' (the default) runs dynamo's graphs as they are: the graphs and breaks are the same as "
        "inductor's, without its compile time or a C++ compiler; 'aot_eager' adds AOT autograd; 'inductor' "
        "compiles them as torch.compile does by default, and records each graph's compile time.",
        "backend",
    ),
    bool_spec("check", True, "compare every call's outputs with the eager model's", "check"),
    module_mode_spec("compile"),
    bool_spec("no_grad", False, "compile and call under torch.no_grad()", "no_grad"),
)
#: the options bar's compile options, in display order
COMPILE_LIVE = ("fullgraph", "dynamic", "backend", "check", "module_mode", "no_grad")
#: compile options the explorer shows but cannot change (they hold live tensors): a re-compile keeps the request's
COMPILE_READ_ONLY = ("calls",)


def _each_call_is_an_input_set(values: Mapping[str, Any]) -> OptionProblem | None:
    calls = values.get("calls")
    if not _is_calls(calls) or calls is None:
        return None
    for i, entry in enumerate(calls):
        if not is_input_set(entry):
            example = "x" if isinstance(entry, torch.Tensor) else "value"
            return OptionProblem(
                "calls",
                calls,
                "",
                f"Write calls[{i}] as ({example},) for one positional input (a tuple, note the comma), or "
                "{'name': value} for keyword inputs.",
                text=f"calls[{i}] must be a tuple of positional inputs or a dict of keyword inputs, got "
                f"{type(entry).__name__}",
            )
    return None


#: the compile options' flags, in help order (the ``tracejit compile`` command and the ``%compile`` magic)
COMPILE_FLAGS: tuple[Flag, ...] = (
    Flag(
        "calls",
        "--calls",
        "further input sets the compiled model is called with, in order: EXPR, Python evaluated like the inputs, is "
        "a list of them, e.g. [(x2,), (x3,)]",
        metavar="EXPR",
    ),
    Flag("dynamic", "--dynamic", "dynamic=True: every size dynamic from the start", value=True),
    Flag("dynamic", "--no-dynamic", "dynamic=False: every new size compiles again", value=False),
    Flag("fullgraph", "--fullgraph", "fullgraph=True: the first graph break is an error at its line", value=True),
    Flag(
        "backend",
        "--backend",
        "the back end that compiles the graphs: eager (default), aot_eager or inductor",
        choices=COMPILE_BACKENDS,
    ),
    Flag("check", "--no-check", "check=False: do not compare the outputs with the eager model's", value=False),
    *mode_flags("compile", "compile and call"),
)

#: the compile back end's options, as the options framework holds them (the registry's ``options``)
COMPILE_TABLE = OptionTable(
    noun="compile",
    specs=COMPILE_SPECS,
    live=COMPILE_LIVE,
    read_only=COMPILE_READ_ONLY,
    flags=COMPILE_FLAGS,
    relations=(_each_call_is_an_input_set,),
)


@dataclass(frozen=True)
class CompileOptions(BackendOptions):
    """Every option of a ``torch.compile`` run. ``dynamic``, ``fullgraph`` and ``backend`` mean what they mean for
    ``torch.compile``; beyond torch: ``calls`` (the further inputs the compiled model is called with, in order),
    ``check`` (each call's outputs compared with the eager model's), ``module_mode`` and ``no_grad``."""

    #: further input sets, each a tuple of positional inputs or a dict of keyword inputs, called after the first
    calls: Sequence[Any] | None = COMPILE_SPECS["calls"].default
    dynamic: bool | None = COMPILE_SPECS["dynamic"].default
    fullgraph: bool = COMPILE_SPECS["fullgraph"].default
    backend: str = COMPILE_SPECS["backend"].default
    check: bool = COMPILE_SPECS["check"].default
    module_mode: str = COMPILE_SPECS["module_mode"].default
    no_grad: bool = COMPILE_SPECS["no_grad"].default

    table = COMPILE_TABLE

    def json_value(self, name: str, value: Any) -> Any:
        """As ``RecordedCompileOptions`` in ``run.schema.json`` has it: each call described by its inputs; a value
        that is not allowed by its ``repr`` (the run's error says why)."""
        if COMPILE_SPECS[name].problem(value) is not None:
            return repr(value)[:200]
        if value is None or name != "calls":
            return value
        return [describe_inputs(c) if is_input_set(c) else [repr(c)[:80]] for c in value]


__all__ = [
    "COMPILE_FLAGS",
    "COMPILE_LIVE",
    "COMPILE_READ_ONLY",
    "COMPILE_SPECS",
    "COMPILE_TABLE",
    "CompileOptions",
    "is_input_set",
]
