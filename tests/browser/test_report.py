"""The saved HTML report (``run.save_html``) opened from disk in headless chromium with the network cut off:
the graph lays out (in a worker started from the page's own script, or on the main thread where workers are
unavailable), a click fills the inspector, the divergence stepper moves, and nothing reaches for the network.

Only the ``browser`` fixture of conftest.py is used: no JupyterLab server is needed for a file:// page.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit._dev.browser import SCREENSHOTS, WAIT_MS

from ..models import MarkupEverywhere, loop_in_traced_fn
from .helpers import walk_downstream_too
from .test_explorer import open_comparison

pytestmark = pytest.mark.browser

STATIC_JS = Path(tj.__file__).parent / "static" / "report.js"
ROOT = "#tracejit-root .jp-TraceExplorer-root"


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not STATIC_JS.exists():
        pytest.skip("the report bundle is not built (npm run build, or pip install -e .)")
    torch.manual_seed(0)
    run = tj.trace(loop_in_traced_fn, (torch.rand(3, 4),), check_inputs=[(torch.rand(4, 4),)])
    assert not run.ok and run.check is not None and run.check.cases[0].diff.divergences
    return run.save_html(tmp_path_factory.mktemp("report") / "loop report.html")


class OfflinePage:
    """A page in a fresh context where every request other than file:, data: and blob: is aborted (and
    recorded), with console errors and uncaught exceptions collected."""

    def __init__(self, browser: Any, **context_options: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 860}, **context_options)
        self.context.set_default_timeout(WAIT_MS)
        self.blocked: list[str] = []
        self.requests: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("console", self._console)

    def _route(self, route: Any) -> None:
        url = route.request.url
        self.requests.append(url)
        if url.startswith(("file:", "data:", "blob:")):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def _console(self, msg: Any) -> None:
        if msg.type == "error":
            self.errors.append(f"console.error: {msg.text}")
        elif msg.type == "warning":
            self.warnings.append(msg.text)

    def open(self, path: Path) -> Any:
        self.page.goto(path.as_uri())
        return self.page

    def explorer(self, path: Path) -> Any:
        """Open the report at ``path``: its explorer, once it has drawn its graph."""
        explorer = self.open(path).locator(ROOT)
        explorer.locator(".jp-TraceExplorer-canvas svg").wait_for()
        return explorer


@pytest.fixture
def offline(browser: Any) -> Iterator[Any]:
    pages: list[OfflinePage] = []

    def make(**options: Any) -> OfflinePage:
        p = OfflinePage(browser, **options)
        pages.append(p)
        return p

    yield make
    for p in pages:
        p.context.close()


def test_report_opens_offline_graph_inspector_and_stepper(offline, report_file):
    op = offline()
    explorer = op.explorer(report_file)
    page = op.page
    assert page.evaluate("window.tracejitReport.layoutMode()") == "worker"
    assert page.evaluate("document.documentElement.dataset.tracejit") == "mounted"
    assert not page.locator("#tracejit-fallback").is_visible()  # the text report steps aside
    assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "check failed"
    summary = explorer.locator(".jp-TraceExplorer-summary")
    assert summary.get_attribute("title").startswith("loop_in_traced_fn: problems;")
    assert "read-only" in explorer.locator(".jp-TraceExplorer-options").inner_text()
    assert page.title().startswith("loop_in_traced_fn: problems")

    # a click on a node fills the inspector with its kind and source line
    explorer.locator('.jp-TraceExplorer-tab[data-tab="inspector"]').click()
    explorer.locator(".jp-TraceExplorer-canvas g.node.kind-aten-mul").first.click()
    inspector = explorer.locator(".jp-TraceExplorer-inspector")
    assert inspector.locator(".jp-TraceExplorer-nodeKind").inner_text().startswith("aten::mul")
    assert "result = result * x[i]" in inspector.locator(".jp-TraceExplorer-sourceLine").inner_text()
    assert explorer.locator(".jp-TraceExplorer-canvas g.node.selected").count() == 1

    # the divergence stepper: it opened on the first root; with downstream too, 1 of N, 2 of N, with both graphs
    # side by side
    explorer.locator('.jp-TraceExplorer-tab[data-tab="check"]').click()
    check = explorer.locator(".jp-TraceExplorer-check")
    total = walk_downstream_too(check)
    label = check.locator(".jp-TraceExplorer-stepLabel")
    sides = open_comparison(explorer)
    assert "kind-aten-select" in sides.nth(1).locator("g.node.current").get_attribute("class")
    assert "only in the check trace: aten::select" in check.locator(".jp-TraceExplorer-reason").inner_text()
    check.get_by_role("button", name="next divergence").click()
    label.filter(has_text=f"2 of {total}").wait_for()
    # both pictures are laid out in the worker: wait for them, then there is exactly one each
    sides.nth(0).locator("svg").wait_for()
    sides.nth(1).locator("svg").wait_for()
    assert sides.nth(0).locator("svg").count() == 1 and sides.nth(1).locator("svg").count() == 1

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "report.png"))
    assert op.errors == []
    assert op.blocked == []  # the page never even tried the network
    assert all(u.startswith(("file:", "data:", "blob:")) for u in op.requests)


def test_report_lays_out_on_the_main_thread_without_workers(offline, report_file):
    op = offline()
    op.page.add_init_script("window.Worker = function () { throw new Error('workers are disabled here'); };")
    page = op.open(report_file)
    page.locator(f"{ROOT} .jp-TraceExplorer-canvas svg").wait_for()
    assert page.evaluate("window.tracejitReport.layoutMode()") == "main-thread"
    assert page.locator(f"{ROOT} .jp-TraceExplorer-canvas g.node.kind-aten-select").count() >= 3
    assert op.errors == [] and op.blocked == []
    assert any("main thread" in w for w in op.warnings)


def test_report_in_the_dark_colour_scheme(offline, report_file):
    op = offline(color_scheme="dark")
    page = op.open(report_file)
    page.locator(f"{ROOT} .jp-TraceExplorer-canvas svg").wait_for()
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(33, 33, 33)"  # --jp-layout-color1 of JupyterLab Dark
    page.screenshot(path=str(SCREENSHOTS / "report-dark.png"))
    assert op.errors == [] and op.blocked == []


def test_report_without_scripts_shows_the_text_report(offline, report_file):
    op = offline(java_script_enabled=False)
    page = op.open(report_file)
    fallback = page.locator("#tracejit-fallback")
    assert fallback.is_visible()
    text = fallback.inner_text()
    assert "loop_in_traced_fn: problems;" in text
    assert "only in the check trace: aten::select" in text
    assert page.locator(ROOT).count() == 0
    assert op.blocked == []


HOSTILE = '</script><script>alert("x")</script><!--<img src=x onerror=alert(1)>'


@pytest.mark.parametrize("kind", ["hostile", "failed"])
def test_report_of_hostile_or_failed_runs_runs_nothing_it_carries(offline, tmp_path, kind):
    if not STATIC_JS.exists():
        pytest.skip("the report bundle is not built (npm run build, or pip install -e .)")
    if kind == "hostile":
        run = tj.trace(MarkupEverywhere().eval(), (torch.ones(2, 4),))
        run.target.name = HOSTILE
    else:
        run = tj.trace(lambda x: {"y": x}, (torch.ones(2),))
    path = run.save_html(tmp_path / f"{kind}.html")
    op = offline()
    dialogs: list[str] = []
    op.page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page = op.open(path)
    page.wait_for_function("document.documentElement.dataset.tracejit === 'mounted'")
    header = page.locator(f"{ROOT} .jp-TraceExplorer-header")
    if kind == "hostile":
        page.locator(f"{ROOT} .jp-TraceExplorer-canvas svg").wait_for()
        assert header.locator(".jp-TraceExplorer-summary").inner_text().startswith(HOSTILE)
        assert page.locator("h1").inner_text().startswith(HOSTILE)
        assert page.locator(f"{ROOT} .jp-TraceExplorer-canvas g.node.kind-aten-linear").count() == 1
    else:
        assert header.locator(".jp-TraceExplorer-badge").inner_text() == "failed"
        assert "strict=False" in header.locator(".jp-TraceExplorer-error").inner_text()
    assert page.evaluate("document.scripts.length") == 2
    assert page.locator("img").count() == 0
    assert dialogs == [] and op.errors == [] and op.blocked == []
