"""The explorer's options bar and history entries, as data: which keys the bar of a back end has, whether a value
the front end sends is allowed, the options a run was made with, and what the history lists per run."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.export.options import EXPORT_LIVE, EXPORT_SPECS
from ..core.inputs import describe_inputs
from ..core.options import OptionSpec
from ..core.run import TraceRun
from ..core.torchscript.options import LIVE, SPECS
from .retrace import Scheduler, loop_scheduler

#: in the ``options`` trait, which of the request's check input sets are on (one bool per set) stands where
#: ``check_inputs`` stands in TraceOptions: the explorer toggles sets, it cannot make new ones
CHECK_INPUTS_ENABLED = "check_inputs_enabled"
#: the keys of the ``options`` trait, in the options bar's order
OPTION_KEYS = tuple(CHECK_INPUTS_ENABLED if name == "check_inputs" else name for name in LIVE)
#: the keys of the ``options`` trait of an explorer on an export run (core/export/options.py ``EXPORT_LIVE``):
#: dynamic_shapes and check_inputs are shown read-only, a re-export keeps the request's
EXPORT_OPTION_KEYS = EXPORT_LIVE


@dataclass(frozen=True)
class Bar:
    """The options bar of one back end: its keys (in order) and the one definition of each (its spec table)."""

    backend: str
    keys: tuple[str, ...]
    specs: Mapping[str, OptionSpec]


TRACE_BAR = Bar("trace", OPTION_KEYS, SPECS)
EXPORT_BAR = Bar("export", EXPORT_OPTION_KEYS, EXPORT_SPECS)


def bar_of(run: TraceRun | None) -> Bar:
    return EXPORT_BAR if run is not None and run.backend == "export" else TRACE_BAR


def option_problem(key: str, value: Any, n_check_inputs: int, bar: Bar = TRACE_BAR) -> str | None:
    """Why ``value`` is not allowed for option ``key`` (names the key, the value and what is allowed)."""
    if key not in bar.keys:
        what = "export option" if bar.backend == "export" else "option"
        return f"unknown {what} {key!r} (value {value!r}); the options are: {', '.join(sorted(bar.keys))}"
    if key == CHECK_INPUTS_ENABLED:
        if isinstance(value, list) and len(value) == n_check_inputs and all(isinstance(v, bool) for v in value):
            return None
        return (
            f"option {key!r} must be a list of {n_check_inputs} true/false value(s), one per check input "
            f"set of the traced request (which sets to check with), got {value!r}"
        )
    problem = bar.specs[key].problem(value)
    if problem is None:
        return None
    return f"option {key!r} must be {problem.expects}, got {value!r}; {problem.hint}"


def normalized(options: dict[str, Any]) -> dict[str, Any]:
    out = dict(options)
    if "check_tolerance" in out:
        out["check_tolerance"] = float(out["check_tolerance"])
    if CHECK_INPUTS_ENABLED in out:
        out[CHECK_INPUTS_ENABLED] = list(out[CHECK_INPUTS_ENABLED])
    return out


def initial_options(source: dict[str, Any], n_check_inputs: int, bar: Bar = TRACE_BAR) -> dict[str, Any]:
    """The explorer's options from a request's (or a saved run's) options; a value we cannot offer falls back
    to the default, so a run traced with bad arguments can still be explored and fixed."""
    options: dict[str, Any] = {}
    for key in bar.keys:
        if key == CHECK_INPUTS_ENABLED:
            options[key] = [True] * n_check_inputs
        elif key in source and option_problem(key, source[key], n_check_inputs, bar) is None:
            options[key] = source[key]
        else:
            options[key] = bar.specs[key].default
    return normalized(options)


def default_options(n_check_inputs: int = 0) -> dict[str, Any]:
    """The ``options`` trait of an explorer whose request says nothing: every option at its default."""
    return initial_options({}, n_check_inputs)


def check_input_labels(run: TraceRun | None) -> tuple[list[Any], list[str]]:
    """The request's live check input sets (empty without a request) and one label per available set."""
    if run is None:
        return [], []
    request = run.request
    if request is not None:
        sets = request.options.check_inputs
        if not isinstance(sets, (list, tuple)):
            return [], []
        return list(sets), [f"check_inputs[{i}]: {', '.join(describe_inputs(c))}" for i, c in enumerate(sets)]
    # a run loaded from JSON keeps only the descriptions: enough to label, not to re-trace
    described = run.options.get("check_inputs")
    if not isinstance(described, list):
        return [], []
    labels = [
        f"check_inputs[{i}]: {', '.join(map(str, d)) if isinstance(d, list) else d}" for i, d in enumerate(described)
    ]
    return [], labels


def history_entry(run: TraceRun, options: dict[str, Any]) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "summary": run.summary(),
        "ok": run.ok,
        "verdict": run.verdict.label,
        "created": run.created,
        "options": run.options,
        "explorer_options": options,
    }


def divergence_count(run: TraceRun | None) -> int:
    if run is None or run.check is None:
        return 0
    return sum(len(c.diff.divergences) for c in run.check.cases if c.diff is not None)


def default_method(run: TraceRun | None) -> str:
    if run is None or not run.graphs:
        return ""
    return "forward" if "forward" in run.graphs else next(iter(run.graphs))


def main_loop_scheduler() -> Scheduler | None:
    """Re-traces on the loop of the thread that made the explorer (a cell: the kernel's main thread), even when
    the front end's messages arrive on a subshell's thread (see :func:`.retrace.loop_scheduler`)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None  # no loop (a script): the Retracer's default runs the work at once
    return loop_scheduler(loop) if threading.current_thread() is threading.main_thread() else None


__all__ = [
    "CHECK_INPUTS_ENABLED",
    "EXPORT_BAR",
    "EXPORT_OPTION_KEYS",
    "OPTION_KEYS",
    "TRACE_BAR",
    "Bar",
    "bar_of",
    "check_input_labels",
    "default_method",
    "default_options",
    "divergence_count",
    "history_entry",
    "initial_options",
    "main_loop_scheduler",
    "normalized",
    "option_problem",
]
