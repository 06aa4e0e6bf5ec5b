"""The anywidget explorer (``AnyTraceExplorer``) in JupyterLab: the same module marimo gets, rendered by
anywidget's own JupyterLab front end beside our extension, following JupyterLab's theme.

``tj.explore`` still returns the ipywidgets ``TraceExplorer`` in JupyterLab (test_smoke.py, test_explorer.py);
this checks that the one ES module also works here, with nothing fetched from outside the server.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

pytest.importorskip("anywidget")

from jupyter_tracejit.widgets.anyexplorer import ESM_FILE

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not ESM_FILE.exists(), reason="npm run build:anywidget has not run"),
]

CELL = """\
import torch
import jupyter_tracejit as tj
from jupyter_tracejit.widgets import AnyTraceExplorer

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
w = AnyTraceExplorer(tj.trace(model, (torch.randn(2, 3),)))
w
"""


def test_anywidget_explorer_renders_and_retraces_in_jupyterlab(lab):
    requests: list[str] = []
    lab.page.on("request", lambda r: requests.append(r.url))
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
    server = urlsplit(lab.server.url).netloc
    foreign = [r for r in requests if urlsplit(r).scheme not in ("data", "blob") and urlsplit(r).netloc != server]
    assert not foreign, foreign
