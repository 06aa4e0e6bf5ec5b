"""``ExportedProgram`` -> :class:`~.records.ExportReport` (what export recorded beyond its graph), and the findings
read from it.

Where each part comes from (torch 2.13; see ``/work/shared/notes/torch-export-facts.md``):

- **inputs / outputs**: ``ep.graph_signature.input_specs`` / ``output_specs``: kind lower-cased, the argument's
  name in the graph, the target (qualified name) or None.
- **mutated_buffers**: the signature's ``buffers_to_mutate``, plus, because the training IR that ``export`` returns
  keeps in-place updates as nodes instead of listing them there, every buffer placeholder passed to an argument
  its op writes (schema alias ``(a!)``, ``aten::add_`` on ``num_batches_tracked``) or as ``running_mean`` /
  ``running_var`` to an op called with ``training=True`` (``aten::batch_norm``, whose schema does not say it
  writes them). ``ep.run_decompositions()`` would give torch's own list but costs ~0.4 s even for a tiny model.
- **symbols**: the shape environment (``node.meta["val"].fake_mode.shape_env`` of any FakeTensor):
  ``var_to_range`` and ``var_to_sources`` (``L['x'].size()[0]`` written ``x.size()[0]``); the range is
  ``ep.range_constraints`` 's when it has the symbol (a specialised dim vanishes from it), else the shape env's.
  ``int_oo`` bounds are None.
- **guards**: ``shape_env.guards`` (``ShapeGuard(expr, sloc)``; the user's line from ``sloc.framework_loc`` or
  ``maybe_user_loc``, a torch file's line is not kept); ``Eq(s77, 3)`` on a symbol of an input is kind
  ``specialization``, the rest ``guard``; a symbol the shape env replaced by a constant with no such guard is a
  specialization without a line. Runtime asserts are the graph's assert nodes (``aten::_assert_scalar``,
  ``sym_constrain_range``, ``sym_constrain_range_for_size``, ``_assert_async``), the expression read from the
  condition's SymBool (else the assert's message), the line from the node's stack; the shape env's
  ``deferred_runtime_asserts`` for a symbol no assert node mentions are added without node ids.
- **node ids**: an FX node is matched to the :class:`Graph` node of ``graph_from_exported_program`` by name (the
  top-level node whose first output value is named like the FX node, as the builder names them), and a node with
  no output (an ``_assert_scalar``) by position: the k-th top-level FX node of an overload is the k-th top-level
  graph node of that kind, since the builder walks the top-level FX graph in order. A guard concerns the
  top-level nodes recorded at its line.
- **draft**: ``draft_export`` 's private ``ep._report`` (:func:`draft_report`).

Every part is read defensively: an exception reading one (a private API that changed) leaves that part empty.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import torch

from .. import hazards
from ..errors import TraceError
from ..graph import Graph
from ..hazards import Finding
from ..source import is_torch_file, source_line
from ..words import plural
from .records import DraftFailure, ExportGuard, ExportReport, ExportSymbol, SignatureEntry

_log = logging.getLogger(__name__)
T = TypeVar("T")

#: graph ops that are runtime asserts (schema names without the namespace)
ASSERT_OPS = frozenset({"_assert_scalar", "sym_constrain_range", "sym_constrain_range_for_size", "_assert_async"})
#: ops whose schema does not say they write ``running_mean`` / ``running_var`` although they do when training
_NORM_STATS = ("running_mean", "running_var")

_SPECIALIZATION = re.compile(r"^Eq\((?:(?P<a>[a-z]+\d+), (?P<av>-?\d+)|(?P<bv>-?\d+), (?P<b>[a-z]+\d+))\)$")
_LOCAL = re.compile(r"L\[['\"]([^'\"]+)['\"]\]")
#: strict export's name of the i-th flattened input (dynamo traces a wrapper taking ``*flat_args``)
_FLAT_ARG = re.compile(r"\bflat_args\[(\d+)\]")
_FILE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_ASSERT_MESSAGE = re.compile(r"expression (?P<expr>.+?) on node")


def _safely(part: str, read: Callable[[], T], empty: T) -> T:
    """``read()``, or ``empty`` when torch's (often private) API it reads has changed."""
    try:
        return read()
    except Exception as e:  # an optional part of the report: never fail the run for it
        _log.debug("export report: reading %s failed: %r", part, e)
        return empty


