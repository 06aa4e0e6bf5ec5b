"""AnyTraceExplorer: the anywidget explorer has TraceExplorer's model and anywidget's front end."""

from __future__ import annotations

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.widgets import TraceExplorer
from jupyter_tracejit.widgets.anyexplorer import CSS_FILE, ESM_FILE, AnyTraceExplorer


def _run() -> tj.TraceRun:
    torch.manual_seed(0)
    return tj.trace(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU()), (torch.randn(2, 3),))


def _synced(widget: object) -> set[str]:
    return {name for name in widget.trait_names(sync=True) if not name.startswith("_")}  # type: ignore[attr-defined]


def test_same_synced_traits_as_trace_explorer_and_anywidget_names() -> None:
    run = _run()
    any_w, lab_w = AnyTraceExplorer(run), TraceExplorer(run)
    try:
        assert _synced(any_w) == _synced(lab_w)
        assert any_w.get_state()["run_json"] == lab_w.get_state()["run_json"]
        assert (any_w._model_name, any_w._model_module) == ("AnyModel", "anywidget")
        assert (lab_w._model_name, lab_w._model_module) == ("TraceExplorerModel", "jupyter-tracejit")
        assert any_w.live and any_w.selected_method == "forward"
    finally:
        any_w.close()
        lab_w.close()


@pytest.mark.skipif(not ESM_FILE.exists(), reason="npm run build:anywidget has not run")
def test_front_end_is_the_built_module_and_stylesheet() -> None:
    w = AnyTraceExplorer(_run())
    try:
        assert w._esm == ESM_FILE.read_text(encoding="utf-8")
        assert "export" in w._esm and w._css == CSS_FILE.read_text(encoding="utf-8")
        assert ".jp-TraceExplorer-anyTheme" in w._css
    finally:
        w.close()


def test_output_has_no_kernel_free_copy() -> None:
    # the RUN_MIME copy would make our JupyterLab renderer wait for a TraceExplorerModel that never comes
    w = AnyTraceExplorer(_run())
    try:
        bundle = w._repr_mimebundle_()
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        assert "application/vnd.jupyter.widget-view+json" in data
        assert "application/vnd.jupyter.tracejit+json" not in data
        # the run's summary, not the widget's repr: what a plain IPython terminal prints
        assert data["text/plain"] == w.run.summary()
    finally:
        w.close()
