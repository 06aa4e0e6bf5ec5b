"""Dynamo is process-wide state; a run must leave it as the user had it.

What ``torch.compile`` keeps between calls, and what this module does about each for a run:

- **compiled code, on the code objects** (cache entries, and "skip this function" marks): the run compiles a *copy*
  of the model's ``forward`` (or of the function) (:func:`fresh_entry`), so nothing the user compiled before is
  looked up for it, and a function the user's earlier ``torch.compile`` marked to skip (a break in a loop) is
  compiled again and its breaks reported. Functions it calls are the user's own code objects: after the run, the
  entries the run added are taken off (:meth:`DynamoState.restore`): a code object dynamo first met in the run is
  reset as it was (none), on one the user had compiled before the run's entries are invalidated (torch keeps them
  in its list, dead: they never match again). Where torch can, the run's entries live in a recompile region of
  their own (``isolate_recompiles``, torch 2.13), so they never count against the user's recompile limit.
- **what dynamo learned of sizes** (automatic dynamic shapes: a dim seen with two sizes is compiled dynamic from
  then on, kept per function by file, line and name in ``torch._dynamo.pgo``): the run starts from nothing learned,
  so the user's earlier calls do not hide its recompilations, and the user's state is put back after, so the run
  teaches the user's later compiles nothing.
- **counters** (``torch._dynamo.utils.counters``) and the list of graph-break reasons: put back as they were.
- **the graph-break log's duplicate check** (a break torch has reported once is reported again without its stack):
  emptied for the run, so every break comes with its stack, and put back.
- **config** (``torch._dynamo.config``): never changed.
- **loggers**: torch's loggers print to the user's stderr through their own handlers; for the run their records go
  to a collector instead, as every back end's capture takes them (:mod:`..torch_logs`), the graph-break log switched
  on (:func:`captured_dynamo_logs`), and every logger's level, handlers and ``propagate`` put back after (the
  ``TORCH_LOGS`` settings are never touched).
"""

from __future__ import annotations

import collections
import contextlib
import copy
import logging
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch

from ..torch_logs import LogCollector, captured_torch_logs


class DynamoLogCollector(LogCollector):
    """Keeps torch's log records during a run: the graph-break records as they are (:attr:`breaks`, with the call
    they came in), the warnings (:attr:`warnings`: the recompile limit's), and every record's text."""

    def __init__(self) -> None:
        super().__init__()
        #: ``(call, message)`` of each graph-break record
        self.breaks: list[tuple[int, str]] = []
        #: ``(call, message)`` of each warning (the recompile limit's)
        self.warnings: list[tuple[int, str]] = []
        self.call = 0

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not format
            message = str(record.msg)
        if record.name.endswith(".__graph_breaks"):
            self.breaks.append((self.call, message))
        elif record.levelno >= logging.WARNING:
            self.warnings.append((self.call, message))
        super().emit(record)


def _graph_break_loggers() -> list[logging.Logger]:
    return [
        logging.getLogger(name)
        for name, logger in list(logging.Logger.manager.loggerDict.items())
        if name.endswith(".__graph_breaks") and isinstance(logger, logging.Logger)
    ]


@contextlib.contextmanager
def captured_dynamo_logs() -> Iterator[DynamoLogCollector]:
    """torch's log records (and what it prints to stderr) go to the yielded collector for the block, as every back
    end's capture takes them (:func:`~..torch_logs.captured_torch_logs`), and the graph-break log is on for it: its
    loggers' handlers, level, ``propagate`` and ``disabled`` are put back on every exit path."""
    collector = DynamoLogCollector()
    breaks = _graph_break_loggers()
    saved = [(lg, lg.handlers, lg.level, lg.propagate, lg.disabled) for lg in breaks]
    with captured_torch_logs() as shared:
        taken = [
            lg
            for lg in list(logging.Logger.manager.loggerDict.values())
            if isinstance(lg, logging.Logger) and shared in lg.handlers
        ]
        try:
            for lg in taken:
                lg.handlers = [collector]  # the shared collector keeps only what is printed to stderr
            for lg in breaks:
                lg.handlers = [collector]
                lg.setLevel(logging.DEBUG)
                lg.propagate = False
                lg.disabled = False
            yield collector
        finally:
            for lg, handlers, level, propagate, disabled in saved:
                lg.handlers = handlers
                lg.setLevel(level)
                lg.propagate = propagate
                lg.disabled = disabled
    collector.lines.extend(shared.lines)