def input_names(ep: Any) -> list[str]:
    """The program's user inputs' names in flattened order (``x``, ``attention_mask``; ``b_u`` for ``b['u']``):
    its USER_INPUT placeholders, the names the check's labels and the guard messages of ``ep.module()`` use; ``[]``
    when the signature cannot be read."""
    try:
        specs = list(ep.graph_signature.input_specs)
    except Exception:  # not a program, or its signature changed shape: sources keep torch's names
        return []
    return [
        str(getattr(spec.arg, "name", "") or "")
        for spec in specs
        if getattr(spec.kind, "name", str(spec.kind)) == "USER_INPUT"
    ]


def source_name(source: Any, inputs: list[str] | None = None) -> str:
    """``L['x'].size()[0]`` -> ``x.size()[0]`` (torch's ``Source.name`` is a property in 2.13, a method before).

    Strict export traces a wrapper of the flattened inputs, so its sources read ``L['flat_args'][0]``; with
    ``inputs`` (:func:`input_names`) the i-th is written with the i-th input's name, as non-strict export and the
    program's guard messages name it (``x.size()[0]``), not ``flat_args[0].size()[0]``."""
    name = getattr(source, "name", source)
    text = _LOCAL.sub(r"\1", str(name() if callable(name) else name))
    if inputs:
        text = _FLAT_ARG.sub(lambda m: _input_at(inputs, m), text)
    return text


def _input_at(inputs: list[str], m: re.Match[str]) -> str:
    i = int(m.group(1))
    return inputs[i] if i < len(inputs) and inputs[i] else m.group(0)


def specialization(expr: str) -> tuple[str, int] | None:
    """``Eq(s77, 3)`` (either order) -> ``("s77", 3)``; None for any other expression."""
    m = _SPECIALIZATION.match(expr.strip())
    if m is None:
        return None
    if m.group("a"):
        return m.group("a"), int(m.group("av"))
    return m.group("b"), int(m.group("bv"))


def _bound(value: Any) -> int | None:
    text = str(value)
    if "oo" in text:  # int_oo, -int_oo, oo, -oo
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _user_at(file: str, line: int) -> tuple[str, int, str]:
    if not file or not line or file.startswith("<") or is_torch_file(file):
        return "", 0, ""
    return file, line, source_line(file, line)


# -- the shape environment ------------------------------------------------------------------------------------------
def _vals(val: Any) -> Iterator[Any]:
    if isinstance(val, (list, tuple)):
        for v in val:
            yield from _vals(v)
    else:
        yield val


def shape_env_of(ep: Any) -> Any:
    """The ``ShapeEnv`` the export used, from the first FakeTensor (or SymInt) value in the graph; None if none."""
    for node in ep.graph.nodes:
        for val in _vals(node.meta.get("val")):
            env = getattr(getattr(val, "fake_mode", None), "shape_env", None)
            if env is None and isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                env = getattr(val.node, "shape_env", None)
            if env is not None:
                return env
    return None


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


def _nodes_at(graph: Graph | None, file: str, line: int) -> list[int]:
    if graph is None or not file:
        return []
    return [
        n.id
        for n in graph.nodes
        if n.parent is None and n.source is not None and n.source.line == line and n.source.file == file
    ]


# -- the parts ------------------------------------------------------------------------------------------------------
def signature_of(ep: Any) -> tuple[list[SignatureEntry], list[SignatureEntry]]:
    def entries(specs: Iterable[Any]) -> list[SignatureEntry]:
        out = []
        for spec in specs:
            kind = getattr(spec.kind, "name", str(spec.kind)).lower()
            name = getattr(spec.arg, "name", "")
            target = spec.target
            out.append(SignatureEntry(kind, str(name or ""), None if target is None else str(target)))
        return out

    sig = ep.graph_signature
    return entries(sig.input_specs), entries(sig.output_specs)


def mutated_buffers_of(ep: Any) -> list[str]:
    sig = ep.graph_signature
    names: dict[str, None] = dict.fromkeys(str(b) for b in sig.buffers_to_mutate.values())
    buffers = {str(k): str(v) for k, v in sig.inputs_to_buffers.items()}
    for fx_node in ep.graph.nodes:
        target = fx_node.target
        if fx_node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
            continue
        arguments = target._schema.arguments
        given: dict[str, Any] = {}
        for i, a in enumerate(arguments):
            if i < len(fx_node.args) and not a.kwarg_only:
                given[a.name] = fx_node.args[i]
            elif a.name in fx_node.kwargs:
                given[a.name] = fx_node.kwargs[a.name]
        training = given.get("training") is True
        for a in arguments:
            arg = given.get(a.name)
            if not isinstance(arg, torch.fx.Node) or arg.name not in buffers:
                continue
            writes = a.alias_info is not None and a.alias_info.is_write
            if writes or (training and a.name in _NORM_STATS):
                names[buffers[arg.name]] = None
    return list(names)


