"""An export's ``dynamic_shapes`` as the ``--dynamic`` specs the magic and the command line take (``x:0``,
``x:0=batch[2,64]``, ``x:1=8*seq[1,16]``: :func:`~.options.parse_dynamic`), and back; and the fixes torch or the
product suggests for a run, each as the specs that apply it.

The explorer's dims editor (widgets/explorer_dims.py, through :func:`editor_state` and :func:`dims_changes`, the
export row's ``dims`` and ``with_dims`` actions) works on specs: it shows a run's dims as specs, the user edits
them or applies a suggested fix, and the kernel builds torch's ``dynamic_shapes`` from them (:func:`shapes_from`).
A form the specs cannot say (a nested input, ``Dim.DYNAMIC``, a dim with an offset such as ``8*_s + 1``) is said
so, by name, and the editor leaves the dims as they are.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ..run import TraceRun
from .options import AUTO, parse_dynamic

#: what torch's "Suggested fixes:" lines say: ``batch = 3``, ``batch = Dim('batch', min=5, max=64)``,
#: ``_seq = Dim('_seq', min=1, max=8)`` then ``seq = 8*_seq``
_FIX_VALUE = re.compile(r"^\s*(\w+) = (\d+)\s*$")
_FIX_DIM = re.compile(r"^\s*(\w+) = Dim\('(\w+)'(?:, min=(\d+))?(?:, max=(\d+))?\)\s*$")
_FIX_MULTIPLE = re.compile(r"^\s*(\w+) = (\d+)\*(\w+)\s*$")
_SPEC = re.compile(r"^(?P<input>\w+):(?P<dim>\d+)(?:=(?:(?P<times>\d+)\*)?(?P<symbol>\w+)(?:\[[^\]]*\])?)?$")


class NoSpec(ValueError):
    """A ``dynamic_shapes`` the specs cannot say; the message names the input and what to do."""


@dataclass
class Suggestion:
    """A fix for the dims, as the whole spec list it leads to."""

    #: ``torch`` (its "Suggested fixes") or ``jupyter-tracejit`` (a specialised dim made static)
    source: str
    #: what it says, in its own words (``seq = 8*_seq``)
    text: str
    specs: list[str]
    #: the specs it adds or changes, and those it removes (the dims it makes static)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "text": self.text,
            "specs": self.specs,
            "changed": self.changed,
            "removed": self.removed,
        }


# -- torch's dynamic_shapes <-> specs ---------------------------------------------------------------------------
def _binding(model: Any, args: Sequence[Any], kwargs: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The inputs by the names they bind to in the forward (positional first); None when they do not bind by name
    (``*args``, ``**kwargs``)."""
    forward = model.forward if isinstance(model, torch.nn.Module) else model
    try:
        signature = inspect.signature(forward)
        bound = signature.bind(*args, **dict(kwargs or {}))
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    if any(signature.parameters[n].kind in kinds for n in bound.arguments):
        return None
    return dict(bound.arguments)


def argument_names(model: Any, args: Sequence[Any], kwargs: Mapping[str, Any] | None) -> list[str] | None:
    """The names the inputs bind to in the forward (positional first), as torch matches a dict of dynamic shapes;
    None when they do not bind by name (``*args``, ``**kwargs``)."""
    binding = _binding(model, args, kwargs)
    return None if binding is None else list(binding)


def _bound(value: Any, default: int) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value != default else None


def _range(dim: Any) -> str:
    low, high = _bound(getattr(dim, "min", 0), 0), getattr(dim, "max", None)
    high = int(high) if isinstance(high, int) and not isinstance(high, bool) else None
    if low is None and high is None:
        return ""
    return f"[{'' if low is None else low},{'' if high is None else high}]"


def _dim_spec(where: str, dim: Any, seen: set[str]) -> str | None:
    """One dim's spec (``x:0=batch[2,64]``), None for a static dim; :class:`NoSpec` for a form with none."""
    if dim is None:
        return None
    hint = getattr(dim, "type", None)
    if type(dim).__name__ == "_DimHint":
        kind = getattr(hint, "name", str(hint))
        if kind == "AUTO":
            return where
        if kind == "STATIC":
            return None
        raise NoSpec(f"{where} is Dim.{kind}, which has no --dynamic spec: give it a Dim, Dim.AUTO or leave it static")
    root = getattr(dim, "root", None)
    if root is not None:  # a derived dim: k * root (+ offset)
        fn = getattr(dim, "fn", None)
        offset, times = (fn(0), fn(1) - fn(0)) if callable(fn) else (None, None)
        if offset != 0 or not isinstance(times, int) or times < 2:
            raise NoSpec(f"{where} is {dim.__name__}: only a multiple (8*seq) has a --dynamic spec")
        name = root.__name__
        bounds = "" if name in seen else _range(root)
        seen.add(name)
        return f"{where}={times}*{name}{bounds}"
    name = getattr(dim, "__name__", None)
    if not isinstance(name, str):
        raise NoSpec(f"{where} is {dim!r}, which has no --dynamic spec")
    bounds = "" if name in seen else _range(dim)
    seen.add(name)
    return f"{where}={name}{bounds}"


