"""What a structural diff (:mod:`.diff`) found, as records: the divergences (each a root, where the graphs first
part, or downstream of one), the tensor constants whose values differ, and the diff of two graphs as a whole."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .jsonio import JsonRecord

ROOT = "root"
DOWNSTREAM = "downstream"


@dataclass(frozen=True)
class Divergence:
    """A pair of corresponding nodes that differ; one side is ``None`` when the node has no counterpart."""

    trace_node: int | None
    check_node: int | None
    kind: str  # ROOT or DOWNSTREAM
    reason: str = ""

    def to_json(self) -> list[Any]:
        return [
            -1 if self.trace_node is None else self.trace_node,
            -1 if self.check_node is None else self.check_node,
            0 if self.kind == ROOT else 1,
            self.reason,
        ]

    @classmethod
    def from_json(cls, row: list[Any]) -> Divergence:
        a, b, k, reason = row
        return cls(None if a < 0 else a, None if b < 0 else b, ROOT if k == 0 else DOWNSTREAM, reason)


@dataclass(frozen=True)
class ConstantDiff(JsonRecord):
    """Matched tensor constants whose values differ."""

    trace_node: int
    check_node: int
    message: str
    max_abs: float | None = None


@dataclass
class GraphDiff:
    """The result of :func:`structural_diff`. ``divergences`` lists roots first, then downstream nodes."""

    divergences: list[Divergence] = field(default_factory=list)
    constant_diffs: list[ConstantDiff] = field(default_factory=list)
    #: trace node id -> check node id for every matched node
    matched: dict[int, int] = field(default_factory=dict)

    @property
    def roots(self) -> list[Divergence]:
        return [d for d in self.divergences if d.kind == ROOT]

    @property
    def downstream(self) -> list[Divergence]:
        return [d for d in self.divergences if d.kind == DOWNSTREAM]

    @property
    def first(self) -> Divergence | None:
        return self.divergences[0] if self.divergences else None

    @property
    def identical(self) -> bool:
        return not self.divergences and not self.constant_diffs

    def trace_partner(self, check_node: int) -> int | None:
        inverse = getattr(self, "_inverse", None)
        if inverse is None:
            inverse = {b: a for a, b in self.matched.items()}
            self._inverse = inverse
        return inverse.get(check_node)

    def to_json(self) -> dict[str, Any]:
        # matched pairs mostly run in lock-step: store [trace_start, check_start, length] runs
        runs: list[list[int]] = []
        for a, b in sorted(self.matched.items()):
            if runs and runs[-1][0] + runs[-1][2] == a and runs[-1][1] + runs[-1][2] == b:
                runs[-1][2] += 1
            else:
                runs.append([a, b, 1])
        return {
            "divergences": [d.to_json() for d in self.divergences],
            "constant_diffs": [c.to_json() for c in self.constant_diffs],
            "matched_runs": runs,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GraphDiff:
        matched: dict[int, int] = {}
        for a, b, n in data["matched_runs"]:
            for i in range(n):
                matched[a + i] = b + i
        return cls(
            divergences=[Divergence.from_json(r) for r in data["divergences"]],
            constant_diffs=[ConstantDiff.from_json(c) for c in data["constant_diffs"]],
            matched=matched,
        )


#: compares two tensor constants (trace node id, check node id) -> (message, max_abs) or None when equal
TensorCompare = Callable[[int, int], "tuple[str, float | None] | None"]
