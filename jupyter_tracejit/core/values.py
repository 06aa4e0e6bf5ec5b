"""Torch values as JSON-ready data, one spelling for every back end: constants and attributes (``encode_ivalue``),
tensor constants by a preview and a digest (``tensor_summary``), TorchScript's mangled class names read plainly."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import torch

from .jsonio import float_to_json

_MANGLE_RE = re.compile(r"___torch_mangle_\d+\.")
#: how many of a tensor constant's values its summary shows
TENSOR_PREVIEW = 8


def demangle(text: str) -> str:
    return _MANGLE_RE.sub("", text)


#: dtypes whose values numpy reads exactly as torch's ``tolist`` does (no bfloat16, no complex with its conj bit)
_NUMPY_SUMMARY_DTYPES = frozenset(
    {
        torch.float32,
        torch.float64,
        torch.float16,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
    }
)


def tensor_summary(t: torch.Tensor) -> dict[str, Any]:
    """A JSON-ready description of a tensor constant: dtype, shape, a preview and a content digest."""
    dtype = t.dtype
    summary: dict[str, Any] = {
        "dtype": str(dtype).replace("torch.", ""),
        "shape": list(t.shape),
        "device": str(t.device),
    }
    if dtype in _NUMPY_SUMMARY_DTYPES and t.is_cpu and t.layout == torch.strided and not t.requires_grad:
        # the common case (a trace holds thousands of small CPU constants): numpy reads the memory directly, the
        # same preview and bytes as below for a third of the cost of the torch calls
        try:
            array = t.contiguous().numpy()
        except (RuntimeError, TypeError, ValueError):
            pass
        else:
            summary["preview"] = [encode_scalar(x) for x in array.reshape(-1)[:TENSOR_PREVIEW].tolist()]
            summary["digest"] = hashlib.sha1(array.tobytes()).hexdigest()[:16]
            return summary
    try:
        flat = t.detach().to("cpu").contiguous()
        summary["preview"] = [encode_scalar(x) for x in flat.reshape(-1)[:TENSOR_PREVIEW].tolist()]
        summary["digest"] = hashlib.sha1(
            flat.numpy().tobytes() if flat.dtype != torch.bfloat16 else flat.float().numpy().tobytes()
        ).hexdigest()[:16]
    except (RuntimeError, TypeError, ValueError):  # quantized, sparse, meta: no host view
        summary["preview"] = []
        summary["digest"] = ""
    return summary


def encode_scalar(x: Any) -> Any:
    if isinstance(x, complex):
        return {"repr": repr(x)}
    return float_to_json(x)


def encode_ivalue(value: Any) -> Any:
    """Constant and attribute values as JSON-ready data, tagged where JSON has no type for them."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, (float, complex)):
        return encode_scalar(value)
    if isinstance(value, torch.Tensor):
        return {"tensor": tensor_summary(value)}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, torch.dtype):
        return {"repr": str(value)}
    if isinstance(value, (list, tuple)):
        return [encode_ivalue(v) for v in value]
    return {"repr": demangle(repr(value))}


__all__ = ["TENSOR_PREVIEW", "demangle", "encode_ivalue", "encode_scalar", "tensor_summary"]
