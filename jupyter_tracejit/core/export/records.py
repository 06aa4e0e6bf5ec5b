"""What an export recorded beyond its graph, as torch-free records: a saved run's ``export`` section loads where
torch is not installed (as :mod:`..check` does for a trace's check).

:mod:`.report` fills them from an ``ExportedProgram`` (``graph_signature``, ``range_constraints``, the shape
environment's guards, symbols and deferred runtime asserts, ``draft_export`` 's private report); the findings and
the explorer read them. Names follow torch's, lower-cased: an input's kind is ``user_input`` / ``parameter`` /
``buffer`` ..., a symbol's name is ``s27`` or ``u0``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
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
    #: the library whose code made it (``torch.nn`` for ``nn.LSTM``, ``transformers``), and that line; the user's line
    #: (file, line, code) is then the user's last frame that called into it. ``""`` / 0 when the line is the user's
    library: str = ""
    library_file: str = ""
    library_line: int = 0
    library_code: str = ""

    _json_sparse: ClassVar[tuple[str, ...]] = ("library", "library_file", "library_line", "library_code")


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


#: :attr:`Fix.kind` values, in no particular order (a :class:`DimAdvice` lists its fixes best first)
FIX_KINDS = ("model_fact", "auto", "static", "range", "multiple", "suggested", "check", "rewrite", "cond")
#: :attr:`DimAdvice.kind` values: export refused the dim, made it a constant (``Dim.AUTO``, silently), or the
#: program refused the check's inputs at the guard
ADVICE_KINDS = ("refused", "specialized", "check_failed")
#: :attr:`DraftOffer.status` values: not run yet (``run.draft()`` runs it), run, or run and failed
DRAFT_STATUSES = ("offered", "ran", "failed")


@dataclass
class Fix(JsonRecord):
    """One way to make a dynamic dim work, as :class:`DimAdvice` ranks them."""

    #: :data:`FIX_KINDS`: a fact of the model's code (Whisper's frame count), Dim.AUTO, leave the dim static, a
    #: narrower range, a multiple, torch's suggested fix, ``torch._check``, rewrite the line, ``torch.cond``
    kind: str
    #: the fix in words
    text: str
    #: the dim's spec in the user's ``dynamic_shapes`` terms once fixed (``Dim.AUTO``, ``Dim('seq', min=2,
    #: max=448)``, ``8*Dim('_seq', min=1, max=8)``, ``None`` for static); ``""`` when the fix is no spec change
    spec: str = ""
    #: the whole ``dynamic_shapes`` with that spec in place, as Python text; ``""`` when :attr:`spec` is
    dynamic_shapes: str = ""
    #: code that applies it (``torch._check(x.size(1) % 8 == 0)``), ``""`` for none
    code: str = ""


@dataclass
class DimAdvice(JsonRecord):
    """What made a dynamic dim fail, where, and the fixes that apply there, best first: a refused export, a dim that
    became a constant, or the check's inputs refused at a guard."""

    #: :data:`ADVICE_KINDS`
    kind: str
    #: the symbol and the size it is (``s77``, ``x.size()[1]``); the input and dim of ``dynamic_shapes`` (``x``, 1)
    symbol: str
    source: str = ""
    input: str = ""
    dim: int = -1
    #: the dim's spec as given (``Dim('seq', min=2, max=64)``, ``Dim.AUTO``), ``""`` when static or unknown
    given: str = ""
    #: the guards the dim failed (torch's expressions)
    exprs: list[str] = field(default_factory=list)
    #: the user's line: where the code made the guard, or called into the library that made it
    file: str = ""
    line: int = 0
    code: str = ""
    #: the library whose code made it (``torch.nn``, ``transformers``) and its line; ``""`` / 0 when the line is
    #: the user's own
    library: str = ""
    library_file: str = ""
    library_line: int = 0
    library_code: str = ""
    #: whether the guards hold for every size of the declared range (torch only failed to prove them); None when
    #: not judged (a specialisation, a range too wide to evaluate)
    holds: bool | None = None
    #: torch's suggested fix, in the user's ``dynamic_shapes`` terms (``seq = 8*_seq`` -> ``8*Dim('_seq', min=1,
    #: max=8)``); ``""`` when torch suggested none
    suggested: str = ""
    fixes: list[Fix] = field(default_factory=list)

    _json_decoders: ClassVar[Decoders] = {"fixes": list_of(Fix.from_json)}