def symbols_of(ep: Any, env: Any) -> list[ExportSymbol]:
    ranges: dict[str, tuple[int | None, int | None]] = {}
    order: list[str] = []
    if env is not None:
        for sym, vr in env.var_to_range.items():
            ranges[str(sym)] = (_bound(vr.lower), _bound(vr.upper))
            order.append(str(sym))
    for sym, vr in ep.range_constraints.items():
        if str(sym) not in ranges:
            order.append(str(sym))
        ranges[str(sym)] = (_bound(vr.lower), _bound(vr.upper))
    sources: dict[str, list[str]] = {}
    if env is not None:
        inputs = input_names(ep)
        for sym, srcs in env.var_to_sources.items():
            sources[str(sym)] = list(dict.fromkeys(source_name(s, inputs) for s in srcs))
    return [
        ExportSymbol(
            name=name,
            min=ranges[name][0],
            max=ranges[name][1],
            sources=sources.get(name, []),
            kind="unbacked" if name.startswith(("u", "zu")) else "backed",
        )
        for name in order
        if re.fullmatch(r"[a-z]+\d+", name)
    ]


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


def guards_of(env: Any, graph: Graph | None, backed: set[str]) -> list[ExportGuard]:
    out: list[ExportGuard] = []
    if env is None:
        return out
    specialised: set[str] = set()
    for g in env.guards:
        expr = str(g.expr)
        file, line, code = sloc_at(getattr(g, "sloc", None))
        spec = specialization(expr)
        kind = "specialization" if spec is not None and spec[0] in backed else "guard"
        if kind == "specialization" and spec is not None:
            specialised.add(spec[0])
        out.append(ExportGuard(kind, expr, file, line, code, _nodes_at(graph, file, line)))
    for sym, value in getattr(env, "replacements", {}).items():
        name = str(sym)
        if (
            name in backed
            and name not in specialised
            and _bound(value) is not None
            and str(value).lstrip("-").isdigit()
        ):
            out.append(ExportGuard("specialization", f"Eq({name}, {value})"))
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


def _printer(failure: Any, files: dict[Any, Any]) -> Callable[[], str]:
    return lambda: str(failure.print(files))


def _interned_files() -> dict[str, int]:
    """torch's process-wide table of interned file names (``torch._logging.structured.INTERN_TABLE``); {} if
    this torch has none."""
    try:
        from torch._logging import structured

        table = getattr(structured, "INTERN_TABLE", None)
        return dict(table) if isinstance(table, dict) else {}
    except Exception:  # a private table: never let it break a report
        return {}


def draft_report(ep: Any) -> list[DraftFailure] | None:
    """``draft_export`` 's private report (``ep._report``: ``failures`` with ``failure_type`` and ``data``, and
    ``str_to_filename`` for the stacks' file numbers) as records; None when the program has none (a plain export)
    or it is not shaped as torch 2.13 makes it."""
    report = getattr(ep, "_report", None)
    if report is None:
        return None
    try:
        # the report lists only the file numbers first seen during the draft: torch interns file names once per
        # process (a file an earlier export met is not repeated), so its whole table fills in the rest
        files = {number: name for name, number in _interned_files().items()}
        files.update(dict(getattr(report, "str_to_filename", None) or {}))
        out = []
        for failure in report.failures:
            ftype = getattr(failure.failure_type, "name", str(failure.failure_type)).lower()
            data = failure.data if isinstance(failure.data, dict) else {}
            file, line = "", 0
            for frame in data.get("user_stack") or data.get("stack") or []:
                name = frame.get("filename")
                # a frame names its file by number; a number the table lacks is no file at all (not "10")
                path = files.get(name, "") if isinstance(name, int) else name
                at = _user_at(str(path or ""), int(frame.get("line") or 0))
                if at[0]:
                    file, line = at[0], at[1]
            message = _safely("a draft failure's text", _printer(failure, files), str(failure))
            out.append(DraftFailure(ftype, str(data.get("expr", "") or ""), file, line, message))
        return out
    except Exception as e:  # a private report whose shape changed
        _log.debug("export report: draft report unreadable: %r", e)
        return None


