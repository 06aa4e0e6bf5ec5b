"""The explorer's options bar and history entries, as data: which keys the bar of a back end has, whether a value
the front end sends is allowed, the options a run was made with, and what the history lists per run."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.inputs import describe_inputs
from ..core.options import INPUT_SETS_KEY, OptionSpec
from ..core.registry import backend, names
from ..core.run import TraceRun
from .retrace import Scheduler, loop_scheduler

#: in the ``options`` trait, which of the request's check input sets are on (one bool per set) stands where
#: ``check_inputs`` stands in TraceOptions: the explorer toggles sets, it cannot make new ones
CHECK_INPUTS_ENABLED = INPUT_SETS_KEY


@dataclass(frozen=True)
class Bar:
    """The options bar of one back end (its registry row's options table): its keys (in order) and the one
    definition of each."""

    backend: str
    #: the capture, in words (``trace``): "unknown trace option"
    noun: str
    keys: tuple[str, ...]
    specs: Mapping[str, OptionSpec]


@functools.cache
def bar(backend_name: str) -> Bar:
    """The options bar of runs of ``backend_name``: the table's live options, ``check_inputs`` offered as one
    toggle per set of the request (:data:`CHECK_INPUTS_ENABLED`); read-only options are the front end's to show."""
    row = backend(backend_name)
    table = row.table()
    keys = tuple(r["key"] for r in table.bar_rows() if not r.get("read_only"))
    return Bar(row.name, row.noun, keys, table.specs)


def bar_of(run: TraceRun | None) -> Bar:
    """A run's back end's bar; without a run, the first back end's (the registry's order: torch.jit.trace)."""
    return bar(run.backend if run is not None else names()[0])


#: the keys of the ``options`` trait of an explorer on a trace, in the options bar's order
OPTION_KEYS = bar("trace").keys
#: the keys of the ``options`` trait of an explorer on an export run (core/export/options.py ``EXPORT_LIVE``):
#: dynamic_shapes and check_inputs are shown read-only, a re-export keeps the request's
EXPORT_OPTION_KEYS = bar("export").keys


def option_problem(key: str, value: Any, n_check_inputs: int, of: Bar | None = None) -> str | None:
    """Why ``value`` is not allowed for option ``key`` (names the key, the value and what is allowed)."""
    of = of or bar_of(None)
    if key not in of.keys:
        return f"unknown {of.noun} option {key!r} (value {value!r}); the options are: {', '.join(sorted(of.keys))}"
    if key == CHECK_INPUTS_ENABLED:
        if isinstance(value, list) and len(value) == n_check_inputs and all(isinstance(v, bool) for v in value):
            return None
        return (
            f"option {key!r} must be a list of {n_check_inputs} true/false value(s), one per check input "
            f"set of the traced request (which sets to check with), got {value!r}"
        )
    problem = of.specs[key].problem(value)
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


def initial_options(source: dict[str, Any], n_check_inputs: int, of: Bar | None = None) -> dict[str, Any]:
    """The explorer's options from a request's (or a saved run's) options; a value we cannot offer falls back
    to the default, so a run traced with bad arguments can still be explored and fixed."""
    of = of or bar_of(None)
    options: dict[str, Any] = {}
    for key in of.keys:
        if key == CHECK_INPUTS_ENABLED:
            options[key] = [True] * n_check_inputs
        elif key in source and option_problem(key, source[key], n_check_inputs, of) is None:
            options[key] = source[key]
        else:
            options[key] = of.specs[key].default
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
        # a back end whose options have no check input sets (a compiled run's further inputs are its calls) has none
        sets = getattr(request.options, "check_inputs", None)
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
    "EXPORT_OPTION_KEYS",
    "OPTION_KEYS",
    "Bar",
    "bar",
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
