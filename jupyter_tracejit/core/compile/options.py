"""The options of a ``torch.compile`` run (:class:`CompileOptions`): what each means, what is allowed, and how a
run records them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..errors import TraceError, argument_error
from ..inputs import describe_inputs
from .records import COMPILE_BACKENDS

MODULE_MODES = ("as_is", "train", "eval")


def is_input_set(value: Any) -> bool:
    """One entry of ``calls``: a tuple of positional inputs, or a dict of keyword inputs."""
    return isinstance(value, (tuple, Mapping))


@dataclass(frozen=True)
class CompileOptions:
    """Every option of a ``torch.compile`` run. ``dynamic``, ``fullgraph`` and ``backend`` mean what they mean for
    ``torch.compile``; beyond torch: ``calls`` (the further inputs the compiled model is called with, in order),
    ``check`` (each call's outputs compared with the eager model's), ``module_mode`` and ``no_grad``."""

    #: further input sets, each a tuple of positional inputs or a dict of keyword inputs, called after the first
    calls: Sequence[Any] | None = None
    #: torch.compile's ``dynamic``: None (a dim that changes becomes dynamic), True (every dim dynamic from the
    #: start), False (every new size compiles again)
    dynamic: bool | None = None
    fullgraph: bool = False
    backend: str = "eager"
    check: bool = True
    module_mode: str = "as_is"
    no_grad: bool = False

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    def replace(self, **changes: Any) -> CompileOptions:
        """A copy with some options changed (``TypeError`` naming the options for a name that is not one)."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise TypeError(f"unknown compile option(s): {', '.join(unknown)}; known: {', '.join(self.names())}")
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.names()}

    def problem(self) -> TraceError | None:
        """The first option whose value is not allowed (an ``ArgumentError`` naming the problem and the fix)."""
        for name in ("fullgraph", "check", "no_grad"):
            if not isinstance(getattr(self, name), bool):
                return argument_error(
                    f"{name} must be True or False, got {getattr(self, name)!r}", f"Pass {name}=True or {name}=False."
                )
        if self.dynamic is not None and not isinstance(self.dynamic, bool):
            return argument_error(
                f"dynamic must be None, True or False, got {self.dynamic!r}",
                "dynamic=None (torch's default) compiles for the first sizes and makes a dim dynamic when it changes; "
                "dynamic=True makes every dim dynamic from the start; dynamic=False compiles again for every new size.",
            )
        if not isinstance(self.backend, str) or self.backend not in COMPILE_BACKENDS:
            return argument_error(
                f"backend must be one of {', '.join(map(repr, COMPILE_BACKENDS))}, got {self.backend!r}",
                "backend='eager' (the default) runs dynamo's graphs as they are: the graphs and breaks are the same as "
                "inductor's, without its compile time or a C++ compiler; 'aot_eager' adds AOT autograd; 'inductor' "
                "compiles them as torch.compile does by default, and records each graph's compile time.",
            )
        if self.module_mode not in MODULE_MODES:
            return argument_error(
                f"module_mode must be one of {', '.join(map(repr, MODULE_MODES))}, got {self.module_mode!r}",
                "module_mode='eval' compiles in eval mode (dropout off, batch norm from running statistics) and puts "
                "the module back as it was; 'as_is' compiles it as it is.",
            )
        if self.calls is not None:
            if isinstance(self.calls, (str, bytes, torch.Tensor, Mapping)) or not isinstance(self.calls, Sequence):
                return argument_error(
                    f"calls must be a list of input sets, got {type(self.calls).__name__}",
                    "Pass calls=[(x2,), (x3,)]: each entry is the positional inputs of one more call (a tuple), or "
                    "its keyword inputs (a dict, e.g. {'input_ids': ids}).",
                )
            for i, entry in enumerate(self.calls):
                if not is_input_set(entry):
                    return argument_error(
                        f"calls[{i}] must be a tuple of positional inputs or a dict of keyword inputs, got "
                        f"{type(entry).__name__}",
                        f"Write calls[{i}] as ({'x' if isinstance(entry, torch.Tensor) else 'value'},) for one "
                        "positional input (a tuple, note the comma), or {'name': value} for keyword inputs.",
                    )
        return None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready (``RecordedCompileOptions`` in ``run.schema.json``): each call described by its inputs; a value
        that was not allowed is recorded as the string of its repr (the run's error says why)."""

        def flag(value: Any) -> Any:
            return value if isinstance(value, bool) else repr(value)

        calls: Any
        if self.calls is None:
            calls = None
        elif isinstance(self.calls, Sequence) and not isinstance(self.calls, (str, bytes)):
            calls = [describe_inputs(c) if is_input_set(c) else [repr(c)[:80]] for c in self.calls]
        else:
            calls = repr(self.calls)[:200]
        return {
            "calls": calls,
            "dynamic": self.dynamic if self.dynamic is None or isinstance(self.dynamic, bool) else repr(self.dynamic),
            "fullgraph": flag(self.fullgraph),
            "backend": self.backend if isinstance(self.backend, str) else repr(self.backend),
            "check": flag(self.check),
            "module_mode": self.module_mode if isinstance(self.module_mode, str) else repr(self.module_mode),
            "no_grad": flag(self.no_grad),
        }


__all__ = ["MODULE_MODES", "CompileOptions", "is_input_set"]
