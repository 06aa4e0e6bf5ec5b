"""Helpers the browser tests share (they drive a real JupyterLab through :class:`jupyter_tracejit._dev.browser.Lab`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

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


def record_requests(page: Any) -> list[str]:
    """Every URL requested from now on by the page's context: its pages and their workers."""
    urls: list[str] = []
    page.context.on("request", lambda request: urls.append(request.url))
    return urls


def foreign_requests(urls: list[str], server_url: str) -> list[str]:
    """The URLs that went to any host but the server's (data: and blob: URLs never leave the page)."""
    server = urlsplit(server_url).netloc
    return [url for url in urls if urlsplit(url).scheme not in ("data", "blob") and urlsplit(url).netloc != server]
