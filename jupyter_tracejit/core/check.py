"""The trace check, computed by the core itself.

This re-does what ``torch.jit._trace._check_trace`` does, in the same order and under the same
``torch.no_grad()``, so the user's code runs exactly as often and the verdict agrees with torch's:
for each check input set, re-trace, run the trace and the Python function and compare their
outputs (then the trace against the re-trace), and compare the two graphs. Instead of an
``ndiff`` of two printouts, the graphs are compared structurally (:mod:`.diff`); torch's own
string comparison is kept only as a boolean so that a difference it would report is never missed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.testing._comparison import default_tolerances

from .diff import GraphDiff, structural_diff
from .errors import TraceError, error_from_exception
from .from_torchscript import Extraction, canonical_inlined, canonical_text, extract_graph, preorder
from .graph import Graph
from .jsonfloat import float_from_json, float_to_json


@dataclass
class OutputComparison:
    """One tensor output of the trace compared with the Python function or with the re-trace."""

    index: int
    against: str  # "python" or "retrace"
    ok: bool
    max_abs: float | None = None
    max_rel: float | None = None
    atol: float = 0.0
    rtol: float = 0.0
    shape: list[int] = field(default_factory=list)
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {k: float_to_json(v) for k, v in self.__dict__.items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OutputComparison:
        return cls(**{k: float_from_json(v) for k, v in data.items()})


@dataclass
class CheckCase:
    """The check of one method with one set of check inputs."""

    index: int
    method: str
    label: str
    #: shapes of the check inputs, e.g. ``["Float(4, 3)"]``
    inputs: list[str] = field(default_factory=list)
    outputs: list[OutputComparison] = field(default_factory=list)
    #: the re-trace's graph; kept only when it differs from the trace (an identical graph is redundant)
    graph: Graph | None = None
    diff: GraphDiff | None = None
    #: torch's printed graphs differ although no structural divergence was found (e.g. debug names only)
    text_differs: bool = False
    #: re-tracing, or running the trace / Python function / re-trace on these inputs raised
    exception: TraceError | None = None

    @property
    def graphs_differ(self) -> bool:
        return self.text_differs or (self.diff is not None and not self.diff.identical)

    @property
    def outputs_ok(self) -> bool:
        return all(o.ok for o in self.outputs)

    @property
    def ok(self) -> bool:
        return self.exception is None and self.outputs_ok and not self.graphs_differ

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "method": self.method,
            "label": self.label,
            "inputs": self.inputs,
            "outputs": [o.to_json() for o in self.outputs],
            "graph": None if self.graph is None else self.graph.to_json(),
            "diff": None if self.diff is None else self.diff.to_json(),
            "text_differs": self.text_differs,
            "exception": None if self.exception is None else self.exception.to_json(),
            "ok": self.ok,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckCase:
        return cls(
            index=data["index"],
            method=data["method"],
            label=data["label"],
            inputs=data["inputs"],
            outputs=[OutputComparison.from_json(o) for o in data["outputs"]],
            graph=None if data["graph"] is None else Graph.from_json(data["graph"]),
            diff=None if data["diff"] is None else GraphDiff.from_json(data["diff"]),
            text_differs=data["text_differs"],
            exception=None if data["exception"] is None else TraceError.from_json(data["exception"]),
        )


@dataclass
class CheckReport:
    """Every check case of a run. ``ok`` agrees with torch: False exactly when torch.jit.trace would raise
    ``TracingCheckError`` (or fail to re-trace) or emit an output-mismatch warning."""

    cases: list[CheckCase] = field(default_factory=list)
    tolerance: float = 1e-5

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.cases)

    @property
    def failed(self) -> list[CheckCase]:
        return [c for c in self.cases if not c.ok]

    @property
    def first(self) -> tuple[CheckCase, Any] | None:
        """The first root divergence, with its case: ``(case, Divergence)``."""
        for c in self.cases:
            if c.diff is not None and c.diff.roots:
                return c, c.diff.roots[0]
        return None

    @property
    def output_mismatches(self) -> list[tuple[CheckCase, OutputComparison]]:
        return [(c, o) for c in self.cases for o in c.outputs if not o.ok]

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "tolerance": self.tolerance, "cases": [c.to_json() for c in self.cases]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckReport:
        return cls(cases=[CheckCase.from_json(c) for c in data["cases"]], tolerance=data["tolerance"])


# -- helpers mirroring torch.jit._trace ----------------------------------------------------------


def clone_inputs(args: Any) -> Any:
    """torch's ``_clone_inputs``: detached clones that keep ``requires_grad``."""
    return torch.jit._trace._clone_inputs(args)


