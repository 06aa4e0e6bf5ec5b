"""Hazards torch does not report, found in the graph, the check and the run itself.

The :class:`Finding` record is read back from saved runs where torch may be missing: the two rules that ask torch
(op schemas, device names) import it when a capture runs them."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .check import CheckReport
from .graph import Graph, Node
from .jsonio import JsonRecord
from .loops import enclosing_loop, loops_in
from .source import source_line
from .words import plural

#: fused kernels that torch's nn.Transformer* layers switch to under no_grad in eval mode
FASTPATH_KINDS = frozenset({"aten::_transformer_encoder_layer_fwd", "aten::_native_multi_head_attention"})


@dataclass
class Finding(JsonRecord):
    kind: str
    severity: str  # "info" | "warning" | "error"
    title: str
    message: str
    hint: str = ""
    node_ids: list[int] = field(default_factory=list)
    method: str = "forward"
    #: the explorer options that apply ``hint`` (``{"no_grad": True}``), offered as one click that re-traces;
    #: empty when the fix is in the user's code
    fix: dict[str, Any] = field(default_factory=dict)
    #: about running the trace elsewhere (a device baked into the graph), not about this run: listed in a group of
    #: its own, and a warning only when it can matter for this run (else ``info``, which leaves the badge green)
    portability: bool = False

    @property
    def is_problem(self) -> bool:
        """Whether it says the trace may be wrong (the badge turns amber, the Warnings tab counts it): any severity
        but ``info``. The explorer's ``findingIsProblem`` (model/run.ts) is the same rule."""
        return self.severity != "info"


def reworded(finding: Finding | None, **words: Any) -> list[Finding]:
    """A rule's finding worded for another kind of run (an export, a saved archive): each field of ``words``
    replaced by its value, or by what its value (a function of the finding) says; none when the rule found nothing."""
    if finding is None:
        return []
    return [dataclasses.replace(finding, **{k: v(finding) if callable(v) else v for k, v in words.items()})]


def _where(graph: Graph, ids: list[int], limit: int = 4) -> str:
    """The ops as "kind in scope", the same kind in the same scope once with its count ("aten::arange in top level
    (4 times)", not the same words four times), up to ``limit`` places, then "and N more" ops."""
    counts: dict[tuple[str, str], int] = {}
    for nid in ids:
        n = graph.nodes[nid]
        place = (n.kind, n.scope or "top level")
        counts[place] = counts.get(place, 0) + 1
    shown = list(counts.items())[:limit]
    parts = [f"{kind} in {scope}{f' ({count} times)' if count > 1 else ''}" for (kind, scope), count in shown]
    rest = len(ids) - sum(count for _, count in shown)
    return ", ".join(parts) + (f" and {rest} more" if rest else "")


#: arguments that switch randomness off: a dropout probability of 0, or a training flag that is False
_PROBABILITY_ARGS = frozenset({"p", "dropout", "dropout_p"})
_TRAIN_ARGS = frozenset({"train", "training"})
_ARG_TYPES = {"float": ("float", "int"), "bool": ("bool",), "Optional[bool]": ("bool", "NoneType")}


@functools.lru_cache(maxsize=512)
def _switch_positions(kind: str, input_types: tuple[str, ...]) -> tuple[int, int]:
    """Input positions of the (dropout probability, train flag) arguments of an op, -1 where it has none.

    Read from torch's registered schemas, picking the overload whose arguments fit the node's inputs (``lstm``'s
    ``input`` and ``data`` overloads have as many arguments, at other positions).
    """
    import torch

    # an export names the overload ("aten::dropout.default"): look the op up by its name, that overload first
    name, _, overload = kind.partition(".")
    try:
        schemas = torch._C._jit_get_schemas_for_operator(name)
    except RuntimeError:
        return -1, -1
    if overload:
        wanted_overload = "" if overload == "default" else overload
        schemas = sorted(schemas, key=lambda schema: schema.overload_name != wanted_overload)
    for schema in schemas:
        args = schema.arguments
        if len(args) < len(input_types):
            continue
        p_at = t_at = -1
        fits = True
        for i, a in enumerate(args[: len(input_types)]):
            wanted = _ARG_TYPES.get(str(a.type))
            if a.name in _PROBABILITY_ARGS or a.name in _TRAIN_ARGS:
                if wanted is not None and input_types[i] not in wanted:
                    fits = False
                    break
                if a.name in _PROBABILITY_ARGS:
                    p_at = i
                else:
                    t_at = i
        if fits and (p_at >= 0 or t_at >= 0):
            return p_at, t_at
    return -1, -1


