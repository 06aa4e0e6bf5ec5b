"""What the installed torch says and decides, read from it rather than copied.

The product reproduces a few of torch's words and rules: the nondeterministic-node warning its check emits, the
name of the exception its check raises, the warning filters ``torch.jit`` installs on import. Each is read here
from the torch that is installed (its source, its classes, the filters it installed), so a torch that words or
decides these differently is followed, not contradicted. Where reading fails (a torch whose code is laid out
differently), the texts of the versions this package is tested on are the fallback, and
``tests/core/test_torch_facts.py`` fails on such a torch until this module learns to read it.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap
import warnings
from dataclasses import dataclass

import torch
import torch.jit._trace as torch_trace_module
from torch.jit._trace import TracerWarning, indent

#: the installed torch's release, ``(major, minor)``
TORCH_RELEASE: tuple[int, int] = tuple(int(p) for p in re.findall(r"\d+", torch.__version__)[:2])  # type: ignore[assignment]

#: the class torch's check raises when the graphs differ or running a trace on the check inputs raised
TracingCheckError = torch_trace_module.TracingCheckError


@dataclass(frozen=True)
class NondeterministicWarning:
    """torch's "Trace had nondeterministic nodes" warning: the text before the node list, and after it."""

    head: str
    tail: str
    #: how many nodes torch lists at most
    max_nodes: int = 20

    def message(self, node_texts: list[str]) -> str:
        nodes = "\n".join(indent(t) for t in node_texts[: self.max_nodes])
        return f"{self.head}{nodes}{self.tail}"


#: the texts of the releases that worded it so, for a torch whose source cannot be read (2.14 fixed the grammar)
_NONDETERMINISTIC_FALLBACK = {
    "before_2_14": NondeterministicWarning(
        "Trace had nondeterministic nodes. Did you forget call .eval() on your model? Nodes:\n",
        "\nThis may cause errors in trace checking. To disable trace checking, pass check_trace=False to "
        "torch.jit.trace()",
    ),
    "since_2_14": NondeterministicWarning(
        "Trace had nondeterministic nodes. Did you forget to call .eval() on your model? Nodes:\n",
        "\nThis may cause errors in trace checking. To disable trace checking, pass check_trace=False to "
        "torch.jit.trace()",
    ),
}


def _string_parts(node: ast.expr) -> list[str] | None:
    """The literal strings of ``"a" "b"`` / ``"a" + "b"``; None when anything else is in the expression."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string_parts(node.left), _string_parts(node.right)
        return None if left is None or right is None else left + right
    return None


def read_nondeterministic_warning(source: str) -> NondeterministicWarning | None:
    """The warning's texts from the source of ``torch.jit._trace._check_trace``: the variable that collects the
    message is assigned and extended with literal strings around one non-literal part (the joined node list);
    the literals before it are the head, the ones after it the tail. None when the code is laid out otherwise."""
    tree = ast.parse(textwrap.dedent(source))
    start = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and any("nondeterministic nodes" in p for p in _string_parts(node.value) or [])
        ),
        None,
    )
    if start is None:
        return None
    name = start.targets[0].id  # type: ignore[attr-defined]
    extensions = sorted(
        (node.lineno, _string_parts(node.value))  # None: the node list
        for node in ast.walk(tree)
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name
    )
    pieces = [_string_parts(start.value), *(parts for _, parts in extensions)]
    if sum(1 for p in pieces if p is None) != 1:
        return None
    split = pieces.index(None)
    head = "".join(s for p in pieces[:split] for s in (p or []))
    tail = "".join(s for p in pieces[split + 1 :] for s in (p or []))
    limit = re.search(r"\]\s*\[\s*:\s*(\d+)\s*\]", source)
    return NondeterministicWarning(head, tail, int(limit.group(1)) if limit else 20)


@functools.cache
def nondeterministic_warning() -> NondeterministicWarning:
    """torch's nondeterministic-node warning as the installed torch words it."""
    try:
        found = read_nondeterministic_warning(inspect.getsource(torch_trace_module._check_trace))
    except (OSError, TypeError, SyntaxError):  # no source shipped (a frozen or compiled install)
        found = None
    if found is not None:
        return found
    return _NONDETERMINISTIC_FALLBACK["since_2_14" if TORCH_RELEASE >= (2, 14) else "before_2_14"]


@dataclass(frozen=True)
class TracerWarningFilters:
    """The ``ignore`` filters torch installs for TracerWarnings on import (``TracerWarning.ignore_lib_warnings``)."""

    #: module-name patterns: a TracerWarning raised from a module whose name matches is hidden (torch's own
    #: library code: ``torch.(?!jit)``)
    modules: tuple[re.Pattern[str], ...]
    #: message patterns hidden whatever raised them (``torch::jit::fuser::cuda``)
    messages: tuple[re.Pattern[str], ...]

    def hides_module(self, module_name: str) -> bool:
        return any(p.match(module_name) for p in self.modules)


def _read_filters(filters: list[tuple[object, ...]]) -> TracerWarningFilters:
    modules: list[re.Pattern[str]] = []
    messages: list[re.Pattern[str]] = []
    for action, message, category, module, _lineno in filters:
        if action != "ignore" or not isinstance(category, type) or not issubclass(TracerWarning, category):
            continue
        if module is not None and category is TracerWarning:
            modules.append(module)  # type: ignore[arg-type]
        elif message is not None and module is None:
            messages.append(message)  # type: ignore[arg-type]
    return TracerWarningFilters(tuple(dict.fromkeys(modules)), tuple(dict.fromkeys(messages)))


@functools.cache
def tracer_warning_filters() -> TracerWarningFilters:
    """The filters torch installed, read by having torch install them into an empty filter list: the process's
    own list may have been changed since import (pytest, the user), and is left as it is."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        TracerWarning.ignore_lib_warnings()
        return _read_filters(list(warnings.filters))


__all__ = [
    "TORCH_RELEASE",
    "NondeterministicWarning",
    "TracerWarningFilters",
    "TracingCheckError",
    "nondeterministic_warning",
    "read_nondeterministic_warning",
    "tracer_warning_filters",
]
