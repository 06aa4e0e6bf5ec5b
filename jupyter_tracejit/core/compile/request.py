"""``tj.compile(...)``: a model and its inputs in, a :class:`~..run.TraceRun` out with what ``torch.compile`` did
(its graphs, every graph break and recompilation), never raising (as ``tj.trace``); :class:`CompileRequest` keeps
what was asked so an explorer can compile again with other options."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ..caller import find_caller
from ..capture import drive
from ..request import ApiWords, ModelRequest, refusal
from ..run import TraceRun
from .options import CompileOptions
from .session import CompileSession

#: the oldest torch whose torch.compile this back end reads as it is tested to (CI runs 2.13 and the newest): older
#: dynamo records otherwise what the run is made of (a submodule as one call_module op, cache entries without guard
#: managers, other break and recompile logs), and a run there would misplace breaks instead of saying so
MIN_TORCH = (2, 13)


def _release(version: str) -> tuple[int, ...]:
    """``"2.13.0+cpu"`` -> ``(2, 13)``: the release a version string names, local tags aside."""
    return tuple(int(part) for part in re.findall(r"\d+", version)[:2])


def compile_support_problem() -> str | None:
    """Why the installed torch and Python cannot run the compile back end, or None."""
    if not hasattr(torch, "compile") or not hasattr(torch, "_dynamo"):
        return f"torch {torch.__version__} has no torch.compile (it came in torch 2.0)"
    if _release(torch.__version__) < MIN_TORCH:
        floor = ".".join(map(str, MIN_TORCH))
        return (
            f"tj.compile reads torch.compile's graphs, breaks and recompilations as torch {floor} and newer record "
            f"them; torch {torch.__version__} records them otherwise: upgrade torch (pip install 'torch>={floor}') "
            "to use it (tj.trace and tj.export work on this torch)"
        )
    is_supported = getattr(torch._dynamo.eval_frame, "is_dynamo_supported", None)
    try:
        supported = is_supported() if callable(is_supported) else True
    except Exception:
        supported = False
    if not supported:
        import sys

        return (
            f"torch {torch.__version__} cannot run torch.compile on Python {sys.version_info.major}."
            f"{sys.version_info.minor} (TorchDynamo supports only some Python versions per torch release)"
        )
    return None


@dataclass(frozen=True)
class CompileRequest(ModelRequest):
    """What a run was asked to do, with the live model and inputs: enough to compile again."""

    options: CompileOptions = field(default_factory=CompileOptions)

    def api(self) -> Callable[..., TraceRun]:
        return compile


def uncompiled(model: Any) -> Any:
    """The model inside what ``torch.compile`` returned (``OptimizedModule._orig_mod``, a compiled function's
    original): the run compiles it itself, with its own recording back end."""
    inner = getattr(model, "_orig_mod", None) if isinstance(model, torch.nn.Module) else None
    if isinstance(inner, torch.nn.Module):
        return inner
    original = getattr(model, "_torchdynamo_orig_callable", None)
    return original if callable(original) else model


_WORDS = ApiWords(
    "compile",
    "torch.compile compiles",
    "Compile",
    "inputs",
    "tj.compile(model, (x,))",
    "Use a torch and Python that torch.compile supports.",
)


def compile(
    model: Any,
    args: Any = (),
    kwargs: dict[str, Any] | None = None,
    *,
    calls: Sequence[Any] | None = None,
    dynamic: bool | None = None,
    fullgraph: bool = False,
    backend: str = "eager",
    check: bool = True,
    module_mode: str = "as_is",
    no_grad: bool = False,
) -> TraceRun:
    """Run ``model`` under ``torch.compile`` on ``args`` / ``kwargs``, then on each input set of ``calls`` in order,
    and return what torch did as a :class:`TraceRun` with ``backend == "compile"``: each compiled graph in
    ``run.graphs``, and in ``run.compile`` the regions, every graph break at the user's line and every
    recompilation with the guard that failed. ``check`` compares every call's outputs with the eager model's.
    ``backend`` is ``"eager"`` (dynamo's graphs as they are: fast, no C++ compiler), ``"aot_eager"`` or
    ``"inductor"``. Never raises for a failure in the model or for bad arguments: see ``run.error``."""
    started = time.perf_counter()
    options = CompileOptions(calls, dynamic, fullgraph, backend, check, module_mode, no_grad)
    caller = find_caller()
    packed = args if isinstance(args, tuple) else (args,)
    request = CompileRequest(model, packed, kwargs, options, caller=caller)
    refused = refusal(request, CompileSession.name, compile_support_problem(), args, _WORDS, started)
    if refused is not None:
        return refused
    session = CompileSession(uncompiled(model), packed, dict(kwargs) if kwargs else None, options, caller=caller)
    run = drive(session.steps(started))
    run.request = request
    return run


__all__ = ["MIN_TORCH", "CompileRequest", "compile", "compile_support_problem"]
