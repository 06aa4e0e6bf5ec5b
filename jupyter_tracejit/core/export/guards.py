"""The guards of an export as records (:class:`~.records.ExportGuard`): the shape environment's guards and
specialisations at the user's lines, the graph's runtime asserts, and the graph nodes each concerns (see
:mod:`.report`'s docstring for where each part comes from)."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..graph import Graph, SourceLoc
from ..loops import enclosing_loop
from ..source import is_torch_file, source_line
from .places import LIBRARY, Place, PlaceRecorder, frame_kind, library_name
from .records import ExportGuard
from .shape_env import _bound, specialization

#: graph ops that are runtime asserts (schema names without the namespace)
ASSERT_OPS = frozenset({"_assert_scalar", "sym_constrain_range", "sym_constrain_range_for_size", "_assert_async"})
_FILE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_ASSERT_MESSAGE = re.compile(r"expression (?P<expr>.+?) on node")


def _user_at(file: str, line: int) -> tuple[str, int, str]:
    if not file or not line or file.startswith("<") or is_torch_file(file):
        return "", 0, ""
    return file, line, source_line(file, line)


# -- FX node -> Graph node -----------------------------------------------------------------------------------------
def _fx_kind(fx_node: Any) -> str:
    target = fx_node.target
    if isinstance(target, torch._ops.OpOverload):
        return f"{target._schema.name}.{target._overloadname}"
    return ""


def node_id_map(ep: Any, graph: Graph | None) -> dict[str, int]:
    """FX node name -> :class:`Graph` node id, for the top-level call nodes (see the module's docstring)."""
    if graph is None:
        return {}
    by_name: dict[str, int] = {}
    no_output: dict[str, list[int]] = {}
    for n in graph.nodes:
        if n.parent is not None or n.role in ("constant", "list", "tuple"):
            continue
        if n.outputs:
            by_name.setdefault(graph.values[n.outputs[0]].name, n.id)
        else:
            no_output.setdefault(n.kind, []).append(n.id)
    found: dict[str, int] = {}
    seen: dict[str, int] = {}
    for fx_node in ep.graph.nodes:
        if fx_node.op not in ("call_function", "get_attr"):
            continue
        if fx_node.name in by_name:
            found[fx_node.name] = by_name[fx_node.name]
            continue
        kind = _fx_kind(fx_node)
        ids = no_output.get(kind, [])
        k = seen.get(kind, 0)
        seen[kind] = k + 1
        if k < len(ids):
            found[fx_node.name] = ids[k]
    return found


def _top_nodes(graph: Graph | None, file: str, where: Callable[[SourceLoc], bool]) -> list[int]:
    """The top-level nodes whose source ``where`` accepts; none without a graph or a file."""
    if graph is None or not file:
        return []
    return [n.id for n in graph.nodes if n.parent is None and n.source is not None and where(n.source)]


def _nodes_at(graph: Graph | None, file: str, line: int) -> list[int]:
    return _top_nodes(graph, file, lambda s: s.line == line and s.file == file)


def nodes_of_line(graph: Graph | None, file: str, line: int) -> list[int]:
    """The top-level nodes recorded at a line; for a ``for`` / ``while`` header with none of its own (its
    condition computes nothing in the graph), the nodes of the loop's body, which the specialisation unrolled."""
    found = _nodes_at(graph, file, line)
    if found or graph is None or not file:
        return found
    loop = enclosing_loop(file, line)
    if loop is None or loop[0] != line:
        return []
    first, last = loop
    return _top_nodes(graph, file, lambda s: s.file == file and first <= s.line <= last)


def _unshortened(file: str) -> str:
    """The full path of a file torch's ``format_frame`` shortened: it cuts the path's common prefix with torch's
    package folder (so a file beside the venv reads ``tests/model.py``); the prefix is one of that folder's
    parents."""
    if file.startswith("<") or (os.path.isabs(file) and os.path.isfile(file)):
        return file
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    for parent in Path(torch_dir).parents:
        candidate = os.path.join(parent, file)
        if os.path.isfile(candidate):
            return candidate
    # a file sharing no folder with torch's (a notebook cell in /tmp, torch under /work): the common path is "/"
    # and torch cuts one character more than it (fn[len("/") + 1:], "work/x.py" -> "ork/x.py"); the top-level
    # folder that ends with what is left, one character longer, is the one it cut (a one-letter folder, "/w/x.py",
    # leaves "/x.py": what is left of it is empty)
    head, _, rest = file.partition("/")
    with contextlib.suppress(OSError):
        for name in os.listdir("/"):
            if len(name) == len(head) + 1 and name.endswith(head):
                candidate = os.path.join("/", name, rest)
                if os.path.isfile(candidate):
                    return candidate
    return file


_FORMATTED_FRAME = re.compile(r"^(?:.*  # )?(?P<file>.+?):(?P<line>\d+)(?: in \S+)?$")


def sloc_at(sloc: Any) -> tuple[str, int, str]:
    """The user's line of a guard's ``SLoc``: ``framework_loc`` (a FrameSummary, or ``file:line`` text), else
    ``maybe_user_loc``; nothing when both are torch's."""
    for loc in (getattr(sloc, "framework_loc", None), getattr(sloc, "maybe_user_loc", None)):
        if loc is None:
            continue
        file, line = getattr(loc, "filename", None), getattr(loc, "lineno", None)
        if file is None and isinstance(loc, str):
            # torch's format_frame: "CODE  # FILE:LINE in FUNC", where CODE may hold a comment of its own
            m = _FORMATTED_FRAME.match(loc)
            file, line = (m.group("file"), int(m.group("line"))) if m else (None, None)
        if file and line:
            at = _user_at(_unshortened(str(file)), int(line))
            if at[0]:
                return at
    return "", 0, ""


def nodes_through(graph: Graph | None, file: str, line: int) -> list[int]:
    """The top-level nodes recorded with ``file:line`` anywhere on their stack (a library's line inside a call)."""
    return _top_nodes(graph, file, lambda s: any(f.line == line and f.file == file for f in s.stack))


def nodes_reading(graph: Graph | None, input: str) -> list[int]:
    """The top-level nodes that read the graph input named ``input`` (what a specialisation of its size concerns
    when no line of it has nodes: an ``if`` over the size computes nothing)."""
    if graph is None:
        return []
    return [u for v in graph.inputs if graph.values[v].name == input for u in graph.users(v)]


def guard_place(sloc: Any, places: PlaceRecorder | None = None) -> Place | None:
    """Where the guard with this ``sloc`` was made: the place recorded while exporting (the user's line, and the
    library's beside it: :mod:`.places`), else the sloc's own line (a library's line, said to be one, when torch
    recorded nothing of the user's); None when torch recorded no line outside its own files."""
    found = places.place_of(sloc) if places is not None and sloc is not None else None
    if found is not None:
        return found
    file, line, code = sloc_at(sloc)
    if not file:
        return None
    if frame_kind(file) == LIBRARY:
        return Place("", 0, "", library_name(file), file, line, code)
    return Place(file, line, code)


def make_guard(kind: str, expr: str, place: Place | None, graph: Graph | None, reads: str = "") -> ExportGuard:
    """The guard at its place: the user's line (the library's when no line of the user's is known), its nodes (of
    that line; else those through the library's line; else, ``reads`` naming the input whose size it fixed, the
    nodes reading that input), the library's line beside it."""
    if place is None:
        return ExportGuard(kind, expr, node_ids=nodes_reading(graph, reads) if reads else [])
    file, line, code = (
        (place.file, place.line, place.code)
        if place.file
        else (place.library_file, place.library_line, place.library_code)
    )
    nodes = nodes_of_line(graph, file, line)
    if not nodes and place.library:
        nodes = nodes_through(graph, place.library_file, place.library_line)
    if not nodes and reads:
        nodes = nodes_reading(graph, reads)
    return ExportGuard(
        kind,
        expr,
        file,
        line,
        code,
        nodes,
        place.library,
        place.library_file,
        place.library_line,
        place.library_code,
    )


def guards_of(
    env: Any, graph: Graph | None, backed: dict[str, str], places: PlaceRecorder | None = None
) -> list[ExportGuard]:
    """The shape environment's guards, each at its place (:func:`guard_place`; ``backed``: each input size's symbol
    and the input it is the size of); a symbol the environment replaced
    by a constant with no guard of its own (``Dim.AUTO`` specialised by a broadcast, a view) is a specialisation at
    the place torch recorded for the replacement."""
    out: list[ExportGuard] = []
    if env is None:
        return out
    specialised: set[str] = set()
    for g in env.guards:
        expr = str(g.expr)
        spec = specialization(expr)
        kind = "specialization" if spec is not None and spec[0] in backed else "guard"
        reads = ""
        if kind == "specialization" and spec is not None:
            specialised.add(spec[0])
            reads = backed[spec[0]]
        out.append(make_guard(kind, expr, guard_place(getattr(g, "sloc", None), places), graph, reads))
    slocs = getattr(env, "replacements_slocs", {})
    for sym, value in getattr(env, "replacements", {}).items():
        name = str(sym)
        if (
            name in backed
            and name not in specialised
            and _bound(value) is not None
            and str(value).lstrip("-").isdigit()
        ):
            place = guard_place(slocs.get(sym), places)
            out.append(make_guard("specialization", f"Eq({name}, {value})", place, graph, backed[name]))
    return out


def _stack_at(text: str) -> tuple[str, int, str]:
    """The innermost user line of a node's ``stack_trace`` text (outermost first)."""
    found: tuple[str, int, str] = ("", 0, "")
    for m in _FILE_LINE.finditer(text or ""):
        at = _user_at(m.group("file"), int(m.group("line")))
        if at[0]:
            found = at
    return found


def _assert_expr(fx_node: Any) -> str:
    name = fx_node.target._schema.name.split("::")[-1]
    args = fx_node.args
    if name == "_assert_scalar" and args:
        cond = args[0]
        val = cond.meta.get("val") if isinstance(cond, torch.fx.Node) else cond
        expr = getattr(getattr(val, "node", None), "expr", None)
        # a draft knows its example's value of an unbacked symbol and simplifies the condition to True: the
        # expression asserted is then only in the message
        if expr is not None and str(expr) not in ("True", "False"):
            return str(expr)
        m = _ASSERT_MESSAGE.search(str(args[1]) if len(args) > 1 else "")
        if m:
            return m.group("expr")
    if name.startswith("sym_constrain_range") and args:
        sym = args[0].meta.get("val") if isinstance(args[0], torch.fx.Node) else args[0]
        lo, hi = fx_node.kwargs.get("min"), fx_node.kwargs.get("max")
        return f"{name}({sym}, min={lo}, max={hi})"
    return f"{name}({', '.join(str(a) for a in args)})"


def runtime_asserts_of(ep: Any, env: Any, graph: Graph | None, ids: dict[str, int]) -> list[ExportGuard]:
    out: list[ExportGuard] = []
    for fx_node in ep.graph.nodes:
        target = fx_node.target
        if fx_node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
            continue
        if target._schema.name.split("::")[-1] not in ASSERT_OPS:
            continue
        nid = ids.get(fx_node.name)
        node = graph.nodes[nid] if graph is not None and nid is not None else None
        if node is not None and node.source is not None:
            file, line, code = _user_at(node.source.file, node.source.line)
        else:
            file, line, code = _stack_at(fx_node.meta.get("stack_trace", ""))
        out.append(ExportGuard("runtime_assert", _assert_expr(fx_node), file, line, code, [] if nid is None else [nid]))
    if env is not None:
        mentioned = " ".join(g.expr for g in out)
        for sym, asserts in env.deferred_runtime_asserts.items():
            if sym is not None and re.search(rf"\b{re.escape(str(sym))}\b", mentioned):
                continue
            for ra in asserts:
                file, line, code = "", 0, ""
                for frame in _frames(getattr(ra, "stack", None)):  # outermost first: the last user one wins
                    at = _user_at(frame.filename, frame.lineno or 0)
                    if at[0]:
                        file, line, code = at
                out.append(ExportGuard("runtime_assert", str(ra.expr), file, line, code))
    return out


def _frames(stack: Any) -> list[Any]:
    """The FrameSummary list of a ``CapturedTraceback`` (outermost first); empty when it cannot be read."""
    try:
        return list(stack.summary())
    except Exception:  # no stack, or torch's private class changed
        return []


__all__ = [
    "ASSERT_OPS",
    "guard_place",
    "guards_of",
    "make_guard",
    "node_id_map",
    "nodes_of_line",
    "runtime_asserts_of",
    "sloc_at",
]
