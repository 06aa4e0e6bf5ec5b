"""A check input the exported program refuses, located: the guard ``ep.module()`` names (``Guard failed: x.size()[0]
== 3``) found among the shape environment's by its printed expression, at the user's line that made it (or called
into the library code that did), with a hint that says what to export differently (see :mod:`.check`)."""

from __future__ import annotations

import re
from typing import Any

import torch

from ..errors import TraceError, error_from_exception
from ..graph import Frame
from ..source import source_line
from .advice import possessive
from .failures import message_frame
from .guards import guard_place
from .places import Place, PlaceRecorder
from .refusal import matching_guards
from .shape_env import input_names, shape_env_of, source_name

# -- a failing guard, located -----------------------------------------------------------------------------------------
_GUARD = re.compile(r"Guard failed: (?P<expr>.+)")
_SOURCE = re.compile(r"[A-Za-z_][\w\[\]'\".]*?\.size\(\)\[\d+\]|[A-Za-z_]\w*")
_NODE = re.compile(r"on node '(?P<node>[^']+)'")


def guard_location(ep: torch.export.ExportedProgram, message: str, places: PlaceRecorder | None = None) -> Place | None:
    """Where the guard a failing run names was made (see the module docstring): the guard torch printed is found by
    its expression (:func:`~.refusal.matching_guards`: each failing guard at its own line), else by the symbols it
    mentions; its place the user's line, with the library's beside it when the guard was made in library code
    (``places``: recorded while exporting). None when no line is known."""
    node_match = _NODE.search(message)
    if node_match is not None:
        for node in ep.graph.nodes:
            if node.name == node_match.group("node"):
                at = message_frame(node.meta.get("stack_trace") or "")
                return Place(at[0], at[1], source_line(*at)) if at is not None else None
    m = _GUARD.search(message)
    env = shape_env_of(ep)
    if m is None or env is None:
        return None
    for guard in matching_guards(env, m.group("expr").strip()):
        place = guard_place(guard.sloc, places)
        if place is not None:
            return place
    if "==" not in m.group("expr"):
        return None  # a declared range's bound (x.size()[0] <= 64): no line made it
    mentioned = set(_SOURCE.findall(m.group("expr")))
    symbols: set[Any] = set()
    inputs = input_names(ep)
    for sym, sources in getattr(env, "var_to_sources", {}).items():
        if any(source_name(s, inputs) in mentioned for s in sources):
            symbols.add(sym)
    if not symbols:
        return None
    related = set(symbols)
    for sym, repl in getattr(env, "replacements", {}).items():
        free: set[Any] = set(getattr(repl, "free_symbols", set()))
        if sym in symbols or free & symbols:
            related |= {sym, *free}
    for guard in getattr(env, "guards", []):
        if getattr(guard.expr, "free_symbols", set()) & related:
            place = guard_place(guard.sloc, places)
            if place is not None:
                return place
    return None


def _guard_hint(message: str, place: Place | None) -> str:
    m = _GUARD.search(message)
    expr = m.group("expr").strip() if m else ""
    if not expr:
        return (
            "The exported program rejected these inputs. Export with dynamic_shapes that cover them (a Dim, or "
            "Dim.AUTO, for each dimension that varies), or check with inputs the program was made for."
        )
    if "==" in expr and place is not None and place.library:
        at = f"{place.library_file}:{place.library_line}" + (f" `{place.library_code}`" if place.library_code else "")
        return (
            f"The exported program only accepts {expr}: {possessive(place.library)} code ({at}), which the line shown "
            "calls, "
            "made export specialise that dimension to the example's size (silently with Dim.AUTO); that code is not "
            "yours, so rewriting it is not the fix. Keep the dimension static (leave it out of dynamic_shapes) so "
            "the program's signature says what it accepts, and check with inputs of that size."
        )
    if "==" in expr and place is not None:
        return (
            f"The exported program only accepts {expr}: the code at the line shown made export specialise that "
            "dimension to the example's size (e.g. a Python loop or branch over x.size(0)), silently with Dim.AUTO. "
            "Rewrite that line with tensor operations so the size stays symbolic, then export with a Dim for it."
        )
    if "==" in expr:
        return (
            f"The exported program only accepts {expr}: that dimension was exported static, fixed at the example's "
            "size. Export with dynamic_shapes giving it a Dim (torch.export.Dim('batch', min=..., max=...)) or "
            "Dim.AUTO; if the code then specialises it, rewrite the line export names."
        )
    if re.search(r"!= [01]$", expr) and place is not None:
        return (
            f"The exported program refuses these inputs at a guard the line shown made ({expr}): torch assumes a size "
            "computed there is never 0 or 1 (its 0/1 specialisation), and for these inputs it is, although the "
            "Python code takes them. Check with sizes where it is at least 2, or declare the Dim's min so that it "
            "is."
        )
    if place is not None:
        return (
            f"The exported program refuses these inputs at a guard the line shown made ({expr}): the code there "
            "holds only for some sizes. Declare the dim so that its range keeps to them (a narrower min / max, a "
            "multiple), or check with inputs the program was made for."
        )
    return (
        f"These inputs are outside what the exported program declares ({expr}). Widen the Dim's min / max in "
        "dynamic_shapes if the code handles such sizes, or do not pass them."
    )


def program_error(
    exc: BaseException, ep: torch.export.ExportedProgram, caller: Frame | None, places: PlaceRecorder | None = None
) -> TraceError:
    """The check case's exception for what ``ep.module()`` raised: at the guard's line when it is found (the user's
    line that called into a library whose code made it), else at the caller's; with a hint saying what to export
    differently."""
    error = error_from_exception(exc, phase="check")
    place = guard_location(ep, error.message, places)
    if place is not None and (place.file or place.library_file):
        error.file, error.line = (place.file, place.line) if place.file else (place.library_file, place.library_line)
        error.code = source_line(error.file, error.line)
    elif caller is not None:
        error.file, error.line, error.code = caller.file, caller.line, caller.code
    elif error.file.startswith("<"):  # the program's generated code: no line of the user's
        error.file, error.line, error.code = "", 0, ""
    if _GUARD.search(error.message) or _NODE.search(error.message):
        error.tag = "guard_failed"
        error.hint = _guard_hint(error.message, place)
    return error


__all__ = ["guard_location", "program_error"]
