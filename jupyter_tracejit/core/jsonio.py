"""The run's JSON, written one way.

- Non-finite floats: strict JSON (and JavaScript's ``JSON.parse``) has no NaN or Infinity, so everywhere in the
  run JSON a non-finite float is ``{"float": "nan" | "inf" | "-inf"}``.
- Records: a dataclass whose JSON is its fields, in field order (:class:`JsonRecord`), so ``to_json`` is
  canonical: ``from_json(x.to_json()).to_json()`` equals ``x.to_json()`` key for key.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar


def float_to_json(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return {"float": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}
    return x


def float_from_json(x: Any) -> Any:
    if isinstance(x, dict) and set(x) == {"float"}:
        return float(x["float"])
    return x


def encode(value: Any) -> Any:
    """A field value as JSON: records and other ``to_json`` objects by their method, containers recursively."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return float_to_json(value)
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    raise TypeError(f"cannot write a {type(value).__name__} to the run JSON")


R = TypeVar("R", bound="JsonRecord")
#: field name -> how to read it back
Decoders = dict[str, Callable[[Any], Any]]


class JsonRecord:
    """Mixin for dataclasses serialized as their fields.

    ``_json_decoders`` maps a field name to the function that reads it back (nested records, lists of them);
    other fields are read as they are, non-finite floats decoded. ``_json_derived`` names read-only properties
    written after the fields for readers without our model (``ok``, ``summary``) and ignored when read.
    ``_json_sparse`` names fields added after runs were saved without them: left out while empty (falsy), so such
    a run reads back and writes again the same, and read back as their defaults.
    """

    _json_decoders: ClassVar[Decoders] = {}
    _json_derived: ClassVar[tuple[str, ...]] = ()
    _json_sparse: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        sparse = self._json_sparse
        out = {
            f.name: encode(getattr(self, f.name))
            for f in _json_fields(type(self))
            if not (f.name in sparse and not getattr(self, f.name))
        }
        for name in self._json_derived:
            out[name] = encode(getattr(self, name))
        return out

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any]) -> R:
        kwargs: dict[str, Any] = {}
        for f in _json_fields(cls):
            if f.name not in data:
                continue  # absent: the field's default (older writers may omit optional fields)
            raw = data[f.name]
            decode = cls._json_decoders.get(f.name)
            kwargs[f.name] = decode(raw) if decode is not None and raw is not None else float_from_json(raw)
        return cls(**kwargs)


#: ``field(metadata=NOT_IN_JSON)`` keeps a field (live objects) out of the JSON
NOT_IN_JSON = {"json": False}


def _json_fields(cls: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if f.metadata.get("json", True)]


def list_of(decode: Callable[[Any], Any]) -> Callable[[Any], list[Any]]:
    """A decoder for a list of items each read with ``decode``."""
    return lambda rows: [decode(r) for r in rows]


__all__ = ["NOT_IN_JSON", "Decoders", "JsonRecord", "encode", "float_from_json", "float_to_json", "list_of"]
