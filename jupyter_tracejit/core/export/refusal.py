"""A refused export read as soon as torch refuses, without a draft: which dims failed, at which line, and why.

torch's ``Constraints violated`` error names the ``Dim`` and, in non-strict mode, no line. The shape environment it
worked with (:mod:`.places` keeps it, or the traceback's frames hold it) does: its guards and replacements carry the
location torch recorded, and :mod:`.places` the user's line beside a library's. Two messages are read:

- ``You marked n as dynamic but your code specialized it to be a constant (3)``: the ``Dim`` named ``n`` is found in
  the user's ``dynamic_shapes``, its input's size is a symbol of the environment (``x.size()[0]`` is ``s77``), and the
  guard ``Eq(s77, 3)`` (or the replacement ``s77 -> 3``) has the line;
- ``Not all values of n = L['x'].size()[1] in the specified range ... satisfy the generated guard EXPR``: each EXPR is
  one of the environment's guards, printed with the sizes' sources (matched against torch's own printing of each
  guard with the sources put back as symbols); the first guard with a line of the user's places the error.

Each failed dim becomes a :class:`~.advice.Failure` and its advice (:func:`~.advice.advise`); the error moves to the
user's line, its hint the advice's. An error raised inside a library (a data-dependent branch in transformers) is
moved to the user's frame that called into it, the library's line named in the hint.
"""

from __future__ import annotations

import re
from typing import Any

import sympy  # type: ignore[import-untyped]

from ..errors import TraceError
from ..source import source_line
from .advice import Failure, advise, hint_of, possessive
from .dims import GivenShapes
from .guards import guard_place
from .places import LIBRARY, Place, PlaceRecorder, frame_kind, library_name, place_of_frames
from .records import DimAdvice
from .shape_env import source_name, specialization

_SPECIALIZED = re.compile(
    r"You marked (?P<name>\w+) as dynamic but your code specialized it to be a constant \((?P<value>-?\d+)\)"
)
_NOT_ALL = re.compile(
    r"Not all values of (?P<name>\w+) = (?P<source>\S+) in the specified range .*? satisfy the generated guard "
    r"(?P<guard>.+?)\.?$",
    re.M,
)
_SUGGESTED = "Suggested fixes:"
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _printed(expr: Any) -> str:
    try:
        from torch.utils._sympy.printers import PythonPrinter

        return _normal(str(PythonPrinter().doprint(expr)))
    except Exception:  # an expression torch's printer does not write: matched by nothing
        return ""


def _normal(text: str) -> str:
    """An expression's text without blanks and parentheses: torch's printers differ in both
    (``x.size()[0] // 2 != 1`` against ``(s77 // 2) != 1``)."""
    return re.sub(r"[\s()]", "", text)


def _sources(env: Any) -> dict[Any, list[Any]]:
    return dict(getattr(env, "var_to_sources", {}) or {})


def matching_guards(env: Any, text: str) -> list[Any]:
    """The environment's guards that torch printed as ``text`` (sizes written by their sources, ``L['x'].size()[1]``
    or ``x.size()[1]``)."""
    normal = _normal(text)
    for sym, sources in _sources(env).items():
        for source in sources:
            for name in {source_name(source), _raw_name(source)}:
                if name:
                    normal = normal.replace(_normal(name), str(sym))
    return [g for g in getattr(env, "guards", []) if _printed(g.expr) == normal]


def _raw_name(source: Any) -> str:
    name = getattr(source, "name", "")
    return str(name() if callable(name) else name)


def _symbol_of(env: Any, source: str) -> Any:
    return next((sym for sym, srcs in _sources(env).items() if any(source_name(s) == source for s in srcs)), None)


