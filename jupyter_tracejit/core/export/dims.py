"""The user's ``dynamic_shapes``, read per input dim: what a dim was given (a ``Dim``, ``Dim.AUTO``, nothing), which
dims a ``Dim`` name stands for, and the whole ``dynamic_shapes`` written again with one dim's spec changed: a fix
said in the user's own terms."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .options import shapes_text

_SOURCE = re.compile(r"^(?P<input>[A-Za-z_]\w*)\.size\(\)\[(?P<dim>\d+)\]$")


class _Text:
    """A spec written as given text (``shapes_text`` writes what it does not know by its repr)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def input_dim(source: str) -> tuple[str, int] | None:
    """``x.size()[1]`` -> ``("x", 1)``; None for any other source (a nested input's)."""
    m = _SOURCE.match(source)
    return (m.group("input"), int(m.group("dim"))) if m else None


def is_auto(spec: Any) -> bool:
    """Whether a dim's spec is ``Dim.AUTO`` (torch's ``_DimHint`` of type AUTO)."""
    hint = getattr(spec, "type", None)
    return type(spec).__name__ == "_DimHint" and getattr(hint, "name", str(hint)) == "AUTO"


def spec_text(spec: Any) -> str:
    """A dim's spec as the explorer and the hints write it: ``Dim('seq', min=2, max=64)``, ``Dim.AUTO``; ``""`` for
    none (static)."""
    return "" if spec is None else shapes_text(spec)


class GivenShapes:
    """The ``dynamic_shapes`` an export was given, by the forward's argument names (``names``, in order: a tuple of
    shapes is by position)."""

    def __init__(self, dynamic_shapes: Any, names: Sequence[str]) -> None:
        self.shapes = dynamic_shapes
        self.names = list(names)

    def _entry(self, input: str) -> Any:
        if isinstance(self.shapes, dict):
            return self.shapes.get(input)
        if isinstance(self.shapes, (tuple, list)) and input in self.names:
            i = self.names.index(input)
            return self.shapes[i] if i < len(self.shapes) else None
        return None

    def given(self, input: str, dim: int) -> Any:
        """The spec dim ``dim`` of ``input`` was given (a ``Dim``, ``Dim.AUTO``), or None (static, or not known)."""
        entry = self._entry(input)
        if isinstance(entry, dict):
            return entry.get(dim)
        if isinstance(entry, (tuple, list)) and 0 <= dim < len(entry):
            return entry[dim]
        return None

    def named(self, name: str) -> list[tuple[str, int, Any]]:
        """``(input, dim, Dim)`` of every dim given the ``Dim`` called ``name`` (one Dim may be given to several)."""
        found = []
        for input in self.names:
            entry = self._entry(input)
            dims = (
                entry.items()
                if isinstance(entry, dict)
                else enumerate(entry or ())
                if isinstance(entry, (tuple, list))
                else ()
            )
            for dim, spec in dims:
                if getattr(spec, "__name__", None) == name:
                    found.append((input, int(dim), spec))
        return found

    def with_spec(self, input: str, dim: int, spec: str | None) -> str:
        """The whole ``dynamic_shapes`` as Python text with dim ``dim`` of ``input`` given ``spec`` (text such as
        ``Dim.AUTO``); ``None`` makes the dim static (left out). ``""`` when the structure cannot say it."""
        value = None if spec is None else _Text(spec)
        shapes = self.shapes
        if shapes is None or isinstance(shapes, dict):
            new = dict(shapes or {})
            new[input] = _with_dim(new.get(input), dim, value)
            return shapes_text(new)
        if isinstance(shapes, (tuple, list)) and input in self.names:
            i = self.names.index(input)
            items = list(shapes) + [None] * (i + 1 - len(shapes))
            items[i] = _with_dim(items[i], dim, value)
            return shapes_text(tuple(items) if isinstance(shapes, tuple) else items)
        return ""


def _with_dim(entry: Any, dim: int, value: Any) -> Any:
    if isinstance(entry, (tuple, list)):
        items = list(entry) + [None] * (dim + 1 - len(entry))
        items[dim] = value
        return type(entry)(items) if any(v is not None for v in items) else None
    new = dict(entry) if isinstance(entry, dict) else {}
    if value is None:
        new.pop(dim, None)
    else:
        new[dim] = value
    return new or None


__all__ = ["GivenShapes", "input_dim", "is_auto", "spec_text"]
