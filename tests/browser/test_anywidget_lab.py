"""The anywidget explorer (``AnyTraceExplorer``) in JupyterLab: the same module marimo gets, rendered by
anywidget's own JupyterLab front end beside our extension, following JupyterLab's theme.

``tj.explore`` returns the ipywidgets ``TraceExplorer`` in JupyterLab (test_smoke.py, test_explorer.py) unless
``JUPYTER_TRACEJIT_WIDGET=anywidget`` says otherwise, as the kernel here does: this checks the override end to end
and that the one ES module also works here, with nothing fetched from outside the server.
"""

from __future__ import annotations

import pytest

pytest.importorskip("anywidget")

from jupyter_tracejit.widgets.anyexplorer import ESM_FILE

from .helpers import foreign_requests, record_requests

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not ESM_FILE.exists(), reason="npm run build:anywidget has not run"),
]

CELL = """\
import os
import torch
import jupyter_tracejit as tj
from jupyter_tracejit.widgets import AnyTraceExplorer

os.environ["JUPYTER_TRACEJIT_WIDGET"] = "anywidget"
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
w = tj.explore(tj.trace(model, (torch.randn(2, 3),)))
assert isinstance(w, AnyTraceExplorer), type(w)
w
"""


def test_anywidget_explorer_renders_and_retraces_in_jupyterlab(lab):
    requests = record_requests(lab.page)
    lab.write_notebook("any.ipynb", [CELL])
    lab.open_notebook("any.ipynb")
    lab.run_cell(0)
    explorer = lab.outputs(0).locator(".jp-TraceExplorer-root").first
    explorer.locator(".jp-TraceExplorer-canvas svg").wait_for(timeout=60_000)
    # JupyterLab's own theme: the widget does not bring its palette here
    assert lab.page.locator(".jp-TraceExplorer-anyTheme").count() == 0
    # Graphviz ran in a worker started from the module's own (Blob) URL
    assert explorer.evaluate("root => root.parentElement.tracejitLayoutMode()") == "worker"
    explorer.locator(".jp-TraceExplorer-canvas g.node.kind-aten-relu").first.click()
    explorer.locator(".jp-TraceExplorer-inspector .jp-TraceExplorer-nodeKind", has_text="aten::relu").wait_for()
    explorer.locator('input[data-option="check_trace"]').uncheck()
    explorer.locator(".jp-TraceExplorer-summary", has_text="not checked").wait_for(timeout=60_000)
    assert explorer.locator(".jp-TraceExplorer-history select option").count() == 2
    lab.screenshot_themes("anywidget-lab", explorer)
    assert not foreign_requests(requests, lab.server.url), foreign_requests(requests, lab.server.url)