def specs_of(shapes: Any, names: Sequence[str] | None) -> list[str]:
    """torch's ``dynamic_shapes`` (a dict by argument name, or a tuple by position with ``names``) as specs, in the
    inputs' order; :class:`NoSpec` naming what has none."""
    if shapes is None:
        return []
    if isinstance(shapes, (tuple, list)):
        if names is None or len(names) != len(shapes):
            raise NoSpec("dynamic_shapes is a tuple by position, and the inputs' names are not known: give a dict")
        shapes = dict(zip(names, shapes, strict=True))
    if not isinstance(shapes, Mapping):
        raise NoSpec(f"dynamic_shapes={shapes!r} has no --dynamic spec")
    seen: set[str] = set()
    specs: list[str] = []
    for name, per in shapes.items():
        if per is None:
            continue
        if isinstance(per, (tuple, list)):
            per = dict(enumerate(per))
        if not isinstance(per, Mapping) or not all(isinstance(d, int) for d in per):
            raise NoSpec(f"{name}'s dynamic shapes are nested (an input holding tensors): edit them in code")
        for d in sorted(per):
            spec = _dim_spec(f"{name}:{d}", per[d], seen)
            if spec is not None:
                specs.append(spec)
    return specs


def request_specs(request: Any) -> list[str]:
    """The specs of an export request's ``dynamic_shapes`` (``"auto"`` as the dims it chose)."""
    from .request import auto_dynamic_shapes

    options = request.options
    shapes = options.dynamic_shapes
    if shapes == AUTO:
        shapes = auto_dynamic_shapes(request.args, options.check_inputs or (), request.kwargs, request.target)
    return specs_of(shapes, argument_names(request.target, request.args, request.kwargs))


def shapes_from(specs: Sequence[str], names: Sequence[str] | None) -> dict[str, Any] | None:
    """torch's ``dynamic_shapes`` for specs: :func:`~.options.parse_dynamic`'s dict, with every other argument
    static (torch wants a key per argument of the forward); None for no specs. ``DynamicSpecError`` as it raises."""
    if not specs:
        return None
    shapes: dict[str, Any] = dict(parse_dynamic(list(specs)))
    unknown = sorted(set(shapes) - set(names or shapes))
    if unknown:
        raise NoSpec(f"{unknown[0]} is not an input of the forward (its inputs: {', '.join(names or ())})")
    completed: dict[str, Any] = every_argument(shapes, names)
    return completed


def every_argument(shapes: Any, names: Sequence[str] | None) -> Any:
    """A dict of dynamic shapes by argument name with the arguments it leaves out static (torch refuses a dict
    without a key per argument: ``--dynamic x:0`` of ``model(x, mask)``); any other form as it is."""
    if not isinstance(shapes, dict) or names is None or not set(shapes) <= set(names):
        return shapes
    return {name: shapes.get(name) for name in names}


def flags_text(specs: Sequence[str]) -> str:
    """The specs as ``--dynamic`` flags to paste into ``%export`` or ``tracejit export`` (quoted where a shell or
    the magic would read brackets)."""
    return " ".join(f'--dynamic "{s}"' if "[" in s or "*" in s else f"--dynamic {s}" for s in specs)


# -- suggested fixes ----------------------------------------------------------------------------------------------
def _parts(spec: str) -> tuple[str, str | None]:
    """``(input:dim, symbol)`` of a spec."""
    m = _SPEC.match(spec)
    if m is None:
        return spec, None
    return f"{m['input']}:{m['dim']}", m["symbol"]


def _torch_fixes(text: str) -> list[tuple[str, dict[str, str | None]]]:
    """torch's "Suggested fixes:" blocks in ``text``: each as (its lines, symbol -> new right-hand side), where the
    right-hand side is a spec's tail (``batch[5,64]``, ``8*_seq[1,8]``) or None for a constant."""
    found = []
    for block in re.findall(r"Suggested fixes:\n((?:[ \t]+\S.*\n?)+)", text):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        roots: dict[str, str] = {}
        change: dict[str, str | None] = {}
        for line in lines:
            if (m := _FIX_DIM.match(line)) is not None:
                bounds = f"[{m[3] or ''},{m[4] or ''}]" if m[3] or m[4] else ""
                roots[m[1]] = f"{m[2]}{bounds}"
                if not m[1].startswith("_"):
                    change[m[1]] = roots[m[1]]
            elif (m := _FIX_MULTIPLE.match(line)) is not None:
                change[m[1]] = f"{m[2]}*{roots.get(m[3], m[3])}"
            elif (m := _FIX_VALUE.match(line)) is not None:
                change[m[1]] = None
        if change:
            found.append(("\n".join(lines), change))
    return found


def _bounds_once(specs: list[str]) -> list[str]:
    """Each symbol's range on its first spec only (parse_dynamic takes a range once)."""
    seen: set[str] = set()
    out = []
    for spec in specs:
        symbol = _parts(spec)[1]
        if symbol is not None and symbol in seen:
            spec = spec.split("[", 1)[0]
        if symbol is not None:
            seen.add(symbol)
        out.append(spec)
    return out


