"""The export check's input sets: the user's ``check_inputs`` (:func:`check_input_set`) and the sets derived at the
minimum, a middle value and the maximum of each declared range (:func:`range_cases`); see :mod:`.check` for the
rules.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils import _pytree as pytree

from ..derived import resized
from ..inputs import describe_inputs

#: a derived input set is kept under this many bytes (or twice the example's, when that is more)
MAX_DERIVED_BYTES = 64 * 2**20

Inputs = tuple[tuple[Any, ...], dict[str, Any]]


#: a derived input set has at most this many times the example's elements (or :data:`MIN_CHECKED_ELEMENTS`): a
#: range's maximum over it is lowered, and offered as a case not run (a size that would take long is not forced)
MAX_SCALE = 4.0
#: sizes up to this many elements in all are always checked, whatever the example's size
MIN_CHECKED_ELEMENTS = 1 << 16


@dataclass
class _Case:
    label: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    #: derived from a declared range: the Python code rejecting it means a skip, not a failure
    derived: bool = False
    #: why it is offered, not run (its size: "47x the example's elements"); "" for a case that runs
    offered: str = ""
    #: its inputs described, and their elements, for a case offered and not built
    inputs: list[str] | None = None
    elements: int = 0
    #: a derived case's place in its range (``min``, ``mid``, ``max``) and size; the range's maximum can be made
    #: again at a smaller size (``shrink(value)``) when the check's time budget cannot pay for it
    tag: str = ""
    value: int = 0
    low: int = 0
    shrink: Callable[[int], _Case] | None = None

    def size(self) -> int:
        """Its inputs' elements (what its run costs scales with)."""
        if self.offered:
            return self.elements
        return sum(t.numel() for t in pytree.tree_leaves((self.args, self.kwargs)) if isinstance(t, torch.Tensor))


# -- the input sets ---------------------------------------------------------------------------------------------------
def check_input_set(entry: Any) -> Inputs:
    """One ``check_inputs`` entry as ``(args, kwargs)``: a dict is keyword inputs, a pair ``(tuple, dict)`` is both,
    a tuple or list is the positional inputs, anything else (a tensor) the one positional input."""
    if isinstance(entry, dict):
        return (), dict(entry)
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], tuple) and isinstance(entry[1], dict):
        return entry[0], dict(entry[1])
    if isinstance(entry, (tuple, list)):
        return tuple(entry), {}
    return (entry,), {}


def _user_placeholders(ep: torch.export.ExportedProgram) -> list[Any]:
    """The ``val`` of each user input's placeholder, in the order of the flattened ``(args, kwargs)``."""
    from torch.export.graph_signature import InputKind

    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    vals = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            node = nodes.get(getattr(spec.arg, "name", ""))
            vals.append(node.meta.get("val") if node is not None else None)
    return vals


def _flat_inputs(
    ep: torch.export.ExportedProgram, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], Any]:
    """``(args, kwargs)`` flattened as the program's in_spec orders them (kwargs in signature order)."""
    in_spec = getattr(getattr(ep, "call_spec", None), "in_spec", None)
    if kwargs and in_spec is not None:
        try:
            from torch.export._tree_utils import reorder_kwargs

            kwargs = reorder_kwargs(kwargs, in_spec)
        except Exception:  # a private helper that moved, or kwargs the spec does not know: keep the given order
            pass
    return pytree.tree_flatten((args, kwargs))


def _size_expr(size: Any) -> Any:
    if isinstance(size, torch.SymInt):
        return size.node.expr
    return int(size)


def _symbolic(size: Any) -> bool:
    """A size that is a sympy expression (a symbol, or ``2*s0``), not a plain int."""
    return not isinstance(size, int) and hasattr(size, "free_symbols")


def _int_oo(upper: Any) -> bool:
    try:
        from torch.utils._sympy.numbers import int_oo

        if upper is int_oo or upper == int_oo:
            return True
    except ImportError:  # pragma: no cover - older torch
        pass
    return str(upper) in ("oo", "int_oo") or getattr(upper, "is_finite", True) is False


def _nbytes(leaves: Sequence[Any]) -> int:
    return sum(t.numel() * t.element_size() for t in leaves if isinstance(t, torch.Tensor))


@dataclass
class _Symbolic:
    """The example's user inputs as the program sees them: ``(leaf index, per-dim size expression)`` of every tensor
    input with a symbolic size, each symbol's example value and where it is (``x.size()[0]``, for the labels)."""

    leaves: list[Any]
    spec: Any
    exprs: list[tuple[int, list[Any]]]
    example: dict[Any, int]
    where: dict[Any, list[str]]

    def build(self, sym: Any, value: int) -> list[Any] | None:
        """The inputs with ``sym`` at ``value`` as meta tensors (the others as they are); None when a size depends
        on a symbol of no known value (unbacked)."""
        subs = dict(self.example)
        subs[sym] = value
        new = list(self.leaves)
        for i, dims in self.exprs:
            if not any(_symbolic(e) and sym in e.free_symbols for e in dims):
                continue
            shape = []
            for e in dims:
                if _symbolic(e):
                    v = e.subs(subs)
                    if v.free_symbols:
                        return None
                    shape.append(int(v))
                else:
                    shape.append(e)
            new[i] = torch.empty(shape, dtype=self.leaves[i].dtype, device="meta")
        return new