def _constant(graph: Graph, node: Node, index: int) -> Any:
    if index < 0 or index >= len(node.inputs):
        return None
    producer = graph.producer(node.inputs[index])
    if producer is None or producer.role != "constant":
        return None
    return producer.attributes.get("value")


@functools.lru_cache(maxsize=512)
def _switched_off_by_default(kind: str, given: int) -> bool:
    """Whether an op passed ``given`` inputs leaves out a probability or training argument whose default switches
    its randomness off: an export leaves out the arguments equal to their defaults
    (``scaled_dot_product_attention(q, k, v)``: ``dropout_p=0.0``)."""
    import torch

    name, _, overload = kind.partition(".")
    if not overload:
        return False  # a trace passes every argument
    try:
        schemas = torch._C._jit_get_schemas_for_operator(name)
    except RuntimeError:
        return False
    wanted = "" if overload == "default" else overload
    for schema in schemas:
        if schema.overload_name != wanted:
            continue
        for a in schema.arguments[given:]:
            if not a.has_default_value():
                continue
            if a.name in _PROBABILITY_ARGS and a.default_value == 0 and not isinstance(a.default_value, bool):
                return True
            if a.name in _TRAIN_ARGS and a.default_value is False:
                return True
    return False


def is_random(graph: Graph, node: Node) -> bool:
    """torch's nondeterministic flag, minus ops whose randomness is switched off in this trace: a dropout
    probability of 0 or a training flag that is False (dropout, LSTM/GRU/RNN dropout, SDPA's dropout_p, rrelu...),
    given or, in an export, left out as its default."""
    if not node.nondeterministic:
        return False
    if _switched_off_by_default(node.kind, len(node.inputs)):
        return False
    p_at, train_at = _switch_positions(node.kind, tuple(graph.values[v].type for v in node.inputs))
    p, train = _constant(graph, node, p_at), _constant(graph, node, train_at)
    return not ((p_at >= 0 and p == 0 and not isinstance(p, bool)) or (train_at >= 0 and train is False))


def nondeterministic_nodes(graph: Graph, torch_flags_top_level: bool) -> Finding | None:
    ids = [n.id for n in graph.nodes if is_random(graph, n)]
    if not ids:
        return None
    nested = [i for i in ids if graph.nodes[i].scope]
    note = ""
    if nested and not torch_flags_top_level:
        note = (
            " torch.jit.trace only scans the top level of the graph, so it does not flag "
            f"{'this node' if len(nested) == 1 else 'these nodes'} inside submodules."
        )
    return Finding(
        kind="nondeterministic",
        severity="warning",
        title=f"{len(ids)} nondeterministic node{'s' if len(ids) != 1 else ''}",
        message=f"The trace contains random ops: {_where(graph, ids)}.{note} Each call gives other results, and "
        "the check compares random outputs.",
        hint="Call model.eval() before tracing so dropout is off, or pass check_trace=False if randomness is intended.",
        node_ids=ids,
        method=graph.method,
        fix={"module_mode": "eval"},
    )


def transformer_fastpath(graph: Graph, check: CheckReport | None) -> Finding | None:
    if check is None:
        return None
    trace_kinds = {n.kind for n in graph.nodes}
    for case in check.cases:
        if case.graph is None or case.method != graph.method:
            continue
        check_kinds = {n.kind for n in case.graph.nodes}
        fused = sorted((check_kinds ^ trace_kinds) & FASTPATH_KINDS)
        if not fused:
            continue
        in_check = [k for k in fused if k in check_kinds]
        node_ids = [d.trace_node for d in (case.diff.roots if case.diff else []) if d.trace_node is not None]
        side = "re-trace" if in_check else "trace"
        return Finding(
            kind="transformer_fastpath",
            severity="error",
            title="Transformer fast path differs between trace and check",
            message=(
                f"The check's {side} used the fused {', '.join(fused)} kernel. torch runs the check under "
                "torch.no_grad(); in eval mode nn.TransformerEncoder / nn.MultiheadAttention then take their "
                "fused fast path, so the re-traced graph differs from the trace and the check fails although "
                "the model is fine."
            ),
            hint="Trace under torch.no_grad() (no_grad=True) so both traces take the fast path, or trace in train "
            "mode, or set requires_grad_(False) on the parameters before tracing.",
            node_ids=node_ids,
            method=graph.method,
            fix={"no_grad": True},
        )
    return None


