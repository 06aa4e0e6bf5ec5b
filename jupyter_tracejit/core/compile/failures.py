"""Guard failures in the inputs' terms: what torch says when a call's inputs fail every graph compiled for a function
(``0/0: tensor 'x' size mismatch at index 0. expected 3, actual 5``), read as ``x.size()[0] was 3, now 5`` with its
kind (:data:`~.records.RECOMPILE_KINDS`), the line it is about and the usual fix; and the values a failure names,
evaluated on the call's inputs (what a value is now)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..words import with_article
from .guards import _COMMENT, _LOCAL, inputs_terms, resolve_file

_COMPILE_ID = re.compile(r"^\[?(?P<id>\d+/\d+)\]?:\s*")
_SIZE = re.compile(
    r"tensor '(?P<source>.+?)' (?P<what>size|stride) mismatch at index (?P<index>\d+)\. "
    r"expected (?P<old>\S+), actual (?P<new>\S+)"
)
_GRAD = re.compile(r"tensor '(?P<source>.+?)' requires_grad mismatch\. expected requires_grad=(?P<old>\d)")
_DTYPE = re.compile(
    r"tensor '(?P<source>.+?)' (?P<what>dtype|device|dispatch key set) mismatch\. "
    r"expected (?P<old>.+?), actual (?P<new>.+?)$"
)
_RANK = re.compile(r"tensor '(?P<source>.+?)' rank mismatch\. expected (?P<old>\d+), actual (?P<new>\d+)")
_EQUALS = re.compile(r"^(?P<source>(?:L\[.+?\]|[A-Za-z_]\w*)[^\s=]*) == (?P<old>.+?)$")
_TYPE_ID = re.compile(r"^___check_type_id\((?P<source>[^,]+), \d+\)(?:, type=<class '(?P<type>[^']+)'>)?")
_OBJ_ID = re.compile(r"^___check_obj_id\((?P<source>[^,]+), \d+\)")
_USER_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_SYMBOLIC = re.compile(r"L\[['\"][^'\"]+['\"]\][\w.\[\]'\"()]*\.size\(\)\[\d+\]")


@dataclass
class Failure:
    """One guard failure read: what failed, in the inputs' terms, with its kind and fix."""

    compile_id: str
    kind: str
    reason: str
    file: str = ""
    line: int = 0
    #: the source whose value changed (``L['x']``), for the value it has now
    source: str = ""
    #: the graph input the failed guard is about (``x``; a tensor's name as the graph's inputs are named)
    source_input: str = ""


def _tensor_failure(expr: str, spread: str) -> tuple[str, str, str] | None:
    """(kind, reason, graph input) of a failed tensor guard (a size, stride, rank, requires_grad, dtype, device),
    or None."""
    found = _SIZE.search(expr)
    if found is not None:
        what = "size" if found.group("what") == "size" else "stride"
        where = f"{inputs_terms(found.group('source'), spread)}.{what}()[{found.group('index')}]"
        reason = f"{where} was {found.group('old')}, now {found.group('new')}"
        return "size", reason, _input_name(found.group("source"), spread)
    found = _GRAD.search(expr)
    if found is not None:
        old = found.group("old") == "1"
        reason = f"{inputs_terms(found.group('source'), spread)}.requires_grad was {old}, now {not old}"
        return "requires_grad", reason, _input_name(found.group("source"), spread)
    found = _RANK.search(expr)
    if found is not None:
        name = inputs_terms(found.group("source"), spread)
        reason = f"{name}.dim() was {found.group('old')}, now {found.group('new')}"
        return "size", reason, _input_name(found.group("source"), spread)
    found = _DTYPE.search(expr)
    if found is not None:
        name = inputs_terms(found.group("source"), spread)
        reason = f"{name}'s {found.group('what')} was {found.group('old')}, now {found.group('new')}"
        return "type", reason, _input_name(found.group("source"), spread)
    return None


