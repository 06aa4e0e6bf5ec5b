"""What changed between two runs (:mod:`.run_diff`), one record per module scope (:class:`ScopeChange`) and per
parameter or buffer (:class:`ParameterChange`), and the rules that find them: the roots of a structural diff or the
ops a trace and an export do not share, by scope; parameters by name and type, and by value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .capture_diff import compare_captures
from .diff import ROOT, GraphDiff
from .diff_reasons import describe_constant
from .graph import Graph, Node
from .jsonio import JsonRecord
from .run import TraceRun
from .words import plural

#: :attr:`ParameterChange.change` values
PARAMETER_CHANGES = ("added", "removed", "type", "values")
#: capture_diff reasons that say why two back ends differ, not where the model changed
_NOT_A_CHANGE = frozenset({"shape_arithmetic", "runtime_check", "no_op"})


@dataclass
class ParameterChange(JsonRecord):
    """A parameter or buffer that differs: only on one side, of another type (shape or dtype), or of other values."""

    name: str
    #: :data:`PARAMETER_CHANGES`
    change: str
    #: its type on each side (``Float(16, 8, 3, 3)``); ``""`` where it is absent
    before: str = ""
    after: str = ""
    #: the largest absolute difference, for a ``values`` change
    max_abs: float | None = None

    #: written to the JSON too: the explorer's Diff view shows the words this one rule gives
    _json_derived: ClassVar[tuple[str, ...]] = ("text",)

    @property
    def text(self) -> str:
        if self.change == "added":
            return f"{self.name} added ({self.after})"
        if self.change == "removed":
            return f"{self.name} removed ({self.before})"
        if self.change == "type":
            return f"{self.name} {self.before} -> {self.after}"
        return f"{self.name} values differ (max abs {self.max_abs:.3g})" if self.max_abs is not None else self.name


@dataclass
class ScopeChange(JsonRecord):
    """What changed in one module scope (``encoder.layer.3``; ``""`` for the top level) of one method."""

    scope: str
    method: str = "forward"
    #: root ops only in the new run, only in the old one, and in both but reading other inputs
    added: int = 0
    removed: int = 0
    changed: int = 0
    #: ``"0.1 -> 0.2"`` per constant an op reads that changed
    constants: list[str] = field(default_factory=list)
    #: one line per root op (``added aten::gelu``, ``aten::conv2d: input 3 [1, 1] -> [2, 2]``)
    details: list[str] = field(default_factory=list)
    #: node ids of the roots in each run's graph of :attr:`method`
    old_nodes: list[int] = field(default_factory=list)
    new_nodes: list[int] = field(default_factory=list)

    _json_derived: ClassVar[tuple[str, ...]] = ("text",)

    @property
    def text(self) -> str:
        """``encoder.layer.3: 2 ops added, 1 constant changed 0.1 -> 0.2``."""
        parts = [
            plural(n, f"op {word}", f"ops {word}")
            for n, word in ((self.added, "added"), (self.removed, "removed"), (self.changed, "changed"))
            if n
        ]
        ops = [d for d in self.details if not d.startswith("reads ")]
        if parts and ops:
            parts[-1] += " (" + "; ".join(ops[:2]) + (" ..." if len(ops) > 2 else "") + ")"
        if self.constants:
            shown = ", ".join(self.constants[:3]) + (" ..." if len(self.constants) > 3 else "")
            parts.append(f"{plural(len(self.constants), 'constant changed', 'constants changed')} {shown}")
        where = self.scope or "top level"
        if self.method != "forward":
            where = f"{self.method}: {where}"
        return f"{where}: {', '.join(parts) or 'changed'}"


# -- graphs --------------------------------------------------------------------------------------------------------
def _scope(changes: dict[tuple[str, str], ScopeChange], method: str, scope: str) -> ScopeChange:
    key = (method, scope)
    if key not in changes:
        changes[key] = ScopeChange(scope=scope, method=method)
    return changes[key]


def _constant_changes(old: Graph, new: Graph, a: Node, b: Node) -> list[str]:
    """``["0.1 -> 0.2"]``: the constants two paired ops read that differ (looking through list plumbing; a tensor
    constant whose preview reads the same is told apart by its dtype, shape and digest)."""
    out = []
    for va, vb in zip(a.inputs, b.inputs, strict=False):
        ca, cb = describe_constant(old, va), describe_constant(new, vb)
        if ca is not None and ca == cb:
            ca, cb = describe_constant(old, va, detailed=True), describe_constant(new, vb, detailed=True)
        if ca is not None and cb is not None and ca != cb:
            out.append(f"{ca} -> {cb.removeprefix('tensor constant ')}")
    return out


def structural_changes(
    old: Graph, new: Graph, method: str, changes: dict[tuple[str, str], ScopeChange], diff: GraphDiff
) -> int:
    """Add the roots of ``diff`` (:func:`~.diff.structural_diff` of ``old`` and ``new``, by scope) per scope to
    ``changes``; returns how many ops differ only downstream of them."""
    # a module only one side has: every op of it is added (removed), downstream of its first one or not
    old_scopes = {n.scope for n in old.nodes if n.role == "op"}
    new_scopes = {n.scope for n in new.nodes if n.role == "op"}
    downstream = 0
    for d in diff.divergences:
        a = old.nodes[d.trace_node] if d.trace_node is not None else None
        b = new.nodes[d.check_node] if d.check_node is not None else None
        # an op downstream of a change that is itself another op (a module called twice, changed once) is a
        # change of its own, not only a consequence
        changed_itself = a is not None and b is not None and a.kind != b.kind
        in_a_new_module = a is None and b is not None and b.scope not in old_scopes
        in_a_gone_module = b is None and a is not None and a.scope not in new_scopes
        if d.kind != ROOT and not (changed_itself or in_a_new_module or in_a_gone_module):
            downstream += 1
            continue
        scope = _scope(changes, method, (b or a).scope if (b or a) is not None else "")  # type: ignore[union-attr]
        if a is not None:
            scope.old_nodes.append(a.id)
        if b is not None:
            scope.new_nodes.append(b.id)
        if a is None and b is not None:
            scope.added += 1
            scope.details.append(f"added {b.kind}")
        elif b is None and a is not None:
            scope.removed += 1
            scope.details.append(f"removed {a.kind}")
        elif a is not None and b is not None:
            constants = _constant_changes(old, new, a, b) if a.kind == b.kind else []
            if constants:
                scope.constants += constants
                scope.details += [f"reads {c} ({a.kind})" for c in constants]
            else:
                scope.changed += 1
                scope.details.append(f"{a.kind} -> {b.kind}" if a.kind != b.kind else f"{a.kind} reads other inputs")
    # a tensor constant whose values changed made its readers roots: they are counted above, as constants
    return downstream


def capture_changes(
    trace: Graph, export: Graph, trace_is_old: bool, changes: dict[tuple[str, str], ScopeChange]
) -> None:
    """Add the ops a trace and an export of one model do not share per scope (:func:`~.capture_diff.compare_captures`),
    leaving out what differs only because the back ends differ (shape arithmetic, runtime checks, no-ops)."""
    comparison = compare_captures(trace, export)
    for line in comparison.lines:
        if line.reason in _NOT_A_CHANGE:
            continue
        for graph, ids, is_old in (
            (trace, line.trace_nodes, trace_is_old),
            (export, line.export_nodes, not trace_is_old),
        ):
            for nid in ids:
                node = graph.nodes[nid]
                scope = _scope(changes, "forward", node.scope)
                if is_old:
                    scope.removed += 1
                    scope.old_nodes.append(nid)
                    scope.details.append(f"only in the old run: {node.kind} ({line.detail})")
                else:
                    scope.added += 1
                    scope.new_nodes.append(nid)
                    scope.details.append(f"only in the new run: {node.kind} ({line.detail})")


# -- parameters ----------------------------------------------------------------------------------------------------
def parameter_changes(old: TraceRun, new: TraceRun) -> list[ParameterChange]:
    """By name and type (``run.parameters``), in the old run's order then the new names."""
    out = []
    for name, before in old.parameters.items():
        after = new.parameters.get(name)
        if after is None:
            out.append(ParameterChange(name, "removed", before=before))
        elif after != before:
            out.append(ParameterChange(name, "type", before=before, after=after))
    out += [ParameterChange(n, "added", after=t) for n, t in new.parameters.items() if n not in old.parameters]
    return out


