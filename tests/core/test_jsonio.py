"""The run's JSON is written one way: non-finite floats as {"float": ...} (strict JSON has none), records as their
fields in field order, derived properties written for other readers but ignored on read, live fields never
written, and anything else refused."""

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


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (math.nan, {"float": "nan"}),
        (math.inf, {"float": "inf"}),
        (-math.inf, {"float": "-inf"}),
        (1.5, 1.5),
        (-0.0, -0.0),
        (3, 3),
        ("nan", "nan"),
        (None, None),
    ],
)
def test_floats_to_json_and_back(value: Any, written: Any) -> None:
    assert float_to_json(value) == written
    back = float_from_json(float_to_json(value))
    if isinstance(value, float) and math.isnan(value):
        assert isinstance(back, float) and math.isnan(back)
    else:
        assert back == value and type(back) is type(value)
    json.dumps(float_to_json(value), allow_nan=False)


def test_float_from_json_leaves_other_dicts_alone() -> None:
    assert float_from_json({"float": "inf", "other": 1}) == {"float": "inf", "other": 1}
    assert float_from_json({"value": "nan"}) == {"value": "nan"}
    assert float_from_json([{"float": "nan"}]) == [{"float": "nan"}]  # only the value itself is decoded


class HasToJson:
    def to_json(self) -> dict[str, str]:
        return {"custom": "yes"}


def test_encode_nested_containers() -> None:
    value = {
        "a": (1, 2.5, math.nan),
        3: [None, True, {"deep": [math.inf, "s"]}],
        "obj": HasToJson(),
    }
    assert encode(value) == {
        "a": [1, 2.5, {"float": "nan"}],
        "3": [None, True, {"deep": [{"float": "inf"}, "s"]}],
        "obj": {"custom": "yes"},
    }
    json.dumps(encode(value), allow_nan=False)


@pytest.mark.parametrize("value", [{1, 2}, object(), b"bytes", 1j, frozenset()])
def test_encode_refuses_what_json_cannot_hold(value: Any) -> None:
    with pytest.raises(TypeError, match=f"cannot write a {type(value).__name__} to the run JSON"):
        encode(value)


def test_encode_refuses_unknown_objects_nested_deep() -> None:
    with pytest.raises(TypeError, match="cannot write a set"):
        encode({"a": [1, {"b": {3}}]})


@dataclass
class Point(JsonRecord):
    x: float
    y: float = 0.0


@dataclass
class Shape(JsonRecord):
    name: str
    points: list[Point] = field(default_factory=list)
    origin: Point | None = None
    weights: list[float] = field(default_factory=list)
    scale: float = 1.0
    live: Any = field(default=None, metadata=NOT_IN_JSON)

    _json_decoders: ClassVar[Decoders] = {"points": list_of(Point.from_json), "origin": Point.from_json}
    _json_derived: ClassVar[tuple[str, ...]] = ("size", "closed")

    @property
    def size(self) -> int:
        return len(self.points)

    @property
    def closed(self) -> bool:
        return bool(self.points) and self.points[0] == self.points[-1]


def shape() -> Shape:
    return Shape(
        name="tri",
        points=[Point(0.0, 0.0), Point(1.0, math.inf), Point(0.0, 0.0)],
        origin=Point(math.nan),
        weights=[1.0, -math.inf],
        scale=math.inf,
        live=object(),
    )


def test_a_record_is_its_fields_in_order_then_its_derived_properties() -> None:
    out = shape().to_json()
    assert list(out) == ["name", "points", "origin", "weights", "scale", "size", "closed"]
    assert out["points"][1] == {"x": 1.0, "y": {"float": "inf"}}
    assert out["origin"] == {"x": {"float": "nan"}, "y": 0.0}
    assert out["weights"] == [1.0, {"float": "-inf"}]
    assert out["scale"] == {"float": "inf"}
    assert (out["size"], out["closed"]) == (3, True)
    assert "live" not in out
    json.dumps(out, allow_nan=False)


def test_round_trip_with_decoders_is_canonical() -> None:
    original = shape()
    data = json.loads(json.dumps(original.to_json(), allow_nan=False))
    again = Shape.from_json(data)
    assert again.to_json() == original.to_json()
    assert again.points == [Point(0.0, 0.0), Point(1.0, math.inf), Point(0.0, 0.0)]
    assert isinstance(again.origin, Point) and math.isnan(again.origin.x)
    assert again.scale == math.inf
    assert again.live is None


def test_derived_and_unknown_keys_are_ignored_on_read() -> None:
    data = {"name": "n", "size": 99, "closed": "nonsense", "live": "not read", "added_later": 1}
    again = Shape.from_json(data)
    assert again == Shape(name="n")
    assert again.size == 0 and again.live is None


def test_absent_fields_take_their_defaults_and_null_skips_the_decoder() -> None:
    assert Shape.from_json({"name": "n", "origin": None}) == Shape(name="n", origin=None)
    with pytest.raises(TypeError):
        Shape.from_json({"points": []})  # a required field is required


def test_list_of_decodes_each_item() -> None:
    assert list_of(Point.from_json)([{"x": 1.0}, {"x": {"float": "-inf"}, "y": 2.0}]) == [
        Point(1.0),
        Point(-math.inf, 2.0),
    ]
    assert list_of(int)([]) == []
