"""What to do about a dynamic dim that failed, ranked for the place it failed at (:class:`~.records.DimAdvice`).

A dim fails three ways: export refuses it (the code made it a constant, or needs a condition only some sizes of the
range meet), ``Dim.AUTO`` lets the code make it a constant silently, or the program refuses the check's inputs at a
guard. Which fixes apply depends on where and why:

- **a model fact** first, when the line is in code the user did not write and its reason is known: ``nn.LSTM`` /
  ``nn.GRU`` / ``nn.RNN`` unroll the recurrence one step per element of the sequence (the length is fixed), Whisper's
  encoder needs exactly 2 x ``max_source_positions`` frames;
- **guards that hold for every size of the range** (evaluated size by size, :mod:`.guard_eval`): the code is fine and
  torch's solver only failed to prove them: ``Dim.AUTO`` works (export keeps them as the program's guards), torch's
  suggested multiple works too but is narrower than needed;
- guards that hold for **a narrower range** or **a multiple** only: that range, that multiple (torch's suggestion,
  written in the user's ``dynamic_shapes``), ``Dim.AUTO`` (export narrows it itself);
- a dim made **a constant**: leave it static (say so in ``dynamic_shapes``); rewrite the line when it is the user's
  own (never when it is a library's: that line is not the user's to change); ``Dim.AUTO`` last, and never when the
  dim was ``Dim.AUTO`` already.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .dims import GivenShapes, input_dim, is_auto, spec_text
from .guard_eval import shape_of, sizes_where
from .places import Place
from .records import DimAdvice, ExportReport, Fix
from .shape_env import specialization


@dataclass
class Failure:
    """A dynamic dim that failed, as read from the shape environment (what :func:`advise` ranks fixes for)."""

    #: :data:`~.records.ADVICE_KINDS`
    kind: str
    symbol: str
    #: the size it is: ``x.size()[1]``
    source: str
    #: the guards it failed (sympy expressions of the shape environment)
    exprs: list[Any] = field(default_factory=list)
    place: Place | None = None
    #: the constant the dim became, for a specialisation
    value: int | None = None
    #: torch's "Suggested fixes" text (``_n = Dim('_n', min=1, max=16)`` / ``n = 4*_n``), ``""`` for none
    suggested: str = ""


def _bounds(given: Any) -> tuple[int, int] | None:
    """The declared range of a ``Dim`` (sizes below 2 are not a backed dim's), None when unbounded or not a Dim."""
    low, high = getattr(given, "min", None), getattr(given, "max", None)
    if not isinstance(low, int) or not isinstance(high, int) or isinstance(high, bool):
        return None
    return max(low, 2), high


_ASSIGNMENT = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>.+?)\s*$", re.M)
_DIM_CALL = re.compile(r"^Dim\(['\"](?P<name>\w+)['\"].*\)$")


def suggested_spec(suggested: str, name: str) -> str | None:
    """torch's suggested fix for the ``Dim`` called ``name`` as a spec: ``n = 4*_n`` with ``_n = Dim('_n', min=1,
    max=16)`` -> ``4*Dim('_n', min=1, max=16)``; ``n = 3`` -> ``None`` (static, the text ``"None"``); None when torch
    suggested nothing for it."""
    values = {m.group("name"): m.group("value") for m in _ASSIGNMENT.finditer(suggested)}
    value = values.get(name)
    if value is None:
        return None
    if value.lstrip("-").isdigit():
        return "None"
    for other, definition in values.items():
        if other != name and _DIM_CALL.match(definition):
            value = re.sub(rf"\b{re.escape(other)}\b", definition, value)
    return value


def _short(file: str) -> str:
    for marker in ("site-packages/", "dist-packages/"):
        if marker in file:
            return file.split(marker, 1)[1]
    return file