@dataclass
class DraftOffer(JsonRecord):
    """A refused export's draft (``torch.export.draft_export``), which export no longer runs before showing the
    refusal: offered (``run.draft()`` or the explorer's button runs it), run, or failed; and what it adds."""

    #: :data:`DRAFT_STATUSES`
    status: str
    #: what the draft adds to the run, one line each (as the explorer lists them)
    adds: list[str] = field(default_factory=list)
    #: how to run it from Python
    how: str = "run.draft()"


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
    #: each dynamic dim that failed, where and why, with the fixes that apply there (best first)
    advice: list[DimAdvice] = field(default_factory=list)
    #: the draft of a refused export: offered, run or failed, and what it adds; None when none is offered
    draft_offer: DraftOffer | None = None

    _json_decoders: ClassVar[Decoders] = {
        "inputs": list_of(SignatureEntry.from_json),
        "outputs": list_of(SignatureEntry.from_json),
        "symbols": list_of(ExportSymbol.from_json),
        "guards": list_of(ExportGuard.from_json),
        "draft": list_of(DraftFailure.from_json),
        "advice": list_of(DimAdvice.from_json),
        "draft_offer": DraftOffer.from_json,
    }
    _json_sparse: ClassVar[tuple[str, ...]] = ("advice", "draft_offer")

    @staticmethod
    def node_references(data: Mapping[str, Any]) -> Iterator[tuple[str, str, list[Any]]]:
        """``(JSON pointer within the records, graph, node ids)`` of every node id the records' JSON holds (the
        saved-run check's rule, :mod:`..validate`): the guards' and runtime asserts', of the graph ``forward``."""
        for i, guard in enumerate(data["guards"]):
            yield f"/guards/{i}/node_ids", "forward", guard["node_ids"]

    def text_lines(
        self, place: Callable[[str, int], str] | None = None, spelling: Callable[[str], str] = str
    ) -> list[str]:
        """The signature and the symbols with their ranges, as the text report (``tracejit view``) prints them (the
        text report's hook, as every back end's records have it: no place or advice to word here)."""
        user_inputs = [e.name for e in self.inputs if e.kind == "user_input"]
        lifted = [e.kind for e in self.inputs if e.kind != "user_input"]
        counts = ", ".join(f"{lifted.count(k)} {k.replace('_', ' ')}{'s' if lifted.count(k) != 1 else ''}"
                           for k in dict.fromkeys(lifted))  # fmt: skip
        outputs = [e.name or e.kind for e in self.outputs if e.kind == "user_output"]
        lines = [f"signature: ({', '.join(user_inputs)}) -> ({', '.join(outputs)})" + (f"; {counts}" if counts else "")]
        if self.mutated_buffers:
            lines.append(f"  mutates: {', '.join(self.mutated_buffers)}")
        if self.symbols:
            lines.append("symbols:")
        for s in self.symbols:
            low = "-inf" if s.min is None else str(s.min)
            high = "inf" if s.max is None else str(s.max)
            what = ", ".join(s.sources) or ("a value read from a tensor" if s.kind == "unbacked" else "")
            lines.append(f"  {s.name}" + (f" = {what}" if what else "") + f", range [{low}, {high}]")
        return lines

    def symbol(self, name: str) -> ExportSymbol | None:
        return next((s for s in self.symbols if s.name == name), None)

    def guards_of(self, kind: str) -> list[ExportGuard]:
        return [g for g in self.guards if g.kind == kind]


__all__ = [
    "ADVICE_KINDS",
    "DRAFT_STATUSES",
    "FIX_KINDS",
    "GUARD_KINDS",
    "SYMBOL_KINDS",
    "DimAdvice",
    "DraftFailure",
    "DraftOffer",
    "ExportGuard",
    "ExportReport",
    "ExportSymbol",
    "Fix",
    "SignatureEntry",
]
