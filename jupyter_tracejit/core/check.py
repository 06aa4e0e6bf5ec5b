"""What the check of a capture found, as torch-free records: a saved run's check loads where torch is not installed.

The TorchScript back end fills them (:mod:`.torchscript.check` re-does ``torch.jit._trace._check_trace``); the
explorer, the reports and the findings read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .diff import GraphDiff
from .errors import TraceError
from .graph import Graph
from .jsonio import Decoders, JsonRecord, list_of
from .words import plural

#: torch.jit.trace's default ``check_tolerance`` (the same in every torch the CI matrix runs; a test reads torch's
#: signature): the relative tolerance of every check's output comparison unless the user sets another
DEFAULT_TOLERANCE = 1e-5
#: how messages and help spell it, as torch's docs write it
DEFAULT_TOLERANCE_TEXT = "1e-5"


def _default_tolerance() -> float:
    return DEFAULT_TOLERANCE


@dataclass
class OutputComparison(JsonRecord):
    """One tensor output of the trace compared with the Python function or with the re-trace."""

    index: int
    against: str  # "python" or "retrace"
    ok: bool
    max_abs: float | None = None
    max_rel: float | None = None
    atol: float = 0.0
    rtol: float = 0.0
    shape: list[int] = field(default_factory=list)
    #: torch's own description of the mismatch (``assert_close``'s message), as its warning prints it
    message: str = ""

    def mismatch(self) -> str:
        """How the reports (text and HTML) name a failed output: ``output 1 vs the python: max abs error ...``."""
        err = "shapes differ" if self.max_abs is None else f"max abs error {self.max_abs:.3g} (rtol {self.rtol:g})"
        return f"output {self.index + 1} vs the {self.against}: {err}"


@dataclass
class CheckCase(JsonRecord):
    """The check of one method with one set of check inputs."""

    index: int
    method: str
    label: str
    #: the check inputs described, e.g. ``["Float(4, 3)"]``
    inputs: list[str] = field(default_factory=list)
    outputs: list[OutputComparison] = field(default_factory=list)
    #: the re-trace's graph; kept only when it differs from the trace (an identical graph is redundant)
    graph: Graph | None = None
    diff: GraphDiff | None = None
    #: torch's printed graphs differ although no structural divergence was found (e.g. debug names only)
    text_differs: bool = False
    #: re-tracing, or running the trace / Python function / re-trace on these inputs raised
    exception: TraceError | None = None
    #: why this input set was not run, nothing compared (an export check's size the Python code rejects); "" when it
    #: ran. A skipped case is ok: it is no valid input, not a failure, and not a passed check either
    skipped: str = ""

    _json_decoders: ClassVar[Decoders] = {
        "outputs": list_of(OutputComparison.from_json),
        "graph": Graph.from_json,
        "diff": GraphDiff.from_json,
        "exception": TraceError.from_json,
    }
    _json_derived: ClassVar[tuple[str, ...]] = ("ok",)

    @property
    def graphs_differ(self) -> bool:
        return self.text_differs or (self.diff is not None and not self.diff.identical)

    @property
    def outputs_ok(self) -> bool:
        return all(o.ok for o in self.outputs)

    @property
    def ok(self) -> bool:
        return self.exception is None and self.outputs_ok and not self.graphs_differ


@dataclass
class CheckReport(JsonRecord):
    """Every check case of a run. ``ok`` agrees with torch: False exactly when torch.jit.trace would raise
    ``TracingCheckError`` (or fail to re-trace) or emit an output-mismatch warning."""

    cases: list[CheckCase] = field(default_factory=list)
    tolerance: float = field(default_factory=_default_tolerance)

    _json_decoders: ClassVar[Decoders] = {"cases": list_of(CheckCase.from_json)}
    _json_derived: ClassVar[tuple[str, ...]] = ("ok",)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.cases)

    @property
    def failed(self) -> list[CheckCase]:
        return [c for c in self.cases if not c.ok]

    @property
    def skipped(self) -> list[CheckCase]:
        return [c for c in self.cases if c.skipped]

    def passed_text(self) -> str:
        """How many input sets a passed check ran: "3 input sets", "1 input set, 2 skipped"."""
        skipped = len(self.skipped)
        ran = plural(len(self.cases) - skipped, "input set")
        return f"{ran}, {skipped} skipped" if skipped else ran

    @property
    def first(self) -> tuple[CheckCase, Any] | None:
        """The first root divergence, with its case: ``(case, Divergence)``."""
        for c in self.cases:
            if c.diff is not None and c.diff.roots:
                return c, c.diff.roots[0]
        return None

    @property
    def output_mismatches(self) -> list[tuple[CheckCase, OutputComparison]]:
        return [(c, o) for c in self.cases for o in c.outputs if not o.ok]
