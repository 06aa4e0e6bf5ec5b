"""The options of a trace (``torch.jit.trace`` 's own plus ours), as the TorchScript back end's table of the options
framework (:data:`TRACE_TABLE`, :mod:`..options`): their defaults, validation, the options bar's and the command
line's spelling.

:class:`TraceOptions` is what ``tj.trace`` / ``tj.trace_module`` take as keywords, what a
:class:`~.request.TraceRequest` keeps to trace again, and (through :meth:`TraceOptions.to_json`) what a run
records. Names of ``check_inputs`` by where they live: the live input sets are ``TraceOptions.check_inputs``; a
run's JSON describes them by their shapes (``options.check_inputs``); the explorer's toggles of which sets to use
are ``check_inputs_enabled``; the magic's and the CLI's unevaluated text is the ``check_inputs`` expression.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..check import DEFAULT_TOLERANCE, DEFAULT_TOLERANCE_TEXT
from ..inputs import describe_inputs
from ..jsonio import float_to_json
from ..options import (
    BackendOptions,
    CommandLineError,
    Flag,
    OptionSpec,
    OptionTable,
    bool_spec,
    module_mode_spec,
    specs_by_name,
)


def is_tolerance(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value >= 0


def _is_input_sets(value: Any) -> bool:
    return value is None or (isinstance(value, (list, tuple)) and not isinstance(value, torch.Tensor))


def is_device(value: Any) -> bool:
    """A device name torch understands (``"cuda"``, ``"cuda:0"``, ``"cpu"``, ``"mps"``), not a device object."""
    if not isinstance(value, str):
        return False
    try:
        torch.device(value)
    except (RuntimeError, ValueError):
        return False
    return True


def _is_target_device(value: Any) -> bool:
    return value is None or is_device(value)


def _is_probe_dims(value: Any) -> bool:
    if value is None:
        return True
    if not isinstance(value, Mapping):
        return False
    for key, dims in value.items():
        if isinstance(key, bool) or not isinstance(key, (int, str)):
            return False
        items = [dims] if isinstance(dims, int) else dims
        if not isinstance(items, Sequence) or isinstance(items, str):
            return False
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in items):
            return False
    return True


SPECS = specs_by_name(
    bool_spec("check_trace", True, "check the trace by re-tracing and comparing outputs", "check"),
    OptionSpec(
        "check_inputs",
        None,
        "a list of input sets",
        "the input sets to check the trace with (default: the example inputs)",
        "Pass a list with one tuple per input set, e.g. check_inputs=[(x2,), (x3,)].",
        "check inputs",
        _is_input_sets,
        control="input_sets",
    ),
    OptionSpec(
        "check_tolerance",
        DEFAULT_TOLERANCE,
        "a finite number >= 0",
        f"relative tolerance of the check's output comparison (default {DEFAULT_TOLERANCE_TEXT})",
        f"torch's default is {DEFAULT_TOLERANCE_TEXT}; relax it (e.g. 1e-3) for fused or reordered float math.",
        "tol",
        is_tolerance,
        control="number",
    ),
    bool_spec("strict", True, "strict mode: reject mutable containers (list/dict) at the output", "strict"),
    bool_spec(
        "force_outplace",
        False,
        "torch's private _force_outplace: record in-place ops as their out-of-place versions",
        "force_outplace",
    ),
    module_mode_spec("trace"),
    bool_spec("no_grad", False, "trace under torch.no_grad()", "no_grad"),
    bool_spec("probe", False, "also run the generalization probe on derived inputs", "probe"),
    OptionSpec(
        "probe_dims",
        None,
        "a dict of {argument index or keyword name: [dims]}",
        "the input dimensions the probe varies (default: the ones that look dynamic)",
        "probe_dims maps an argument index (or keyword name) to dimensions of that input, e.g. probe_dims={0: [1]}.",
        "probe dims",
        _is_probe_dims,
    ),
    OptionSpec(
        "target_device",
        None,
        "a device name such as 'cuda', 'cuda:0' or 'cpu', or None",
        "the device the traced model will run on, when not the one it is traced on: a device baked into the "
        "graph that differs from it is a warning (default: where it is traced)",
        "Pass the device the traced model is served on as text, e.g. target_device='cuda', or None.",
        "target device",
        _is_target_device,
        control="device",
    ),
)

#: options the explorer's options bar offers (its ``options`` trait), in display order
LIVE = (
    "strict",
    "check_trace",
    "check_tolerance",
    "check_inputs",
    "force_outplace",
    "module_mode",
    "no_grad",
    "target_device",
)


@dataclass(frozen=True)
class TraceOptions(BackendOptions):
    """Every option of a trace. The torch ones mean what they mean for ``torch.jit.trace``
    (``force_outplace`` is its private ``_force_outplace``); beyond torch: ``module_mode``, ``no_grad``,
    ``probe``, ``probe_dims`` and ``target_device``. Unvalidated until :meth:`problem` is asked: a bad value is
    the user's to fix, and a run records it rather than raising."""

    check_trace: bool = SPECS["check_trace"].default
    #: live input sets: a list of tuples (or of ``{method: inputs}`` dicts for ``trace_module``)
    check_inputs: Sequence[Any] | None = SPECS["check_inputs"].default
    check_tolerance: float = SPECS["check_tolerance"].default
    strict: bool = SPECS["strict"].default
    force_outplace: bool = SPECS["force_outplace"].default
    module_mode: str = SPECS["module_mode"].default
    no_grad: bool = SPECS["no_grad"].default
    probe: bool = SPECS["probe"].default
    #: ``{argument index or keyword name: [dims]}``
    probe_dims: Mapping[int | str, Sequence[int]] | None = SPECS["probe_dims"].default
    #: where the traced model will run (``"cuda"``), when not where it is traced; ``None``: where it is traced
    target_device: str | None = SPECS["target_device"].default

    @classmethod
    def from_kwargs(cls, **given: Any) -> TraceOptions:
        """Options from keywords; ``TypeError`` naming the known options for a name that is not one."""
        unknown = cls.table.unknown(given)
        if unknown is not None:
            raise unknown
        return cls(**given)

    def json_value(self, name: str, value: Any) -> Any:
        """As ``RecordedOptions`` in ``run.schema.json`` has it: check input sets described by their inputs, probe
        dims keyed by strings; a value that is not allowed by its ``repr`` (the run's error says why)."""
        if value is None:
            return None
        if SPECS[name].problem(value) is not None:
            return repr(value)
        if name == "check_inputs":
            return [describe_inputs(c) for c in value]
        if name == "probe_dims":
            return {str(k): [d] if isinstance(d, int) else list(d) for k, d in value.items()}
        if isinstance(value, float):
            return float_to_json(value)
        return value