def _symbolic_inputs(ep: torch.export.ExportedProgram, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Symbolic:
    leaves, spec = _flat_inputs(ep, args, kwargs)
    vals = _user_placeholders(ep)
    exprs: list[tuple[int, list[Any]]] = []
    if len(vals) == len(leaves):
        for i, (leaf, val) in enumerate(zip(leaves, vals, strict=True)):
            if isinstance(leaf, torch.Tensor) and isinstance(val, torch.Tensor) and leaf.dim() == val.dim():
                dims = [_size_expr(s) for s in val.shape]
                if any(_symbolic(e) for e in dims):
                    exprs.append((i, dims))
    names = [getattr(s.arg, "name", f"arg{i}") for i, s in enumerate(_user_specs(ep))]
    example: dict[Any, int] = {}
    where: dict[Any, list[str]] = {}
    for i, dims in exprs:
        for d, e in enumerate(dims):
            if getattr(e, "is_Symbol", False):
                example.setdefault(e, int(leaves[i].shape[d]))
    # a derived dim (``2*s0``, ``s0 + 1``) of a symbol no dim carries alone: its example value solved from the size
    for i, dims in exprs:
        for d, e in enumerate(dims):
            free = list(getattr(e, "free_symbols", ()))
            if len(free) == 1 and free[0] not in example:
                a, b = e.coeff(free[0]), e.subs(free[0], 0)
                if a.is_Integer and b.is_Integer and int(a) and (int(leaves[i].shape[d]) - int(b)) % int(a) == 0:
                    example[free[0]] = (int(leaves[i].shape[d]) - int(b)) // int(a)
            for sym in free:
                name = names[i] if i < len(names) else f"arg{i}"
                where.setdefault(sym, []).append(f"{name}.size()[{d}]")
    return _Symbolic(leaves, spec, exprs, example, where)


def _elements(leaves: Sequence[Any]) -> int:
    return sum(t.numel() for t in leaves if isinstance(t, torch.Tensor))


def range_cases(
    ep: torch.export.ExportedProgram,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    g: torch.Generator,
    *,
    max_scale: float = MAX_SCALE,
) -> list[_Case]:
    """Input sets at the minimum, a middle value and the maximum of each declared range (see the module docstring);
    [] when the inputs cannot be matched with the program's placeholders. A maximum over the budgets (memory, and
    ``max_scale`` times the example's elements) is lowered, and the maximum itself offered as a case not run."""
    inputs = _symbolic_inputs(ep, args, kwargs)
    bytes_budget = max(MAX_DERIVED_BYTES, 2 * _nbytes(inputs.leaves))
    elements_budget = max(MIN_CHECKED_ELEMENTS, int(max_scale * _elements(inputs.leaves)))
    cases: list[_Case] = []
    for sym in sorted(inputs.example, key=str):
        vr = ep.range_constraints.get(sym)
        if vr is None or inputs.build(sym, max(int(vr.lower), 0)) is None:
            continue
        lo = max(int(vr.lower), 0)
        unbounded = _int_oo(vr.upper)
        hi = wanted = max(2 * inputs.example[sym], lo + 2) if unbounded else int(vr.upper)
        costly = False
        while hi > lo:
            sized = inputs.build(sym, hi)
            if sized is None or (_nbytes(sized) <= bytes_budget and _elements(sized) <= elements_budget):
                break
            costly = costly or _nbytes(sized) <= bytes_budget
            hi = max(lo, hi // 2)
        values: dict[int, str] = {}
        for v, tag in ((lo, "min"), ((lo + hi) // 2, "mid"), (hi, "max")):
            values.setdefault(v, tag)
        for value, tag in values.items():
            note = ", unbounded" if tag == "max" and unbounded else ""
            if tag == "max" and hi != wanted:
                note += f", lowered from {wanted} to stay {'cheap' if costly else 'small'}"
            case = _made(inputs, sym, value, tag, note, g)
            if tag == "max":
                case.low = lo
                note = (", unbounded" if unbounded else "") + f", lowered from {wanted} to stay within the check's time"
                case.shrink = functools.partial(_made, inputs, sym, tag="max", note=note, g=g)
            cases.append(case)
        if hi != wanted:
            cases.append(_offered(inputs, sym, wanted, unbounded))
    return cases


def _made(inputs: _Symbolic, sym: Any, value: int, tag: str, note: str, g: torch.Generator) -> _Case:
    """The input set with ``sym`` at ``value`` (the example's values kept where the shapes overlap)."""
    shapes = inputs.build(sym, value)
    assert shapes is not None
    new = [
        resized(leaf, tuple(shape.shape), g) if shape is not leaf else leaf
        for leaf, shape in zip(inputs.leaves, shapes, strict=True)
    ]
    new_args, new_kwargs = pytree.tree_unflatten(new, inputs.spec)
    label = f"range {sym}={value} ({tag}{note}): {', '.join(inputs.where[sym])}"
    return _Case(label, tuple(new_args), dict(new_kwargs), derived=True, tag=tag, value=value)


def _offered(inputs: _Symbolic, sym: Any, value: int, unbounded: bool) -> _Case:
    """The range's maximum, not run (it would cost many times the example): offered with its sizes."""
    shapes = inputs.build(sym, value) or []
    described = [
        describe_inputs((t,))[0].replace(", device=meta", "") if isinstance(t, torch.Tensor) else repr(t)
        for t in shapes
    ]
    scale = _elements(shapes) / max(1, _elements(inputs.leaves))
    label = f"range {sym}={value} (max{', unbounded' if unbounded else ''}): {', '.join(inputs.where[sym])}"
    offered = f"{scale:.0f}x the example's elements"
    return _Case(label, (), {}, derived=True, offered=offered, inputs=described, elements=_elements(shapes))


def _user_specs(ep: torch.export.ExportedProgram) -> list[Any]:
    from torch.export.graph_signature import InputKind

    return [s for s in ep.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]


__all__ = ["MAX_DERIVED_BYTES", "MAX_SCALE", "MIN_CHECKED_ELEMENTS", "Inputs", "check_input_set", "range_cases"]
