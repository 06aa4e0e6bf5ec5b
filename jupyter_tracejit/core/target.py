"""What a capture is of, described: the callable or module the user asked for (:func:`target_of`, the run's
``target``), and a bound ``nn.Module`` method told apart from the module it belongs to. Every back end's."""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

import torch

from .run import Target

#: names of bound methods that mean "call the module" rather than "trace this method"
CALL_NAMES = frozenset({"forward", "__call__", "_call_impl", "_wrapped_call_impl"})


def target_of(obj: Any) -> Target:
    """What is traced, for the run's header (never raises: a hostile ``__getattr__`` gives an ``invalid`` one)."""
    try:
        if isinstance(obj, torch.jit.ScriptModule):
            return Target(
                name=getattr(obj, "original_name", type(obj).__name__), kind="script", type=type(obj).__name__
            )
        if isinstance(obj, torch.nn.Module):
            fn: Any = type(obj).forward
            target = Target(name=type(obj).__name__, kind="module", type=type(obj).__name__)
        elif callable(obj):
            fn = obj
            target = Target(name=getattr(obj, "__qualname__", getattr(obj, "__name__", repr(obj))), kind="function")
        else:
            return Target(name=repr(obj)[:80], kind="invalid")
        with contextlib.suppress(TypeError, OSError):
            target.file = inspect.getsourcefile(fn) or ""
            # the line inspect.getsourcelines gives, without tokenizing the whole body as it does (0.1 ms a call)
            target.line = inspect.findsource(inspect.unwrap(fn))[1] + 1
        return target
    except Exception:
        return Target(name=type(obj).__name__, kind="invalid")


def bound_module_method(callee: Any, attribute: str = "") -> tuple[torch.nn.Module, str] | None:
    """``(module, name)`` when ``callee`` is a bound method of an ``nn.Module`` (found under ``attribute`` or its own
    name)."""
    owner = getattr(callee, "__self__", None)
    if not inspect.ismethod(callee) or not isinstance(owner, torch.nn.Module):
        return None
    if isinstance(owner, torch.jit.ScriptModule):
        return None
    for name in (attribute, getattr(callee, "__name__", "")):
        if name and getattr(owner, name, None) == callee:
            return owner, name
    return None


__all__ = ["CALL_NAMES", "bound_module_method", "target_of"]
