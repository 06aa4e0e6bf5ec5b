"""Helpers the browser tests share (they drive a real JupyterLab through :class:`jupyter_tracejit._dev.browser.Lab`)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from jupyter_tracejit._dev.browser import WAIT_MS

#: the explorer's root element, in a notebook output or in a saved report
ROOT = ".jp-TraceExplorer-root"


def explorer_in(lab: Any, cell: int, graph: bool = True, *, nodes: bool = False, scroll: bool = False) -> Any:
    """The explorer in the output of notebook cell ``cell``, once it has drawn its graph.

    ``graph=False``: do not wait for a graph (a failed run draws none). ``nodes``: wait for the first drawn node
    rather than for the canvas's one svg (a big model draws its svg before its nodes). ``scroll``: the notebook is
    windowed, and an output below a long cell is laid out only once scrolled to: wait for the root to be attached,
    then scroll it into view."""
    root = lab.outputs(cell).locator(ROOT).first
    if scroll:
        root.wait_for(state="attached")
        root.scroll_into_view_if_needed()
    else:
        root.wait_for()
    if graph:
        if nodes:
            root.locator(".jp-TraceExplorer-canvas svg g.node").first.wait_for()
        else:
            root.locator(".jp-TraceExplorer-canvas svg").wait_for()
    return root


def run_notebook(lab: Any, name: str, cells: list[str], timeout: float = WAIT_MS) -> None:
    """Write ``cells`` as the notebook ``name``, open it and run all its cells (``timeout``: ms for them to run)."""
    lab.write_notebook(name, cells)
    lab.open_notebook(name)
    lab.run_all(timeout=timeout)


def close_comparison(explorer: Any, panel: Any) -> None:
    """Close the comparison with the panel's button: the panes go, the graph is back."""
    panel.get_by_role("button", name="close the comparison").click()
    explorer.locator(".jp-TraceExplorer-compareFull").wait_for(state="detached")
    assert explorer.locator(".jp-TraceExplorer-canvas svg").is_visible()


def reopened_without_kernel(lab: Any, cell: int = 1) -> Any:
    """Save the notebook, stop its kernel and reload the page: the explorer of cell ``cell``, which the kernel-free
    renderer draws from the saved output, read-only."""
    lab.save()
    lab.server.shutdown_kernels()
    lab.page.reload()
    lab.notebook.locator(".jp-Cell").first.wait_for()
    saved = explorer_in(lab, cell)
    assert "read-only" in saved.locator(".jp-TraceExplorer-options").inner_text()
    return saved


def walk_downstream_too(check: Any) -> int:
    """The check tab of a failed check with one root divergence: the stepper opens on that root; with "downstream
    too" it walks every divergence, the first one shown. Their number (at least 2)."""
    assert "Check failed" in check.locator(".jp-TraceExplorer-verdict").inner_text()
    label = check.locator(".jp-TraceExplorer-stepLabel")
    assert label.inner_text() == "root 1 of 1"
    check.locator('input[data-action="downstream"]').check()
    total = int(re.search(r"divergence 1 of (\d+)", label.inner_text()).group(1))
    assert total >= 2
    return total


def record_requests(page: Any) -> list[str]:
    """Every URL requested from now on by the page's context: its pages and their workers."""
    urls: list[str] = []
    page.context.on("request", lambda request: urls.append(request.url))
    return urls


def foreign_requests(urls: list[str], server_url: str) -> list[str]:
    """The URLs that went to any host but the server's (data: and blob: URLs never leave the page)."""
    server = urlsplit(server_url).netloc
    return [url for url in urls if urlsplit(url).scheme not in ("data", "blob") and urlsplit(url).netloc != server]