def _apply(specs: list[str], change: Mapping[str, str | None]) -> tuple[list[str], list[str], list[str]]:
    out: list[str] = []
    removed: list[str] = []
    for spec in specs:
        where, symbol = _parts(spec)
        if symbol is None or symbol not in change:
            out.append(spec)
            continue
        tail = change[symbol]
        if tail is None:
            removed.append(spec)
            continue
        out.append(f"{where}={tail}")
    out = _bounds_once(out)
    changed = [spec for spec in out if spec not in specs]
    return out, changed, removed


def suggestions(run: TraceRun, specs: list[str]) -> list[Suggestion]:
    """The fixes for the dims of ``run`` (exported with ``specs``): torch's "Suggested fixes" (in the run's error
    and its check's failures), each applied to the specs by their symbols, then each dim the code specialised made
    static. Only fixes that change something."""
    texts = [run.error.message] if run.error is not None else []
    if run.check is not None:
        texts += [c.exception.message for c in run.check.cases if c.exception is not None]
    found: list[Suggestion] = []
    for text in texts:
        for words, change in _torch_fixes(text):
            new, changed, removed = _apply(specs, change)
            if (changed or removed) and all(s.specs != new for s in found):
                found.append(Suggestion("torch", words, new, changed, removed))
    records = getattr(run, "records", None)
    symbols = {s.name: s for s in getattr(records, "symbols", None) or []}
    for guard in getattr(records, "guards", None) or []:
        m = re.match(r"^Eq\((\w+), (\d+)\)$", guard.expr) if guard.kind == "specialization" else None
        symbol = symbols.get(m[1]) if m is not None else None
        source = symbol.sources[0] if symbol is not None and symbol.sources else ""
        at = re.match(r"^(\w+)\.size\(\)\[(\d+)\]$", source)
        if m is None or at is None:
            continue
        where = f"{at[1]}:{at[2]}"
        gone = [s for s in specs if _parts(s)[0] == where]
        if gone:
            line = f" at line {guard.line}" if guard.line else ""
            text = f"{source} became {m[2]}{line}: make {where} static"
            new = [s for s in specs if s not in gone]
            if all(s.specs != new for s in found):
                found.append(Suggestion("jupyter-tracejit", text, new, [], gone))
    return found


# -- the explorer's dims editor ----------------------------------------------------------------------------------
_NOT_BY_NAME = (
    "the inputs do not bind to the forward's arguments by name (*args, **kwargs): edit dynamic_shapes in code"
)


def editor_state(run: TraceRun) -> dict[str, Any]:
    """What the explorer's dims editor shows of an export run (its registry row's ``dims`` action): the specs it was
    exported with, the tensor inputs (name, example sizes), the suggested fixes as specs, the ``--dynamic`` flags to
    paste, and why the dims cannot be edited (``problem``, ``""`` when they can); ``{}`` for a run with no live
    model (read from JSON or a file)."""
    request = run.request
    if request is None or not hasattr(request, "target"):
        return {}
    binding = _binding(request.target, request.args, request.kwargs)
    inputs = [
        {"name": name, "sizes": [int(d) for d in value.shape]}
        for name, value in (binding or {}).items()
        if isinstance(value, torch.Tensor)
    ]
    problem = "" if binding is not None else _NOT_BY_NAME
    try:
        specs = request_specs(request)
    except NoSpec as e:
        specs, problem = [], str(e)
    found = suggestions(run, specs) if not problem else []
    return {
        "specs": specs,
        "inputs": inputs,
        "suggestions": [s.to_json() for s in found],
        "flags": flags_text(specs),
        "problem": problem,
    }


def dims_changes(run: TraceRun, specs: Any) -> dict[str, Any]:
    """The request's options that export ``run`` 's model again with ``specs`` (its registry row's ``with_dims``
    action): ``{"dynamic_shapes": ...}``, every argument named; :class:`NoSpec` or ``DynamicSpecError`` (both
    ``ValueError``) naming the spec at fault and the form, before anything runs."""
    request = run.request
    if request is None or not hasattr(request, "target"):
        raise NoSpec("this run holds no live model (read from JSON or a file): export again to edit its dims")
    if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
        raise NoSpec(f"dims: specs must be a list of --dynamic specs such as 'x:0=batch[2,64]', got {specs!r}")
    binding = _binding(request.target, request.args, request.kwargs)
    if binding is None:
        raise NoSpec(_NOT_BY_NAME)
    shapes = shapes_from(specs, list(binding))
    for name, per in (shapes or {}).items():
        value = binding[name]
        rank = value.dim() if isinstance(value, torch.Tensor) else None
        for dim in per or {}:
            if rank is None or dim >= rank:
                has = f"{rank} dims (0..{rank - 1})" if rank else "no dims to make dynamic"
                raise NoSpec(f"{name}:{dim}: {name} has {has}")
    return {"dynamic_shapes": shapes}


__all__ = [
    "NoSpec",
    "Suggestion",
    "argument_names",
    "dims_changes",
    "editor_state",
    "every_argument",
    "flags_text",
    "request_specs",
    "shapes_from",
    "specs_of",
    "suggestions",
]
