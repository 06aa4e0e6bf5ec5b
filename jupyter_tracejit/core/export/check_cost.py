"""What a check case will cost, before it runs: the exported program's arithmetic, counted from its graph.

Running the Python code and the program on an input set costs about twice the program's floating-point work at
those sizes, plus a fixed cost per op. The work is counted statically, from the shapes the graph records for each
matrix product, linear layer, convolution and attention (at the example's sizes: each symbol's hint), with
``torch.utils.flop_counter`` 's formulas where torch has one; nothing runs. The machine's speed is measured once per
process on a small matrix product. A size whose work scales with its elements is estimated by the ratio of its
elements to the example's. The check then runs what fits in its time budget (:mod:`.check`): Whisper's encoder,
whose every size costs seconds, is offered, not run; a small model's cases cost microseconds of work and always run,
whatever the machine's load does to the fixed cost per op.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import Any

import torch
from torch.utils import _pytree as pytree

#: a case with less arithmetic than this (both runs) always runs: what it costs is the fixed cost per op, and the
#: decision does not depend on this machine's speed or load (a small model keeps every case)
CHEAP_FLOPS = 1e8


def _hint(size: Any) -> int:
    if isinstance(size, torch.SymInt):
        hint = size.node.hint
        return int(hint) if hint is not None else 1
    return int(size)


def _shape(value: Any) -> list[int] | None:
    return [_hint(s) for s in value.shape] if isinstance(value, torch.Tensor) else None


def _linear(x: list[int], w: list[int], *_: Any) -> int:
    return 2 * math.prod(x[:-1]) * w[0] * x[-1]


def _matmul(a: list[int], b: list[int], *_: Any) -> int:
    if len(a) < 2 or len(b) < 2:
        return 2 * math.prod(a) * (b[-1] if len(b) > 1 else 1)
    batch = math.prod(a[:-2]) if len(a) >= len(b) else math.prod(b[:-2])
    return 2 * batch * a[-2] * a[-1] * b[-1]


def _conv(x: list[int], w: list[int], *_: Any, out: list[int] | None = None) -> int:
    # each output element: a dot product over the kernel and the input channels of its group
    return 2 * math.prod(out or []) * math.prod(w[1:]) if out else 0


def _attention(q: list[int], k: list[int], *_: Any) -> int:
    return 4 * math.prod(q[:-1]) * k[-2] * q[-1]


_FORMULAS: dict[str, Callable[..., int]] = {
    "linear": _linear,
    "matmul": _matmul,
    "mm": _matmul,
    "bmm": _matmul,
    "addmm": lambda bias, a, b, *rest: _matmul(a, b),
    "conv1d": _conv,
    "conv2d": _conv,
    "conv3d": _conv,
    "convolution": _conv,
    "conv_transpose1d": _conv,
    "conv_transpose2d": _conv,
    "conv_transpose3d": _conv,
    "scaled_dot_product_attention": _attention,
}


def program_flops(ep: Any) -> float:
    """The program's floating-point operations at the example's sizes (its top-level graph); 0 when none can be
    counted."""
    total = 0
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        name = str(getattr(getattr(node.target, "_schema", None), "name", "")).split("::")[-1]
        formula = _FORMULAS.get(name)
        if formula is None:
            continue
        shapes = [_shape(a.meta.get("val")) if isinstance(a, torch.fx.Node) else None for a in node.args]
        try:
            if formula is _conv:
                total += formula(*shapes, out=_shape(node.meta.get("val")))
            else:
                total += formula(*shapes)
        except (TypeError, IndexError):  # an argument of no shape (a bias left out, a scalar): not counted
            continue
    return float(total)


@functools.cache
def machine_flops() -> float:
    """This machine's floating-point operations per second on a small matrix product (measured once: the fastest of
    a few tries, so that a moment of the machine's load does not count)."""
    a = torch.randn(256, 256)
    a @ a
    fastest = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        a @ a
        fastest = min(fastest, time.perf_counter() - t0)
    return 2 * 256**3 / max(fastest, 1e-9)


class CaseCost:
    """Seconds a check case's two runs (the Python code's and the program's) are estimated to take: the program's
    work at the example, scaled by the case's elements."""

    def __init__(self, ep: Any, example: Any) -> None:
        self.flops = program_flops(ep)
        self.elements = max(1, sum(t.numel() for t in pytree.tree_leaves(example) if isinstance(t, torch.Tensor)))
        self.speed = machine_flops() if self.flops else 1.0
        #: how much slower than their work the cases that ran were (the fixed cost per op, the first call)
        self.factor = 1.0

    def flops_of(self, elements: int) -> float:
        """The two runs' arithmetic at a case of ``elements``."""
        return 2 * self.flops * (elements / self.elements)

    def cheap(self, elements: int) -> bool:
        """Whether a case of ``elements`` has so little arithmetic that it always runs (:data:`CHEAP_FLOPS`)."""
        return self.flops_of(elements) < CHEAP_FLOPS

    def work(self, elements: int) -> float:
        """Seconds of the two runs' arithmetic alone."""
        return self.flops_of(elements) / self.speed

    def of(self, elements: int) -> float:
        """Seconds the two runs are estimated to take, as slow as the slowest case so far."""
        return self.work(elements) * self.factor

    def ran(self, elements: int, seconds: float) -> None:
        """A case of ``elements`` took ``seconds``: later estimates are scaled to match."""
        if not self.cheap(elements):  # a cheap case's time is its fixed cost: it says nothing of the work's speed
            self.factor = max(self.factor, seconds / self.work(elements))


__all__ = ["CHEAP_FLOPS", "CaseCost", "machine_flops", "program_flops"]
