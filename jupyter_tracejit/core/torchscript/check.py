"""The trace check, computed by the core itself.

This re-does what ``torch.jit._trace._check_trace`` does, in the same order and under the same
``torch.no_grad()``, so the user's code runs exactly as often and the verdict agrees with torch's:
for each check input set, re-trace, run the trace and the Python function and compare their
outputs (then the trace against the re-trace), and compare the two graphs. Instead of an
``ndiff`` of two printouts, the graphs are compared structurally (:mod:`..diff`); torch's own
string comparison is kept only as a boolean so that a difference it would report is never missed.
The results are the torch-free records of :mod:`..check`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..check import CheckCase, OutputComparison
from ..compare import compare_outputs, compare_tensors
from ..diff import GraphDiff, structural_diff
from ..errors import error_from_exception
from ..graph import Graph
from .canonical import canonical_inlined, canonical_text, preorder
from .extract import Extraction, extract_graph
from .facts import TracingCheckError

# -- helpers mirroring torch.jit._trace ----------------------------------------------------------


def _tensor_outputs(out: Any) -> list[torch.Tensor]:
    outs = out if isinstance(out, tuple) else (out,)
    return [o for o in outs if isinstance(o, torch.Tensor)]


def torch_mismatch_message(comparison: OutputComparison) -> str:
    what = "Python function" if comparison.against == "python" else "repeated trace"
    return (
        f"Output nr {comparison.index + 1}. of the traced function does not match the corresponding output "
        f"of the {what}. Detailed error:\n{comparison.message}"
    )


def tensor_constant_comparer(
    trace: Extraction, check: Extraction
) -> Callable[[int, int], tuple[str, float | None] | None]:
    """Compare matched tensor constants as torch does (``assert_close``, default tolerances, equal NaNs)."""

    def compare(a: int, b: int) -> tuple[str, float | None] | None:
        ta, tb = trace.tensor_constants.get(a), check.tensor_constants.get(b)
        if ta is None or tb is None:
            return None
        try:
            c = compare_tensors(ta, tb, promote=False)
        except (RuntimeError, TypeError) as e:  # dtypes torch cannot compare element-wise
            return str(e).strip(), None
        return None if c.ok else (c.torch_message.strip(), c.max_abs)

    return compare


@dataclass
class MethodUnderCheck:
    """What the checker needs to know about one traced method."""

    name: str
    traced_graph: torch._C.Graph
    trace: Extraction
    canonical_text: str
    #: run the traced method / the Python function on (cloned) inputs
    run_traced: Callable[[Any], Any]
    run_python: Callable[[Any], Any]
    root_type: str = ""


def check_graphs(method: MethodUnderCheck, check_ts_graph: torch._C.Graph) -> tuple[Graph | None, GraphDiff, bool]:
    """Compare the trace of a method with its re-trace: (check graph if it differs, diff, text_differs).

    The common case, a passing check, is decided without building the check graph: equal printouts mean
    equal structure, so only tensor constant values are left to compare (in node order, as torch does).
    """
    canonical = canonical_inlined(check_ts_graph)
    text_equal = canonical_text(canonical) == method.canonical_text
    if text_equal and _tensor_constants_equal(method.trace, canonical):
        size = len(method.trace.graph.nodes)
        return None, GraphDiff(matched={i: i for i in range(size)}), False
    # the check graph is only shown beside the trace: it carries no `.code`, whose printer is slow on big modules
    check = extract_graph(canonical, method=method.name, root_type=method.root_type)
    diff = structural_diff(
        method.trace.graph, check.graph, compare_tensors=tensor_constant_comparer(method.trace, check)
    )
    # torch's printouts differ, yet nothing structural does: only debug names changed
    text_differs = not text_equal and diff.identical
    keep = not diff.identical or text_differs
    return (check.graph if keep else None), diff, text_differs


def _tensor_constants_equal(trace: Extraction, canonical: torch._C.Graph) -> bool:
    """Tensor constants of a graph printed like the trace's (so with the same node order) hold equal values."""
    if not trace.tensor_constants:
        return True
    for node_id, node in enumerate(preorder(canonical)):
        expected = trace.tensor_constants.get(node_id)
        if expected is None:
            continue
        if node.kind() != "prim::Constant" or not node.hasAttribute("value") or node.kindOf("value") != "t":
            return False  # not the same layout after all: let the structural diff decide
        try:
            if not compare_tensors(expected, node.t("value"), promote=False).ok:
                return False
        except (RuntimeError, TypeError):
            return False
    return True


def run_outputs(
    case: CheckCase,
    method: MethodUnderCheck,
    inputs: Any,
    check_callable: Callable[[Any], Any] | None,
    tolerance: float,
) -> None:
    """Run trace and Python function (and the re-trace when they agree) and record the comparisons."""
    step = "the trace"
    try:
        traced_outs = _tensor_outputs(method.run_traced(inputs))
        step = "the Python function"
        fn_outs = _tensor_outputs(method.run_python(inputs))
        case.outputs = compare_outputs(traced_outs, fn_outs, "python", tolerance)
        if case.outputs_ok and check_callable is not None:
            step = "the repeated trace"
            case.outputs += compare_outputs(traced_outs, _tensor_outputs(check_callable(inputs)), "retrace", tolerance)
    except Exception as e:  # user code raised: torch raises its TracingCheckError from it, and so is it named
        err = error_from_exception(e, phase="check")
        inner = err.type
        err.type = TracingCheckError.__name__
        err.message = f"running {step} on these inputs raised {inner}: {err.message}"
        said = f"{inner} raised inside the check ({TracingCheckError.__name__} is how torch reports it)."
        err.hint = f"{said} {err.hint}" if err.hint else said
        case.exception = err
