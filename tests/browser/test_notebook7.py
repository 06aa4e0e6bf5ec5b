"""The same prebuilt extension in Notebook 7 (served by the same Jupyter server under /notebooks/)."""

from __future__ import annotations

import re

import pytest

from .test_explorer import ROOT, SETUP

pytestmark = pytest.mark.browser


def test_explorer_in_notebook_7(lab):
    pytest.importorskip("notebook", minversion="7", reason="Notebook 7 is not installed (pip install 'notebook>=7')")
    lab.write_notebook("nb7.ipynb", [SETUP, "e = tj.explore(Net().eval(), (torch.ones(2, 8),))\ne"])
    page = lab.page
    page.goto(f"{lab.server.url}/notebooks/nb7.ipynb")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    # Notebook 7's kernel indicator: wait until the kernel is up before running
    page.wait_for_function("() => window.jupyterapp !== undefined || document.querySelector('.jp-Notebook')")
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    explorer = page.locator(f".jp-NotebookPanel .jp-OutputArea-output {ROOT}").first
    explorer.wait_for(timeout=90_000)
    explorer.locator(".jp-TraceExplorer-canvas svg").wait_for()
    assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "warnings"
    explorer.locator(".jp-TraceExplorer-canvas g.node.kind-aten-relu").first.click()
    inspector = explorer.locator(".jp-TraceExplorer-inspector")
    inspector.wait_for()  # a click in the graph brings the inspector forward
    assert inspector.locator(".jp-TraceExplorer-nodeKind").inner_text().startswith("aten::relu")
    lab.screenshot("notebook7-explorer", explorer)
    assert not lab.extension_errors()
