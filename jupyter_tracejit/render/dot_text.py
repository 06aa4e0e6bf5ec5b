"""How DOT text is written safely, as model/dotText.ts writes it: labels and tooltips escaped and cut to their
length (counted in UTF-16 code units, as JavaScript counts), CSS classes and DOM ids from any name, attribute
values spelled for a label. Every text from user code (module names, debug names, string constants, source lines)
goes through here, so it can neither end a quoted string nor form a Graphviz escape (``\\N``, ``\\G``, ``\\l``)
or an HTML entity; control characters become spaces."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ..core.graph_text import js_number

MAX_LABEL_CHARS = 48
MAX_TOOLTIP_CHARS = 160
#: folded inputs shown in a label before ``…``, and the characters of each
MAX_FOLDED_ITEMS = 3
MAX_ITEM_CHARS = 24
MAX_TOOLTIP_OUTPUTS = 4
MAX_TITLE_CHARS = 120
#: how a backslash of user text reads in tooltips: Graphviz expands escapes in tooltips twice
TOOLTIP_BACKSLASH = "\u29f5"

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
#: a Python string holds a surrogate only unpaired (a pair is one code point): no encoding can write it
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_CLASS_BAD = re.compile(r"[^A-Za-z0-9_-]+")
_ID_BAD = re.compile(r"[^A-Za-z0-9_.-]")


# -- text --------------------------------------------------------------------------------------------------------
def _utf16_len(text: str) -> int:
    # "surrogatepass": a lone surrogate (a Python string may hold one, as a JavaScript string may) is one unit
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def truncate(text: str, limit: int) -> str:
    """At most ``limit`` UTF-16 code units (JavaScript's string length), the last one ``…`` when cut; a pair cut
    in half loses its first half, as in model/dot.ts."""
    if _utf16_len(text) <= limit:
        return text
    cut = text.encode("utf-16-le", "surrogatepass")[: 2 * max(limit - 1, 0)].decode("utf-16-le", "surrogatepass")
    if cut and "\ud800" <= cut[-1] <= "\udbff":
        cut = cut[:-1]
    return cut + "…"


def escape_text(text: str, limit: int = MAX_LABEL_CHARS, backslash: str = "\\\\") -> str:
    """One line of untrusted text as a literal fragment of a quoted DOT string."""
    text = truncate(_CONTROL.sub(" ", _SURROGATE.sub("\ufffd", text)), limit)
    return text.replace("&", "&amp;").replace("\\", backslash).replace('"', '\\"')


def label_lines(lines: Iterable[str], limit: int = MAX_LABEL_CHARS) -> str:
    """Lines of untrusted text as a quoted, centred multi-line DOT label."""
    return '"' + "\\n".join(escape_text(line, limit) for line in lines) + '"'


def tooltip_lines(lines: Iterable[str]) -> str:
    return '"' + "&#10;".join(escape_text(line, MAX_TOOLTIP_CHARS, TOOLTIP_BACKSLASH) for line in lines) + '"'


def css_token(text: str) -> str:
    """A class token: runs of characters outside ``[A-Za-z0-9_-]`` become one ``-``; never empty."""
    return _CLASS_BAD.sub("-", text).strip("-") or "x"


def dom_id(text: str) -> str:
    """An id safe in DOT strings and DOM ids alike: other characters spelled ``-u<hex>-``."""
    return _ID_BAD.sub(lambda m: f"-u{ord(m.group(0)):x}-", text)


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- values as the browser prints them -----------------------------------------------------------------------------
def format_value(value: Any) -> str:
    """A constant or attribute value as labels show it (``1``, ``True``, ``[-1, 2]``, ``INT64_MAX``, ``"s"``)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        if (isinstance(value, int) and value >= 2**63 - 1) or float(value) >= 2.0**63:
            return "INT64_MAX"
        if (isinstance(value, int) and value <= -(2**63)) or float(value) <= -(2.0**63):
            return "INT64_MIN"
        return js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if isinstance(value.get("tensor"), dict):
            t = value["tensor"]
            preview = t.get("preview") or []
            if t.get("shape") == [] and len(preview) == 1:
                return f"tensor({format_value(preview[0])})"
            return f"tensor<{t.get('dtype', '')}[{', '.join(format_value(d) for d in t.get('shape', []))}]>"
        if "float" in value:
            return str(value["float"])
        if "device" in value:
            return json.dumps(str(value["device"]), ensure_ascii=False)
        if "repr" in value:
            return str(value["repr"])
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in value.items()) + "}"
    return str(value)


# -- the visible graph -------------------------------------------------------------------------------------------


__all__ = [
    "MAX_FOLDED_ITEMS",
    "MAX_ITEM_CHARS",
    "MAX_LABEL_CHARS",
    "MAX_TITLE_CHARS",
    "MAX_TOOLTIP_CHARS",
    "MAX_TOOLTIP_OUTPUTS",
    "TOOLTIP_BACKSLASH",
    "css_token",
    "dom_id",
    "escape_text",
    "format_value",
    "label_lines",
    "quoted",
    "tooltip_lines",
    "truncate",
]
