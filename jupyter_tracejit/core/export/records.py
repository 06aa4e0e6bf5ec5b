"""What an export recorded beyond its graph, as torch-free records: a saved run's ``export`` section loads where
torch is not installed (as :mod:`..check` does for a trace's check).

:mod:`.report` fills them from an ``ExportedProgram`` (``graph_signature``, ``range_constraints``, the shape
environment's guards, symbols and deferred runtime asserts, ``draft_export`` 's private report); the findings and
the explorer read them. Names follow torch's, lower-cased: an input's kind is ``user_input`` / ``parameter`` /
``buffer`` ..., a symbol's name is ``s27`` or ``u0``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..jsonio import Decoders, JsonRecord, list_of

#: :attr:`ExportGuard.kind` values
GUARD_KINDS = ("guard", "runtime_assert", "specialization")
#: :attr:`ExportSymbol.kind` values: ``backed`` (an input's size, ``s27``), ``unbacked`` (data-dependent, ``u0``)
SYMBOL_KINDS = ("backed", "unbacked")


@dataclass
class SignatureEntry(JsonRecord):
    """One input or output of the exported program, as ``graph_signature`` lists it."""

    #: torch's ``InputKind`` / ``OutputKind`` lower-cased: ``user_input``, ``parameter``, ``buffer``,
    #: ``constant_tensor``, ``custom_obj``, ``token``; ``user_output``, ``buffer_mutation``, ``user_input_mutation``...
    kind: str
    #: the placeholder's (or output value's) name in the graph: ``x``, ``p_fc1_weight``; ``""`` for a constant
    name: str
    #: the qualified name it stands for (``fc1.weight``, the mutated buffer ``bn.running_mean``), or None
    target: str | None = None


@dataclass
class ExportSymbol(JsonRecord):
    """A symbolic size of the export: an input's dynamic dim (``s27``) or a data-dependent value (``u0``)."""

    name: str
    #: its range as export knows it (``range_constraints``, else the shape environment's); None for unbounded
    min: int | None = None
    max: int | None = None
    #: where it comes from, as the user writes it: ``["x.size()[1]"]`` (torch's ``L['x']`` shortened to ``x``)
    sources: list[str] = field(default_factory=list)
    #: ``backed`` or ``unbacked`` (:data:`SYMBOL_KINDS`)
    kind: str = "backed"


@dataclass
class ExportGuard(JsonRecord):
    """An assumption the program holds: a guard on its inputs (checked when it is called), a runtime assert (a node
    of the graph), or a specialisation (a dynamic dim that became a constant, ``Eq(s77, 3)``)."""

    #: :data:`GUARD_KINDS`
    kind: str
    #: torch's expression text: ``Eq(s77, 3)``, ``0 <= u0``
    expr: str
    #: the user's line that made it (empty / 0 when torch recorded none)
    file: str = ""
    line: int = 0
    code: str = ""
    #: the forward graph's nodes it concerns (the assert nodes; the nodes of its line for a guard)
    node_ids: list[int] = field(default_factory=list)


@dataclass
class DraftFailure(JsonRecord):
    """One item of ``draft_export`` 's report."""

    #: torch's failure type lower-cased: ``guard_added``, ``data_dependent_error``, ``missing_fake_kernel``...
    failure_type: str
    expr: str = ""
    file: str = ""
    line: int = 0
    #: torch's own text for it
    message: str = ""


@dataclass
class ExportReport(JsonRecord):
    """``run.export``: the signature, symbols, guards and runtime asserts of one export, torch's log text during
    it, and ``draft_export`` 's report when one ran (None otherwise)."""

    inputs: list[SignatureEntry] = field(default_factory=list)
    outputs: list[SignatureEntry] = field(default_factory=list)
    #: qualified names of the buffers the program writes (BatchNorm's running stats in train mode)
    mutated_buffers: list[str] = field(default_factory=list)
    symbols: list[ExportSymbol] = field(default_factory=list)
    guards: list[ExportGuard] = field(default_factory=list)
    #: what torch logged (and printed to stderr) during the export
    log: str = ""
    draft: list[DraftFailure] | None = None

    _json_decoders: ClassVar[Decoders] = {
        "inputs": list_of(SignatureEntry.from_json),
        "outputs": list_of(SignatureEntry.from_json),
        "symbols": list_of(ExportSymbol.from_json),
        "guards": list_of(ExportGuard.from_json),
        "draft": list_of(DraftFailure.from_json),
    }

    @staticmethod
    def node_references(data: Mapping[str, Any]) -> Iterator[tuple[str, str, list[Any]]]:
        """``(JSON pointer within the records, graph, node ids)`` of every node id the records' JSON holds (the
        saved-run check's rule, :mod:`..validate`): the guards' and runtime asserts', of the graph ``forward``."""
        for i, guard in enumerate(data["guards"]):
            yield f"/guards/{i}/node_ids", "forward", guard["node_ids"]

    def symbol(self, name: str) -> ExportSymbol | None:
        return next((s for s in self.symbols if s.name == name), None)

    def guards_of(self, kind: str) -> list[ExportGuard]:
        return [g for g in self.guards if g.kind == kind]


__all__ = [
    "GUARD_KINDS",
    "SYMBOL_KINDS",
    "DraftFailure",
    "ExportGuard",
    "ExportReport",
    "ExportSymbol",
    "SignatureEntry",
]