def _value_failure(
    expr: str, now: Callable[[str], str], type_now: Callable[[str], str], spread: str
) -> tuple[str, str, str]:
    """(kind, reason, source) of a failed guard on a Python value, a type, an object's identity or a relation of
    sizes; ``other`` with the guard in the inputs' terms for one not known here."""
    found = _EQUALS.match(expr)
    if found is not None:
        source = found.group("source")
        value = now(source)
        reason = f"{inputs_terms(source, spread)} was {found.group('old')}, now {value or 'another value'}"
        return "value", reason, source
    found = _TYPE_ID.match(expr)
    if found is not None:
        source = found.group("source").strip()
        old = (found.group("type") or "").rsplit(".", 1)[-1]
        new_type = type_now(source)
        reason = f"{inputs_terms(source, spread)} was {with_article(old) if old else 'of another type'}" + (
            f", now {with_article(new_type)}" if new_type else ""
        )
        return "type", reason, source
    found = _OBJ_ID.match(expr)
    if found is not None:
        return "identity", f"{inputs_terms(found.group('source').strip(), spread)} is another object", ""
    symbolic = _SYMBOLIC.findall(expr)
    if symbolic:
        values = [f"{inputs_terms(s, spread)} = {now(s)}" for s in dict.fromkeys(symbolic) if now(s)]
        reason = f"{inputs_terms(expr, spread)} no longer holds" + (f" ({', '.join(values)})" if values else "")
        return "size", reason, ""
    return "other", inputs_terms(expr, spread), ""


def _failure_head(text: str, known_files: Iterable[str]) -> tuple[str, str, str, int]:
    """(compile id, the failed guard's expression, file, line) of a guard failure's text: the line from torch's
    user stack, else from the guard's comment (its shortened path found again)."""
    head, _, tail = text.partition("\nUser stack trace:")
    first = head.strip().splitlines()[0] if head.strip() else ""
    m = _COMPILE_ID.match(first)
    compile_id = m.group("id") if m is not None else ""
    body = first[m.end() :] if m is not None else first
    comment = _COMMENT.search(body)
    expr = body[: comment.start()].strip() if comment is not None else body.strip()
    file, line = "", 0
    frames = _USER_FRAME.findall(tail)
    if frames:
        file, line = frames[-1][0], int(frames[-1][1])
    elif comment is not None:
        file = resolve_file(comment.group("file"), list(known_files))
        line = int(comment.group("line")) if file else 0
    return compile_id, expr, file, line


def read_failure(
    text: str, known_files: Iterable[str], value_of: Callable[[str], Any] | None = None, spread: str = ""
) -> Failure:
    """A guard failure as torch words it (``0/0: tensor 'x' size mismatch at index 0. expected 3, actual 5``), read.
    ``value_of`` evaluates a source on the call's inputs (``L['k']`` -> 3) to say what a value is now."""
    compile_id, expr, file, line = _failure_head(text, known_files)

    def evaluated(source: str) -> Any:
        if value_of is None:
            raise KeyError(source)
        return value_of(source)

    def now(source: str) -> str:
        try:
            return _shown(evaluated(source))
        except Exception:  # a source we cannot evaluate: say what failed only
            return ""

    def type_now(source: str) -> str:
        try:
            return type(evaluated(source)).__name__
        except Exception:  # a source we cannot evaluate
            return ""

    tensor = _tensor_failure(expr, spread)
    if tensor is not None:
        kind, reason, source_input = tensor
        return Failure(compile_id, kind, reason, file, line, source_input=source_input)
    kind, reason, source = _value_failure(expr, now, type_now, spread)
    return Failure(compile_id, kind, reason or text.strip(), file, line, source)


def _input_name(source: str, spread: str = "") -> str:
    """The graph input a tensor guard is about: ``x`` for ``L['x']`` or ``x``; ``stack0`` for a value carried over a
    break; ``input_ids`` for ``kwargs['input_ids']``; ``""`` for a nested source (a parameter)."""
    m = _LOCAL.fullmatch(source.strip())
    name = m.group(1) if m is not None else inputs_terms(source.strip(), spread)
    return name.lstrip("_") if name.lstrip("_").isidentifier() else ""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else type(value).__name__


_SIZE_OF_INPUT = re.compile(r"^(?P<name>[A-Za-z_]\w*)\.size\(\)\[(?P<dim>\d+)\] was ")


def mark_dynamic_call(failure: Failure, inputs: Collection[str] = ()) -> str:
    """``torch._dynamo.mark_dynamic(input_ids, 1)`` for a size guard on an input the user passes (one of ``inputs``,
    the compiled function's arguments); the call's form with placeholders for a size inside the model."""
    found = _SIZE_OF_INPUT.match(failure.reason)
    if found is not None and found.group("name") in inputs:
        return f"torch._dynamo.mark_dynamic({found.group('name')}, {found.group('dim')})"
    return "torch._dynamo.mark_dynamic(input, dim) on the input whose size changes"


