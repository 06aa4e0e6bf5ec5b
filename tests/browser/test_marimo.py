"""The live explorer outside JupyterLab: ``tj.explore(run)`` in a marimo app, rendered by anywidget.

marimo has no JupyterLab extension: ``tj.explore`` returns ``AnyTraceExplorer`` there, whose front end
(``static/explorer.mjs``, ``npm run build:anywidget``) travels over the widget's comm. One app, one server
(``marimo run --headless --no-token`` on 127.0.0.1), driven in Debian's chromium in light and dark. Skipped
without marimo, without chromium, or with the module not built.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_tracejit._dev.browser import SCREENSHOTS, WAIT_MS, record_page_errors

pytest.importorskip("marimo")
pytest.importorskip("anywidget")

from jupyter_tracejit.widgets.anyexplorer import ESM_FILE

from .helpers import foreign_requests, record_requests

pytestmark = pytest.mark.browser

APP = """\
import marimo

app = marimo.App(width="full")


@app.cell
def _():
    import torch
    import jupyter_tracejit as tj

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    run = tj.trace(model, (torch.randn(2, 3),))
    explorer = tj.explore(run)
    explorer
    return


if __name__ == "__main__":
    app.run()
"""

# the user's theme choice "system": the page follows the browser's colour scheme (the context's color_scheme)
PYPROJECT = """\
[tool.marimo.display]
theme = "system"
"""

ROOT = ".jp-TraceExplorer-root"
START_TIMEOUT = 90.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def marimo_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not ESM_FILE.exists():
        pytest.skip(f"{ESM_FILE} is not built: run `npm run build:anywidget`")
    base = tmp_path_factory.mktemp("marimo")
    (base / "app.py").write_text(APP)
    (base / "pyproject.toml").write_text(PYPROJECT)
    port = _free_port()
    log = (base / "marimo.log").open("w")
    env = {**os.environ, "MARIMO_SKIP_UPDATE_CHECK": "1", "HOME": str(base)}
    cmd = [sys.executable, "-m", "marimo", "run", "app.py", "--headless", "--no-token"]
    cmd += ["--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=base, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"marimo exited ({proc.returncode}):\n{(base / 'marimo.log').read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(url, timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(f"marimo did not answer in {START_TIMEOUT:.0f} s")
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        print("marimo log tail:\n" + (base / "marimo.log").read_text()[-2000:])


def _open(browser: Any, url: str, scheme: str) -> tuple[Any, Any, list[str], list[str]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    errors = record_page_errors(page)
    requests = record_requests(page)
    page.goto(url)
    return context, page, errors, requests


def _graph_labels(explorer: Any) -> list[str]:
    return [t.text_content() for t in explorer.locator(".jp-TraceExplorer-canvas svg text").all()]


def test_explorer_renders_inspects_and_retraces_in_marimo(browser: Any, marimo_app: str) -> None:
    context, page, errors, requests = _open(browser, marimo_app, "light")
    try:
        explorer = page.locator(ROOT).first
        explorer.wait_for(timeout=90_000)  # the kernel starts and imports torch first
        explorer.locator(".jp-TraceExplorer-canvas svg").wait_for(timeout=60_000)
        assert "linear" in _graph_labels(explorer) and "relu" in _graph_labels(explorer)
        assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "ok"
        # outside Jupyter the widget brings its own palette, and follows the page's light theme
        host = page.locator(".jp-TraceExplorer-anyTheme").first
        assert host.get_attribute("data-jp-theme-light") == "true"
        # Graphviz ran in a worker that is the module itself, served by marimo (not on the page's main thread)
        assert explorer.evaluate("root => root.parentElement.tracejitLayoutMode()") == "worker"

        # a click on a node: the inspector shows it, the node is selected
        explorer.locator(".jp-TraceExplorer-canvas g.node.kind-aten-relu").first.click()
        inspector = explorer.locator(".jp-TraceExplorer-inspector")
        inspector.locator(".jp-TraceExplorer-nodeKind", has_text="aten::relu").wait_for()
        assert explorer.locator(".jp-TraceExplorer-canvas g.node.selected").count() == 1
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        explorer.screenshot(path=str(SCREENSHOTS / "marimo-explorer-light.png"))

        # an option toggled: the kernel re-traces (status changes), a new run and a new graph come back
        explorer.locator(".jp-TraceExplorer-canvas svg").evaluate("svg => { svg.dataset.old = '1'; }")
        explorer.locator('.jp-TraceExplorer-tab[data-tab="check"]').click()
        assert "Check passed" in explorer.locator(".jp-TraceExplorer-check").inner_text()
        explorer.locator('input[data-option="check_trace"]').uncheck()
        explorer.locator(".jp-TraceExplorer-check", has_text="The check was off").wait_for(timeout=60_000)
        assert "not checked" in explorer.locator(".jp-TraceExplorer-summary").inner_text()
        explorer.locator(".jp-TraceExplorer-canvas svg:not([data-old])").wait_for()
        assert explorer.locator(".jp-TraceExplorer-history select option").count() == 2
        assert "linear" in _graph_labels(explorer)
        explorer.screenshot(path=str(SCREENSHOTS / "marimo-explorer-retraced-light.png"))

        assert not foreign_requests(requests, marimo_app), foreign_requests(requests, marimo_app)
        assert not [e for e in errors if "tracejit" in e.lower()], errors
    finally:
        context.close()


def test_explorer_follows_marimo_dark_theme(browser: Any, marimo_app: str) -> None:
    context, page, errors, requests = _open(browser, marimo_app, "dark")
    try:
        explorer = page.locator(ROOT).first
        explorer.wait_for(timeout=90_000)
        explorer.locator(".jp-TraceExplorer-canvas svg").wait_for(timeout=60_000)
        host = page.locator(".jp-TraceExplorer-anyTheme").first
        assert host.get_attribute("data-jp-theme-light") == "false"
        background = host.evaluate("el => getComputedStyle(el).backgroundColor")
        assert background in ("rgb(33, 33, 33)", "rgba(33, 33, 33, 1)"), background  # JupyterLab Dark's layout-color1
        explorer.locator(".jp-TraceExplorer-canvas g.node.kind-aten-relu").first.click()
        explorer.locator(".jp-TraceExplorer-inspector .jp-TraceExplorer-nodeKind", has_text="aten::relu").wait_for()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        explorer.screenshot(path=str(SCREENSHOTS / "marimo-explorer-dark.png"))
        page.screenshot(path=str(SCREENSHOTS / "marimo-page-dark.png"))
        assert not foreign_requests(requests, marimo_app), foreign_requests(requests, marimo_app)
        assert not [e for e in errors if "tracejit" in e.lower()], errors
    finally:
        context.close()
