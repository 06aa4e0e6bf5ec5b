"""Smoke tests of the frontend in a real JupyterLab and chromium: the widget, and the kernel-free renderer.

The widget is ``jupyter_tracejit.widgets.TraceExplorer`` (via ``tj.explore``); the explorer's features are
driven in ``test_explorer.py``.
"""

from __future__ import annotations

import json

import pytest

from jupyter_tracejit.widgets import run_mime_payload

from .helpers import explorer_in, foreign_requests, record_requests

pytestmark = pytest.mark.browser

MIME = "application/vnd.jupyter.tracejit+json"
EXPLORER = ".jp-TraceExplorer"

WIDGET_CELL = """\
import torch
import jupyter_tracejit as tj

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
run = tj.trace(model, (torch.randn(2, 3),))
w = tj.explore(run)
print(run.summary())
w
"""

UPDATE_CELL = """\
run2 = tj.trace(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh()), (torch.randn(2, 3),))
w.add_run(run2)
print(run2.summary())
"""

MIME_CELL = f'''\
import torch
import jupyter_tracejit as tj
from IPython.display import display

run = tj.trace(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU()), (torch.randn(2, 3),))
display({{"{MIME}": run.to_json(), "text/plain": run.summary()}}, raw=True)
print(run.summary())
'''


def _stdout(lab, cell: int) -> str:
    stdout = lab.outputs(cell).and_(lab.page.locator('[data-mime-type="application/vnd.jupyter.stdout"]'))
    return stdout.first.inner_text().strip()


def _svg_labels(explorer) -> list[str]:
    # SVG <text>: text_content(), not inner_text()
    return [t.text_content() for t in explorer.locator(".jp-TraceExplorer-graph svg text").all()]


def open_saved_runs(lab, name: str, payloads: list) -> tuple:
    """A notebook of one cell per payload, each cell's saved output that payload as the run's MIME data, opened
    without a kernel: the notebook and its explorers' outputs, one per cell."""
    outputs = {
        i: [{"output_type": "display_data", "metadata": {}, "data": {MIME: data, "text/plain": "a trace"}}]
        for i, data in enumerate(payloads)
    }
    lab.write_notebook(name, [f"# output {i}" for i in range(len(payloads))], outputs=outputs)
    nb = lab.open_notebook(name, wait_for_kernel=False)
    explorers = nb.locator(f".jp-OutputArea-output{EXPLORER}")
    explorers.nth(len(payloads) - 1).wait_for()
    assert explorers.count() == len(payloads)
    return nb, explorers


def test_widget_renders_summary_and_worker_laid_out_graph(lab):
    workers: list[str] = []
    lab.page.on("worker", lambda w: workers.append(w.url))
    lab.write_notebook("widget.ipynb", [WIDGET_CELL, UPDATE_CELL])
    nb = lab.open_notebook("widget.ipynb")

    lab.run_cell(0)
    explorer = nb.locator(".jp-Cell").nth(0).locator(EXPLORER)
    printed = _stdout(lab, 0)
    assert printed.startswith("Sequential: ok; ")
    summary = explorer.locator(".jp-TraceExplorer-summary")
    summary.wait_for()
    assert summary.get_attribute("title") == printed  # the header shows its parts; the whole line is the tooltip
    assert explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge").inner_text() == "ok"
    explorer.locator(".jp-TraceExplorer-graph svg").wait_for()
    assert "linear" in _svg_labels(explorer) and "relu" in _svg_labels(explorer)
    # Graphviz ran in the extension's worker, not on the page's main thread
    assert any("/lab/extensions/jupyter-tracejit/static/" in url for url in workers), workers
    lab.screenshot_themes("widget")

    # a new value of the synced `run` re-renders the same view
    lab.run_cell(1)
    printed2 = _stdout(lab, 1)
    assert printed2.startswith("Sequential: ok; ")
    lab.page.wait_for_function(
        "(s) => [...document.querySelectorAll('.jp-TraceExplorer-graph svg text')].some(t => t.textContent === s)",
        arg="tanh",
    )
    assert summary.get_attribute("title") == printed2
    assert lab.extension_errors() == []