def frozen_loops(graph: Graph, check: CheckReport | None) -> Finding | None:
    """Ops only one of the check's traces has, inside a Python loop: the loop ran another number of times for the
    check inputs. Tracing unrolls it with the example's count, and a count read from a shape (``x.size(0)``,
    ``len(x)``) makes torch say nothing, so the root alone reads "1 op only in the check trace"."""
    if check is None:
        return None
    #: each loop, with the check graph that ran it another number of times (the first case that did)
    loops: dict[tuple[str, int, int], Graph | None] = {}
    spans_of: dict[str, tuple[tuple[int, int], ...]] = {}  # each file read and parsed once, however many roots
    for case in check.cases:
        if case.method != graph.method or case.diff is None:
            continue
        for d in case.diff.roots:
            if d.trace_node is not None and d.check_node is not None:
                continue  # changed, not added or missing: not a count
            side = graph if d.trace_node is not None else case.graph
            node_id = d.trace_node if d.trace_node is not None else d.check_node
            source = side.nodes[node_id].source if side is not None and node_id is not None else None
            if source is None or source.user_frame.internal:
                continue
            spans = spans_of.get(source.file)
            if spans is None:
                spans = spans_of[source.file] = loops_in(source.file)
            span = enclosing_loop(source.file, source.line, spans)
            if span is not None:
                loops.setdefault((source.file, *span), case.graph)
    if not loops:
        return None
    ids = [
        n.id
        for n in graph.nodes
        if n.source is not None
        and any(n.source.file == f and first <= n.source.line <= last for f, first, last in loops)
    ]
    where = "; ".join(
        f"line {first}: `{source_line(f, first)}`{_times_run(graph, checked, f, first, last)}"
        for (f, first, last), checked in loops.items()
    )
    return Finding(
        kind="frozen_loop",
        severity="warning",
        title=f"{len(loops)} loop{'s' if len(loops) != 1 else ''} unrolled with the example's count",
        message=f"The check inputs ran a Python loop another number of times ({where}). Tracing records each pass "
        "of a loop, so the trace repeats its body as often as it ran for the example; a count read from a shape "
        "(`x.size(0)`, `len(x)`, `range(n)`) makes torch say nothing.",
        hint="Put the loop in a function decorated with `@torch.jit.script_if_tracing` (or `torch.jit.script`), "
        "or trace and run with inputs of one shape.",
        node_ids=ids,
        method=graph.method,
    )


def _times_run(trace: Graph, check: Graph | None, file: str, first: int, last: int) -> str:
    """`` ran 3 times in the trace, 5 in the check trace`` for a loop, from the ops its body recorded; when the
    counts do not read as whole passes of one body, the op counts instead; "" without the check's graph."""
    if check is None:
        return ""
    body = (first + 1, last) if last > first else (first, last)
    per_op = [_ops_at(g, file, *body) for g in (trace, check)]
    ops = [sum(c.values()) for c in per_op]
    passes = [math.gcd(*c.values()) if c else 0 for c in per_op]
    if all(passes) and ops[0] // passes[0] == ops[1] // passes[1]:
        return f" ran {passes[0]} time{'s' if passes[0] != 1 else ''} in the trace, {passes[1]} in the check trace"
    return f" recorded {ops[0]} op{'s' if ops[0] != 1 else ''} in the trace, {ops[1]} in the check trace"


def _ops_at(graph: Graph, file: str, first: int, last: int) -> Counter[tuple[str, int]]:
    """How many ops of each kind each line from ``first`` to ``last`` of ``file`` recorded (plumbing left out)."""
    return Counter(
        (n.kind, n.source.line)
        for n in graph.nodes
        if not n.foldable and n.source is not None and n.source.file == file and first <= n.source.line <= last
    )


def same_device(a: str, b: str) -> bool:
    """Whether two device names mean the same device: same type, and the same index where both name one (``"cuda"``
    is the current CUDA device, so it is ``"cuda:0"`` for a trace made on ``cuda:0``)."""
    import torch

    da, db = torch.device(a), torch.device(b)
    return da.type == db.type and (da.index is None or db.index is None or da.index == db.index)


def _quoted(devices: Iterable[str]) -> str:
    return ", ".join(f'"{d}"' for d in sorted(devices))


