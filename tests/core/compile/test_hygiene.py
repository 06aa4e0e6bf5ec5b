"""Dynamo is process-wide state: a run leaves the user's compiled functions and their caches, torch's config, its
loggers, its counters and the random state as they were, and what the user compiled before does not hide breaks
from the run."""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from typing import Any

import torch
from torch._C._dynamo import eval_frame

from jupyter_tracejit.core.compile.request import compile as tj_compile
from jupyter_tracejit.core.run import TraceRun

from . import models


def run_quietly(model: Any, *args: Any, **options: Any) -> TraceRun:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        return tj_compile(model, args, **options)


def entries(code: Any) -> list[Any]:
    return list(eval_frame._debug_get_cache_entry_list(code))


def counting() -> tuple[list[int], Any]:
    compiled: list[int] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
        compiled.append(1)
        return gm.forward

    return compiled, backend


def test_the_users_compiled_model_keeps_its_cache_and_does_not_recompile() -> None:
    torch._dynamo.reset()
    model = models.InHelper()
    x = torch.randn(3, 4)
    compiled, backend = counting()
    users = torch.compile(model, backend=backend)
    with contextlib.redirect_stdout(io.StringIO()):
        users(x)
    made = len(compiled)
    codes = [models.InHelper.forward.__code__, models.noisy.__code__]
    before = {id(c): [id(e) for e in entries(c)] for c in codes}
    assert made >= 2 and all(before.values())
    run = run_quietly(model, x, calls=[(torch.randn(5, 4),)])
    assert run.compile.graph_breaks and run.compile.recompilations
    # the run's own entries are gone or dead; the user's are the same objects, in the same order
    for code in codes:
        live = [id(e) for e in entries(code) if type(e.guard_manager).__name__ != "DeletedGuardManagerWrapper"]
        assert live == before[id(code)]
    with contextlib.redirect_stdout(io.StringIO()):
        users(x)
    assert len(compiled) == made  # the user's graphs still serve the user's calls
    torch._dynamo.reset()


def test_an_earlier_compile_of_the_model_hides_no_break() -> None:
    torch._dynamo.reset()
    x = torch.randn(3, 4)
    model = models.InLoop()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.compile(model, backend="eager")(x)  # dynamo now skips InLoop.forward for good
    run = run_quietly(model, x)
    assert [b.skipped_frame for b in run.compile.graph_breaks] == ["forward"]
    printing = models.Printing()
    with contextlib.redirect_stdout(io.StringIO()):
        torch.compile(printing, backend="eager")(x)
    again = run_quietly(printing, x)
    assert len(again.compile.graph_breaks) == 1 and len(again.compile.regions) == 2
    torch._dynamo.reset()


def test_a_user_who_hit_the_recompile_limit_still_gets_the_runs_graphs() -> None:
    torch._dynamo.reset()
    model = models.Clean()
    users = torch.compile(model, backend="eager", dynamic=False)
    name = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") else "cache_size_limit"
    with torch._dynamo.config.patch(**{name: 2}), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in (2, 3, 4, 5):
            users(torch.randn(n, 4))
        run = run_quietly(model, torch.randn(6, 4))
    assert len(run.compile.regions) == 1 and run.compile.limit_hit == []
    torch._dynamo.reset()


def _logger_state() -> dict[str, tuple[Any, ...]]:
    return {
        name: (lg.level, lg.handlers, list(lg.handlers), lg.propagate, lg.disabled)
        for name, lg in logging.Logger.manager.loggerDict.items()
        if isinstance(lg, logging.Logger) and name.startswith("torch")
    }


def test_config_loggers_counters_and_random_state_are_left_as_they_were() -> None:
    from torch._dynamo import utils

    model = models.Layers(2)
    x, other = torch.randn(2, 4), torch.randn(3, 4)
    run_quietly(model, x)  # the first run imports and creates what it needs (torch's loggers, among them)
    config = torch._dynamo.config.get_config_copy()
    loggers = _logger_state()
    counters = {k: dict(v) for k, v in utils.counters.items()}
    reasons = len(utils.graph_break_reasons)
    rng = torch.get_rng_state()
    artifacts = set(torch._logging._internal.log_state.artifact_names)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        run = run_quietly(model, x, calls=[(other,)])
    assert run.compile.graph_breaks and run.compile.recompilations
    assert torch._dynamo.config.get_config_copy() == config
    assert _logger_state() == loggers
    assert {k: dict(v) for k, v in utils.counters.items()} == counters
    assert len(utils.graph_break_reasons) == reasons
    assert torch.equal(torch.get_rng_state(), rng)
    assert set(torch._logging._internal.log_state.artifact_names) == artifacts
    assert err.getvalue() == ""  # torch's warnings went to the run's log, not to the user's stderr
    assert "Graph break" in run.compile.log


def test_the_users_graph_break_log_keeps_working() -> None:
    torch._dynamo.reset()
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    torch._logging.set_logs(graph_breaks=True)
    keep = Keep()
    logger = logging.getLogger("torch._dynamo.symbolic_convert.__graph_breaks")
    logger.addHandler(keep)
    try:
        x = torch.randn(3, 4)
        run_quietly(models.Printing(), x)
        assert records == []  # the run's breaks are the run's
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            torch.compile(models.Explicit(), backend="eager")(x)
        assert any("Graph break in user code" in r for r in records)
    finally:
        logger.removeHandler(keep)
        torch._logging.set_logs()
        torch._dynamo.reset()


def test_what_dynamo_learned_of_sizes_is_the_users() -> None:
    torch._dynamo.reset()
    model = models.Clean()
    users = torch.compile(model, backend="eager")
    for n in (3, 5):
        users(torch.randn(n, 4))  # the user's calls taught dynamo that dim 0 of x varies
    run = run_quietly(model, torch.randn(3, 4), calls=[(torch.randn(5, 4),)])
    assert [r.reason for r in run.compile.recompilations] == ["x.size()[0] was 3, now 5"]
    torch._dynamo.reset()
    fresh = models.Clean()
    run_quietly(fresh, torch.randn(3, 4), calls=[(torch.randn(5, 4),)])  # the run sees dim 0 vary
    compiled, backend = counting()
    users = torch.compile(fresh, backend=backend)
    users(torch.randn(7, 4))
    users(torch.randn(9, 4))
    # the user's compile starts static and makes the dim dynamic on its own first change: the run taught it nothing
    assert len(compiled) == 2
    torch._dynamo.reset()


def test_two_runs_say_the_same() -> None:
    model = models.InSubmodule()
    x = torch.randn(3, 4)
    first = run_quietly(model, x, calls=[(torch.randn(5, 4),)])
    second = run_quietly(model, x, calls=[(torch.randn(5, 4),)])
    for a, b in ((first.compile, second.compile),):
        assert [(g.line, g.count, g.gb_code) for g in a.graph_breaks] == [
            (g.line, g.count, g.gb_code) for g in b.graph_breaks
        ]
        assert [(r.graph, r.ops, r.runs) for r in a.regions] == [(r.graph, r.ops, r.runs) for r in b.regions]
        assert [r.reason for r in a.recompilations] == [r.reason for r in b.recompilations]
    # the model's forward is its class's again
    assert "forward" not in vars(model)
