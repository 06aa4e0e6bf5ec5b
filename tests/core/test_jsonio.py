"""core/jsonio.py: records serialized as their fields in field order, non-finite floats spelled for JSON."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from jupyter_tracejit.core.jsonio import (
    NOT_IN_JSON,
    Decoders,
    JsonRecord,
    encode,
    float_from_json,
    float_to_json,
    list_of,
)


@dataclass
class Inner(JsonRecord):
    value: float
    tags: list[str] = field(default_factory=list)


@dataclass
class Outer(JsonRecord):
    name: str
    inner: Inner | None = None
    items: list[Inner] = field(default_factory=list)
    table: dict[int, float] = field(default_factory=dict)
    live: Any = field(default=None, metadata=NOT_IN_JSON)

    _json_decoders: ClassVar[Decoders] = {"inner": Inner.from_json, "items": list_of(Inner.from_json)}
    _json_derived: ClassVar[tuple[str, ...]] = ("size",)

    @property
    def size(self) -> int:
        return len(self.items)


@pytest.mark.parametrize(("value", "text"), [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")])
def test_non_finite_floats(value, text):
    assert float_to_json(value) == {"float": text}
    back = float_from_json({"float": text})
    assert math.isnan(back) if text == "nan" else back == value
    assert float_to_json(1.5) == 1.5 and float_from_json({"float": "nan", "x": 1}) == {"float": "nan", "x": 1}


def test_records_round_trip_in_field_order_with_derived_fields_and_no_live_ones():
    outer = Outer("o", Inner(math.inf, ["a"]), [Inner(1.0), Inner(-math.inf)], {3: 0.5}, live=object())
    data = outer.to_json()
    assert list(data) == ["name", "inner", "items", "table", "size"]
    assert data["inner"] == {"value": {"float": "inf"}, "tags": ["a"]} and data["table"] == {"3": 0.5}
    assert data["size"] == 2 and "live" not in data
    text = json.dumps(data, allow_nan=False)
    back = Outer.from_json(json.loads(text))
    assert back.items[1].value == -math.inf and back.inner == Inner(math.inf, ["a"]) and back.live is None
    assert json.dumps(back.to_json(), allow_nan=False) == text  # canonical: the same text again


def test_absent_fields_take_their_defaults_and_unknown_objects_are_refused():
    assert Outer.from_json({"name": "n"}) == Outer("n")
    assert encode((1, [2.0, {"a": None}])) == [1, [2.0, {"a": None}]]
    with pytest.raises(TypeError, match="cannot write a object to the run JSON"):
        encode(object())