# -- the code objects ----------------------------------------------------------------------------------------------
def _fresh_function(fn: types.FunctionType) -> types.FunctionType:
    """``fn`` with a copy of its code object: the same function to Python, a new one to dynamo's caches."""
    fresh = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    fresh.__kwdefaults__ = fn.__kwdefaults__
    fresh.__qualname__ = fn.__qualname__
    fresh.__module__ = fn.__module__
    fresh.__doc__ = fn.__doc__
    fresh.__dict__.update(fn.__dict__)
    return fresh


@contextlib.contextmanager
def fresh_entry(model: Any) -> Iterator[tuple[Any, types.CodeType | None]]:
    """What to compile so that the run's top function is a code object of its own: a module whose ``forward`` (a
    copy, set on the instance for the block and taken off after) or a copy of the function; with that code object
    (None where there is nothing to copy: a callable object, a builtin)."""
    if isinstance(model, torch.nn.Module):
        own = vars(model).get("forward", None)
        forward = own if own is not None else type(model).forward
        fn = getattr(forward, "__func__", forward)
        if not isinstance(fn, types.FunctionType):
            yield model, None
            return
        fresh = _fresh_function(fn)
        had_own = "forward" in vars(model)
        model.forward = types.MethodType(fresh, model)
        try:
            yield model, fresh.__code__
        finally:
            if had_own:
                vars(model)["forward"] = own
            else:
                with contextlib.suppress(AttributeError):
                    del model.forward
        return
    if isinstance(model, types.FunctionType):
        fresh = _fresh_function(model)
        yield fresh, fresh.__code__
        return
    yield model, None


def _cache_entries(code: types.CodeType) -> list[Any]:
    getter = getattr(torch._C._dynamo.eval_frame, "_debug_get_cache_entry_list", None)
    if getter is None:
        return []
    try:
        return list(getter(code))
    except Exception:  # a torch whose entries are not listed this way
        return []


def optimize_options() -> dict[str, Any]:
    """What ``torch._dynamo.optimize`` takes beyond torch.compile's options for a run: its own recompile region
    where this torch has them."""
    import inspect

    from torch._dynamo import eval_frame

    target = getattr(eval_frame, "_optimize", None)
    try:
        parameters = inspect.signature(target).parameters if target is not None else {}
    except (TypeError, ValueError):
        parameters = {}
    return {"isolate_recompiles": True} if "isolate_recompiles" in parameters else {}