# -- the command line (the %trace magic and the tracejit command) -------------------------------------------


def parse_tolerance(text: str, flag: str = "--tol") -> float:
    """``--tol``'s value as a float, or :class:`CommandLineError` saying what it needs."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not is_tolerance(value):
        spec = SPECS["check_tolerance"]
        raise CommandLineError(
            flag,
            f"{flag} needs {spec.expects} (torch's check_tolerance, default {DEFAULT_TOLERANCE_TEXT}), got {text!r}",
        )
    return value


def parse_device(text: str, flag: str = "--target-device") -> str:
    """``--target-device``'s value, or :class:`CommandLineError` saying what it needs."""
    if not is_device(text):
        raise CommandLineError(
            flag, f"{flag} needs {SPECS['target_device'].expects.removesuffix(', or None')}, got {text!r}"
        )
    return text


#: the command-line spellings, in help order; ``--eval`` and ``--train`` exclude each other
COMMAND_LINE: tuple[Flag, ...] = (
    Flag("check_trace", "--no-check", "check_trace=False: skip the re-trace check", value=False),
    Flag(
        "check_inputs",
        "--check-inputs",
        "check_inputs: EXPR, Python evaluated like the example inputs, is a list of input sets to check with, "
        "e.g. [(x2,), (x3,)]; a list of dicts for keyword inputs",
        metavar="EXPR",
    ),
    Flag(
        "check_tolerance",
        "--tol",
        f"check_tolerance (default {DEFAULT_TOLERANCE_TEXT}), e.g. --tol 1e-4",
        metavar="FLOAT",
        parse=parse_tolerance,
    ),
    Flag("strict", "--non-strict", "strict=False: allow mutable container (list/dict) outputs", value=False),
    Flag(
        "force_outplace",
        "--force-outplace",
        "_force_outplace=True: record in-place ops as their out-of-place versions",
        value=True,
    ),
    Flag("module_mode", "--eval", "module_mode='eval': call .eval() for this trace only, restored after", value="eval"),
    Flag(
        "module_mode",
        "--train",
        "module_mode='train': call .train() for this trace only, restored after",
        value="train",
    ),
    Flag("no_grad", "--no-grad", "no_grad=True: trace under torch.no_grad()", value=True),
    Flag("probe", "--probe", "probe=True: also run the generalization probe", value=True),
    Flag(
        "target_device",
        "--target-device",
        "target_device: the device the traced model will run on (e.g. cuda), when not the one it is traced on; a "
        "device baked into the graph that differs is a warning",
        metavar="DEVICE",
        parse=parse_device,
    ),
)

#: the TorchScript back end's options, as the options framework holds them (the registry's ``options``)
TRACE_TABLE = OptionTable(noun="trace", specs=SPECS, live=LIVE, flags=COMMAND_LINE)
TraceOptions.table = TRACE_TABLE  # the flags are declared after the options


__all__ = [
    "COMMAND_LINE",
    "DEFAULT_TOLERANCE",
    "LIVE",
    "SPECS",
    "TRACE_TABLE",
    "TraceOptions",
    "is_device",
    "parse_device",
    "parse_tolerance",
]
