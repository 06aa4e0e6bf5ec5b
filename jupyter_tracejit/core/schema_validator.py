"""A small JSON Schema validator, compiled from the keywords the run schema (``run.schema.json``) uses: what
:func:`.validate.schema_problem` checks a saved run with.

Compiling refuses a keyword it does not know, so a schema change cannot be skipped silently;
``tests/core/test_validate.py`` checks it agrees with ``jsonschema`` on damaged runs. Not ``jsonschema``: it would be
a dependency of the core for one file, and is ~50x slower on a large run. One deviation, on purpose: an ``integer``
is a JSON integer (``1``, not ``1.0``), as the ids it holds index lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: where (the keys from the problem up, innermost first: built only on failure) and what is wrong
Problem = tuple[list[str], str]
#: a compiled check: ``None`` when the instance matches, else the :data:`Problem`
Check = Callable[[Any], "Problem | None"]

#: keywords that only document
_ANNOTATIONS = {"$schema", "$id", "title", "description", "default", "examples", "$comment"}
JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda x: isinstance(x, Mapping),
    "array": lambda x: isinstance(x, (list, tuple)),
    "string": lambda x: isinstance(x, str),
    "integer": lambda x: isinstance(x, int) and not isinstance(x, bool),
    "number": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
}


def json_pointer(path: str, key: object) -> str:
    return f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``1`` is not ``true``."""
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def _ok(x: Any) -> Problem | None:
    return None


def _first_item_problem(items: Sequence[Any], check_of: Callable[[int], Check | None]) -> Problem | None:
    """The first item's problem (``check_of(i)`` checks item ``i``; None: anything goes), its index on its path."""
    for i, value in enumerate(items):
        check = check_of(i)
        problem = check(value) if check is not None else None
        if problem is not None:
            problem[0].append(str(i))
            return problem
    return None


class SchemaCompiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def ref(self, ref: str) -> Check:
        if not ref.startswith("#/"):
            raise NotImplementedError(f"run schema: only local $ref is supported, not {ref!r}")
        if ref not in self.refs:
            late: list[Check] = []
            self.refs[ref] = lambda x: late[0](x)  # while compiling it: a definition may refer to itself
            target: Any = self.root
            for part in ref[2:].split("/"):
                target = target[part]
            late.append(self.compile(target))
            self.refs[ref] = late[0]
        return self.refs[ref]

    def compile(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return _ok
        if schema is False:
            return lambda x: ([], "no value is allowed here")
        # "x-" keys are the schema's own tables (x-categories), annotations that validate nothing
        unknown = {k for k in schema if not k.startswith("x-")} - _ANNOTATIONS - {
            "$ref", "type", "enum", "const", "required", "properties", "additionalProperties", "items",
            "additionalItems", "minItems", "minimum", "oneOf", "definitions",
        }  # fmt: skip
        if unknown:
            raise NotImplementedError(
                f"run schema: keyword(s) {sorted(unknown)} are not supported by core/schema_validator.py"
            )
        checks: list[Check] = []
        if "$ref" in schema:
            checks.append(self.ref(schema["$ref"]))
        if "type" in schema:
            checks.append(self._type(schema["type"]))
        if "const" in schema:
            const = schema["const"]
            checks.append(lambda x: None if _same(x, const) else ([], f"must be {json.dumps(const)}"))
        if "enum" in schema:
            options = list(schema["enum"])
            spelled = ", ".join(json.dumps(o) for o in options)
            checks.append(lambda x: None if any(_same(x, o) for o in options) else ([], f"must be one of {spelled}"))
        if "minimum" in schema:
            low = schema["minimum"]
            checks.append(lambda x: ([], f"must be >= {low}") if JSON_TYPES["number"](x) and x < low else None)
        if "required" in schema or "properties" in schema or "additionalProperties" in schema:
            checks.append(self._object(schema))
        if "items" in schema or "minItems" in schema:
            checks.append(self._array(schema))
        if "oneOf" in schema:
            checks.append(self._one_of(schema["oneOf"]))
        if len(checks) == 1:
            return checks[0]

        def check_all(x: Any) -> Problem | None:
            for c in checks:
                problem = c(x)
                if problem is not None:
                    return problem
            return None

        return check_all

    @staticmethod
    def _type(spec: str | list[str]) -> Check:
        names = [spec] if isinstance(spec, str) else list(spec)
        accepted = _kinds(names)
        want = " or ".join(names)

        def check_type(x: Any) -> Problem | None:
            return None if json_kind(x) in accepted else ([], f"must be {want}, not {json_kind(x)}")

        return check_type

    def _object(self, schema: Mapping[str, Any]) -> Check:
        required = list(schema.get("required", ()))
        properties = {k: self.compile(v) for k, v in schema.get("properties", {}).items()}
        extra = schema.get("additionalProperties", True)
        others: Check | None = None if extra is False else self.compile(extra)

        def check_object(x: Any) -> Problem | None:
            if not isinstance(x, Mapping):
                return None
            for key in required:
                if key not in x:
                    return [], f'missing field "{key}"'
            for key, value in x.items():
                check = properties.get(key, others)
                if check is None:
                    return [], f"unexpected field {json.dumps(key)}"
                problem = check(value)
                if problem is not None:
                    problem[0].append(str(key))
                    return problem
            return None

        return check_object

    def _array(self, schema: Mapping[str, Any]) -> Check:
        items = schema.get("items", True)
        positional = [self.compile(s) for s in items] if isinstance(items, list) else None
        each = None if positional is not None else self.compile(items)
        more = schema.get("additionalItems", True)
        more_check = None if more is False else self.compile(more)
        least = schema.get("minItems", 0)

        def check_array(x: Any) -> Problem | None:
            if not isinstance(x, (list, tuple)):
                return None
            if len(x) < least:
                return [], f"must have at least {least} items, not {len(x)}"
            if positional is not None:
                if more_check is None and len(x) > len(positional):
                    return [], f"must have at most {len(positional)} items, not {len(x)}"
                return _first_item_problem(x, lambda i: positional[i] if i < len(positional) else more_check)
            if each is _ok:
                return None
            return _first_item_problem(x, lambda i: each)

        return check_array

    def _one_of(self, alternatives: Sequence[Any]) -> Check:
        checks = [(self._accepts(s), self.compile(s)) for s in alternatives]

        def check_one_of(x: Any) -> Problem | None:
            kind = json_kind(x)
            # the alternatives this kind of value can match (every oneOf of the run schema tells them apart by it)
            candidates = [check for kinds, check in checks if kinds is None or kind in kinds]
            if len(candidates) == 1:
                return candidates[0](x)
            if not candidates:
                allowed = sorted({k for kinds, _ in checks for k in kinds or ()})
                return [], f"must be {' or '.join(allowed)}, not {kind}"
            problems = [check(x) for check in candidates]
            matched = problems.count(None)
            if matched == 1:
                return None
            if matched > 1:
                return [], "matches more than one of its allowed forms"
            # the alternative that got furthest says the most ("at /check/cases/0: missing field ...")
            return max((p for p in problems if p is not None), key=lambda p: len(p[0]))

        return check_one_of

    def _accepts(self, schema: Any) -> frozenset[str] | None:
        """The kinds of JSON value (:func:`json_kind`) ``schema`` can match; ``None``: any."""
        if not isinstance(schema, Mapping):
            return None
        if "$ref" in schema:
            target: Any = self.root
            for part in schema["$ref"][2:].split("/"):
                target = target[part]
            return self._accepts(target)
        if "type" in schema:
            return _kinds([schema["type"]] if isinstance(schema["type"], str) else schema["type"])
        if "const" in schema:
            return frozenset({json_kind(schema["const"])})
        if "enum" in schema:
            return frozenset(json_kind(v) for v in schema["enum"])
        return None


#: the JSON kind of a Python value as json.load makes it (a tuple reads as an array)
_KIND_OF_TYPE: dict[type, str] = {
    type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
    tuple: "array", dict: "object",
}  # fmt: skip


def json_kind(x: Any) -> str:
    kind = _KIND_OF_TYPE.get(type(x))
    return kind if kind is not None else _json_type(x)


def _kinds(names: Sequence[str]) -> frozenset[str]:
    """The :func:`json_kind` values a ``type`` keyword takes (a number may be an integer)."""
    return frozenset(names) | ({"integer"} if "number" in names else set())


def _json_type(x: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if JSON_TYPES[name](x):
            return name
    return type(x).__name__
