"""Running a traced graph with enough C stack.

torch's TorchScript interpreter recurses once per node of a long chain when it runs a traced graph: on the
default 8 MiB stack a chain of about 10,000 ops (``for i in range(N): x = x + 1``) segfaults the process —
``torch.jit.trace``'s own check crashes the same way. In a notebook that kills the kernel and every run in it. The
same call passes on a thread with a bigger stack, so the core runs big graphs there (torch's grad mode, which is
per thread, is carried over).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import torch

T = TypeVar("T")

#: graphs with more nodes than this run on a thread of their own with a stack sized for them
DEEP_GRAPH_NODES = 2000
#: C stack per node, with room to spare (measured: ~0.7 KiB per node of an elementwise chain)
_STACK_PER_NODE = 4 * 1024
_MIN_STACK = 64 * 1024 * 1024
_MAX_STACK = 1024 * 1024 * 1024


def stack_for(nodes: int) -> int:
    """The stack size (bytes) that runs a graph of ``nodes`` nodes safely."""
    return min(max(_MIN_STACK, nodes * _STACK_PER_NODE), _MAX_STACK)


def run_with_stack(nodes: int, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, on a thread with a stack sized for a graph of ``nodes`` nodes when it is big.

    Exceptions (KeyboardInterrupt included) come back to the caller as if ``fn`` had run here.
    """
    if nodes <= DEEP_GRAPH_NODES:
        return fn(*args, **kwargs)
    outcome: dict[str, Any] = {}
    grad_enabled = torch.is_grad_enabled()

    def target() -> None:
        try:
            with torch.set_grad_enabled(grad_enabled):
                outcome["value"] = fn(*args, **kwargs)
        except BaseException as e:  # handed to the caller's thread below
            outcome["error"] = e

    previous = threading.stack_size(stack_for(nodes))
    try:
        worker = threading.Thread(target=target, name="tracejit-deep-graph", daemon=True)
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


__all__ = ["DEEP_GRAPH_NODES", "run_with_stack", "stack_for"]
