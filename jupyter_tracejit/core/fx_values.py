"""The fields of a :class:`~.graph.Value` made from an FX graph (:mod:`.fx_graph`): from a node's
``meta["val"]`` (a tensor, a ``SymInt``, a tuple of them...) and from a literal argument, typed by the schema's
spelling of its kind (``int``, ``ScalarType``, ``Tensor?[]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

#: literal Python types -> the schema's spelling of their type
LITERAL_TYPES: dict[type, str] = {
    bool: "bool",
    int: "int",
    float: "float",
    complex: "complex",
    str: "str",
    type(None): "NoneType",
    torch.dtype: "ScalarType",
    torch.device: "Device",
    torch.layout: "Layout",
    torch.memory_format: "MemoryFormat",
}
MISSING: Any = object()


def is_literal(x: Any) -> bool:
    if type(x) in LITERAL_TYPES:
        return True
    return isinstance(x, (list, tuple)) and all(is_literal(i) for i in x)


def literal_type(x: Any) -> str:
    found = LITERAL_TYPES.get(type(x))
    if found is not None:
        return found
    if isinstance(x, tuple):
        return "(" + ", ".join(literal_type(i) for i in x) + ")"
    if isinstance(x, list):
        return list_type([literal_type(i) for i in x])
    return type(x).__name__


def list_type(items: Sequence[str]) -> str:
    """``int[]``, ``Tensor[]``; ``Tensor?[]`` for tensors and ``None`` s mixed (``index``'s indices)."""
    kinds = set(items)
    if len(kinds) == 1:
        return f"{items[0]}[]"
    if len(kinds) == 2 and "NoneType" in kinds:
        (other,) = kinds - {"NoneType"}
        return f"{other}?[]"
    if kinds <= {"int", "float"} and kinds:
        return "float[]"
    return "Any[]"


_DTYPE_NAMES: dict[torch.dtype, str] = {}


def dtype_name(dtype: torch.dtype) -> str:
    """TorchScript's name of a dtype (``Float``, ``Long``), asked of torch once per dtype."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        try:
            name = torch._C.TensorType.create_from_tensor(torch.empty(0, dtype=dtype)).scalarType()
        except (RuntimeError, TypeError):
            name = None
        name = _DTYPE_NAMES[dtype] = name or str(dtype).replace("torch.", "")
    return name


def _dim(d: Any) -> int | str | None:
    if isinstance(d, int):
        return d
    if isinstance(d, torch.SymInt):
        known = d.node.maybe_as_int()
        return int(known) if known is not None else str(d)
    return None


#: (type, shape, dtype, device, requires_grad)
Fields = tuple[str, tuple[int | str | None, ...] | None, str | None, str | None, bool | None]


def value_fields(val: Any) -> Fields:
    """A Value's fields from ``node.meta["val"]`` (``MISSING`` when torch recorded none: type ``Any``)."""
    if isinstance(val, torch.Tensor):
        return (
            "Tensor",
            tuple(_dim(d) for d in val.shape),
            dtype_name(val.dtype),
            str(val.device),
            bool(val.requires_grad),
        )
    if isinstance(val, (torch.SymBool, bool)):
        return ("bool", None, None, None, None)
    if isinstance(val, (torch.SymInt, int)):
        return ("int", None, None, None, None)
    if isinstance(val, (torch.SymFloat, float)):
        return ("float", None, None, None, None)
    if val is MISSING:
        return ("Any", None, None, None, None)
    if isinstance(val, tuple):
        return ("(" + ", ".join(value_fields(v)[0] for v in val) + ")", None, None, None, None)
    if isinstance(val, list):
        return (list_type([value_fields(v)[0] for v in val]), None, None, None, None)
    return (literal_type(val), None, None, None, None)
