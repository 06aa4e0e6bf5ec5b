"""The shape environment of an export and its names: torch's ``ShapeEnv`` (reached from any FakeTensor of the
program), the inputs' names, sources written as the user writes them (``x.size()[0]``), specialisations
(``Eq(s77, 3)``) and bounds. Shared by the report (:mod:`.report`), the guards (:mod:`.guards`) and the check."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import torch

_log = logging.getLogger(__name__)
T = TypeVar("T")

_SPECIALIZATION = re.compile(r"^Eq\((?:(?P<a>[a-z]+\d+), (?P<av>-?\d+)|(?P<bv>-?\d+), (?P<b>[a-z]+\d+))\)$")
_LOCAL = re.compile(r"L\[['\"]([^'\"]+)['\"]\]")
#: strict export's name of the i-th flattened input (dynamo traces a wrapper taking ``*flat_args``)
_FLAT_ARG = re.compile(r"\bflat_args\[(\d+)\]")


def _safely(part: str, read: Callable[[], T], empty: T) -> T:
    """``read()``, or ``empty`` when torch's (often private) API it reads has changed."""
    try:
        return read()
    except Exception as e:  # an optional part of the report: never fail the run for it
        _log.debug("export report: reading %s failed: %r", part, e)
        return empty


def input_names(ep: Any) -> list[str]:
    """The program's user inputs' names in flattened order (``x``, ``attention_mask``; ``b_u`` for ``b['u']``):
    its USER_INPUT placeholders, the names the check's labels and the guard messages of ``ep.module()`` use; ``[]``
    when the signature cannot be read."""
    try:
        specs = list(ep.graph_signature.input_specs)
    except Exception:  # not a program, or its signature changed shape: sources keep torch's names
        return []
    return [
        str(getattr(spec.arg, "name", "") or "")
        for spec in specs
        if getattr(spec.kind, "name", str(spec.kind)) == "USER_INPUT"
    ]


def source_name(source: Any, inputs: list[str] | None = None) -> str:
    """``L['x'].size()[0]`` -> ``x.size()[0]`` (torch's ``Source.name`` is a property in 2.13, a method before).

    Strict export traces a wrapper of the flattened inputs, so its sources read ``L['flat_args'][0]``; with
    ``inputs`` (:func:`input_names`) the i-th is written with the i-th input's name, as non-strict export and the
    program's guard messages name it (``x.size()[0]``), not ``flat_args[0].size()[0]``."""
    name = getattr(source, "name", source)
    text = _LOCAL.sub(r"\1", str(name() if callable(name) else name))
    if inputs:
        text = _FLAT_ARG.sub(lambda m: _input_at(inputs, m), text)
    return text


def _input_at(inputs: list[str], m: re.Match[str]) -> str:
    i = int(m.group(1))
    return inputs[i] if i < len(inputs) and inputs[i] else m.group(0)


def specialization(expr: str) -> tuple[str, int] | None:
    """``Eq(s77, 3)`` (either order) -> ``("s77", 3)``; None for any other expression."""
    m = _SPECIALIZATION.match(expr.strip())
    if m is None:
        return None
    if m.group("a"):
        return m.group("a"), int(m.group("av"))
    return m.group("b"), int(m.group("bv"))


def _bound(value: Any) -> int | None:
    text = str(value)
    if "oo" in text:  # int_oo, -int_oo, oo, -oo
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# -- the shape environment ------------------------------------------------------------------------------------------
def _vals(val: Any) -> Iterator[Any]:
    if isinstance(val, (list, tuple)):
        for v in val:
            yield from _vals(v)
    else:
        yield val


def shape_env_of(ep: Any) -> Any:
    """The ``ShapeEnv`` the export used, from the first FakeTensor (or SymInt) value in the graph; None if none."""
    for node in ep.graph.nodes:
        for val in _vals(node.meta.get("val")):
            env = getattr(getattr(val, "fake_mode", None), "shape_env", None)
            if env is None and isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                env = getattr(val.node, "shape_env", None)
            if env is not None:
                return env
    return None


__all__ = ["input_names", "shape_env_of", "source_name", "specialization"]