class DynamoState:
    """Dynamo's process-wide state a run changes, saved when made and put back by :meth:`restore`."""

    def __init__(self) -> None:
        from torch._dynamo import convert_frame, utils

        self._input_codes = getattr(convert_frame, "input_codes", None)
        self._seen_before: set[int] = set(getattr(self._input_codes, "seen_ids", ()) or ())
        self._counters = {k: collections.Counter(v) for k, v in utils.counters.items()}
        self._reasons = len(getattr(utils, "graph_break_reasons", []))
        checker = getattr(utils, "graph_break_dup_warning_checker", None)
        self._checker_set = copy.copy(getattr(checker, "set", None))
        if checker is not None and hasattr(checker, "reset"):
            checker.reset()  # every break of the run reported with its stack
        self._pgo = _pgo_module()
        self._learned = {name: getattr(self._pgo, name) for name in _PGO_STATE if hasattr(self._pgo, name)}
        for name in ("_CODE_STATE", "_INIT_CODE_STATE"):
            if name in self._learned:
                setattr(self._pgo, name, None)  # the run learns sizes from nothing
        #: what the run could not put back, in words (a torch without the API it uses)
        self.notes: list[str] = []

    def codes_seen(self) -> list[types.CodeType]:
        """Every code object dynamo has met, the run's included."""
        seen = getattr(self._input_codes, "seen", None) or []
        return [code for ref in list(seen) if (code := ref()) is not None]

    def restore(self, backend: Callable[..., Any], fresh: types.CodeType | None) -> None:
        """Take the run's compiled code off the code objects it touched and put counters, the reasons list and the
        duplicate check back. ``backend`` is the callable the run compiled with (its cache entries are the ones
        holding it); ``fresh`` the run's copy of the top function's code."""
        from torch._dynamo import utils

        reset_code: Callable[[types.CodeType], None] | None = getattr(torch._C._dynamo.eval_frame, "reset_code", None)
        new_codes: list[types.CodeType] = []
        kept_entries = 0
        for code in self.codes_seen():
            ours = [e for e in _cache_entries(code) if getattr(e, "backend", None) is backend]
            is_new = id(code) not in self._seen_before
            if is_new or code is fresh:
                new_codes.append(code)
                if reset_code is not None:
                    reset_code(code)
                continue
            for entry in ours:
                if not _invalidate(entry):
                    kept_entries += 1
        if kept_entries:
            self.notes.append(
                f"torch {torch.__version__} cannot take a cache entry off a code object: {kept_entries} entries of "
                "this run stay on functions compiled before it (they never run for another back end)"
            )
        self._forget(new_codes, backend)
        utils.counters.clear()
        for key, counter in self._counters.items():
            utils.counters[key].update(counter)
        reasons = getattr(utils, "graph_break_reasons", None)
        if isinstance(reasons, list):
            del reasons[self._reasons :]
        checker = getattr(utils, "graph_break_dup_warning_checker", None)
        if checker is not None and self._checker_set is not None:
            checker.set = self._checker_set
        for name, value in self._learned.items():
            setattr(self._pgo, name, value)

    @staticmethod
    def _forget(codes: list[types.CodeType], backend: Callable[..., Any]) -> None:
        """Drop the run's code objects from dynamo's tables keyed by code (resume functions, guard failures) and
        its back end from the table of back ends."""
        from torch._dynamo import eval_frame, resume_execution, utils

        cache = getattr(getattr(resume_execution, "ContinueExecutionCache", None), "cache", None)
        metadata = getattr(getattr(resume_execution, "ContinueExecutionCache", None), "generated_code_metadata", None)
        for table in (cache, metadata, getattr(utils, "orig_code_map", None)):
            for code in codes:
                remove = getattr(table, "_remove_id", None)
                if callable(remove):
                    remove(id(code))
        failures = getattr(utils, "guard_failures", None)
        if isinstance(failures, dict):
            for code in codes:
                failures.pop(code, None)
        backends = getattr(eval_frame, "cached_backends", None)
        if isinstance(backends, dict):
            backends.pop(id(backend), None)


#: ``torch._dynamo.pgo`` 's module state: what it learned of each function's sizes, and what it logged of it
_PGO_STATE = ("_CODE_STATE", "_INIT_CODE_STATE", "_LOGGED_DYNAMIC_ALLOWLIST", "_KNOWN_DYNAMIC_SOURCES")


def _pgo_module() -> Any:
    try:
        from torch._dynamo import pgo
    except ImportError:  # a torch that keeps what it learned of sizes elsewhere (2.4: on the code object's state)
        return None
    return pgo


def _invalidate(entry: Any) -> bool:
    """Make one cache entry never match again (torch's own way, when the object it guards on dies)."""
    manager = getattr(entry, "guard_manager", None)
    extra = getattr(manager, "extra_state", None)
    try:
        from torch._dynamo.guards import DeletedGuardManagerWrapper

        if extra is None:
            return False
        extra.invalidate(entry, DeletedGuardManagerWrapper("a jupyter-tracejit run compiled it; the run is over"))
        return True
    except Exception:  # a torch without this API
        return False


def recompile_limit() -> int:
    """torch's limit of compilations per function (``recompile_limit``; ``cache_size_limit`` before 2.6)."""
    config = torch._dynamo.config
    for name in ("recompile_limit", "cache_size_limit"):
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    return 0


__all__ = [
    "DynamoLogCollector",
    "DynamoState",
    "captured_dynamo_logs",
    "fresh_entry",
    "optimize_options",
    "recompile_limit",
]