def report_of(ep: Any, *, graph: Graph | None = None, log: str = "") -> ExportReport:
    """Everything the exported program records beyond its graph (see the module's docstring). Never raises."""
    report = ExportReport(log=log)
    no_signature: tuple[list[SignatureEntry], list[SignatureEntry]] = ([], [])
    report.inputs, report.outputs = _safely("the signature", lambda: signature_of(ep), no_signature)
    report.mutated_buffers = _safely("mutated buffers", lambda: mutated_buffers_of(ep), [])
    env = _safely("the shape env", lambda: shape_env_of(ep), None)
    report.symbols = _safely("symbols", lambda: symbols_of(ep, env), [])
    backed = {s.name for s in report.symbols if s.kind == "backed" and s.sources}
    no_ids: dict[str, int] = {}
    ids = _safely("node ids", lambda: node_id_map(ep, graph), no_ids)
    no_guards: list[ExportGuard] = []
    guards = _safely("guards", lambda: guards_of(env, graph, backed), no_guards)
    asserts = _safely("runtime asserts", lambda: runtime_asserts_of(ep, env, graph, ids), list(no_guards))
    report.guards = guards + asserts
    report.draft = draft_report(ep)
    return report


def locate_refused_dim(error: TraceError, report: ExportReport) -> None:
    """Export refused a ``Dim`` ("Constraints violated") without naming a line of the user's; the draft's
    specialisation of that dim names it. The error moves to that line, its hint saying which size became which
    constant. A range only some of whose sizes the code takes ("Not all values of n ... satisfy the generated
    guard") is put at the draft's first guard added in the user's code, the hint quoting that guard."""
    if error.tag != "constraint_violation":
        return
    # the user's line of a draft guard: where the code called into torch's (nn.LSTM specialises the length inside)
    added_at = {
        f.expr: (f.file, f.line)
        for f in reversed(report.draft or [])
        if f.failure_type == "guard_added" and f.file and not is_torch_file(f.file)
    }
    for guard in report.guards_of("specialization"):
        spec = specialization(guard.expr)
        at = (guard.file, guard.line) if guard.file else added_at.get(guard.expr)
        if spec is None or at is None:
            continue
        name, value = spec
        symbol = report.symbol(name)
        what = symbol.sources[0] if symbol is not None and symbol.sources else name
        error.file, error.line = at
        error.code = guard.code if guard.file else source_line(*at)
        error.hint = f"{what} became the constant {value} on this line ({guard.expr}). {error.hint}"
        return
    if "Not all values of" not in error.message:
        return
    # a range only some of whose sizes the code takes: the draft's first guard added at a line of the user's
    for failure in report.draft or []:
        if failure.failure_type != "guard_added" or not failure.file or is_torch_file(failure.file):
            continue
        sources = [
            f"{name} is {symbol.sources[0]}"
            for name in dict.fromkeys(re.findall(r"\b[su]\d+\b", failure.expr))
            if (symbol := report.symbol(name)) is not None and symbol.sources
        ]
        error.file, error.line = failure.file, failure.line
        error.code = source_line(failure.file, failure.line)
        where = f" ({', '.join(sources)})" if sources else ""
        error.hint = f"This line works for only some sizes: export needs {failure.expr}{where}. {error.hint}"
        return


