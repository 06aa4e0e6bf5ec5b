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

import re
from collections.abc import Iterable
from typing import Any

import torch

from ..graph import Graph
from .draft_report import draft_report
from .guards import guards_of, node_id_map, runtime_asserts_of
from .places import PlaceRecorder
from .records import ExportGuard, ExportReport, ExportSymbol, SignatureEntry
from .shape_env import _bound, _safely, input_names, shape_env_of, source_name

#: ops whose schema does not say they write ``running_mean`` / ``running_var`` although they do when training
_NORM_STATS = ("running_mean", "running_var")


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
    """The program's symbols with their ranges and sources; a symbol the shape environment replaced by another (one
    ``Dim`` given to two inputs: ``s1 -> s0``) is not listed apart, its sources are the other's."""
    merged: dict[str, str] = {}
    for sym, repl in getattr(env, "replacements", {}).items():
        if getattr(repl, "is_Symbol", False) and str(repl) != str(sym):
            merged[str(sym)] = str(repl)
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
            into = sources.setdefault(merged.get(str(sym), str(sym)), [])
            into.extend(n for n in dict.fromkeys(source_name(s, inputs) for s in srcs) if n not in into)
    return [
        ExportSymbol(
            name=name,
            min=ranges[name][0],
            max=ranges[name][1],
            sources=sources.get(name, []),
            kind="unbacked" if name.startswith(("u", "zu")) else "backed",
        )
        for name in order
        if re.fullmatch(r"[a-z]+\d+", name) and name not in merged
    ]


def report_of(
    ep: Any, *, graph: Graph | None = None, log: str = "", places: PlaceRecorder | None = None
) -> ExportReport:
    """Everything the exported program records beyond its graph (see the module's docstring). Never raises."""
    report = ExportReport(log=log)
    no_signature: tuple[list[SignatureEntry], list[SignatureEntry]] = ([], [])
    report.inputs, report.outputs = _safely("the signature", lambda: signature_of(ep), no_signature)
    report.mutated_buffers = _safely("mutated buffers", lambda: mutated_buffers_of(ep), [])
    env = _safely("the shape env", lambda: shape_env_of(ep), None)
    report.symbols = _safely("symbols", lambda: symbols_of(ep, env), [])
    backed = {s.name: s.sources[0].split(".size()", 1)[0] for s in report.symbols if s.kind == "backed" and s.sources}
    no_ids: dict[str, int] = {}
    ids = _safely("node ids", lambda: node_id_map(ep, graph), no_ids)
    no_guards: list[ExportGuard] = []
    guards = _safely("guards", lambda: guards_of(env, graph, backed, places), no_guards)
    asserts = _safely("runtime asserts", lambda: runtime_asserts_of(ep, env, graph, ids), list(no_guards))
    report.guards = guards + asserts
    report.draft = draft_report(ep)
    return report


__all__ = ["mutated_buffers_of", "report_of", "signature_of", "symbols_of"]