def _specialized(env: Any, places: PlaceRecorder | None, shapes: GivenShapes, message: str) -> list[Failure]:
    failures: list[Failure] = []
    suggested = message.split(_SUGGESTED, 1)[1] if _SUGGESTED in message else ""
    for m in _SPECIALIZED.finditer(message):
        name, value = m.group("name"), int(m.group("value"))
        for input, dim, _ in shapes.named(name):
            source = f"{input}.size()[{dim}]"
            sym = _symbol_of(env, source)
            if sym is None:
                continue
            guard = next((g for g in env.guards if specialization(str(g.expr)) == (str(sym), value)), None)
            sloc = guard.sloc if guard is not None else getattr(env, "replacements_slocs", {}).get(sym)
            expr = guard.expr if guard is not None else sympy.Eq(sym, value)
            failures.append(Failure("refused", str(sym), source, [expr], guard_place(sloc, places), value, suggested))
            break  # one Dim given to several inputs: one symbol, one failure
    return failures


def _not_all(env: Any, places: PlaceRecorder | None, message: str) -> list[Failure]:
    suggested = message.split(_SUGGESTED, 1)[1] if _SUGGESTED in message else ""
    by_dim: dict[str, tuple[str, list[Any]]] = {}
    for m in _NOT_ALL.finditer(message):
        source = source_name(m.group("source"))
        found = matching_guards(env, m.group("guard"))
        source_guards = by_dim.setdefault(m.group("name"), (source, []))[1]
        source_guards.extend(g for g in found if g not in source_guards)
    failures = []
    for source, guards in by_dim.values():
        sym = _symbol_of(env, source)
        if sym is None:
            continue
        if not guards:  # torch printed them in a way not foreseen: every guard on that size alone
            guards = [g for g in env.guards if getattr(g.expr, "free_symbols", set()) == {sym}]
        located = [p for g in guards if (p := guard_place(g.sloc, places)) is not None]
        place = next((p for p in located if p.file), located[0] if located else None)
        failures.append(Failure("refused", str(sym), source, [g.expr for g in guards], place, None, suggested))
    return failures


def refused_dims(
    error: TraceError, env: Any, places: PlaceRecorder | None, shapes: GivenShapes, model: Any = None
) -> list[DimAdvice]:
    """The dims a ``Constraints violated`` refusal names, each advised (see the module's docstring); the error moves
    to the first one's line (the user's), its hint that advice. [] (the error as it was) when the environment cannot
    say."""
    if error.tag != "constraint_violation" or env is None:
        return []
    failures = _specialized(env, places, shapes, error.message) + _not_all(env, places, error.message)
    advice = [advise(f, shapes, model) for f in failures]
    first = next((a for a in advice if a.file), None)
    if first is not None:
        error.file, error.line, error.code = first.file, first.line, first.code
    if advice:
        error.hint = hint_of(first or advice[0])
    return advice


def at_users_frame(error: TraceError, exc: BaseException) -> Place | None:
    """An export error placed at a line of a library's (transformers' code raised, or branched on data) moved to the
    user's last frame that called into it, from the frames the message quotes, else the traceback's; the hint says
    whose line it was. The place, or None when the error's line is not a library's or no user frame is found."""
    if not error.file or frame_kind(error.file) != LIBRARY:
        return None
    frames = [(m.group("file"), int(m.group("line"))) for m in _FRAME.finditer(error.message)]
    tb, stack = exc.__traceback__, []
    while tb is not None:
        stack.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    for outer_first in (frames, stack):
        inner_first = list(reversed(outer_first))
        cut = next((i for i, (f, n) in enumerate(inner_first) if (f, n) == (error.file, error.line)), None)
        place = place_of_frames(inner_first[cut:]) if cut is not None else None
        if place is not None and place.file:
            library = library_name(error.file)
            at = f"{error.file}:{error.line}" + (f" `{error.code}`" if error.code else "")
            error.hint = (
                f"The line that failed is in {possessive(library)} code ({at}), called from this line of yours: "
                f"rewriting {possessive(library)} line is not the fix. {error.hint}"
            ).strip()
            error.file, error.line = place.file, place.line
            error.code = place.code or source_line(place.file, place.line)
            return place
    return None


__all__ = ["at_users_frame", "matching_guards", "refused_dims"]
