"""The one place that says how ``torch.jit.trace`` / ``torch.jit.trace_module`` are called.

Always with ``check_trace=False``: the core runs torch's check itself (:mod:`.check`). A re-trace for the check
is made the way ``torch.jit._trace._check_trace`` makes it: inputs not stored, and for modules a fresh
compilation unit so the re-traced module does not clash with the first one.

:func:`trace_call` hands back the call instead of making it: torch's tracer records the whole Python stack for
every node it records, so every frame between the user's call and torch costs about 0.6 µs per node (7 ms per
frame on a 12k-node trace). The session makes the call from its own frame.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

TraceCall = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


def trace_call(
    target: Any,
    inputs: Any,
    *,
    methods: bool,
    is_kwarg: bool,
    strict: bool,
    force_outplace: bool,
    for_check: bool = False,
) -> TraceCall:
    """``(torch's function, args, kwargs)`` that trace ``target`` on ``inputs``.

    ``methods``: ``trace_module`` with ``inputs`` as ``{method: inputs}``; else ``trace`` with ``inputs`` as the
    positional inputs, or (``is_kwarg``) as the keyword inputs.
    """
    common: dict[str, Any] = {"check_trace": False, "strict": strict, "_force_outplace": force_outplace}
    if for_check:
        common["_store_inputs"] = False
    if methods:
        if for_check:
            common["_compilation_unit"] = torch._C.CompilationUnit()
        return torch.jit.trace_module, (target, inputs), {"example_inputs_is_kwarg": is_kwarg, **common}
    if is_kwarg:
        return torch.jit.trace, (target,), {"example_kwarg_inputs": inputs, **common}
    return torch.jit.trace, (target, inputs), common


__all__ = ["TraceCall", "trace_call"]
