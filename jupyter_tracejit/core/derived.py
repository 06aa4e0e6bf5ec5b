"""Inputs derived from an example, and runs that leave no trace: the rules the TorchScript back end's probe and the
export back end's check share (one definition each): clone nested inputs, a tensor resized with its values kept
where the shapes overlap, random values like a tensor's, the RNG reseeded identically before each run, an
exception's one line."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

#: an exception's line is cut here
MAX_MESSAGE = 400
_INT64_MAX = 2**63 - 1


def exception_line(e: BaseException) -> str:
    """``ExceptionType: first line``; for TorchScript interpreter errors the line naming the real error."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    line = lines[0] if lines else ""
    if len(lines) > 1 and "failed in the TorchScript interpreter" in line:
        line = lines[-1]
        # the interpreter's last line already reads "RuntimeError: ..."
        if ": " in line and line.split(": ", 1)[0].replace(".", "").isidentifier():
            return line[:MAX_MESSAGE]
    text = f"{type(e).__name__}: {line}" if line else type(e).__name__
    return text[:MAX_MESSAGE]


def map_tensors(obj: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """Apply ``fn`` to every tensor of a nested tuple/list/dict; everything else is kept as is."""
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple):
        items = [map_tensors(o, fn) for o in obj]
        if hasattr(obj, "_fields"):  # namedtuple
            return type(obj)(*items)
        return tuple(items)
    if isinstance(obj, list):
        return [map_tensors(o, fn) for o in obj]
    if isinstance(obj, dict):
        mapped = {k: map_tensors(v, fn) for k, v in obj.items()}
        if type(obj) is not dict:
            try:
                return type(obj)(mapped)
            except Exception:
                pass
        return mapped
    return obj


def has_tensor(obj: Any) -> bool:
    if isinstance(obj, torch.Tensor):
        return True
    if isinstance(obj, tuple | list):
        return any(has_tensor(o) for o in obj)
    if isinstance(obj, dict):
        return any(has_tensor(v) for v in obj.values())
    return False


def clone_tensors(obj: Any) -> Any:
    return map_tensors(obj, lambda t: t.detach().clone())


def is_float(t: torch.Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def random_like(t: torch.Tensor, shape: Sequence[int], g: torch.Generator) -> torch.Tensor:
    """Random values of ``t``'s dtype and device in the given shape, distributed like ``t``."""
    shape = tuple(shape)
    src = t.detach()
    if is_float(t):
        gen_dtype = t.dtype if t.dtype in (torch.float64, torch.complex64, torch.complex128) else torch.float32
        out = torch.randn(shape, generator=g, dtype=gen_dtype)
        mean: complex | float = 0.0
        std = 1.0
        if src.numel() > 0:
            acc = src.to("cpu", torch.complex128 if src.is_complex() else torch.float64)
            m = acc.mean().item()
            mean = m if math.isfinite(abs(m)) else 0.0
            if src.numel() > 1:
                s = float(acc.std().real.item())
                std = s if math.isfinite(s) and s > 0 else 1.0
        out = out * std + mean
        return out.to(device=t.device, dtype=t.dtype)
    if t.dtype == torch.bool:
        return (torch.rand(shape, generator=g) < 0.5).to(t.device)
    if src.numel() > 0:
        lo = int(src.min().item())
        hi = int(src.max().item())
    else:
        lo, hi = 0, 1
    try:
        out = torch.randint(lo, min(hi + 1, _INT64_MAX), shape, generator=g, dtype=torch.int64)
    except Exception:
        out = torch.full(shape, lo, dtype=torch.int64)
    return out.to(device=t.device, dtype=t.dtype)


def resized(t: torch.Tensor, shape: Sequence[int], g: torch.Generator) -> torch.Tensor:
    """``t`` in a new shape: the example's values where the shapes overlap, random values elsewhere."""
    out = random_like(t, shape, g)
    overlap = tuple(slice(0, min(a, b)) for a, b in zip(t.shape, shape, strict=True))
    out[overlap] = t.detach()[overlap]
    return out


def cuda_devices_of(inputs: Any, modules: Sequence[torch.nn.Module]) -> list[int]:
    devices: set[int] = set()

    def visit(t: torch.Tensor) -> torch.Tensor:
        if t.device.type == "cuda":
            devices.add(t.device.index if t.device.index is not None else torch.cuda.current_device())
        return t

    map_tensors(inputs, visit)
    for m in modules:
        for t in (*m.parameters(), *m.buffers()):
            visit(t)
    return sorted(devices)


def reseed(seed: int, cuda_devices: Sequence[int]) -> None:
    torch.default_generator.manual_seed(seed)
    for d in cuda_devices:
        try:
            torch.cuda.default_generators[d].manual_seed(seed)
        except Exception:
            pass


__all__ = [
    "clone_tensors",
    "cuda_devices_of",
    "exception_line",
    "has_tensor",
    "is_float",
    "map_tensors",
    "random_like",
    "reseed",
    "resized",
]
