"""What ``%trace`` shows: the live explorer or the kernel-free view, the placeholder that follows the phases of a
trace until the explorer replaces it (or says it was cancelled), and the run variable that follows the explorer."""

from __future__ import annotations

import re
import time
from typing import Any

import jsonschema
import pytest
import torch
from IPython.core.interactiveshell import InteractiveShell

import jupyter_tracejit as tj
from jupyter_tracejit import magic, magic_output
from jupyter_tracejit.widgets import PROGRESS_MIME, RUN_MIME, WIDGET_ENV, TraceExplorer, run_from_mime
from jupyter_tracejit.widgets.anyexplorer import AnyTraceExplorer

from .magic_shell import (
    WIDGET_MIME,
    relu_fn,
    run_magic,
    traced,
)
from .widgets.test_explorer_schema import schema


def test_static_displays_the_kernel_free_view(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    _, shown = run_magic(ip, monkeypatch, "--static -o run relu_fn(x)")
    run = ip.user_ns["run"]
    *_placeholder, bundle = shown.bundles
    expected = {RUN_MIME, "text/plain"} | ({"text/html"} if callable(getattr(run, "to_html", None)) else set())
    assert set(bundle) == expected
    assert isinstance(bundle[RUN_MIME], str) and run_from_mime(bundle[RUN_MIME]) == run.to_json()
    assert bundle["text/plain"] == run.summary()
    assert not any(isinstance(o, TraceExplorer) for o in shown.objects)
    assert shown.stdout == shown.stderr == ""


def test_where_explorers_are_anywidgets_trace_shows_one_and_none_of_our_mime_types(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    # VS Code, Colab, marimo: our JupyterLab renderers are not on the page, so %trace sends nothing only they read
    monkeypatch.setenv(WIDGET_ENV, "anywidget")
    _, shown = run_magic(ip, monkeypatch, "relu_fn(x)")
    run = ip.user_ns["_trace"]
    (explorer,) = shown.final
    assert isinstance(explorer, AnyTraceExplorer) and explorer.run is run
    placeholder, checking, bundle = shown.bundles  # the phases, in text: the host's own renderer shows them
    assert set(placeholder) == {"text/plain"} and placeholder["text/plain"].startswith("tracing relu_fn…")
    assert set(checking) == {"text/plain"} and checking["text/plain"].startswith("checking relu_fn…")
    assert WIDGET_MIME in bundle and RUN_MIME not in bundle and bundle["text/plain"] == run.summary()
    _, shown = run_magic(ip, monkeypatch, "--static relu_fn(x)")
    *_placeholder, bundle = shown.bundles
    assert RUN_MIME not in bundle and bundle["text/plain"] == ip.user_ns["_trace"].summary()


def test_a_placeholder_says_what_is_traced_until_the_explorer_replaces_it(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = time.time()
    _, shown = run_magic(ip, monkeypatch, "--no-check --eval net(x)")
    (display_id, update), (same_id, replaces) = shown.displays
    assert display_id and same_id == display_id and (update, replaces) == (False, True)
    placeholder, explorer = shown.bundles
    progress = placeholder[PROGRESS_MIME]
    assert progress["target"] == "Net" and before <= progress["started"] <= time.time()
    assert progress["phase"] == "tracing"
    jsonschema.validate(progress, schema("widgets/explorer.schema.json")["definitions"]["TraceProgress"])
    started = time.strftime("%H:%M:%S", time.localtime(progress["started"]))
    assert placeholder["text/plain"] == f"tracing Net… (started {started})"
    assert WIDGET_MIME in explorer and PROGRESS_MIME not in explorer
    # a module method is named as such
    _, shown = run_magic(ip, monkeypatch, "net.encode(x)")
    assert shown.bundles[0][PROGRESS_MIME]["target"] == "Net.encode"


def test_the_placeholder_follows_the_phases_of_the_trace(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    _, shown = run_magic(ip, monkeypatch, "--probe net(x)")
    *progress, explorer = shown.bundles
    assert [p[PROGRESS_MIME]["phase"] for p in progress] == ["tracing", "checking", "probing"]
    # one placeholder, updated in place, counting from the same start
    (display_id, _), *updates = shown.displays
    assert all(update == (display_id, True) for update in updates)
    assert len({p[PROGRESS_MIME]["started"] for p in progress}) == 1
    assert progress[2]["text/plain"].startswith("probing Net… (started ")
    assert WIDGET_MIME in explorer
    # without the check, no checking phase
    _, shown = run_magic(ip, monkeypatch, "--no-check relu_fn(x)")
    assert [b[PROGRESS_MIME]["phase"] for b in shown.bundles if PROGRESS_MIME in b] == ["tracing"]


def slow_then_interrupted(x: torch.Tensor) -> torch.Tensor:
    """Traced fine, interrupted when the check traces it again (what the cancel button does to a slow model)."""
    if torch.jit.is_tracing() and slow_then_interrupted.traces:
        raise KeyboardInterrupt
    slow_then_interrupted.traces += 1
    return x + 1


slow_then_interrupted.traces = 0  # type: ignore[attr-defined]


def test_a_cancelled_trace_says_so_in_one_line_and_leaves_the_namespace(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    ip.user_ns["slow"] = slow_then_interrupted
    previous = ip.user_ns["_trace"] = object()
    before = set(ip.user_ns)
    slow_then_interrupted.traces = 0  # type: ignore[attr-defined]
    result, shown = run_magic(ip, monkeypatch, "slow(x)")
    assert result is None and shown.usage_error == ""
    assert shown.stdout == shown.stderr == ""  # no traceback
    _placeholder, checking, cancelled = shown.bundles
    assert checking[PROGRESS_MIME]["phase"] == "checking"
    assert cancelled.keys() == {"text/plain"}
    assert re.fullmatch(r"cancelled after \d+\.\d s \(checking slow_then_interrupted\)", cancelled["text/plain"])
    (display_id, _), *updates = shown.displays
    assert updates == [(display_id, True), (display_id, True)]
    assert ip.user_ns["_trace"] is previous and set(ip.user_ns) == before
    # the kernel goes on: the next %trace works
    assert traced(ip, monkeypatch, "relu_fn(x)").ok


def test_an_escape_other_than_an_interrupt_leaves_no_placeholder_counting(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    def exits(*_args: Any) -> None:
        raise SystemExit(3)

    from jupyter_tracejit.core.torchscript import command

    monkeypatch.setattr(command, "_trace", exits)
    shown: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(magic_output, "_display", lambda obj, **kwargs: shown.append((obj, kwargs)))
    previous = ip.user_ns.get("_trace")
    with pytest.raises(SystemExit):
        ip.run_line_magic("trace", "net(x)")
    (placeholder, shown_as), (stopped, replaced_as) = shown
    assert PROGRESS_MIME in placeholder
    assert replaced_as == {"raw": True, "display_id": shown_as["display_id"], "update": True}
    assert re.fullmatch(r"stopped after \d+\.\d s \(tracing Net\)", stopped["text/plain"])
    assert ip.user_ns.get("_trace") is previous


def test_the_run_variable_follows_the_explorer(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    first = traced(ip, monkeypatch, "-o run net(x)", name="run")
    explorer = ip.user_ns["_trace_explorer"]
    assert explorer.run is first
    explorer.options = {"module_mode": "eval"}  # a re-trace (no event loop here: it runs at once)
    second = explorer.run
    assert second is not first and second.options["module_mode"] == "eval"
    assert ip.user_ns["run"] is second
    explorer.show_run(first.run_id)  # a history pick is the run on screen too
    assert ip.user_ns["run"] is first
    # a variable the user reassigned is theirs
    ip.user_ns["run"] = "mine"
    explorer.retrace()
    assert ip.user_ns["run"] == "mine" and explorer.run is not first
    # a newer %trace takes _trace over: the older explorer's re-traces leave it alone
    newer = traced(ip, monkeypatch, "relu_fn(x)")
    older = explorer
    assert ip.user_ns["_trace_explorer"] is not older
    older.retrace()
    assert ip.user_ns["_trace"] is newer


def test_static_bundle_uses_to_html_when_the_run_has_one() -> None:
    run = tj.trace(relu_fn, (torch.randn(3),))
    run.to_html = lambda: "<b>run</b>"  # type: ignore[attr-defined]
    assert magic.static_bundle(run)["text/html"] == "<b>run</b>"
