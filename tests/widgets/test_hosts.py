"""Which explorer each host gets (``uses_anywidget``): the anywidget one where our JupyterLab extension is not on
the page (marimo, Colab, VS Code), the ipywidgets one elsewhere, ``JUPYTER_TRACEJIT_WIDGET`` over both."""

from __future__ import annotations

import sys
import types

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.widgets import RUN_MIME, WIDGET_ENV, TraceExplorer, explore, run_mimebundle, uses_anywidget
from jupyter_tracejit.widgets.anyexplorer import AnyTraceExplorer
from tests.models import LinearReLU

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def run() -> tj.TraceRun:
    torch.manual_seed(0)
    return tj.trace(LinearReLU(), (torch.randn(2, 4),))


@pytest.fixture(autouse=True)
def no_host_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    # the environment variables are cleared for every test (tests/conftest.py); these modules only here
    for name in ("marimo", "google.colab"):
        monkeypatch.delitem(sys.modules, name, raising=False)


def _explorer_type(run: tj.TraceRun) -> type:
    w = explore(run)
    w.close()
    # anywidget makes each instance of its own subclass of AnyTraceExplorer
    return AnyTraceExplorer if isinstance(w, AnyTraceExplorer) else type(w)


def test_jupyterlab_notebook7_and_plain_kernels_get_the_ipywidgets_explorer(run: tj.TraceRun) -> None:
    assert not uses_anywidget()
    assert _explorer_type(run) is TraceExplorer


def test_marimo_gets_the_anywidget_explorer_while_a_notebook_runs(
    run: tj.TraceRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = types.SimpleNamespace(running_in_notebook=lambda: True)
    monkeypatch.setitem(sys.modules, "marimo", fake)
    assert _explorer_type(run) is AnyTraceExplorer
    monkeypatch.setattr(fake, "running_in_notebook", lambda: False)  # marimo imported, but a plain script
    assert _explorer_type(run) is TraceExplorer


def test_colab_gets_the_anywidget_explorer(run: tj.TraceRun, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    assert _explorer_type(run) is AnyTraceExplorer
    monkeypatch.delitem(sys.modules, "google.colab")
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab_20260101-060000_RC00")
    assert _explorer_type(run) is AnyTraceExplorer


def test_a_kernel_vscode_started_gets_the_anywidget_explorer(run: tj.TraceRun, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VSCODE_PID", "4242")
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/me/trace.ipynb")  # VS Code sets it too: it decides nothing
    monkeypatch.delenv("JPY_PARENT_PID", raising=False)
    assert _explorer_type(run) is AnyTraceExplorer


def test_a_jupyter_server_started_from_vscodes_terminal_keeps_the_ipywidgets_explorer(
    run: tj.TraceRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `jupyter lab` typed in VS Code's terminal: the kernel inherits VSCODE_PID, but jupyter_client launched it
    monkeypatch.setenv("VSCODE_PID", "4242")
    monkeypatch.setenv("JPY_PARENT_PID", "777")
    assert _explorer_type(run) is TraceExplorer


@pytest.mark.parametrize("value", ["anywidget", " AnyWidget "])
def test_the_override_picks_anywidget_anywhere(run: tj.TraceRun, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(WIDGET_ENV, value)
    assert _explorer_type(run) is AnyTraceExplorer


def test_the_override_picks_jupyterlab_over_the_detection(run: tj.TraceRun, monkeypatch: pytest.MonkeyPatch) -> None:
    # e.g. VS Code attached to a remote Jupyter server, or a JupyterLab that has anywidget too
    monkeypatch.setenv("VSCODE_PID", "4242")
    monkeypatch.delenv("JPY_PARENT_PID", raising=False)
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setenv(WIDGET_ENV, "jupyterlab")
    assert _explorer_type(run) is TraceExplorer


def test_an_unknown_override_is_an_error_that_names_the_choices(
    run: tj.TraceRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WIDGET_ENV, "ipywidgets")
    with pytest.raises(ValueError, match=r"JUPYTER_TRACEJIT_WIDGET='ipywidgets' .* anywidget or jupyterlab"):
        explore(run)


def test_a_displayed_run_follows_the_same_choice(run: tj.TraceRun, monkeypatch: pytest.MonkeyPatch) -> None:
    lab = run_mimebundle(run)
    assert isinstance(lab, dict) and {WIDGET_VIEW, RUN_MIME, "text/html"} <= lab.keys()
    monkeypatch.setenv("VSCODE_PID", "4242")
    monkeypatch.delenv("JPY_PARENT_PID", raising=False)
    bundle = run_mimebundle(run)
    # anywidget's (data, metadata): in Colab the metadata names the widget manager that renders it
    assert isinstance(bundle, tuple)
    data, _metadata = bundle
    assert WIDGET_VIEW in data and RUN_MIME not in data
    assert data["text/plain"] == run.summary()