def describe_inputs(inputs: Any) -> list[str]:
    """``["Float(4, 3)", "k=Long(2)"]``: a short, JSON-ready description of example inputs."""

    def one(x: Any) -> str:
        if isinstance(x, torch.Tensor):
            dtype = str(x.dtype).replace("torch.", "")
            return f"{dtype}({', '.join(str(d) for d in x.shape)})"
        if isinstance(x, (tuple, list)):
            inner = ", ".join(one(v) for v in x)
            return f"({inner})" if isinstance(x, tuple) else f"[{inner}]"
        if isinstance(x, dict):
            return "{" + ", ".join(f"{k}: {one(v)}" for k, v in x.items()) + "}"
        return type(x).__name__

    if isinstance(inputs, dict):
        return [f"{k}={one(v)}" for k, v in inputs.items()]
    if isinstance(inputs, (tuple, list)):
        return [one(v) for v in inputs]
    return [one(inputs)]


def _tensor_outputs(out: Any) -> list[torch.Tensor]:
    outs = out if isinstance(out, tuple) else (out,)
    return [o for o in outs if isinstance(o, torch.Tensor)]


def _errors(orig: torch.Tensor, ref: torch.Tensor) -> tuple[float | None, float | None]:
    try:
        a = orig.detach().to(torch.cdouble if orig.is_complex() or ref.is_complex() else torch.double)
        b = ref.detach().to(a.dtype)
        if a.shape != b.shape or a.numel() == 0:
            return None, None
        diff = (a - b).abs()
        finite = torch.isfinite(diff)
        max_abs = float(diff[finite].max()) if bool(finite.any()) else 0.0
        rel = diff / b.abs()
        rel_ok = torch.isfinite(rel)
        max_rel = float(rel[rel_ok].max()) if bool(rel_ok.any()) else 0.0
        return max_abs, max_rel
    except (RuntimeError, TypeError):
        return None, None


def compare_outputs(
    original: list[torch.Tensor], reference: list[torch.Tensor], against: str, tolerance: float
) -> list[OutputComparison]:
    """torch's ``compare_outputs``: ``assert_close`` of each pair in double with ``rtol=tolerance``."""
    results = []
    for i, (orig, ref) in enumerate(zip(original, reference, strict=False)):
        atol = default_tolerances(orig, ref)[1]
        o, r = orig, ref
        if o.is_quantized:
            o = o.dequantize()
        if r.is_quantized:
            r = r.dequantize()
        if o.is_mkldnn:
            o = o.to_dense()
        if r.is_mkldnn:
            r = r.to_dense()
        message = ""
        try:
            if o.is_complex() or r.is_complex():
                torch.testing.assert_close(
                    o.to(torch.cdouble), r.to(torch.cdouble), rtol=tolerance, atol=atol, equal_nan=True
                )
            elif getattr(o, "is_nested", False) or getattr(r, "is_nested", False):
                assert getattr(o, "is_nested", False) == getattr(r, "is_nested", False)
                for t_o, t_r in zip(o.unbind(), r.unbind(), strict=False):
                    torch.testing.assert_close(
                        t_o.double(),
                        t_r.double(),
                        rtol=tolerance,
                        atol=default_tolerances(t_o, t_r)[1],
                        equal_nan=True,
                    )
            else:
                torch.testing.assert_close(o.double(), r.double(), rtol=tolerance, atol=atol, equal_nan=True)
            ok = True
        except AssertionError as e:
            ok = False
            message = str(e)
        max_abs, max_rel = _errors(o, r)
        results.append(
            OutputComparison(
                index=i,
                against=against,
                ok=ok,
                max_abs=max_abs,
                max_rel=max_rel,
                atol=atol,
                rtol=tolerance,
                shape=list(orig.shape),
                message=message,
            )
        )
    return results


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
            torch.testing.assert_close(ta, tb, equal_nan=True)
            return None
        except (RuntimeError, AssertionError) as e:
            return str(e).strip(), _errors(ta, tb)[0]

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
            torch.testing.assert_close(expected, node.t("value"), equal_nan=True)
        except (RuntimeError, AssertionError):
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
    except Exception as e:  # user code raised: torch turns this into a TracingCheckError
        err = error_from_exception(e, phase="check")
        err.message = f"running {step} on these inputs raised {err.type}: {err.message}"
        case.exception = err
