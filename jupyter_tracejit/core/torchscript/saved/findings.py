"""What a shipped graph says about itself, read from the graph alone (nothing is run).

The graph rules of :mod:`..hazards` that need no run (devices baked in, nondeterministic nodes, BatchNorm in
training mode) are reused, worded for an archive (no "re-trace" fix: the archive is what it is). Two rules are
the archive's own, each defined narrowly so that what they report is what they say:

``frozen_size`` (warning): the batch size written into a shape. A node of :data:`SHAPE_ARGUMENTS` (``view``,
``reshape``, ``expand``, ``broadcast_to``, ``_unsafe_view``; the factories ``zeros``, ``ones``, ``empty``, ``full``,
``rand``, ``randn``) whose size argument is a ``prim::ListConstruct`` whose **first** element is an ``int``
constant equal to the **first** dimension of one of the method's example inputs of two dimensions or more, and
at least 2. The example
inputs are the ones ``torch.jit.trace`` stored in the archive (their shapes are restored onto the graph's inputs
on load, without running anything); with none stored (a scripted module, an older archive), nothing is reported.
A size read from a tensor (``x.view(x.size(0), -1)``) is a ``size`` op in the list, not a constant, and is never
reported; nor are constants at other positions (a head count, a channel count), nor a batch of 1.

``dtype_cast`` (info): an ``aten::to`` whose ``dtype`` argument is an ``int`` constant (``x.float()``,
``x.to(torch.float16)`` traced): the cast's target type is fixed whatever type the inputs have (a model served in
half precision is cast back here). ``to(other_tensor)`` and ``type_as`` follow another tensor and are not reported.
"""

from __future__ import annotations

from collections.abc import Iterable

from ... import hazards
from ...graph import Graph, Node
from ...hazards import Finding
from ...words import plural

#: op -> index of its size argument
SHAPE_ARGUMENTS = {
    "aten::view": 1,
    "aten::reshape": 1,
    "aten::_unsafe_view": 1,
    "aten::expand": 1,
    "aten::broadcast_to": 1,
    "aten::zeros": 0,
    "aten::ones": 0,
    "aten::empty": 0,
    "aten::full": 0,
    "aten::rand": 0,
    "aten::randn": 0,
}

#: torch's ScalarType numbers (c10/core/ScalarType.h), as a traced ``aten::to`` holds them
SCALAR_TYPES = {
    0: "uint8",
    1: "int8",
    2: "int16",
    3: "int32",
    4: "int64",
    5: "float16",
    6: "float32",
    7: "float64",
    8: "complex32",
    9: "complex64",
    10: "complex128",
    11: "bool",
    15: "bfloat16",
}

#: ``aten::to`` overloads: input types -> index of ``dtype`` (the others follow a tensor or a device only)
_TO_DTYPE_AT = {
    # to.dtype(self, ScalarType dtype, bool non_blocking, bool copy, MemoryFormat? memory_format)
    ("Tensor", "int", "bool", "bool", "NoneType"): 1,
    ("Tensor", "int", "bool", "bool", "int"): 1,
    # to.device(self, Device device, ScalarType dtype, bool non_blocking, bool copy, MemoryFormat? memory_format)
    ("Tensor", "Device", "int", "bool", "bool", "NoneType"): 2,
    ("Tensor", "Device", "int", "bool", "bool", "int"): 2,
    # to.dtype_layout(self, ScalarType? dtype, Layout? layout, Device? device, bool? pin_memory, ...)
}


def where(graph: Graph, ids: Iterable[int], limit: int = 3) -> str:
    """``model.py:10, model.py:12`` for the original lines of nodes (each once), or where the archive kept none."""
    lines: list[str] = []
    for nid in ids:
        source = graph.nodes[nid].source
        if source is None:
            continue
        frame = source.user_frame
        text = f"{frame.file.rsplit('/', 1)[-1]}:{frame.line}" + (f" `{frame.code}`" if frame.code else "")
        if text not in lines:
            lines.append(text)
    if not lines:
        return "no original line kept in the archive"
    more = f" and {len(lines) - limit} more" if len(lines) > limit else ""
    return ", ".join(lines[:limit]) + more


def _int_constant(graph: Graph, value_id: int) -> int | None:
    producer = graph.producer(value_id)
    if producer is None or producer.role != "constant":
        return None
    value = producer.attributes.get("value")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def example_batch_sizes(graph: Graph) -> set[int]:
    """The first dimension of each tensor input of the graph whose shape is known (the stored example inputs) and
    that has two dimensions or more (a 1-d input has no batch dimension to speak of)."""
    found: set[int] = set()
    for vid in graph.inputs:
        shape = graph.values[vid].shape
        if shape and len(shape) >= 2 and isinstance(shape[0], int) and not isinstance(shape[0], bool):
            found.add(shape[0])
    return found


