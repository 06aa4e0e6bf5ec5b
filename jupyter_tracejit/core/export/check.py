"""The export check, ``check_inputs``'s analogue for ``torch.export``: the exported program (``ep.module()``) run
beside the eager Python code on other inputs, their outputs compared with the trace check's rule.

The input sets are the user's ``check_inputs`` and, by default, inputs derived from the example at the minimum, a
middle value and the maximum of each range the program declares (``ep.range_constraints``). Which input dims carry
a symbol is read from the user inputs' placeholders (``node.meta["val"]``, a FakeTensor whose size at that dim is a
``SymInt``); every dim carrying the symbol (``x`` and ``y`` sharing a batch ``s0``, or ``2*s0``) changes together.

Choices (documented here, as the issue asked):

- an unbounded maximum (``int_oo``) is checked at ``max(2 * example, min + 2)``: big enough to leave the example's
  size, small enough to stay cheap;
- a derived input set is kept under :data:`MAX_DERIVED_BYTES` (or twice the example's size, when the example is
  bigger): a maximum over that is lowered (halved towards the minimum) and the label says so;
- the example's values are kept where the shapes overlap, the rest drawn at random (seeded): the probe's rule;
- the Python code raising on a derived size means that size is no valid input (a declared range may be wider than
  what the code accepts): the case is kept, with no outputs and its label ending "skipped: ...", never a failure.

Each case runs the eager code then the program on clones of the same inputs under ``torch.no_grad()``, the RNG
reseeded identically before each and forked around the whole check (dropout and friends draw the same numbers);
the buffers of the module and of the program's module are put back after every run, and ``training`` flags and
grad mode after the check.

Where a failing guard is in the user's code: ``ep.module()`` raises ``AssertionError("Guard failed: x.size()[0] ==
3")``. The sources in that text (``x.size()[0]``) are the shape environment's (``var_to_sources``: ``s77 ->
L['x'].size()[0]``); the environment's ``guards`` on those symbols hold ``sloc.framework_loc``, the user's frame
that made the guard (with ``Dim.AUTO``, the ``for i in range(x.size(0))`` line). A static dimension (no symbol
ever made) or a declared range (``x.size()[0] <= 64``) has no such line: the error then names the caller's line,
and its hint says what to change. A runtime assertion names its node (``on node 'eq'``): that node's stack trace
gives the line.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils import _pytree as pytree

from ..check import DEFAULT_TOLERANCE, CheckCase, CheckReport, OutputComparison
from ..compare import compare_outputs
from ..derived import clone_tensors, cuda_devices_of, exception_line, reseed, resized
from ..errors import TraceError, error_from_exception
from ..graph import Frame
from ..inputs import describe_inputs
from ..module_state import ModuleState
from ..source import source_line
from ..tracer_warnings import discard_own_warnings
from .failures import message_frame
from .guards import sloc_at
from .shape_env import input_names, shape_env_of, source_name

#: a derived input set is kept under this many bytes (or twice the example's, when that is more)
MAX_DERIVED_BYTES = 64 * 2**20

Inputs = tuple[tuple[Any, ...], dict[str, Any]]


@dataclass
class _Case:
    label: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    #: derived from a declared range: the Python code rejecting it means a skip, not a failure
    derived: bool = False


# -- the input sets ---------------------------------------------------------------------------------------------------
def check_input_set(entry: Any) -> Inputs:
    """One ``check_inputs`` entry as ``(args, kwargs)``: a dict is keyword inputs, a pair ``(tuple, dict)`` is both,
    a tuple or list is the positional inputs, anything else (a tensor) the one positional input."""
    if isinstance(entry, dict):
        return (), dict(entry)
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], tuple) and isinstance(entry[1], dict):
        return entry[0], dict(entry[1])
    if isinstance(entry, (tuple, list)):
        return tuple(entry), {}
    return (entry,), {}


def _user_placeholders(ep: torch.export.ExportedProgram) -> list[Any]:
    """The ``val`` of each user input's placeholder, in the order of the flattened ``(args, kwargs)``."""
    from torch.export.graph_signature import InputKind

    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    vals = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            node = nodes.get(getattr(spec.arg, "name", ""))
            vals.append(node.meta.get("val") if node is not None else None)
    return vals