def recompile_hint(
    failure: Failure, dynamic: bool | None, first_size_change: bool, inputs: Collection[str] = ()
) -> str:
    """The usual fix for a recompilation of ``failure`` 's kind, for the ``dynamic`` the model was compiled with;
    ``inputs``: the names of the compiled function's arguments (a size guard on one names it in the fix)."""
    if failure.kind == "size":
        mark = mark_dynamic_call(failure, inputs)
        if dynamic is False:
            return (
                "dynamic=False compiles again for every new size. Pass dynamic=None (torch's default: a size that "
                "changes becomes dynamic and compiles once more) or dynamic=True, or mark the dim dynamic before the "
                f"first call: {mark}."
            )
        if first_size_change:
            return (
                "torch made the size dynamic and compiled once more, as it does the first time a size changes. To "
                f"compile once, mark the dim dynamic before the first call ({mark}) or pass dynamic=True."
            )
        return (
            "The code makes this size a constant (a Python branch, a loop or a shape it computes from it), so every "
            "new size compiles again. Rewrite that code with tensor operations, or pad the inputs to a few sizes."
        )
    if failure.kind == "value":
        return (
            "A Python value is baked into the graph as a constant, so each new value compiles again. Pass it as a "
            "tensor (torch.tensor(value)), keep it the same on every call, or (an int that varies) let it become "
            "dynamic: torch makes an int input dynamic after it changes once unless dynamic=False."
        )
    if failure.kind == "type":
        return "Pass the same type (and dtype, device) on every call: each new one compiles again."
    if failure.kind == "requires_grad":
        return (
            "An input's requires_grad changed between calls: call with the same requires_grad each time, or run "
            "inference under torch.no_grad() (no_grad=True)."
        )
    if failure.kind == "identity":
        return (
            "The graph was compiled for one object (a module, a function, a global) and another was passed: pass "
            "the same object, or compile each one separately."
        )
    return "See torch's words for the guard that failed (TORCH_LOGS=recompiles_verbose lists every guard)."


def sources_in(text: str) -> list[str]:
    """The sources a guard failure's text names whose values a reading of it shows (``k``, ``self.calls``,
    ``L['x'].size()[0]``)."""
    first = text.partition("\nUser stack trace:")[0].strip().splitlines()
    body = _COMPILE_ID.sub("", first[0]) if first else ""
    comment = _COMMENT.search(body)
    expr = body[: comment.start()].strip() if comment is not None else body.strip()
    found: list[str] = []
    for pattern in (_EQUALS, _TYPE_ID):
        m = pattern.match(expr)
        if m is not None:
            found.append(m.group("source").strip())
    found.extend(_SYMBOLIC.findall(expr))
    return list(dict.fromkeys(found))


def source_value(source: str, frame_locals: Mapping[str, Any]) -> Any:
    """The value of a dynamo source on a call's locals: ``L['x'].size()[0]``, ``L['self'].scale``,
    ``L['self']._modules['fc']``; ``KeyError``/``AttributeError`` for one that does not evaluate."""
    m = _LOCAL.match(source) or re.match(r"[A-Za-z_]\w*", source)
    if m is None:
        raise KeyError(source)
    value: Any = frame_locals[m.group(1) if m.groups() else m.group(0)]
    rest = source[m.end() :]
    token = re.compile(r"""\.(?P<attr>\w+)(?P<call>\(\))?|\[(?P<index>-?\d+)\]|\[['"](?P<key>[^'"]+)['"]\]""")
    pos = 0
    while pos < len(rest):
        t = token.match(rest, pos)
        if t is None:
            raise KeyError(source)
        if t.group("attr") is not None:
            value = getattr(value, t.group("attr"))
            if t.group("call"):
                value = value()
        elif t.group("index") is not None:
            value = value[int(t.group("index"))]
        else:
            value = value[t.group("key")]
        pos = t.end()
    return value


__all__ = ["Failure", "mark_dynamic_call", "read_failure", "recompile_hint", "source_value", "sources_in"]
