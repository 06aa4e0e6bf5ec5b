"""Guards and guard failures in the inputs' terms.

Dynamo names what a guard checks by its *source* in the compiled frame: ``L['x']`` (a local: an argument),
``L['self']._modules['fc']._parameters['weight']`` (a parameter), ``G['torch']`` (a global). People write
``x``, ``self.fc.weight``, ``torch``; :func:`inputs_terms` rewrites one into the other. A guard's line is the
comment torch writes after it (``# y = x * k  # mp/cx/f.py:3 in f``, the path shortened as torch's
``shorten_filename`` does: :func:`resolve_file` finds it again). A guard failure (:func:`read_failure`) becomes
``x.size()[0] was 3, now 5`` with its kind and the usual fix.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..source import is_torch_file, source_line
from ..words import with_article
from .records import CompileGuard

_LOCAL = re.compile(r"""L\[['"]([^'"]+)['"]\]""")
_GLOBAL = re.compile(r"""G\[['"]([^'"]+)['"]\]""")
_MODULES = re.compile(r"""\._(?:modules|parameters|buffers)\[['"]([^'"]+)['"]\]""")
#: a value dynamo carries over a break into the resume function (``___stack0``)
_STACK = re.compile(r"\b___stack\d+\b")


def inputs_terms(text: str, spread: str = "") -> str:
    """Dynamo's sources in ``text`` written as the user writes them: ``L['x'].size()[0]`` -> ``x.size()[0]``,
    ``L['self']._modules['fc']._parameters['weight']`` -> ``self.fc.weight``; ``L['___stack0']`` (a value dynamo
    carries over a break) -> ``the value before the break``. ``spread`` names the compiled function's ``**kwargs``
    argument: the inputs it collects are named by their keys (``kwargs['input_ids']`` -> ``input_ids``, as the
    caller passed them)."""
    text = _MODULES.sub(lambda m: "." + m.group(1), text)
    text = _LOCAL.sub(lambda m: m.group(1), text)
    text = _STACK.sub("the value before the break", text)
    if spread:
        text = re.sub(rf"""(?<![\w.]){re.escape(spread)}\[['"]([A-Za-z_]\w*)['"]\]""", lambda m: m.group(1), text)
    return _GLOBAL.sub(lambda m: m.group(1), text)


# -- files as torch shortens them -----------------------------------------------------------------------------------
def resolve_file(short: str, known: Iterable[str]) -> str:
    """The full path of a file torch wrote shortened (``mp/cx/f.py``, relative to a folder it cut): the known file
    it is the end of; torch's own files (``nn/modules/linear.py``) and ones not found give ``""``."""
    if not short:
        return ""
    if os.path.isabs(short) and os.path.exists(short):
        return "" if is_torch_file(short) else short
    tail = short.replace("\\", "/")
    candidates = [f for f in known if f.replace("\\", "/").endswith("/" + tail) or f.replace("\\", "/") == tail]
    if not candidates:  # torch cut one letter of the top folder too ('/work/x.py' -> 'ork/x.py')
        candidates = [f for f in known if f.replace("\\", "/").endswith(tail)]
    user = [f for f in candidates if not is_torch_file(f)]
    return min(user, key=len) if user else ""


# -- the guards of a compiled graph ---------------------------------------------------------------------------------
_TREE_LINE = re.compile(r"^[|\s]*\+- (?P<kind>[A-Z_]+): (?P<rest>.*)$")
#: ``  # code  # file:line in func`` (the code may be empty) and torch's ``(HINT: ...)`` after it
_COMMENT = re.compile(
    r"\s+#\s(?P<code>.*?)\s*#\s(?P<file>[^\s#]+):(?P<line>\d+) in (?P<func>[\w<>.]+)(?:\s+\(.*\))?\s*$"
)
_TENSOR = re.compile(
    r"check_tensor\((?P<source>.+?), (?P<cls>\w+), DispatchKeySet\(.*?\), (?P<dtype>torch\.\w+), "
    r"device=(?P<device>[^,]+), requires_grad=(?P<rg>\w+), size=\[(?P<size>[^\]]*)\], stride=\[(?P<stride>[^\]]*)\]\)"
)
#: guard kinds that say nothing about the inputs a person passes: the ambient state, torch's own modules, dynamo's
#: markers
_AMBIENT = frozenset(
    {
        "GLOBAL_STATE",
        "TORCH_FUNCTION_MODE_STACK",
        "DEFAULT_DEVICE",
        "DIMENSION_DYNAMIC_MARKING_GUARD",
        "ID_MATCH",
        "NO_HASATTR",
        "HASATTR",
        "DICT_VERSION",
        "DICT_CONTAINS",
        "DICT_KEYS_MATCH",
        "DICT_KEYS",
        "BUILTIN_MATCH",
        "NO_TENSOR_ALIASING",
        "GRAD_MODE",
        "DETERMINISTIC_ALGORITHMS",
        "FSDP_TRAINING_STATE",
        "BACKEND_MATCH",
        "CLOSURE_MATCH",
        "FUNCTION_MATCH",
        "WEAKREF_ALIVE",
        "DUAL_LEVEL",
        "FUNCTORCH_STACK_MATCH",
        "AUTOGRAD_SAVED_TENSORS_HOOKS",
    }
)


def _is_parameter(source: str) -> bool:
    return "._parameters[" in source or "._buffers[" in source


def _tensor_text(m: re.Match[str], spread: str = "") -> str:
    sizes = [s.strip() for s in m.group("size").split(",") if s.strip()]
    shown = ", ".join("any" if s == "None" else s for s in sizes)
    dtype = m.group("dtype").replace("torch.", "")
    return f"{inputs_terms(m.group('source'))} is a {dtype} tensor of size [{shown}], requires_grad={m.group('rg')}" + (
        "" if m.group("device") == "None" else f", on {m.group('device')}"
    )


@dataclass
class GuardLine:
    """One line of torch's guard tree: its kind, its expression, and the line torch says made it."""

    kind: str
    expr: str
    code: str = ""
    short_file: str = ""
    line: int = 0


def guard_lines(guard_manager: Any) -> list[GuardLine]:
    """The guards of a compiled graph from its guard manager's printed tree (torch 2.13 and 2.14), or from its
    ``verbose_code_parts`` where there is no tree; ``[]`` when neither can be read."""
    try:
        tree = str(guard_manager)
    except Exception:  # a guard manager that cannot print itself: nothing to say
        tree = ""
    lines: list[GuardLine] = []
    for raw in tree.splitlines():
        m = _TREE_LINE.match(raw)
        if m is None:
            continue
        kind, rest = m.group("kind"), m.group("rest")
        comment = _COMMENT.search(rest)
        expr = rest[: comment.start()] if comment is not None else rest
        lines.append(
            GuardLine(
                kind,
                expr.strip(),
                comment.group("code").strip() if comment is not None else "",
                comment.group("file") if comment is not None else "",
                int(comment.group("line")) if comment is not None else 0,
            )
        )
    if lines:
        return lines
    for part in getattr(guard_manager, "verbose_code_parts", None) or []:
        comment = _COMMENT.search(str(part))
        expr = str(part)[: comment.start()] if comment is not None else str(part)
        lines.append(
            GuardLine(
                "GUARD",
                expr.strip(),
                comment.group("code").strip() if comment is not None else "",
                comment.group("file") if comment is not None else "",
                int(comment.group("line")) if comment is not None else 0,
            )
        )
    return lines


def about_inputs(g: GuardLine) -> bool:
    """Whether a guard is about what the user passes (the inputs and the module's plain attributes), not dynamo's
    ambient checks, torch's modules, types of containers or the parameters' metadata."""
    if g.kind in _AMBIENT or "G[" in g.expr or "___check_obj_id" in g.expr or "___dict_contains" in g.expr:
        return False
    if g.expr.startswith("hasattr(") or "_dynamo_" in g.expr or "torch._functorch" in g.expr:
        return False
    tensor = _TENSOR.search(g.expr)
    if tensor is not None:
        return not _is_parameter(tensor.group("source"))
    if "___check_type_id" in g.expr:
        # the type of an argument (an int or a float passed), not of the module's containers
        source = g.expr.split("(", 1)[1].split(",", 1)[0] if "(" in g.expr else ""
        return bool(_LOCAL.fullmatch(source.strip())) and "'self'" not in source
    if _is_parameter(g.expr):
        return False
    return "L[" in g.expr


def readable_guard(g: GuardLine, spread: str = "") -> str:
    tensor = _TENSOR.search(g.expr)
    if tensor is not None:
        return _tensor_text(tensor, spread)
    type_id = re.match(r"___check_type_id\((?P<source>[^,]+), \d+\), type=<class '(?P<type>[^']+)'>", g.expr)
    if type_id is not None:
        kind = with_article(type_id.group("type").rsplit(".", 1)[-1])
        return f"{inputs_terms(type_id.group('source'), spread)} is {kind}"
    return inputs_terms(g.expr, spread)


def region_guards(guard_manager: Any, known_files: Iterable[str], spread: str = "") -> tuple[list[CompileGuard], int]:
    """The guards about the inputs of one compiled graph, in the inputs' terms with their lines, and how many
    guards torch checks in all."""
    lines = guard_lines(guard_manager)
    files = list(known_files)
    kept: list[CompileGuard] = []
    seen: set[str] = set()
    for g in lines:
        if not about_inputs(g):
            continue
        expr = readable_guard(g, spread)
        if expr in seen:
            continue
        seen.add(expr)
        file = resolve_file(g.short_file, files)
        kept.append(CompileGuard(g.kind, expr, file, g.line if file else 0, source_line(file, g.line) if file else ""))
    return kept, len(lines)


# -- guard failures (recompilations) ----------------------------------------------------------------------------------
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


def read_failure(
    text: str, known_files: Iterable[str], value_of: Callable[[str], Any] | None = None, spread: str = ""
) -> Failure:
    """A guard failure as torch words it (``0/0: tensor 'x' size mismatch at index 0. expected 3, actual 5``), read.
    ``value_of`` evaluates a source on the call's inputs (``L['k']`` -> 3) to say what a value is now."""
    head, _, tail = text.partition("\nUser stack trace:")
    first = head.strip().splitlines()[0] if head.strip() else ""
    m = _COMPILE_ID.match(first)
    compile_id = m.group("id") if m is not None else ""
    body = first[m.end() :] if m is not None else first
    comment = _COMMENT.search(body)
    expr = body[: comment.start()].strip() if comment is not None else body.strip()
    files = list(known_files)
    file, line = "", 0
    frames = _USER_FRAME.findall(tail)
    if frames:
        file, line = frames[-1][0], int(frames[-1][1])
    elif comment is not None:
        file = resolve_file(comment.group("file"), files)
        line = int(comment.group("line")) if file else 0

    def now(source: str) -> str:
        if value_of is None:
            return ""
        try:
            value = value_of(source)
        except Exception:  # a source we cannot evaluate: say what failed only
            return ""
        return _shown(value)

    found = _SIZE.search(expr)
    if found is not None:
        what = "size" if found.group("what") == "size" else "stride"
        name = inputs_terms(found.group("source"), spread)
        where = f"{name}.{what}()[{found.group('index')}]"
        reason = f"{where} was {found.group('old')}, now {found.group('new')}"
        return Failure(compile_id, "size", reason, file, line, source_input=_input_name(found.group("source"), spread))
    found = _GRAD.search(expr)
    if found is not None:
        old = found.group("old") == "1"
        name = inputs_terms(found.group("source"), spread)
        reason = f"{name}.requires_grad was {old}, now {not old}"
        return Failure(
            compile_id, "requires_grad", reason, file, line, source_input=_input_name(found.group("source"), spread)
        )
    found = _RANK.search(expr)
    if found is not None:
        name = inputs_terms(found.group("source"), spread)
        reason = f"{name}.dim() was {found.group('old')}, now {found.group('new')}"
        return Failure(compile_id, "size", reason, file, line, source_input=_input_name(found.group("source"), spread))
    found = _DTYPE.search(expr)
    if found is not None:
        name = inputs_terms(found.group("source"), spread)
        reason = f"{name}'s {found.group('what')} was {found.group('old')}, now {found.group('new')}"
        return Failure(compile_id, "type", reason, file, line, source_input=_input_name(found.group("source"), spread))
    found = _EQUALS.match(expr)
    if found is not None:
        source = found.group("source")
        value = now(source)
        reason = f"{inputs_terms(source, spread)} was {found.group('old')}" + (
            f", now {value}" if value else ", now another value"
        )
        return Failure(compile_id, "value", reason, file, line, source)
    found = _TYPE_ID.match(expr)
    if found is not None:
        source = found.group("source").strip()
        old = (found.group("type") or "").rsplit(".", 1)[-1]
        new_type = ""
        if value_of is not None:
            try:
                new_type = type(value_of(source)).__name__
            except Exception:  # a source we cannot evaluate
                new_type = ""
        reason = f"{inputs_terms(source, spread)} was {with_article(old) if old else 'of another type'}" + (
            f", now {with_article(new_type)}" if new_type else ""
        )
        return Failure(compile_id, "type", reason, file, line, source)
    found = _OBJ_ID.match(expr)
    if found is not None:
        return Failure(
            compile_id,
            "identity",
            f"{inputs_terms(found.group('source').strip(), spread)} is another object",
            file,
            line,
        )
    symbolic = _SYMBOLIC.findall(expr)
    if symbolic:
        values = [f"{inputs_terms(s, spread)} = {now(s)}" for s in dict.fromkeys(symbolic) if now(s)]
        reason = f"{inputs_terms(expr, spread)} no longer holds" + (f" ({', '.join(values)})" if values else "")
        return Failure(compile_id, "size", reason, file, line)
    return Failure(compile_id, "other", inputs_terms(expr, spread) or text.strip(), file, line)


def _input_name(source: str, spread: str = "") -> str:
    """The graph input a tensor guard is about: ``x`` for ``L['x']`` or ``x``; ``stack0`` for a value carried over a
    break; ``input_ids`` for ``kwargs['input_ids']``; ``""`` for a nested source (a parameter)."""
    m = _LOCAL.fullmatch(source.strip())
    name = m.group(1) if m is not None else inputs_terms(source.strip(), spread)
    return name.lstrip("_") if name.lstrip("_").isidentifier() else ""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else type(value).__name__


def recompile_hint(failure: Failure, dynamic: bool | None, first_size_change: bool) -> str:
    """The usual fix for a recompilation of ``failure`` 's kind, for the ``dynamic`` the model was compiled with."""
    if failure.kind == "size":
        if dynamic is False:
            return (
                "dynamic=False compiles again for every new size. Pass dynamic=None (torch's default: a size that "
                "changes becomes dynamic and compiles once more) or dynamic=True, or mark the dim dynamic before the "
                "first call: torch._dynamo.mark_dynamic(x, 0)."
            )
        if first_size_change:
            return (
                "torch made the size dynamic and compiled once more, as it does the first time a size changes. To "
                "compile once, mark the dim dynamic before the first call (torch._dynamo.mark_dynamic(x, 0)) or pass "
                "dynamic=True."
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


def spread_name(code: Any) -> str:
    """The name of a function's ``**kwargs`` argument (``""`` for none)."""
    import inspect

    flags = getattr(code, "co_flags", 0)
    if not flags & inspect.CO_VARKEYWORDS:
        return ""
    at = code.co_argcount + code.co_kwonlyargcount + (1 if flags & inspect.CO_VARARGS else 0)
    return str(code.co_varnames[at]) if at < len(code.co_varnames) else ""


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


__all__ = [
    "Failure",
    "GuardLine",
    "about_inputs",
    "guard_lines",
    "inputs_terms",
    "read_failure",
    "readable_guard",
    "recompile_hint",
    "region_guards",
    "resolve_file",
    "source_value",
    "sources_in",
    "spread_name",
]