# -- findings -------------------------------------------------------------------------------------------------------
def _at(guard: ExportGuard) -> str:
    if not guard.line:
        return ""
    code = f" (`{guard.code}`)" if guard.code else ""
    return f" at line {guard.line}{code}"


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def training_mode_findings(report: ExportReport, graph: Graph) -> list[Finding]:
    """The trace's training-mode rules (:mod:`..hazards`) on an export's graph, worded for an export: a dropout left
    in training mode (random ops in the program) and a BatchNorm exported in training mode (batch statistics, and
    the running statistics written on every call: buffers the program mutates). The fix is the same: export in
    eval mode."""
    found: list[Finding] = []
    random = hazards.nondeterministic_nodes(graph, torch_flags_top_level=True)
    if random is not None:
        found.append(
            dataclasses.replace(
                random,
                message=f"The exported program contains random ops (a dropout in training mode, ...) at "
                f"{plural(len(random.node_ids), 'place')}: each call gives other results.",
                hint="Export in eval mode (model.eval(), module_mode='eval', --eval) so dropout is off, unless the "
                "randomness is intended.",
            )
        )
    batchnorm = hazards.train_mode_batchnorm(graph, 0)
    if batchnorm is not None:
        written = [b for b in report.mutated_buffers if b.rsplit(".", 1)[-1] in ("running_mean", "running_var")]
        also = f" (buffers the program writes: {', '.join(written[:4])}{', ...' if len(written) > 4 else ''})"
        found.append(
            dataclasses.replace(
                batchnorm,
                title=f"BatchNorm exported in training mode ({len(batchnorm.node_ids)} "
                f"layer{'s' if len(batchnorm.node_ids) != 1 else ''})",
                message="The program's batch_norm ops have training=True: they normalise with each batch's statistics "
                f"and update running_mean/running_var on every call{also if written else ''}.",
                hint="Export in eval mode for inference (model.eval(), module_mode='eval', --eval).",
            )
        )
    return found


def export_findings(report: ExportReport, graph: Graph | None) -> list[Finding]:
    """``dim_specialized`` (warning: the program is silently only right for one size, and export said nothing when
    the dim was ``Dim.AUTO``) and ``unbacked_symbol`` (info: a size read from a tensor's value is checked by a
    runtime assert, so another value fails loudly or works, never silently wrong; worth knowing, not a problem);
    then the training-mode rules (:func:`training_mode_findings`)."""
    findings: list[Finding] = []
    done: set[str] = set()
    for guard in report.guards_of("specialization"):
        spec = specialization(guard.expr)
        if spec is None or spec[0] in done:
            continue
        name, value = spec
        done.add(name)
        symbol = report.symbol(name)
        what = symbol.sources[0] if symbol is not None and symbol.sources else name
        findings.append(
            Finding(
                kind="dim_specialized",
                severity="warning",
                title=f"{what} became the constant {value}",
                message=(
                    f"{what} became {value}{_at(guard)}: the dimension was marked dynamic, but the code used its "
                    f"value as a Python int (a loop, a branch, a size computed in Python), so export specialised it "
                    f"({guard.expr}) and the program only accepts size {value} there. With Dim.AUTO this happens "
                    f"silently: the dim just vanishes from range_constraints."
                ),
                hint=(
                    "Rewrite that code with tensor operations that do not read the size as an int (no Python loop "
                    "or branch over x.size(...)), or say the dim is static (Dim.STATIC, or leave it out of "
                    "dynamic_shapes) so the program's signature says what it accepts."
                ),
                node_ids=list(guard.node_ids),
            )
        )
    for symbol in report.symbols:
        if symbol.kind != "unbacked":
            continue
        sized = []
        if graph is not None:
            sized = [
                n.id
                for n in graph.nodes
                if any(
                    isinstance(d, str) and _mentions(d, symbol.name)
                    for v in n.outputs
                    for d in (graph.values[v].shape or ())
                )
            ]
        if not sized:
            continue  # an unbacked value not used as a size: nothing depends on it shape-wise
        asserts = [g for g in report.guards_of("runtime_assert") if _mentions(g.expr, symbol.name)]
        at = next((g for g in asserts if g.line), None)
        assert_ids = [i for g in asserts for i in g.node_ids]
        where = _at(at) if at is not None else ""
        checks = "; ".join(dict.fromkeys(g.expr for g in asserts)) or "nothing"
        findings.append(
            Finding(
                kind="unbacked_symbol",
                severity="info",
                title=f"size {symbol.name} comes from a tensor's value",
                message=(
                    f"{symbol.name} is a value read from a tensor{where} (.item(), nonzero(), ...) and used as a "
                    f"size: export cannot know it, so the output's shape depends on the data. The program checks it "
                    f"at run time ({checks})."
                ),
                hint=(
                    "Fine if intended. To bound it, add torch._check(n <= ...) after reading it; to keep the shape "
                    "static, compute with a mask (torch.where) instead of a data-dependent size."
                ),
                node_ids=list(dict.fromkeys(assert_ids + sized)),
            )
        )
    if graph is not None:
        findings.extend(training_mode_findings(report, graph))
    return findings


__all__ = [
    "ASSERT_OPS",
    "draft_report",
    "export_findings",
    "input_names",
    "node_id_map",
    "report_of",
    "shape_env_of",
    "sloc_at",
    "source_name",
    "specialization",
]