def _flat_inputs(
    ep: torch.export.ExportedProgram, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], Any]:
    """``(args, kwargs)`` flattened as the program's in_spec orders them (kwargs in signature order)."""
    in_spec = getattr(getattr(ep, "call_spec", None), "in_spec", None)
    if kwargs and in_spec is not None:
        try:
            from torch.export._tree_utils import reorder_kwargs

            kwargs = reorder_kwargs(kwargs, in_spec)
        except Exception:  # a private helper that moved, or kwargs the spec does not know: keep the given order
            pass
    return pytree.tree_flatten((args, kwargs))


def _size_expr(size: Any) -> Any:
    if isinstance(size, torch.SymInt):
        return size.node.expr
    return int(size)


def _symbolic(size: Any) -> bool:
    """A size that is a sympy expression (a symbol, or ``2*s0``), not a plain int."""
    return not isinstance(size, int) and hasattr(size, "free_symbols")


def _int_oo(upper: Any) -> bool:
    try:
        from torch.utils._sympy.numbers import int_oo

        if upper is int_oo or upper == int_oo:
            return True
    except ImportError:  # pragma: no cover - older torch
        pass
    return str(upper) in ("oo", "int_oo") or getattr(upper, "is_finite", True) is False


def _nbytes(leaves: Sequence[Any]) -> int:
    return sum(t.numel() * t.element_size() for t in leaves if isinstance(t, torch.Tensor))


