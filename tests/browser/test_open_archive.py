"""A saved trace opened from JupyterLab's file browser: "Open With > Trace explorer" on a .pt shows the read-only
explorer of the archive, read by the server extension (jupyter_tracejit/server) with torch on the server."""

from __future__ import annotations

import re

import pytest
import torch

from tests.models import save_shipped_head

from .helpers import ROOT

pytestmark = pytest.mark.browser

#: the document JupyterLab opens for the file (archive/view.ts)
DOCUMENT = ".jp-TraceArchive:visible"


def file_item(lab, name: str):
    """``name`` in the file browser of a fresh JupyterLab page."""
    page = lab.page
    page.goto(f"{lab.server.url}/lab?reset")
    return page.locator(".jp-DirListing-item", has=page.locator(".jp-DirListing-itemText", has_text=name))


def open_with_trace_explorer(lab, name: str):
    """Right-click ``name`` in the file browser, then Open With > Trace explorer; the document's content."""
    page = lab.page
    file_item(lab, name).click(button="right")
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Open With$")).hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Trace explorer$")).click()
    return page.locator(DOCUMENT)


def test_a_traced_model_file_opens_with_its_graph_and_findings(lab):
    save_shipped_head(lab.server.root / "shipped_head.pt")
    requests: list[str] = []
    lab.page.on("request", lambda request: requests.append(request.url))
    document = open_with_trace_explorer(lab, "shipped_head.pt")
    explorer = document.locator(ROOT)
    explorer.locator(".jp-TraceExplorer-canvas svg g.node").first.wait_for()
    assert lab.page.locator(".lm-TabBar-tab.jp-mod-current").inner_text().strip() == "shipped_head.pt"
    assert explorer.locator(".jp-TraceExplorer-target").first.inner_text() == "ShippedHead"
    assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "warnings"
    # the options bar names the file (it read "read-only ·": a loaded file has none of the bar's options)
    options = explorer.locator(".jp-TraceExplorer-options").inner_text()
    assert options == "read-only · loaded from shipped_head.pt", options
    explorer.locator('.jp-TraceExplorer-tab[data-tab="warnings"]').click()
    findings = explorer.locator(".jp-TraceExplorer-finding")
    kinds = {findings.nth(i).get_attribute("data-kind") for i in range(findings.count())}
    assert {"frozen_size", "nondeterministic"} <= kinds, kinds
    frozen = explorer.locator('.jp-TraceExplorer-finding[data-kind="frozen_size"]')
    assert "the constant 4" in frozen.inner_text()
    lab.screenshot_themes("open-archive-explorer")
    # the file is read on the server only: the page never asked the contents API for its bytes
    contents = [url for url in requests if "/api/contents/shipped_head.pt" in url]
    assert contents and not [url for url in contents if "content=1" in url], contents
    assert not lab.extension_errors()


def test_a_double_clicked_file_that_is_not_an_archive_opens_with_the_reason(lab):
    (lab.server.root / "notes.pt").write_text("not a model\n")
    file_item(lab, "notes.pt").dblclick()  # the trace explorer is the default for .pt
    document = lab.page.locator(DOCUMENT)
    error = document.locator(".jp-TraceExplorer-root .jp-TraceExplorer-error").first
    error.wait_for()
    assert "notes.pt" in error.inner_text()
    lab.screenshot_themes("open-archive-not-an-archive", lab.page.locator(".jp-MainAreaWidget:visible"))


def test_a_file_the_server_will_not_read_shows_its_message(lab, tmp_path):
    (lab.server.root / "elsewhere.pt").symlink_to(save_shipped_head(tmp_path / "outside.pt"))
    document = open_with_trace_explorer(lab, "elsewhere.pt")
    error = document.locator(".jp-TraceArchive-error")
    error.wait_for()
    assert error.inner_text() == (
        "elsewhere.pt could not be opened: elsewhere.pt leads outside the server's root dir (through a link): "
        "it is not read."
    )
    lab.screenshot_themes("open-archive-refused", lab.page.locator(".jp-MainAreaWidget:visible"))