def test_live_explorer_fetches_nothing_but_from_the_notebook_server(lab):
    """JupyterLab, our extension, the explorer, its Graphviz worker and a re-trace: no CDN, no font service, no
    other host (what an offline or air-gapped machine needs)."""
    requests = record_requests(lab.page)  # from before the page loads
    lab.write_notebook("offline.ipynb", [WIDGET_CELL])
    lab.open_notebook("offline.ipynb")
    lab.run_cell(0)
    explorer = explorer_in(lab, 0, nodes=True)
    explorer.locator('input[data-option="check_trace"]').uncheck()
    explorer.locator(".jp-TraceExplorer-summary", has_text="not checked").wait_for(timeout=60_000)
    assert any("/lab/extensions/jupyter-tracejit/" in url for url in requests), requests
    assert not foreign_requests(requests, lab.server.url), foreign_requests(requests, lab.server.url)
    assert lab.extension_errors() == []


def test_mime_renderer_shows_saved_run_without_kernel(lab):
    lab.write_notebook("mime.ipynb", [MIME_CELL])
    nb = lab.open_notebook("mime.ipynb")
    lab.run_all()
    printed = _stdout(lab, 0)
    explorer = nb.locator(f".jp-OutputArea-output{EXPLORER}")
    assert explorer.locator(".jp-TraceExplorer-summary").get_attribute("title") == printed
    lab.save()

    # what was saved carries the run itself
    saved = lab.read_notebook("mime.ipynb")
    outputs = [o for o in saved.cells[0].outputs if o.get("output_type") == "display_data"]
    assert outputs and outputs[0]["data"][MIME]["summary"] == printed

    # no kernel: shut it down, reload the page, and look at the saved output only
    lab.server.shutdown_kernels()
    assert lab.server.api("GET", "/api/kernels") == []
    nb = lab.open_notebook("mime.ipynb", wait_for_kernel=False)
    explorer = nb.locator(f".jp-OutputArea-output{EXPLORER}")
    assert explorer.locator(".jp-TraceExplorer-summary").get_attribute("title") == printed
    explorer.locator(".jp-TraceExplorer-graph svg").wait_for()
    assert "linear" in _svg_labels(explorer)
    lab.screenshot_themes("mime-saved")
    assert lab.extension_errors() == []


def test_mime_renderer_is_safe_on_an_untrusted_notebook(lab):
    """A notebook written outside JupyterLab is untrusted: only `safe` renderers run, so ours must, and must
    show hostile strings as text (no markup, no links, no script)."""
    import torch

    import jupyter_tracejit as tj

    data = tj.trace(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU()), (torch.randn(2, 3),)).to_json()
    hostile = '<img src=x onerror="window.__pwned = 1">Sequential'
    data["summary"] = hostile
    data["target"]["name"] = hostile
    strings = data["graphs"]["forward"]["strings"]
    evil_kind = 'aten::relu"]; x [URL="javascript:window.__pwned=2" label="\\N'
    strings[strings.index("aten::relu")] = evil_kind
    output = {"output_type": "display_data", "metadata": {}, "data": {MIME: data, "text/plain": "a trace"}}
    lab.write_notebook("untrusted.ipynb", ["# executed elsewhere"], outputs={0: [output]})

    nb = lab.open_notebook("untrusted.ipynb", wait_for_kernel=False)
    explorer = nb.locator(f".jp-OutputArea-output{EXPLORER}")
    summary = explorer.locator(".jp-TraceExplorer-summary")
    assert summary.get_attribute("title") == hostile
    assert explorer.locator(".jp-TraceExplorer-target").inner_text() == hostile
    explorer.locator(".jp-TraceExplorer-graph svg").wait_for()
    # the label shows the op name (after "aten::"), cut to the label width, as literal text
    shown = evil_kind.split("::", 1)[1][:40]
    assert any(label.startswith(shown) for label in _svg_labels(explorer)), _svg_labels(explorer)
    assert explorer.locator("img, a, script, foreignObject").count() == 0
    assert lab.page.evaluate("() => window.__pwned") is None
    lab.screenshot("untrusted", explorer)
    assert json.dumps(lab.extension_errors()) == "[]"