def live_tensors(run: TraceRun) -> dict[str, Any] | None:
    """``name -> tensor`` of a live run's model (a ScriptModule's parameters and buffers, an ExportedProgram's
    state dict and constants); None for a run read back from JSON."""
    model = run.traced
    if model is None:
        return None
    if hasattr(model, "named_parameters"):
        return {**dict(model.named_parameters()), **dict(model.named_buffers())}
    state = getattr(model, "state_dict", None)
    if isinstance(state, dict):
        return {**state, **dict(getattr(model, "constants", {}) or {})}
    return None


def value_changes(old: TraceRun, new: TraceRun, atol: float) -> tuple[list[ParameterChange], str]:
    """Parameters of the same type on both sides whose values differ by more than ``atol``, and a note when values
    could not be compared."""
    ta, tb = live_tensors(old), live_tensors(new)
    if ta is None or tb is None:
        which = "the old run" if ta is None else "the new run"
        return [], f"values not compared: {which} has no live model (a run read back from JSON keeps no tensors)"
    import torch

    out = []
    for name, a in ta.items():
        b = tb.get(name)
        if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
            continue
        if a.shape != b.shape or a.dtype != b.dtype:
            continue  # a type change, reported by name and type
        if a.numel() == 0:
            continue
        da, db = a.detach().cpu(), b.detach().cpu()
        gap = float((da - db).abs().max()) if da.is_floating_point() or da.is_complex() else float((da != db).any())
        if gap > atol or gap != gap:  # NaN: a weight that is NaN on one side only
            out.append(
                ParameterChange(
                    name, "values", before=old.parameters.get(name, ""), after=new.parameters.get(name, ""), max_abs=gap
                )
            )
    return out, ""
