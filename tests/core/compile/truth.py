"""torch's own verdict on a model, to test runs against: ``torch._dynamo.explain`` (its graphs and break reasons)
and a counting back end (every compile, with torch's compile id: ``0/1`` is frame 0's second compile)."""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass
class Explained:
    graph_count: int
    #: ``(file, line)`` of each break reason: its innermost frame in ``file`` (the user's line)
    break_lines: list[tuple[str, int]]
    reasons: list[str]


def explain(
    model: Any, args: Sequence[Any], kwargs: Mapping[str, Any] | None = None, *, files: Iterable[str] = ()
) -> Explained:
    """``torch._dynamo.explain`` on the model (it resets dynamo before and after, as torch does)."""
    wanted = {os.path.abspath(f) for f in files}
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        out = torch._dynamo.explain(model)(*args, **dict(kwargs or {}))
    lines = []
    for reason in out.break_reasons:
        frames = [f for f in reason.user_stack if not wanted or os.path.abspath(f.filename) in wanted]
        if frames:
            lines.append((os.path.abspath(frames[-1].filename), int(frames[-1].lineno)))
    return Explained(out.graph_count, lines, [r.reason for r in out.break_reasons])


@dataclass
class Counted:
    #: ``(call, compile id)`` of every graph compiled
    compiles: list[tuple[int, str]] = field(default_factory=list)

    @property
    def recompiles(self) -> int:
        """Compiles torch numbers as a frame's second or later (``0/1``)."""
        return sum(1 for _, cid in self.compiles if not cid.endswith("/0"))


def count_compiles(
    model: Any, calls: Sequence[tuple[Sequence[Any], Mapping[str, Any]]], *, dynamic: bool | None = None
) -> Counted:
    """``torch.compile(model, backend=counting)`` called with each input set; what it compiled."""
    counted = Counted()
    current = [0]

    def counting(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
        cid = torch._guards.CompileContext.current_compile_id()
        counted.compiles.append((current[0], f"{cid.frame_id}/{cid.frame_compile_id}"))
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(model, backend=counting, dynamic=dynamic)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        for i, (args, kwargs) in enumerate(calls):
            current[0] = i
            compiled(*args, **dict(kwargs))
    torch._dynamo.reset()
    return counted
