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
from collections.abc import Iterable
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


def spread_name(code: Any) -> str:
    """The name of a function's ``**kwargs`` argument (``""`` for none)."""
    import inspect

    flags = getattr(code, "co_flags", 0)
    if not flags & inspect.CO_VARKEYWORDS:
        return ""
    at = code.co_argcount + code.co_kwonlyargcount + (1 if flags & inspect.CO_VARARGS else 0)
    return str(code.co_varnames[at]) if at < len(code.co_varnames) else ""


__all__ = [
    "GuardLine",
    "about_inputs",
    "guard_lines",
    "inputs_terms",
    "readable_guard",
    "region_guards",
    "resolve_file",
    "spread_name",
]