def frozen_sizes(graph: Graph) -> Finding | None:
    """The ``frozen_size`` rule (see the module's docstring)."""
    batches = {b for b in example_batch_sizes(graph) if b >= 2}
    if not batches:
        return None
    ids: list[int] = []
    values: set[int] = set()
    for n in graph.nodes:
        at = SHAPE_ARGUMENTS.get(n.kind)
        if at is None or at >= len(n.inputs):
            continue
        sizes = graph.producer(n.inputs[at])
        if sizes is None or sizes.kind != "prim::ListConstruct" or not sizes.inputs:
            continue
        first = _int_constant(graph, sizes.inputs[0])
        if first is not None and first in batches:
            ids.append(n.id)
            values.add(first)
    if not ids:
        return None
    sizes_text = ", ".join(str(v) for v in sorted(values))
    return Finding(
        kind="frozen_size",
        severity="warning",
        title=f"batch size {sizes_text} frozen into {len(ids)} shape{'s' if len(ids) != 1 else ''}",
        message=f"{plural(len(ids), 'op')} ({_ops(graph, ids)}) take{'s' if len(ids) == 1 else ''} a shape whose first "
        f"size is the constant {sizes_text}, the batch size of the example inputs stored with the trace "
        f"({where(graph, ids)}). Called with another batch size, the archive fails there or mixes samples.",
        hint="Write the size from the tensor (x.view(x.size(0), -1), x.flatten(1)) and trace and save again.",
        node_ids=ids,
        method=graph.method,
    )


def dtype_casts(graph: Graph) -> Finding | None:
    """The ``dtype_cast`` rule (see the module's docstring)."""
    ids: list[int] = []
    dtypes: set[str] = set()
    for n in graph.nodes:
        if n.kind != "aten::to":
            continue
        at = _TO_DTYPE_AT.get(tuple(graph.values[v].type for v in n.inputs))
        number = _int_constant(graph, n.inputs[at]) if at is not None else None
        if number is None:
            continue
        ids.append(n.id)
        dtypes.add(SCALAR_TYPES.get(number, f"ScalarType {number}"))
    if not ids:
        return None
    names = ", ".join(sorted(dtypes))
    return Finding(
        kind="dtype_cast",
        severity="info",
        title=f"cast to {names} baked in ({plural(len(ids), 'op')})",
        message=f"{plural(len(ids), 'op')} ({_ops(graph, ids)}) cast to {names}, a type fixed when the model was "
        f"captured ({where(graph, ids)}): whatever type the inputs have (half precision, another device's "
        "default), the result is cast there.",
        hint="Fine if intended; to follow the inputs' type, cast with x.to(other.dtype) or type_as(other) instead.",
        node_ids=ids,
        method=graph.method,
    )


def no_debug_info(method: str = "forward") -> Finding:
    """An archive saved without its source ranges: its nodes point at no original line."""
    return Finding(
        kind="no_debug_info",
        severity="info",
        title="saved without debug information",
        message="The archive has no code/*.debug_pkl: it was saved without the source ranges of its code, so no "
        "node can be traced back to its original Python line (the archive's TorchScript code is still shown).",
        hint="Save it again with debug information (torch.jit.save keeps it unless told not to) to see the lines.",
        method=method,
    )


def damaged_debug_info(members: list[str], method: str = "forward") -> Finding:
    """An archive whose source ranges (``code/*.debug_pkl``) are damaged: it was loaded without them."""
    return Finding(
        kind="damaged_debug_info",
        severity="warning",
        title="debug information damaged: loaded without source lines",
        message=f"The archive's source ranges are damaged ({', '.join(members[:3])}): torch cannot read them, so the "
        "archive was loaded without them and no node points at its original Python line (the graph, the module "
        "tree and the TorchScript code are whole).",
        hint="Copy or download the file again, or save the model again, to see the lines.",
        method=method,
    )


def graph_findings(graph: Graph, devices_used: Iterable[str]) -> list[Finding]:
    """Every rule above on one graph, and the reused :mod:`..hazards` rules worded for an archive."""
    found = hazards.reworded(
        hazards.nondeterministic_nodes(graph, torch_flags_top_level=True),
        message=lambda r: (
            f"The archive contains random ops: {_ops(graph, r.node_ids)} ({where(graph, r.node_ids)}). "
            "Each call gives other results (a dropout saved in training mode drops activations when served)."
        ),
        hint="Call model.eval() before tracing and save again, if the randomness is not intended.",
        fix={},
    )
    found += hazards.reworded(
        hazards.device_constants(graph, devices_used),
        message=lambda d: f"{d.message} Lines: {where(graph, d.node_ids)}.",
    )
    found += hazards.reworded(
        hazards.train_mode_batchnorm(graph, 0),
        title=lambda b: f"BatchNorm saved in training mode ({plural(len(b.node_ids), 'layer')})",
        message=lambda b: (
            "The archive's batch_norm ops have training=True: served, they normalise with each batch's "
            f"statistics and update running_mean/running_var on every call ({where(graph, b.node_ids)})."
        ),
        hint="Call model.eval() before tracing and save again.",
        fix={},
    )
    for rule in (frozen_sizes, dtype_casts):
        finding = rule(graph)
        if finding is not None:
            found.append(finding)
    return found


def _ops(graph: Graph, ids: list[int], limit: int = 4) -> str:
    shown: list[str] = []
    for nid in ids[:limit]:
        n: Node = graph.nodes[nid]
        shown.append(f"{n.kind} in {n.scope or 'top level'}")
    more = f" and {len(ids) - limit} more" if len(ids) > limit else ""
    return ", ".join(shown) + more