def possessive(name: str) -> str:
    """``transformers'``, ``torch.nn's``."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _library_words(a: DimAdvice) -> str:
    at = f"{_short(a.library_file)}:{a.library_line}" + (f" `{a.library_code}`" if a.library_code else "")
    return f"{possessive(a.library)} code ({at})"


# -- model facts ------------------------------------------------------------------------------------------------------
def _rnn_fact(a: DimAdvice, f: Failure, model: Any) -> Fix | None:
    if not a.library_file.replace("\\", "/").endswith("torch/nn/modules/rnn.py"):
        return None
    kinds = sorted({type(m).__name__ for m in _modules(model) if type(m).__name__ in ("LSTM", "GRU", "RNN")})
    names = " / ".join(f"nn.{k}" for k in kinds) or "nn.LSTM"
    steps = f"exactly {f.value} steps" if f.value is not None else "a fixed number of steps"
    return Fix(
        "model_fact",
        f"{names} fixes the sequence length under export: torch unrolls the recurrence one step per element of "
        f"{a.source}, so the program holds {steps}. Keep that dim static (pad the sequences to one length), or "
        "export one program per length you need.",
        "None",
    )


def _whisper_fact(a: DimAdvice, f: Failure, model: Any) -> Fix | None:
    if "/whisper/" not in a.library_file.replace("\\", "/"):
        return None
    # vars(): hasattr on a module that lacks the attribute formats an AttributeError (20 ms over Whisper's modules)
    configs = (vars(m).get("config") for m in _modules(model))
    positions = next((p for c in configs if isinstance(p := getattr(c, "max_source_positions", None), int)), None)
    needed = 2 * positions if isinstance(positions, int) else f.value
    if needed is None:
        return None
    return Fix(
        "model_fact",
        f"Whisper's encoder needs exactly 2 x max_source_positions = {needed} input frames (config."
        f"max_source_positions = {positions if positions is not None else needed // 2}; Whisper's feature extractor "
        f"pads every clip to 30 s): the frame count cannot be dynamic. Keep {a.source} static at {needed} and pad "
        "or trim the features to it.",
        "None",
    )


_FACTS: tuple[Callable[[DimAdvice, Failure, Any], Fix | None], ...] = (_rnn_fact, _whisper_fact)


def _modules(model: Any) -> list[Any]:
    try:
        return list(model.modules())
    except Exception:  # a function, or a module whose modules() fails: no facts from it
        return []


# -- the fixes --------------------------------------------------------------------------------------------------------
def _fix(kind: str, text: str, spec: str | None, a: DimAdvice, shapes: GivenShapes, code: str = "") -> Fix:
    """A fix, with the whole ``dynamic_shapes`` written with its spec when it has one."""
    whole = ""
    if spec is not None and a.input and a.dim >= 0:
        whole = shapes.with_spec(a.input, a.dim, None if spec == "None" else spec)
    return Fix(kind, text, spec or "", whole, code)


def _static(a: DimAdvice, shapes: GivenShapes, value: int | None) -> Fix:
    at = f" at {value}" if value is not None else ""
    where = f" ({a.input} dim {a.dim} out of dynamic_shapes, or Dim.STATIC)" if a.input else ""
    return _fix(
        "static", f"Leave {a.source} static{at}{where}: the program then says what it accepts.", "None", a, shapes
    )


def _auto(a: DimAdvice, shapes: GivenShapes, why: str) -> Fix:
    return _fix("auto", f"Give {a.source} as Dim.AUTO: {why}", "Dim.AUTO", a, shapes)


def _constant_fixes(a: DimAdvice, f: Failure, shapes: GivenShapes, given: Any) -> list[Fix]:
    fixes = [_static(a, shapes, f.value)]
    if not a.library:
        fixes.append(
            Fix(
                "rewrite",
                f"Rewrite line {a.line} so that it does not use {a.source} as a Python int (a loop or a branch over "
                "it, a size computed in Python): with tensor operations the size stays symbolic.",
            )
        )
    if a.kind == "refused" and not is_auto(given):
        fixes.append(_auto(a, shapes, f"export then accepts it and makes it the constant {f.value} silently."))
    return fixes


def _range_fixes(a: DimAdvice, f: Failure, shapes: GivenShapes, given: Any) -> list[Fix]:
    bounds = _bounds(given)
    sizes = sizes_where(f.exprs, f.symbol, *bounds) if bounds is not None and f.exprs else None
    suggested = suggested_spec(f.suggested, getattr(given, "__name__", "")) if f.suggested else None
    fixes: list[Fix] = []
    if sizes is not None and bounds is not None:
        what, low, high, step = shape_of(sizes, *bounds)
        a.holds = what == "all"
        name = getattr(given, "__name__", "n")
        if what == "all":
            fixes.append(
                _auto(
                    a,
                    shapes,
                    f"these guards hold for every size of {name}'s range [{bounds[0]}, {bounds[1]}] (each size "
                    "checked): the code is fine and torch's solver only failed to prove them; with Dim.AUTO export "
                    "keeps them as the program's own guards.",
                )
            )
        elif what == "range":
            spec = f"Dim({name!r}, min={low}, max={high})"
            fixes.append(
                _fix("range", f"Narrow the range to [{low}, {high}], the sizes the code takes.", spec, a, shapes)
            )
        elif what == "multiple":
            offset = f" + {low % step}" if low % step else ""
            spec = f"{step}*Dim('_{name}', min={low // step}, max={high // step}){offset}"
            fixes.append(
                _fix("multiple", f"Declare a multiple of {step}: the code takes those sizes only.", spec, a, shapes)
            )
    if suggested is not None and suggested != "None":
        narrower = " (narrower than needed: every size of the range works)" if a.holds else ""
        fixes.append(_fix("suggested", f"torch's suggested fix{narrower}: {suggested}.", suggested, a, shapes))
    if not is_auto(given) and not any(x.kind == "auto" for x in fixes):
        fixes.append(_auto(a, shapes, "export then narrows the range to what the code needs, itself."))
    fixes.append(_static(a, shapes, None))
    return fixes


def advise(f: Failure, shapes: GivenShapes, model: Any = None) -> DimAdvice:
    """The advice for a failed dim: where (the user's line, the library's beside it), torch's suggestion in the
    user's terms, and the fixes that apply there, best first (see the module's docstring)."""
    where = input_dim(f.source)
    input, dim = where if where is not None else ("", -1)
    given = shapes.given(input, dim) if where is not None else None
    place = f.place or Place("", 0)
    a = DimAdvice(
        kind=f.kind,
        symbol=f.symbol,
        source=f.source,
        input=input,
        dim=dim,
        given=spec_text(given),
        exprs=[str(e) for e in f.exprs],
        file=place.file or place.library_file,
        line=place.line or place.library_line,
        code=place.code if place.file else place.library_code,
        library=place.library,
        library_file=place.library_file,
        library_line=place.library_line,
        library_code=place.library_code,
    )
    suggested = suggested_spec(f.suggested, getattr(given, "__name__", "")) if f.suggested else None
    a.suggested = suggested or ""
    facts = [fix for fix in (fact(a, f, model) for fact in _FACTS) if fix is not None] if a.library else []
    for fix in facts:
        if fix.spec and a.input and a.dim >= 0:
            fix.dynamic_shapes = shapes.with_spec(a.input, a.dim, None if fix.spec == "None" else fix.spec)
    rest = _constant_fixes(a, f, shapes, given) if f.value is not None else _range_fixes(a, f, shapes, given)
    a.fixes = facts + [x for x in rest if not (facts and x.kind == "static")]
    return a


def specialized_advice(report: ExportReport, shapes: GivenShapes, model: Any = None) -> list[DimAdvice]:
    """Advice for each input size an accepted export made a constant (``Dim.AUTO`` specialised silently; the
    report's specialisations), at its place."""
    out: list[DimAdvice] = []
    done: set[str] = set()
    for guard in report.guards_of("specialization"):
        spec = specialization(guard.expr)
        symbol = report.symbol(spec[0]) if spec is not None else None
        if spec is None or symbol is None or not symbol.sources or spec[0] in done:
            continue
        done.add(spec[0])
        own = bool(guard.file) and (guard.file, guard.line) != (guard.library_file, guard.library_line)
        place = Place(
            guard.file if own else "",
            guard.line if own else 0,
            guard.code if own else "",
            guard.library,
            guard.library_file,
            guard.library_line,
            guard.library_code,
        )
        failure = Failure("specialized", spec[0], symbol.sources[0], [guard.expr], place, spec[1])
        out.append(advise(failure, shapes, model))
    return out


def hint_of(a: DimAdvice) -> str:
    """The advice as an error's hint: what happened where, then the fixes, best first."""
    exprs = ", ".join(a.exprs[:2]) + (f" and {len(a.exprs) - 2} more" if len(a.exprs) > 2 else "")
    constant = a.exprs and re.fullmatch(r"Eq\(\w+, -?\d+\)", a.exprs[0])
    if a.kind in ("refused", "specialized") and constant:
        happened = f"{a.source} became the constant {a.exprs[0].rsplit(',', 1)[1].strip(' )')}"
    elif a.holds:
        happened = f"export needs {exprs} of {a.source}, which holds for every size of its range"
    else:
        happened = f"this line works for only some sizes: export needs {exprs} ({a.symbol} is {a.source})"
    if a.library:
        where = f" in {_library_words(a)}, called from this line: that line is not yours, rewriting it is not the fix"
    else:
        where = f" on this line ({a.exprs[0]})" if constant else " on this line"
    fixes = " ".join(f"({i}) {fix.text}" for i, fix in enumerate(a.fixes[:4], 1))
    return f"{happened}{where}. Fixes, best first: {fixes}" if fixes else f"{happened}{where}."


__all__ = ["Failure", "advise", "hint_of", "possessive", "specialized_advice", "suggested_spec"]
