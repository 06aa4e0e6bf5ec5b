"""Example inputs: how torch packs them, how they are cloned, and how they are described to people.

One spelling for tensors everywhere a person reads it (check input labels, probe cases, the run's options):
TorchScript's ``Float(4, 3)``, the same as the graph's value types, with the device named when it is not the CPU.
"""

from __future__ import annotations

from typing import Any

import torch

#: dtype -> TorchScript's name for it (``Float``, ``UInt16``, ``QUInt8``), asked of torch once per dtype so every
#: dtype torch knows is spelled as a traced graph spells it
_DTYPE_NAMES: dict[torch.dtype, str] = {}
#: scalars longer than this are described by their type
_MAX_SCALAR_CHARS = 40


def tensor_type_str(t: torch.Tensor) -> str:
    """``Float(4, 8)`` in TorchScript's spelling; the device is named when it is not the CPU."""
    name = _DTYPE_NAMES.get(t.dtype)
    if name is None:
        name = _DTYPE_NAMES[t.dtype] = torch._C.TensorType.create_from_tensor(t).scalarType() or str(t.dtype)
    parts = [str(s) for s in t.shape]
    if t.device.type != "cpu":
        parts.append(f"device={t.device}")
    return f"{name}({', '.join(parts)})"


def describe_value(obj: Any) -> str:
    """One input (nested tuples, lists and dicts included) as a short text."""
    if isinstance(obj, torch.Tensor):
        return tensor_type_str(obj)
    if isinstance(obj, tuple):
        inner = ", ".join(describe_value(o) for o in obj)
        return f"({inner},)" if len(obj) == 1 else f"({inner})"
    if isinstance(obj, list):
        return "[" + ", ".join(describe_value(o) for o in obj) + "]"
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{k!r}: {describe_value(v)}" for k, v in obj.items()) + "}"
    if obj is None or isinstance(obj, bool | int | float | complex | str):
        text = repr(obj)
        return text if len(text) <= _MAX_SCALAR_CHARS else type(obj).__name__
    return type(obj).__name__


def describe_inputs(inputs: Any) -> list[str]:
    """``["Float(4, 3)"]`` per positional input, ``["mask=Bool(2, 5)"]`` per keyword input."""
    if isinstance(inputs, dict):
        return [f"{k}={describe_value(v)}" for k, v in inputs.items()]
    if isinstance(inputs, (tuple, list)):
        return [describe_value(v) for v in inputs]
    return [describe_value(inputs)]


def clone_inputs(args: Any) -> Any:
    """torch's ``_clone_inputs``: detached clones that keep ``requires_grad``."""
    return torch.jit._trace._clone_inputs(args)


def make_tuple(inputs: Any) -> tuple[Any, ...]:
    """torch's ``make_tuple``: a tensor or a dict is one input, a tuple is the inputs, other iterables a tuple.

    Raises ``TypeError`` for something that is none of these.
    """
    if isinstance(inputs, (torch.Tensor, dict)):
        return (inputs,)
    if isinstance(inputs, tuple):
        return inputs
    return tuple(inputs)


def parameter_types(module: torch.nn.Module | None) -> dict[str, str]:
    """``path -> Float(8, 8)`` for every parameter and buffer of ``module`` (``blocks.0.fc.weight``); a module
    whose tensors cannot be listed (a hostile ``named_parameters``) gives what was listed before it failed."""
    table: dict[str, str] = {}
    if not isinstance(module, torch.nn.Module):
        return table
    for listing in (module.named_parameters, module.named_buffers):
        try:
            for name, tensor in listing():
                if isinstance(tensor, torch.Tensor):
                    table[name] = tensor_type_str(tensor)
        except Exception:  # a display nicety: never let it break a trace
            continue
    return table


__all__ = ["clone_inputs", "describe_inputs", "describe_value", "make_tuple", "parameter_types", "tensor_type_str"]
