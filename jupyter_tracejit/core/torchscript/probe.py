"""Generalization probe: does the trace still compute what the Python code computes on *other* inputs?

``torch.jit.trace`` checks a trace by re-tracing with the same (or user-given) inputs, so anything
frozen into the trace goes unnoticed: a Python list indexed with a tensor (the index becomes a
constant, with no warning at all), ``for i in range(x.size(0))`` (unrolled for this length),
``if x.sum() > 0`` (one branch recorded). The probe runs the eager function and the trace on inputs
derived from the example (:mod:`.probe_cases`) and reports where they part:

- **value variants** keep every shape and replace the values: ``values:randn`` (random normal with
  the example's mean/std), ``values:negated`` and ``values:shuffled`` (a permutation of the
  elements, which moves an argmax). Integer tensors get random values in the example's range
  (permuted for ``shuffled``), bool tensors random values (inverted for ``negated``).
- **size variants** change one dimension of one input by +1 and -1 (``size:arg0.dim0+1``), and all
  varied dimensions together by +1 (``size:all+1``, since shapes often have to agree between
  inputs, e.g. ``x`` and ``mask``). The example's values are kept where the shapes overlap; new
  entries are random. Without explicit ``dims``, the dims that "look dynamic" are varied: dim 0 of
  every tensor, and for tensors with two or more dims every other dim whose size is not the size of
  a parameter or buffer of the module (a sequence length, not a feature size).

Each case runs the eager function and the trace under ``torch.no_grad()``. The eager function
raising means the variant is not a valid input (``skipped``); the trace raising where the eager
function runs is a ``trace_error`` (a baked-in shape); different outputs are a ``disagree``.

The probe leaves no trace in the caller's process: the global RNG is forked (and reseeded before
each call, so dropout draws the same masks in both runs), warnings raised by the user's code are
swallowed, grad mode is restored, and the parameters, buffers and ``training`` flags of the module
are snapshot before and restored after (buffers also between the eager and the traced run, so
BatchNorm's running statistics are the same for both).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import torch

from ..check import DEFAULT_TOLERANCE
from ..compare import compare_tensors, summary
from ..derived import MAX_MESSAGE, clone_tensors, cuda_devices_of, exception_line, is_float, reseed
from ..inputs import describe_inputs, tensor_type_str
from ..module_state import ModuleState
from ..probe_report import AGREE, DISAGREE, SKIPPED, TRACE_ERROR, ProbeCase, ProbeReport
from ..tracer_warnings import discard_own_warnings
from .probe_cases import CaseSpec, choose_dims, plan_cases, top_level

# looser relative tolerance for low-precision outputs (torch.testing.assert_close's defaults)
_LOW_PRECISION_RTOL: dict[torch.dtype, float] = {torch.float16: 1e-3, torch.bfloat16: 1.6e-2}


# ---------------------------------------------------------------------------------------------
# comparing outputs


def _flatten(obj: Any, path: str, out: list[tuple[str, Any]]) -> None:
    if isinstance(obj, torch.Tensor):
        out.append((path, obj))
    elif isinstance(obj, tuple | list):
        for i, o in enumerate(obj):
            _flatten(o, f"{path}[{i}]", out)
    elif isinstance(obj, dict):
        for k, v in sorted(obj.items(), key=lambda kv: repr(kv[0])):
            _flatten(v, f"{path}[{k!r}]", out)
    else:
        out.append((path, obj))


@dataclass
class _Comparison:
    ok: bool
    max_abs: float | None = None
    max_rel: float | None = None
    message: str = ""


def _compare_tensors(path: str, expected: torch.Tensor, actual: torch.Tensor, tolerance: float) -> _Comparison:
    if tuple(expected.shape) != tuple(actual.shape):
        return _Comparison(
            False, message=f"{path}: shape {tuple(expected.shape)} in eager vs {tuple(actual.shape)} in the trace"
        )
    if expected.dtype != actual.dtype:
        return _Comparison(
            False,
            message=f"{path}: dtype {tensor_type_str(expected)} in eager vs {tensor_type_str(actual)} in the trace",
        )
    # integers and booleans must be equal; floats within the check's tolerance (looser for half precision)
    exact = not is_float(expected)
    rtol = 0.0 if exact else max(tolerance, _LOW_PRECISION_RTOL.get(expected.dtype, 0.0))
    c = compare_tensors(actual, expected, rtol=rtol, atol=0.0 if exact else None)
    if c.ok:
        return _Comparison(True, c.max_abs, c.max_rel)
    return _Comparison(False, c.max_abs, c.max_rel, f"{path}: " + summary(c, expected="eager", actual="trace"))


def _values_equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _compare_outputs(expected: Any, actual: Any, tolerance: float) -> _Comparison:
    exp_flat: list[tuple[str, Any]] = []
    act_flat: list[tuple[str, Any]] = []
    _flatten(expected, "output", exp_flat)
    _flatten(actual, "output", act_flat)
    if [p for p, _ in exp_flat] != [p for p, _ in act_flat]:
        exp_paths = ", ".join(p for p, _ in exp_flat) or "nothing"
        act_paths = ", ".join(p for p, _ in act_flat) or "nothing"
        return _Comparison(
            False,
            message=f"the eager function returns {len(exp_flat)} value(s) ({exp_paths}), "
            f"the trace {len(act_flat)} ({act_paths})"[:MAX_MESSAGE],
        )
    max_abs: float | None = None
    max_rel: float | None = None
    failures: list[str] = []
    for (path, e), (_, a) in zip(exp_flat, act_flat, strict=True):
        if isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor):
            try:
                et = e if isinstance(e, torch.Tensor) else torch.as_tensor(e, dtype=a.dtype)
                at = a if isinstance(a, torch.Tensor) else torch.as_tensor(a, dtype=e.dtype)
            except Exception:
                failures.append(f"{path}: {type(e).__name__} in eager vs {type(a).__name__} in the trace")
                continue
            c = _compare_tensors(path, et, at, tolerance)
            if c.max_abs is not None:
                max_abs = c.max_abs if max_abs is None else max(max_abs, c.max_abs)
            if c.max_rel is not None:
                max_rel = c.max_rel if max_rel is None else max(max_rel, c.max_rel)
            if not c.ok:
                failures.append(c.message)
        elif not _values_equal(e, a):
            failures.append(f"{path}: {e!r} in eager vs {a!r} in the trace"[:MAX_MESSAGE])
    if not failures:
        return _Comparison(True, max_abs, max_rel)
    message = failures[0]
    if len(failures) > 1:
        message += f" ({len(failures)} of {len(exp_flat)} outputs differ)"
    return _Comparison(False, max_abs, max_rel, message)


# ---------------------------------------------------------------------------------------------
# the probe (its cases: probe_cases.py)


def _call(fn: Callable[..., Any], inputs: tuple[Any, ...] | dict[str, Any]) -> Any:
    if isinstance(inputs, dict):
        return fn(**inputs)
    return fn(*inputs)


def run_probe(
    eager: Callable[..., Any],
    traced: Callable[..., Any],
    example_inputs: tuple[Any, ...] | dict[str, Any],
    *,
    is_kwarg: bool = False,
    dims: Mapping[int | str, Sequence[int]] | None = None,
    module: torch.nn.Module | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    seed: int = 0,
    max_cases: int = 12,
) -> ProbeReport:
    """Run ``eager`` and ``traced`` on inputs derived from ``example_inputs`` and report where they differ.

    ``example_inputs`` is a tuple of positional inputs (a lone non-tuple is one input), or with
    ``is_kwarg=True`` a dict of keyword inputs. ``dims`` names the dims to resize per input
    (positional index or keyword name -> dims); without it, dims that look dynamic are chosen (see
    the module docstring), using ``module``'s parameter sizes (``eager`` itself when it is a
    module). Raises ValueError for ``dims`` naming an input or dim that does not exist; failures of
    the user's code become case statuses, never exceptions.
    """
    inputs: tuple[Any, ...] | dict[str, Any]
    if is_kwarg:
        if not isinstance(example_inputs, Mapping):
            raise TypeError(f"is_kwarg=True needs a dict of keyword inputs, got {type(example_inputs).__name__}")
        inputs = {str(k): v for k, v in example_inputs.items()}
    else:
        inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)

    if module is None and isinstance(eager, torch.nn.Module):
        module = eager
    roots: list[torch.nn.Module] = []
    for m in (module, eager, traced):
        if isinstance(m, torch.nn.Module) and all(m is not r for r in roots):
            roots.append(m)

    chosen = choose_dims(inputs, dims, module)

    report = ProbeReport()
    if max_cases <= 0:
        return report

    cuda_devices = cuda_devices_of(inputs, roots)
    prev_grad = torch.is_grad_enabled()
    state: ModuleState | None = None
    with ExitStack() as stack:
        try:
            stack.enter_context(torch.random.fork_rng(devices=cuda_devices))
            stack.enter_context(discard_own_warnings())  # its runs' warnings; other threads' pass
            stack.enter_context(torch.no_grad())
            state = ModuleState(roots, parameters=True)
            g = torch.Generator().manual_seed(seed)
            specs = plan_cases(inputs, chosen, g)[:max_cases]
            varied: dict[str, set[int]] = {}
            for i, spec in enumerate(specs):
                report.cases.append(_run_case(spec, eager, traced, seed + i, cuda_devices, state, tolerance))
                for label, d in spec.varied:
                    varied.setdefault(label, set()).add(d)
            order = [label for label, _, _ in top_level(inputs)]
            report.dims = {label: sorted(varied[label]) for label in order if label in varied}
        finally:
            if state is not None:
                state.restore()
            torch.set_grad_enabled(prev_grad)
    return report


def _run_case(
    spec: CaseSpec,
    eager: Callable[..., Any],
    traced: Callable[..., Any],
    run_seed: int,
    cuda_devices: Sequence[int],
    state: ModuleState,
    tolerance: float,
) -> ProbeCase:
    try:
        inputs = spec.build()
    except Exception as e:  # a tensor subclass or exotic dtype we cannot derive from
        return ProbeCase(
            spec.name, spec.description, [], SKIPPED, message=f"could not derive inputs: {exception_line(e)}"
        )
    case = ProbeCase(spec.name, spec.description, describe_inputs(inputs), AGREE)
    try:
        reseed(run_seed, cuda_devices)
        expected = _call(eager, clone_tensors(inputs))
    except Exception as e:
        case.status = SKIPPED
        case.message = f"the eager function rejects these inputs: {exception_line(e)}"
        return case
    finally:
        state.restore_buffers()
    try:
        reseed(run_seed, cuda_devices)
        actual = _call(traced, clone_tensors(inputs))
    except Exception as e:
        case.status = TRACE_ERROR
        case.message = exception_line(e)
        return case
    finally:
        state.restore_buffers()
    try:
        cmp = _compare_outputs(expected, actual, tolerance)
    except Exception as e:
        case.status = DISAGREE
        case.message = f"outputs could not be compared: {exception_line(e)}"
        return case
    case.max_abs, case.max_rel = cmp.max_abs, cmp.max_rel
    if not cmp.ok:
        case.status = DISAGREE
        case.message = cmp.message
    return case
