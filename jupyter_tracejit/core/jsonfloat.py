"""Non-finite floats in JSON: strict JSON (and JavaScript's JSON.parse) has no NaN or Infinity.

Everywhere in the run JSON a non-finite float is written as ``{"float": "nan" | "inf" | "-inf"}``.
"""

from __future__ import annotations

import math
from typing import Any


def float_to_json(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return {"float": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}
    return x


def float_from_json(x: Any) -> Any:
    if isinstance(x, dict) and set(x) == {"float"}:
        return float(x["float"])
    return x