def range_cases(
    ep: torch.export.ExportedProgram, args: tuple[Any, ...], kwargs: dict[str, Any], g: torch.Generator
) -> list[_Case]:
    """Input sets at the minimum, a middle value and the maximum of each declared range (see the module docstring);
    [] when the inputs cannot be matched with the program's placeholders."""
    leaves, spec = _flat_inputs(ep, args, kwargs)
    vals = _user_placeholders(ep)
    if len(vals) != len(leaves):
        return []
    # (leaf index, per-dim size expression) of every tensor input whose placeholder has a symbolic size
    exprs: list[tuple[int, list[Any]]] = []
    for i, (leaf, val) in enumerate(zip(leaves, vals, strict=True)):
        if isinstance(leaf, torch.Tensor) and isinstance(val, torch.Tensor) and leaf.dim() == val.dim():
            dims = [_size_expr(s) for s in val.shape]
            if any(_symbolic(e) for e in dims):
                exprs.append((i, dims))
    names = [getattr(s.arg, "name", f"arg{i}") for i, s in enumerate(_user_specs(ep))]
    # each symbol's example value and where it is (for the label): from a dim that is the symbol itself
    example: dict[Any, int] = {}
    where: dict[Any, list[str]] = {}
    for i, dims in exprs:
        for d, e in enumerate(dims):
            if getattr(e, "is_Symbol", False):
                example.setdefault(e, int(leaves[i].shape[d]))
    # a derived dim (``2*s0``, ``s0 + 1``) of a symbol no dim carries alone: its example value solved from the size
    for i, dims in exprs:
        for d, e in enumerate(dims):
            free = list(getattr(e, "free_symbols", ()))
            if len(free) == 1 and free[0] not in example:
                a, b = e.coeff(free[0]), e.subs(free[0], 0)
                if a.is_Integer and b.is_Integer and int(a) and (int(leaves[i].shape[d]) - int(b)) % int(a) == 0:
                    example[free[0]] = (int(leaves[i].shape[d]) - int(b)) // int(a)
            for sym in free:
                name = names[i] if i < len(names) else f"arg{i}"
                where.setdefault(sym, []).append(f"{name}.size()[{d}]")
    example_bytes = _nbytes(leaves)
    budget = max(MAX_DERIVED_BYTES, 2 * example_bytes)
    cases: list[_Case] = []
    for sym in sorted(example, key=str):
        vr = ep.range_constraints.get(sym)
        if vr is None:
            continue
        lo = max(int(vr.lower), 0)
        unbounded = _int_oo(vr.upper)
        hi = max(2 * example[sym], lo + 2) if unbounded else int(vr.upper)

        def build(value: int, sym: Any = sym) -> list[Any] | None:
            subs = {s: v for s, v in example.items()}
            subs[sym] = value
            new = list(leaves)
            for i, dims in exprs:
                if not any(_symbolic(e) and sym in e.free_symbols for e in dims):
                    continue
                shape = []
                for e in dims:
                    if _symbolic(e):
                        v = e.subs(subs)
                        if v.free_symbols:
                            return None  # a size over a symbol of no known value (unbacked): not derivable
                        shape.append(int(v))
                    else:
                        shape.append(e)
                new[i] = torch.empty(shape, dtype=leaves[i].dtype, device="meta")
            return new

        wanted = hi
        while hi > lo:
            sized = build(hi)
            if sized is None or _nbytes(sized) <= budget:
                break
            hi = max(lo, hi // 2)
        if build(lo) is None:
            continue
        values: dict[int, str] = {}
        for v, tag in ((lo, "min"), ((lo + hi) // 2, "mid"), (hi, "max")):
            values.setdefault(v, tag)
        for value, tag in values.items():
            shapes = build(value)
            assert shapes is not None
            new = [
                resized(leaves[i], tuple(shapes[i].shape), g) if shapes[i] is not leaves[i] else leaves[i]
                for i in range(len(leaves))
            ]
            new_args, new_kwargs = pytree.tree_unflatten(new, spec)
            note = ""
            if tag == "max" and unbounded:
                note = ", unbounded"
            if tag == "max" and hi != wanted:
                note += f", lowered from {wanted} to stay small"
            label = f"range {sym}={value} ({tag}{note}): {', '.join(where[sym])}"
            cases.append(_Case(label, tuple(new_args), dict(new_kwargs), derived=True))
    return cases


def _user_specs(ep: torch.export.ExportedProgram) -> list[Any]:
    from torch.export.graph_signature import InputKind

    return [s for s in ep.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]


# -- a failing guard, located -----------------------------------------------------------------------------------------
_GUARD = re.compile(r"Guard failed: (?P<expr>.+)")
_SOURCE = re.compile(r"[A-Za-z_][\w\[\]'\".]*?\.size\(\)\[\d+\]|[A-Za-z_]\w*")
_NODE = re.compile(r"on node '(?P<node>[^']+)'")


def guard_location(ep: torch.export.ExportedProgram, message: str) -> tuple[str, int] | None:
    """The user's line that made the guard a failing run names (see the module docstring), or None."""
    node_match = _NODE.search(message)
    if node_match is not None:
        for node in ep.graph.nodes:
            if node.name == node_match.group("node"):
                return message_frame(node.meta.get("stack_trace") or "")
    m = _GUARD.search(message)
    env = shape_env_of(ep)
    if m is None or env is None:
        return None
    mentioned = set(_SOURCE.findall(m.group("expr")))
    symbols: set[Any] = set()
    inputs = input_names(ep)
    for sym, sources in getattr(env, "var_to_sources", {}).items():
        if any(source_name(s, inputs) in mentioned for s in sources):
            symbols.add(sym)
    if not symbols:
        return None
    replacements = getattr(env, "replacements", {})
    related = set(symbols)
    for sym, repl in replacements.items():
        free: set[Any] = set(getattr(repl, "free_symbols", set()))
        if sym in symbols or free & symbols:
            related |= {sym, *free}
    for guard in getattr(env, "guards", []):
        if getattr(guard.expr, "free_symbols", set()) & related:
            file, line, _code = sloc_at(guard.sloc)
            if file:
                return file, line
    return None


def _guard_hint(message: str, located: bool) -> str:
    m = _GUARD.search(message)
    expr = m.group("expr").strip() if m else ""
    if not expr:
        return (
            "The exported program rejected these inputs. Export with dynamic_shapes that cover them (a Dim, or "
            "Dim.AUTO, for each dimension that varies), or check with inputs the program was made for."
        )
    if "==" in expr and located:
        return (
            f"The exported program only accepts {expr}: the code at the line shown made export specialise that "
            "dimension to the example's size (e.g. a Python loop or branch over x.size(0)), silently with Dim.AUTO. "
            "Rewrite that line with tensor operations so the size stays symbolic, then export with a Dim for it."
        )
    if "==" in expr:
        return (
            f"The exported program only accepts {expr}: that dimension was exported static, fixed at the example's "
            "size. Export with dynamic_shapes giving it a Dim (torch.export.Dim('batch', min=..., max=...)) or "
            "Dim.AUTO; if the code then specialises it, rewrite the line export names."
        )
    return (
        f"These inputs are outside what the exported program declares ({expr}). Widen the Dim's min / max in "
        "dynamic_shapes if the code handles such sizes, or do not pass them."
    )


def program_error(exc: BaseException, ep: torch.export.ExportedProgram, caller: Frame | None) -> TraceError:
    """The check case's exception for what ``ep.module()`` raised: at the guard's line when it is found, else at the
    caller's; with a hint saying what to export differently."""
    error = error_from_exception(exc, phase="check")
    at = guard_location(ep, error.message)
    if at is not None:
        error.file, error.line = at
        error.code = source_line(*at)
    elif caller is not None:
        error.file, error.line, error.code = caller.file, caller.line, caller.code
    elif error.file.startswith("<"):  # the program's generated code: no line of the user's
        error.file, error.line, error.code = "", 0, ""
    if _GUARD.search(error.message) or _NODE.search(error.message):
        error.tag = "guard_failed"
        error.hint = _guard_hint(error.message, at is not None)
    return error


# -- running ----------------------------------------------------------------------------------------------------------
def _tensors(out: Any) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


def _describe(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    return describe_inputs(args) + (describe_inputs(kwargs) if kwargs else [])


def _run_case(
    index: int,
    case: _Case,
    program: Callable[..., Any],
    eager: Callable[..., Any],
    ep: torch.export.ExportedProgram,
    state: ModuleState,
    seed: int,
    cuda_devices: Sequence[int],
    tolerance: float,
    caller: Frame | None,
) -> CheckCase:
    result = CheckCase(index=index, method="forward", label=case.label, inputs=_describe(case.args, case.kwargs))
    try:
        reseed(seed, cuda_devices)
        expected = eager(*clone_tensors(case.args), **clone_tensors(case.kwargs))
    except Exception as e:
        if case.derived:  # the code does not take this size: not a valid input, so nothing to check
            result.skipped = f"the Python code rejects it ({exception_line(e)})"
            result.label = f"{case.label}: skipped, {result.skipped}"
            return result
        result.exception = error_from_exception(e, phase="check")
        result.exception.message = f"running the Python code on these inputs raised: {result.exception.message}"
        return result
    finally:
        state.restore_buffers()
    try:
        reseed(seed, cuda_devices)
        actual = program(*clone_tensors(case.args), **clone_tensors(case.kwargs))
    except Exception as e:
        result.exception = program_error(e, ep, caller)
        return result
    finally:
        state.restore_buffers()
    got, want = _tensors(actual), _tensors(expected)
    result.outputs = compare_outputs(got, want, "python", tolerance)
    if len(got) != len(want):
        result.outputs.append(
            OutputComparison(
                index=min(len(got), len(want)),
                against="python",
                ok=False,
                rtol=tolerance,
                message=f"the exported program returns {len(got)} tensors, the Python code {len(want)}",
            )
        )
    return result


def check_export(
    ep: torch.export.ExportedProgram,
    eager: Callable[..., Any],
    example_args: tuple[Any, ...],
    example_kwargs: dict[str, Any] | None = None,
    *,
    check_inputs: Sequence[Any] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    ranges: bool = True,
    seed: int = 0,
    caller: Frame | None = None,
    on_python_run: Callable[[], None] | None = None,
) -> CheckReport:
    """Run ``ep.module()`` and ``eager`` on each ``check_inputs`` set (see :func:`check_input_set`) and, with
    ``ranges``, on inputs at the minimum, middle and maximum of each declared range; one :class:`CheckCase` each
    (see the module docstring). ``eager``'s module (when it is one) is left as found. Never raises for what the
    user's code or the program does: that is a case's exception. ``caller`` is the line a failure with no line of
    its own is put at; ``on_python_run`` is called before each run of ``eager``."""
    args = example_args if isinstance(example_args, tuple) else (example_args,)
    kwargs = dict(example_kwargs or {})
    report = CheckReport(tolerance=tolerance)
    program = ep.module()
    roots = [m for m in (eager, program) if isinstance(m, torch.nn.Module)]
    cuda_devices = cuda_devices_of((args, kwargs), roots)
    grad_enabled = torch.is_grad_enabled()
    state = ModuleState(roots)

    def counted(*a: Any, **k: Any) -> Any:
        if on_python_run is not None:
            on_python_run()
        return eager(*a, **k)

    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(torch.random.fork_rng(devices=cuda_devices))
            stack.enter_context(discard_own_warnings())  # its runs' warnings; other threads' pass
            stack.enter_context(torch.no_grad())
            cases = [_Case(f"check_inputs[{i}]", *check_input_set(entry)) for i, entry in enumerate(check_inputs or [])]
            if ranges:
                try:
                    cases += range_cases(ep, args, kwargs, torch.Generator().manual_seed(seed))
                except Exception:  # a range or size torch spells in a way not foreseen: check the given sets only
                    pass
            for i, case in enumerate(cases):
                report.cases.append(
                    _run_case(i, case, program, counted, ep, state, seed + i, cuda_devices, tolerance, caller)
                )
    finally:
        state.restore()
        torch.set_grad_enabled(grad_enabled)
    return report


__all__ = ["MAX_DERIVED_BYTES", "check_export", "check_input_set", "guard_location", "program_error", "range_cases"]