def test_mime_renderer_says_once_what_is_wrong_with_a_malformed_saved_run(lab):
    """A saved output edited by hand, cut short or written by another version: one clear message per output,
    nothing thrown then or on clicks, and valid outputs beside them (the JSON text this version saves, the object
    earlier versions saved) still show their graph."""
    import copy

    import torch

    import jupyter_tracejit as tj

    good = tj.trace(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU()), (torch.randn(2, 3),)).to_json()
    bad_node = copy.deepcopy(good)
    bad_node["graphs"]["forward"]["nodes"][1] = "oops"
    missing = copy.deepcopy(good)
    del missing["warnings"]
    newer = {**copy.deepcopy(good), "schema_version": 99}
    text = run_mime_payload(good)
    cases = [text, bad_node, run_mime_payload(missing), run_mime_payload(newer), "just a string", [1, 2], good]
    cases += [text[: len(text) // 2]]  # cut short
    nb, explorers = open_saved_runs(lab, "malformed.ipynb", cases)
    explorers.nth(0).locator(".jp-TraceExplorer-graph svg").wait_for()
    explorers.nth(6).scroll_into_view_if_needed()
    explorers.nth(6).locator(".jp-TraceExplorer-graph svg").wait_for()

    def said(i: int) -> str:
        # the notebook is windowed: an output out of view is not laid out, and has no inner text
        explorers.nth(i).scroll_into_view_if_needed()
        return explorers.nth(i).inner_text().strip()

    prefix = "jupyter-tracejit cannot show this saved trace: "
    assert said(1).startswith(f"{prefix}not a valid jupyter-tracejit run (at graphs › forward › nodes › 1")
    assert "re-run the cell" in said(1)
    assert 'missing field "warnings"' in said(2)
    assert "schema_version 99" in said(3) and "update jupyter-tracejit" in said(3)
    not_json = f"{prefix}the saved run is not valid JSON. The output was probably edited or cut short: re-run the cell"
    assert said(4).startswith(not_json) and said(7).startswith(not_json)
    assert said(5) == f"{prefix}not a jupyter-tracejit run: expected an object"
    for i in (1, 2, 3, 4, 5, 7):
        # one message and nothing else: no empty graph, no controls that could throw on a click
        assert explorers.nth(i).locator(".jp-TraceExplorer-renderError").count() == 1
        assert explorers.nth(i).locator("svg, button, [role=tab]").count() == 0
    assert "Javascript Error" not in nb.inner_text()
    lab.screenshot("malformed-saved-runs", nb)
    assert lab.extension_errors() == []


def test_mime_renderer_refuses_a_saved_run_whose_ids_point_nowhere(lab):
    """Saved runs that match the schema but whose ids point nowhere (the shared cases of references.cases.json):
    before, an empty graph and "Cannot read properties of undefined (reading 'source')"; now the one message a
    schema error gets, naming the place, and the valid run beside them still shows its graph."""
    from tests.frontend_fixtures import FIXTURES, apply_edits

    shared = json.loads((FIXTURES / "references.cases.json").read_text(encoding="utf-8"))
    names = ("a node input", "a parent cycle", "a warning's node", "a divergence's check node", "a block's input")
    picked = [c for c in shared if c["name"] in names]
    runs = {c["run"]: json.loads((FIXTURES / f"{c['run']}.run.json").read_text(encoding="utf-8")) for c in picked}
    cases = [apply_edits(json.loads(json.dumps(runs[c["run"]])), c["edits"]) for c in picked]
    cases.append(runs["net"])  # untouched: shown as before
    nb, explorers = open_saved_runs(lab, "dangling.ipynb", [run_mime_payload(data) for data in cases])

    def said(i: int) -> str:
        explorers.nth(i).scroll_into_view_if_needed()
        return explorers.nth(i).inner_text().strip()

    for i, case in enumerate(picked):
        place = " › ".join(case["at"].split("/")[1:])
        assert said(i) == (
            f"jupyter-tracejit cannot show this saved trace: not a valid jupyter-tracejit run (at {place}: "
            f"{case['detail']}). The output was probably edited or cut short: re-run the cell to trace again."
        )
        assert explorers.nth(i).locator("svg, button, [role=tab]").count() == 0
    explorers.nth(len(cases) - 1).scroll_into_view_if_needed()
    explorers.nth(len(cases) - 1).locator(".jp-TraceExplorer-graph svg").wait_for()
    explorers.nth(0).scroll_into_view_if_needed()
    lab.screenshot("dangling-ids-in-saved-runs", nb)
    assert "Javascript Error" not in nb.inner_text()
    assert lab.extension_errors() == []
