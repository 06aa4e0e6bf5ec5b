"""Real-browser harness: JupyterLab from this venv, driven in Debian's chromium by Playwright.

Fixtures
--------
- ``jupyter_server`` (package): ``python -m jupyterlab`` on 127.0.0.1, a free port, a fresh root dir, no token,
  fresh config/settings/workspace dirs (news prompt off); stopped after the last test of tests/browser.
- ``browser`` (package): headless ``/usr/bin/chromium``; the tests skip when it is missing. Package scope, not
  session: Playwright's sync API leaves its asyncio loop marked running while it is started, and tests after
  it that call ``asyncio.run()`` would fail.
- ``page`` (per test): a fresh browser context and page; console errors and uncaught page errors are collected
  on ``page.tracejit_errors``; a failing test leaves ``test-artifacts/screenshots/<test>-failed.png``.
- ``lab`` (per test): :class:`Lab`, the helpers (write a notebook, open it, run all, save, switch theme,
  screenshot), bound to the page and the server.

The server, the chromium launch, the error recorder and :class:`Lab` are in ``jupyter_tracejit/_dev/browser.py``
(which says why they work the way they do), shared with ``benchmarks/bench_browser.py``; this file only binds
them to pytest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_tracejit._dev.browser import (
    ARTIFACTS,
    CHROMIUM,
    SCREENSHOTS,
    WAIT_MS,
    JupyterServer,
    Lab,
    ServerStartError,
    launch_chromium,
    record_page_errors,
    start_jupyter_lab,
    stop_jupyter_lab,
)

# -- server -------------------------------------------------------------------------------------------


@pytest.fixture(scope="package")
def jupyter_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        server = start_jupyter_lab(tmp_path_factory.mktemp("jupyterlab"), ARTIFACTS / "jupyter-server.log")
    except ServerStartError as exc:
        pytest.fail(str(exc))
    try:
        yield server
    finally:
        stop_jupyter_lab(server)


# -- browser ------------------------------------------------------------------------------------------


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) to run browser tests")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as pw:
        b = launch_chromium(pw)
        try:
            yield b
        finally:
            b.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def _test_name(node: pytest.Item) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", node.name)


@pytest.fixture
def page(browser: Any, jupyter_server: JupyterServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(WAIT_MS)
    pg = context.new_page()
    errors = record_page_errors(pg)
    try:
        yield pg
    finally:
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            try:
                pg.screenshot(path=str(SCREENSHOTS / f"{_test_name(request.node)}-failed.png"))
            except Exception as exc:  # the page may be gone; the failure itself matters more
                print(f"could not save the failure screenshot: {exc}")
            print("browser errors:\n" + "\n".join(errors))
            print("server log tail:\n" + jupyter_server.log_tail())
        context.close()
        jupyter_server.shutdown_kernels()


@pytest.fixture
def lab(page: Any, jupyter_server: JupyterServer) -> Lab:
    return Lab(page, jupyter_server)
