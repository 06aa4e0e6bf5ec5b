"""What the generalization probe found (:mod:`.probe`), as torch-free records: a saved run's probe loads where torch
is not installed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from .jsonio import Decoders, JsonRecord, list_of

AGREE = "agree"
DISAGREE = "disagree"
TRACE_ERROR = "trace_error"
SKIPPED = "skipped"
#: every case status, in the order the UI lists them
STATUSES = (DISAGREE, TRACE_ERROR, AGREE, SKIPPED)
_FINDINGS = frozenset({DISAGREE, TRACE_ERROR})


@dataclass
class ProbeCase(JsonRecord):
    """One derived input set and how the trace fared on it."""

    name: str  # stable short id: "values:randn", "size:arg0.dim0+1", "size:all+1"
    description: str  # a human sentence saying how the inputs were derived
    input_shapes: list[str]  # "Float(4, 8)" per input, in input order; keyword inputs as "name=Float(4, 8)"
    status: str  # AGREE | DISAGREE | TRACE_ERROR | SKIPPED
    max_abs: float | None = None  # greatest absolute difference over all tensor outputs
    max_rel: float | None = None  # greatest relative difference (to the eager output)
    message: str = ""  # disagree: which output and how far; errors: "ExceptionType: line"


@dataclass
class ProbeReport(JsonRecord):
    """All cases of one probe, and which input dimensions were varied."""

    cases: list[ProbeCase] = field(default_factory=list)
    dims: dict[str, list[int]] = field(default_factory=dict)  # "arg0" / keyword name -> varied dims

    _json_decoders: ClassVar[Decoders] = {"cases": list_of(ProbeCase.from_json)}

    @property
    def ok(self) -> bool:
        """No case disagrees or fails in the trace (skipped cases are not findings)."""
        return not any(c.status in _FINDINGS for c in self.cases)

    @property
    def findings(self) -> list[ProbeCase]:
        return [c for c in self.cases if c.status in _FINDINGS]