def device_constants(
    graph: Graph, devices_used: Iterable[str] = (), target_device: str | None = None
) -> Finding | None:
    """Ops that create or move tensors to a device fixed at trace time (``torch.arange(n, device=x.device)``).

    A portability finding: a warning only when it can matter for this run, i.e. when a device of this run's inputs
    or parameters (``devices_used``), or the declared ``target_device``, is not a baked one; else a note.
    """
    devices: dict[str, list[int]] = {}
    for n in graph.nodes:
        if n.role != "constant":
            continue
        value = n.attributes.get("value")
        if not (isinstance(value, dict) and "device" in value):
            continue
        for consumer in graph.consumers(n):
            devices.setdefault(str(value["device"]), []).append(consumer)
    if not devices:
        return None
    ids = sorted({i for v in devices.values() for i in v})
    names = _quoted(devices)
    elsewhere = sorted({d for d in devices_used if any(not same_device(d, baked) for baked in devices)})
    target_differs = target_device is not None and any(not same_device(target_device, b) for b in devices)
    if target_differs:
        why = (
            f'The target device is "{target_device}": served there, these ops still make tensors on {names}, '
            "which fails or copies on every call."
        )
    elif elsewhere:
        why = (
            f"This run's inputs or parameters are on {_quoted(elsewhere)}, not only {names}: these ops make tensors "
            "on the baked device whatever the inputs are."
        )
    else:
        here = f"This run's inputs and parameters are on {names} as well, and no" if devices_used else "No"
        why = (
            f"{here} target device was given: fine where it was traced. It matters where the model is served on "
            "another device: declare it (target_device='cuda', --target-device cuda) to check for that."
        )
    return Finding(
        kind="device_constant",
        severity="warning" if target_differs or elsewhere else "info",
        title=f"device {names} baked into the graph",
        message=f"{len(ids)} op{'s' if len(ids) != 1 else ''} ({_where(graph, ids)}) "
        f"{'create or move' if len(ids) != 1 else 'creates or moves'} tensors to a device fixed at trace time "
        f'({names}). {why} A device without an index ("cuda") is the same as any indexed one of its type '
        '("cuda:0").',
        hint="Create tensors with *_like ops (torch.zeros_like(x)) or register them as buffers so they move with "
        "the module; or trace on the device the model will run on.",
        node_ids=ids,
        method=graph.method,
        portability=True,
    )


def train_mode_batchnorm(graph: Graph, runs: int) -> Finding | None:
    ids = []
    for n in graph.nodes:
        # "aten::batch_norm" in a trace, "aten::batch_norm.default" (its overload) in an export: one layout
        if n.kind.split(".")[0] != "aten::batch_norm" or len(n.inputs) < 6:
            continue
        producer = graph.producer(n.inputs[5])
        if producer is not None and producer.attributes.get("value") is True:
            ids.append(n.id)
    if not ids:
        return None
    return Finding(
        kind="train_mode_batchnorm",
        severity="warning",
        title=f"BatchNorm traced in training mode ({len(ids)} layer{'s' if len(ids) != 1 else ''})",
        message=f"The trace normalises with batch statistics and updates running_mean/running_var on every call; "
        f"this trace's Python code ran {runs} time{'s' if runs != 1 else ''}, updating them each time.",
        hint="Call model.eval() before tracing for inference.",
        node_ids=ids,
        method=graph.method,
        fix={"module_mode": "eval"},
    )


def python_runs(runs: int, check_cases: int, mutated_buffers: list[str], naming_runs: int = 0) -> Finding | None:
    if runs <= 1 and not mutated_buffers:
        return None
    mutated = ""
    if mutated_buffers:
        shown = ", ".join(mutated_buffers[:6]) + (
            f" and {len(mutated_buffers) - 6} more" if len(mutated_buffers) > 6 else ""
        )
        mutated = (
            f" Module state changed during tracing: {shown}. jupyter-tracejit put the buffers back as they were; "
            "torch.jit.trace leaves them changed (the check also runs the traced module, which updates them again)."
        )
    return Finding(
        kind="python_runs",
        severity="warning" if mutated_buffers else "info",
        title=f"the Python code ran {runs} time{'s' if runs != 1 else ''}",
        message=f"Tracing ran the Python body {runs} time{'s' if runs != 1 else ''} (1 trace"
        + (
            f" + {plural(check_cases, 're-trace')} + {plural(check_cases, 'eager run')} for the check"
            if check_cases
            else ""
        )
        + (" + 1 eager run to name the output torch rejected" if naming_runs else "")
        + "). Side effects (prints, counters, appends to lists, running statistics) happened that often."
        + mutated,
        hint="Pass check_trace=False to run the code once, or keep side effects out of forward().",
    )