def test_a_double_clicked_hostile_file_is_refused_and_nothing_runs(lab, tmp_path):
    """An exported program whose constant is a pickle running ``os.system`` (tests/security/hostile.py): the server's
    worker refuses it before torch reads it, and the explorer says what the file holds and how to open it if
    trusted."""
    from tests.security import hostile

    marker = tmp_path / "ran"
    base = hostile.exported(tmp_path / "base.pt2")
    hostile.constant_as(base, lab.server.root / "hostile.pt2", "opaque_obj_0", hostile.payload(marker))
    file_item(lab, "hostile.pt2").dblclick()
    error = lab.page.locator(DOCUMENT).locator(".jp-TraceExplorer-root .jp-TraceExplorer-error").first
    error.wait_for()
    text = lab.page.locator(DOCUMENT).inner_text()
    assert "was not loaded: its constant 'k' is a pickled Python object" in text, text
    assert "tj.load(path, trusted=True)" in text, text
    lab.screenshot_themes("open-archive-hostile", lab.page.locator(".jp-MainAreaWidget:visible"))
    assert not marker.exists()
    assert not lab.extension_errors()


#: the boxes (page px) of the document's content, the explorer and its graph | side panel area
HEIGHTS = """(doc) => {
  const box = el => { const r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, h: r.height}; };
  return {doc: box(doc), root: box(doc.querySelector('.jp-TraceExplorer-root')),
          main: box(doc.querySelector('.jp-TraceExplorer-main')), pad: parseFloat(getComputedStyle(doc).paddingBottom)};
}"""


def test_a_model_file_uses_the_full_height_of_its_tab(lab):
    """The explorer of a document fills its tab (it took 560 px whatever the tab's height), and follows the
    window's height."""
    save_shipped_head(lab.server.root / "tall.pt")
    file_item(lab, "tall.pt").dblclick()
    document = lab.page.locator(DOCUMENT)
    document.locator(".jp-TraceExplorer-canvas svg g.node").first.wait_for()
    short = document.evaluate(HEIGHTS)
    assert short["doc"]["bottom"] - short["pad"] - short["root"]["bottom"] <= 2, short  # no blank band below
    assert short["main"]["h"] > 0.7 * short["doc"]["h"], short
    lab.screenshot_themes("open-archive-full-height", lab.page.locator(".jp-MainAreaWidget:visible"))
    lab.page.set_viewport_size({"width": 1280, "height": 1160})
    lab.page.wait_for_function(
        "([doc, h]) => doc.querySelector('.jp-TraceExplorer-main').getBoundingClientRect().height > h + 250",
        arg=[document.element_handle(), short["main"]["h"]],
    )
    tall = document.evaluate(HEIGHTS)
    assert tall["doc"]["bottom"] - tall["pad"] - tall["root"]["bottom"] <= 2, tall
    assert abs((tall["main"]["h"] - short["main"]["h"]) - (tall["doc"]["h"] - short["doc"]["h"])) <= 2, (short, tall)
    assert not lab.extension_errors()


def test_a_program_returning_a_model_output_opens_after_retrying_with_its_module(lab):
    """A BERT exported with its transformers ModelOutput: the server's reading process has not imported
    transformers, so the load fails naming the class; the document offers to retry importing its module, says that
    importing runs code, and the retry opens the program."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import transformers

    config = transformers.BertConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64
    )
    bert = transformers.BertModel(config).eval()
    program = torch.export.export(bert, (torch.randint(0, 100, (1, 8)),))
    torch.export.save(program, str(lab.server.root / "bert.pt2"))
    file_item(lab, "bert.pt2").dblclick()
    document = lab.page.locator(DOCUMENT)
    retry = document.get_by_role("button", name="retry importing transformers.modeling_outputs")
    retry.wait_for()
    assert "runs its code" in retry.get_attribute("title")
    error = document.locator(".jp-TraceExplorer-root .jp-TraceExplorer-error").first
    assert "transformers.modeling_outputs.BaseModelOutputWithPoolingAndCrossAttentions" in error.inner_text()
    lab.screenshot_themes("open-archive-retry-import", lab.page.locator(".jp-MainAreaWidget:visible"))
    retry.click()
    explorer = document.locator(ROOT)
    explorer.locator(".jp-TraceExplorer-canvas svg g.node").first.wait_for(timeout=180_000)
    assert retry.count() == 0
    assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "ok"
    assert not lab.extension_errors()
