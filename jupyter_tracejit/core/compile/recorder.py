"""The dynamo back end a run compiles with: it hands each graph to the chosen back end (``eager``, ``aot_eager``,
``inductor``) and keeps what it saw: the graph, where it came from (the compiled function and its ``self``), why it
ended (a break, or the function's return), the call that compiled it, how long the back end took, and how often
the compiled graph then ran in each call. Guard failures (recompilations) come in through ``guard_fail_fn``."""

from __future__ import annotations

import time
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

from .failures import source_value, sources_in


@dataclass
class Compiled:
    """One graph dynamo compiled."""

    index: int
    gm: torch.fx.GraphModule
    call: int
    #: torch's compile id, ``0/1`` (frame 0, its second compile); ``""`` where torch gives none
    compile_id: str
    #: the code object of the compiled function (a resume function for the code after a break), when known
    code: types.CodeType | None
    #: the compiled function's ``self`` when it is a module (a submodule's ``forward`` compiled on its own)
    self_module: torch.nn.Module | None
    #: why the graph ended: torch's ``GraphCompileReason`` (``graph_break`` True for a break), when it says
    reason: Any
    compile_time: float
    #: how many times it ran, per call
    runs: dict[int, int] = field(default_factory=dict)
    #: placeholder name -> ``id`` of the tensor it stood for when compiled (a parameter's, a buffer's, an input's);
    #: torch lets go of these examples after compiling
    examples: dict[str, int] = field(default_factory=dict)
    #: placeholder name -> its dynamo source (``L['x']``, ``L['self']._modules['fc']._parameters['weight']``)
    sources: dict[str, str] = field(default_factory=dict)


@dataclass
class GuardFailure:
    """One guard of a compiled graph that failed for a call: torch's text and the function it belongs to."""

    call: int
    text: str
    code: types.CodeType | None
    #: the values the guard's sources have for this call (``k`` -> 3), read when it failed; only for the top
    #: function, whose arguments are the call's inputs
    values: dict[str, Any] = field(default_factory=dict)


class Recorder:
    """The callable ``torch._dynamo.optimize`` gets as its back end."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.compiled: list[Compiled] = []
        self.failures: list[GuardFailure] = []
        #: ``("compile", index)`` and ``("fail", index)`` in the order they happened
        self.events: list[tuple[str, int]] = []
        #: the call being made (0 = the first), and its inputs by the top function's argument names
        self.call = 0
        self.locals: Mapping[str, Any] | None = None
        #: the top function's code object (the run's copy)
        self.top: types.CodeType | None = None
        self._inner: Callable[..., Any] | None = None

    def _backend(self) -> Callable[..., Any]:
        if self._inner is None:
            from torch._dynamo import lookup_backend

            self._inner = lookup_backend(self.backend)
        return self._inner

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        code, self_module = _frame_of_compile()
        t0 = time.perf_counter()
        compiled = gm.forward if self.backend == "eager" else self._backend()(gm, example_inputs)
        elapsed = time.perf_counter() - t0
        record = Compiled(
            index=len(self.compiled),
            gm=gm,
            call=self.call,
            compile_id=_compile_id(),
            code=code,
            self_module=self_module,
            reason=getattr(gm, "compile_subgraph_reason", None),
            compile_time=elapsed,
        )
        for node in gm.graph.nodes:
            if node.op != "placeholder":
                continue
            arg = node.meta.get("grapharg")
            example = getattr(arg, "example", None)
            if example is not None:
                record.examples[node.name] = id(example)
            record.sources[node.name] = source_name(arg)
        self.compiled.append(record)
        self.events.append(("compile", record.index))
        runs = record.runs
        recorder = self

        def run(*args: Any) -> Any:
            runs[recorder.call] = runs.get(recorder.call, 0) + 1
            return compiled(*args)

        if getattr(compiled, "_boxed_call", False):
            run._boxed_call = True  # type: ignore[attr-defined]
        return run

    def guard_failed(self, failure: Any) -> None:
        """``guard_fail_fn``: torch's ``GuardFail`` (its reason text and the function's code)."""
        text = str(getattr(failure, "reason", failure))
        code = getattr(failure, "orig_code", None)
        values: dict[str, Any] = {}
        if self.locals is not None and code is not None and code is self.top:
            for source in sources_in(text):
                try:
                    values[source] = source_value(source, self.locals)
                except Exception:  # a source that does not evaluate on the inputs: its value stays unsaid
                    continue
        self.failures.append(GuardFailure(self.call, text, code, values))
        self.events.append(("fail", len(self.failures) - 1))


def source_name(arg: Any) -> str:
    """The dynamo source of a graph input (``L['x']``), ``""`` when torch recorded none."""
    source = getattr(arg, "source", None)
    if source is None:
        return ""
    name = getattr(source, "name", "")
    try:
        return str(name() if callable(name) else name)
    except Exception:  # a source that cannot name itself
        return ""


def _compile_id() -> str:
    try:
        found = torch._guards.CompileContext.current_compile_id()
    except Exception:  # a torch without compile ids
        return ""
    if found is None:
        return ""
    frame, attempt = getattr(found, "frame_id", None), getattr(found, "frame_compile_id", None)
    return f"{frame}/{attempt}" if frame is not None and attempt is not None else str(found)


def _frame_of_compile() -> tuple[types.CodeType | None, torch.nn.Module | None]:
    """The code object of the function being compiled and its ``self`` (a module), from dynamo's translator."""
    try:
        from torch._dynamo.symbolic_convert import InstructionTranslator

        tx = InstructionTranslator.current_tx()
    except Exception:  # a torch that does not say
        tx = None
    if tx is None:
        return None, None
    code = getattr(tx, "f_code", None)
    f_locals = getattr(tx, "f_locals", None) or {}
    self_module = None
    if isinstance(code, types.CodeType) and code.co_varnames:
        first = f_locals.get(code.co_varnames[0]) if isinstance(f_locals, dict) else None
        if isinstance(first, torch.nn.Module):
            self_module = first
    return (code if isinstance(code, types.CodeType) else None), self_module


__all__ = ["Compiled", "GuardFailure", "Recorder"]
