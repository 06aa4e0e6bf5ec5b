"""The one place that says how ``torch.jit.trace`` / ``torch.jit.trace_module`` are called.

Always with ``check_trace=False``: the core runs torch's check itself (:mod:`.check`). A re-trace for the check
is made the way ``torch.jit._trace._check_trace`` makes it: inputs not stored, and for modules a fresh
compilation unit so the re-traced module does not clash with the first one.

:func:`trace_call` hands back the call instead of making it: torch's tracer records the whole Python stack for
every node it records, so every frame between the user's call and torch costs about 1 µs per node (12-18 ms per
frame on a 12k-node trace). So the session is a generator (:data:`Steps`) that yields its torch calls, and the
API function the user called makes them from its own frame, the depth at which the user's ``torch.jit.trace``
would have run: a trace and the check's re-traces pay for no frame of ours.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
import torch.jit._state

from ..capture import Reply, Steps, TraceCall, call_torch, make_call, resume


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


@contextlib.contextmanager
def own_compilation_unit() -> Iterator[None]:
    """Compile the TorchScript types a trace creates into a compilation unit of its own.

    torch compiles every traced module's types (one per submodule, with their methods' graphs) into its global
    compilation unit, which never lets go of them: each trace of a 6-layer TransformerEncoder kept ~2.9 MB for
    the life of the process, so a notebook that re-traces grows without bound. The C++ side looks the unit up as
    ``torch.jit._state._python_cu`` at every use (``trace_module``'s own ``_compilation_unit`` argument never
    reaches ``TracedModule``), so a fresh one there for the length of the call holds this trace's types; the
    ScriptModule keeps its unit alive, and both go when the run is dropped. Names are as in a fresh process
    (``___torch_mangle_N`` only where this trace needs two types of one name).
    """
    saved = torch.jit._state._python_cu
    torch.jit._state._python_cu = torch._C.CompilationUnit()
    try:
        yield
    finally:
        torch.jit._state._python_cu = saved


__all__ = ["Reply", "Steps", "TraceCall", "call_torch", "make_call", "own_compilation_unit", "resume", "trace_call"]
