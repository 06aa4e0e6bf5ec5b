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
  bigger) and :data:`~.check_cases.MAX_SCALE` times the example's elements: a maximum over that is lowered (halved
  towards the minimum), the label says so, and the maximum itself is offered as a case not run, with its sizes;
- the cost is bounded and shown: the session gives the check a time budget (:func:`check_budget`: a fifth of the
  export's own time, at least :data:`CHECK_MIN_SECONDS`; building the program counts against it). Each derived set
  is estimated before it runs, from the program's arithmetic counted on its graph (:mod:`.check_cost`), scaled by
  how much slower the sets that ran were; the minimum first, then the maximum (lowered to the largest size that
  fits, the maximum offered), then the middle; a set over what is left is offered with its estimated time, and a
  set whose arithmetic is negligible always runs. The user's ``check_inputs`` always run. Each set's seconds are in
  ``run.timings`` (``check[0]``...);
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
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils import _pytree as pytree

from ..check import DEFAULT_TOLERANCE, CheckCase, CheckReport, OutputComparison
from ..compare import compare_outputs
from ..derived import clone_tensors, cuda_devices_of, exception_line, reseed
from ..errors import error_from_exception
from ..graph import Frame
from ..inputs import describe_inputs
from ..module_state import ModuleState
from ..tracer_warnings import discard_own_warnings
from .check_cases import MAX_DERIVED_BYTES, _Case, check_input_set, range_cases
from .check_cost import CaseCost
from .check_guards import guard_location, program_error
from .places import PlaceRecorder

#: the time the sets derived from the ranges may take, as a share of the export's own time, and at least this many
#: seconds (the session's budget: ``check_budget``); the user's ``check_inputs`` are not counted against it
CHECK_TIME_SHARE = 0.2
CHECK_MIN_SECONDS = 0.3


def check_budget(export_seconds: float) -> float:
    """Seconds the derived sets of an export's check may take: a share of the export's time, or a floor."""
    return max(CHECK_MIN_SECONDS, CHECK_TIME_SHARE * export_seconds)


# -- running ----------------------------------------------------------------------------------------------------------
def _tensors(out: Any) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


def _describe(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    return describe_inputs(args) + (describe_inputs(kwargs) if kwargs else [])


@dataclass
class _Checking:
    """What every case of one check runs with."""

    program: Callable[..., Any]
    eager: Callable[..., Any]
    ep: torch.export.ExportedProgram
    state: ModuleState
    cuda_devices: Sequence[int]
    tolerance: float
    caller: Frame | None
    places: PlaceRecorder | None


def _run_case(index: int, case: _Case, seed: int, c: _Checking) -> CheckCase:
    inputs = case.inputs if case.inputs is not None else _describe(case.args, case.kwargs)
    result = CheckCase(index=index, method="forward", label=case.label, inputs=inputs)
    if case.offered:  # the size would cost many times the example: offered, not run (see :func:`_offer`)
        result.skipped = f"offered, not run: {case.offered}"
        return result
    try:
        reseed(seed, c.cuda_devices)
        expected = c.eager(*clone_tensors(case.args), **clone_tensors(case.kwargs))
    except Exception as e:
        if case.derived:  # the code does not take this size: not a valid input, so nothing to check
            result.skipped = f"the Python code rejects it ({exception_line(e)})"
            result.label = f"{case.label}: skipped, {result.skipped}"
            return result
        result.exception = error_from_exception(e, phase="check")
        result.exception.message = f"running the Python code on these inputs raised: {result.exception.message}"
        return result
    finally:
        c.state.restore_buffers()
    try:
        reseed(seed, c.cuda_devices)
        actual = c.program(*clone_tensors(case.args), **clone_tensors(case.kwargs))
    except Exception as e:
        result.exception = program_error(e, c.ep, c.caller, c.places)
        return result
    finally:
        c.state.restore_buffers()
    got, want = _tensors(actual), _tensors(expected)
    result.outputs = compare_outputs(got, want, "python", c.tolerance)
    if len(got) != len(want):
        result.outputs.append(
            OutputComparison(
                index=min(len(got), len(want)),
                against="python",
                ok=False,
                rtol=c.tolerance,
                message=f"the exported program returns {len(got)} tensors, the Python code {len(want)}",
            )
        )
    return result


def _priority(case: _Case) -> int:
    """The order cases are run in under a time budget: the user's sets, each range's minimum (its cost measured),
    its maximum (lowered to fit when it must), the middle values, what is offered."""
    if case.offered:
        return 4
    return {"": 0, "min": 1, "max": 2, "mid": 3}.get(case.tag if case.derived else "", 0)


def _run_all(
    report: CheckReport,
    cases: list[_Case],
    c: _Checking,
    seed: int,
    budget: float | None,
    cost: CaseCost | None,
    spent: float,
) -> tuple[list[_Case], list[float]]:
    """Run the cases into ``report`` (in their order; each case's seconds returned beside it). Under a ``budget``
    the cases derived from the ranges are run by :func:`_priority` while it lasts, each one's time estimated before
    it runs (:class:`~.check_cost.CaseCost`): a maximum that would overrun it is lowered to a size that fits, the
    maximum itself offered; another case that would is offered, not run. The user's sets always run, and so does a
    case whose work is negligible. ``spent``: what building the program took, counted against the budget."""
    results: dict[int, tuple[_Case, CheckCase, float]] = {}
    extra: list[_Case] = []
    for i in sorted(range(len(cases)), key=lambda k: _priority(cases[k])):
        case = cases[i]
        if cost is not None and budget is not None and case.derived and not case.offered:
            size = case.size()
            if not cost.cheap(size) and spent + cost.of(size) > budget:
                why = f"over the check's time budget ({budget:.1f} s)"
                fitted = _fitted(case, cost, budget - spent)
                if fitted is not None:  # the maximum, lowered to fit; the maximum itself offered (once)
                    if "lowered from" not in case.label:
                        offered = dataclasses.replace(case, offered=why, args=(), kwargs={})
                        offered.inputs, offered.elements = _sizes(case), size
                        extra.append(offered)
                    case = cases[i] = fitted
                else:
                    case.inputs, case.elements, case.offered = _sizes(case), size, why
        t0 = time.perf_counter()
        result = _run_case(i, case, seed + i, c)
        results[i] = (case, result, time.perf_counter() - t0)
        spent += results[i][2]
        if cost is not None and not case.offered and not result.skipped:
            cost.ran(case.size(), results[i][2])
    for case in extra:
        i = len(cases)
        cases.append(case)
        results[i] = (case, _run_case(i, case, seed + i, c), 0.0)
    report.cases = [results[i][1] for i in range(len(cases))]
    return cases, [results[i][2] for i in range(len(cases))]


def _none_affordable(cases: list[_Case], cost: CaseCost, budget: float) -> bool:
    """Whether no case would run under the budget: all derived from the ranges, none cheap, none fitting."""
    return all(c.derived and (c.offered or (not cost.cheap(c.size()) and cost.of(c.size()) > budget)) for c in cases)


def _not_built(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("the exported program was not built: every check case was offered, none run")


def _fitted(case: _Case, cost: CaseCost, left: float) -> _Case | None:
    """The range's maximum made again at the largest size (halving towards the minimum) whose estimated time fits
    in what is ``left`` of the budget; None when none does (or the case cannot be made again)."""
    if case.shrink is None:
        return None
    value = case.value
    while value > case.low:
        value = max(case.low, value // 2)
        smaller = case.shrink(value)
        if cost.of(smaller.size()) <= left:
            return smaller
    return None


def _sizes(case: _Case) -> list[str]:
    return _describe(case.args, case.kwargs)


def _elements(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    return sum(t.numel() for t in _tensors((args, kwargs)))


def _offer(report: CheckReport, cases: list[_Case], seconds: list[float], cost: CaseCost | None) -> None:
    """Each offered case's estimated time (:class:`~.check_cost.CaseCost` under a budget, else the slowest rate per
    element of the cases that ran, times its elements) and how to check it: ``check_inputs`` with inputs of its
    sizes."""
    rates = [
        t / max(1, _elements(case.args, case.kwargs))
        for case, t, result in zip(cases, seconds, report.cases, strict=True)
        if not case.offered and not result.skipped
    ]
    for case, result in zip(cases, report.cases, strict=True):
        if not case.offered:
            continue
        seconds_needed = (
            cost.of(case.elements) if cost is not None and cost.flops else max(rates) * case.elements if rates else None
        )
        estimate = f", about {seconds_needed:.1f} s at the speed of the sizes checked" if seconds_needed else ""
        sizes = ", ".join(case.inputs or [])
        result.skipped = (
            f"offered, not run: {case.offered}{estimate}; to check it, pass check_inputs with inputs of these sizes "
            f"({sizes})"
        )
        result.label = f"{case.label}: {result.skipped}"


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
    places: PlaceRecorder | None = None,
    timings: dict[str, float] | None = None,
    budget: float | None = None,
) -> CheckReport:
    """Run ``ep.module()`` and ``eager`` on each ``check_inputs`` set (see :func:`check_input_set`) and, with
    ``ranges``, on inputs at the minimum, middle and maximum of each declared range; one :class:`CheckCase` each
    (see the module docstring). ``eager``'s module (when it is one) is left as found. Never raises for what the
    user's code or the program does: that is a case's exception. ``caller`` is the line a failure with no line of
    its own is put at; ``on_python_run`` is called before each run of ``eager``; ``places`` say where the program's
    guards were made (:mod:`.places`); ``timings`` gets each case's seconds (``check[0]``...). With a ``budget``
    (seconds), the sets derived from the ranges are run within it (:func:`_run_all`)."""
    args = example_args if isinstance(example_args, tuple) else (example_args,)
    kwargs = dict(example_kwargs or {})
    report = CheckReport(tolerance=tolerance)
    cases = [_Case(f"check_inputs[{i}]", *check_input_set(entry)) for i, entry in enumerate(check_inputs or [])]
    if ranges:
        try:
            cases += range_cases(ep, args, kwargs, torch.Generator().manual_seed(seed))
        except Exception:  # a range or size torch spells in a way not foreseen: check the given sets only
            pass
    if not cases:  # a static export and no check inputs: nothing to run (ep.module() alone costs 50-100 ms)
        return report
    cost = CaseCost(ep, (args, kwargs)) if budget is not None else None
    t0 = time.perf_counter()
    if cost is not None and budget is not None and _none_affordable(cases, cost, budget):
        program: Callable[..., Any] = _not_built  # every case is offered: the program is not even built
    else:
        program = ep.module()  # torch's unlifting: 50 ms for an MLP, 0.4 s for a ResNet-18, counted in the budget
    setup = time.perf_counter() - t0
    roots = [m for m in (eager, program) if isinstance(m, torch.nn.Module)]
    cuda_devices = cuda_devices_of((args, kwargs), roots)
    grad_enabled = torch.is_grad_enabled()
    state = ModuleState(roots)

    def counted(*a: Any, **k: Any) -> Any:
        if on_python_run is not None:
            on_python_run()
        return eager(*a, **k)

    checking = _Checking(program, counted, ep, state, cuda_devices, tolerance, caller, places)
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(torch.random.fork_rng(devices=cuda_devices))
            stack.enter_context(discard_own_warnings())  # its runs' warnings; other threads' pass
            stack.enter_context(torch.no_grad())
            cases, seconds = _run_all(report, cases, checking, seed, budget, cost, setup)
            for i, (case, t) in enumerate(zip(cases, seconds, strict=True)):
                if timings is not None and not case.offered:
                    timings[f"check[{i}]"] = t
            _offer(report, cases, seconds, cost)
    finally:
        state.restore()
        torch.set_grad_enabled(grad_enabled)
    return report


__all__ = [
    "CHECK_MIN_SECONDS",
    "CHECK_TIME_SHARE",
    "MAX_DERIVED_BYTES",
    "check_budget",
    "check_export",
    "check_input_set",
    "guard_location",
    "program_error",
    "range_cases",
]
