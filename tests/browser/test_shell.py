"""The explorer's shell in a real JupyterLab: the verdict badge, splitter, full screen, the stacked layout of a
narrow output, immediate feedback and cancel of live options, the JSON download loading back, text contrast in the
light and dark themes, Notebook 7, and an explorer the kernel closes (a run in flight: test_shell_runs.py)."""

from __future__ import annotations

import json
import re
import time

import pytest

import jupyter_tracejit as tj
from jupyter_tracejit._dev.browser import ARTIFACTS

from .contrast import CONTRAST, MIN_CONTRAST, css_colour
from .helpers import ROOT, explorer_in, run_notebook
from .shell_models import MODELS
from .test_explorer import SETUP, open_comparison

pytestmark = pytest.mark.browser

#: one explorer per verdict: ok, warnings (amber), check failed, failed (red)
VERDICT_CELLS = [
    "ok = tj.explore(nn.Sequential(nn.Linear(8, 8), nn.ReLU()).eval(), (torch.ones(2, 8),))\nok",
    "amber = tj.explore(LinearBatchNorm().train(), (torch.randn(4, 8),))\namber",
    "red = tj.explore(loop_in_traced_fn, (torch.rand(3, 4),), check_inputs=[(torch.rand(4, 4),)])\nred",
    "failed = tj.explore(DictNet().eval(), (torch.ones(2, 8),))\nfailed",
]


def test_the_badge_says_the_verdict_in_its_colour_and_the_counts_agree_with_the_tabs(lab):
    run_notebook(lab, "verdicts.ipynb", [SETUP + MODELS, *VERDICT_CELLS], timeout=90_000)
    expected = [
        ("ok", "ok", "--jp-success-color0"),
        ("warnings", "warning", "--jp-warn-color2"),
        ("check failed", "error", "--jp-error-color0"),
        ("failed", "error", "--jp-error-color0"),
    ]
    noted = 0
    for cell, (label, level, colour) in enumerate(expected, start=1):
        explorer = explorer_in(lab, cell, graph=label != "failed")
        badge = explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge")
        assert badge.inner_text() == label
        assert badge.get_attribute("data-level") == level
        assert badge.evaluate("el => getComputedStyle(el).backgroundColor") == css_colour(lab.page, colour)
        reasons = badge.get_attribute("title")
        assert reasons, label
        # the header names torch's warnings and our findings apart ("1 warning, 2 findings"); the Warnings tab
        # counts them together
        header = explorer.locator(".jp-TraceExplorer-summary").inner_text()
        warnings_tab = explorer.locator('.jp-TraceExplorer-tab[data-tab="warnings"]').inner_text()
        counted = {
            word: int(m.group(1)) if (m := re.search(rf"(\d+) {word}s?\b", header)) else 0
            for word in ("warning", "finding", "probe disagreement")
        }
        total = sum(counted.values())
        assert (f"Warnings ({total})" if total else "Warnings") == warnings_tab, (header, warnings_tab)
        # and what the Warnings tab lists is what the header names: its group badges (distinct warnings), findings
        explorer.locator('.jp-TraceExplorer-tab[data-tab="warnings"]').click()
        badges = explorer.locator(".jp-TraceExplorer-group summary .jp-TraceExplorer-count").all_inner_texts()
        findings = explorer.locator(".jp-TraceExplorer-finding:not(.jp-mod-info)").count()
        assert (sum(map(int, badges)), findings) == (counted["warning"], counted["finding"]), (header, badges)
        # a note (info: how often the Python code ran) is one line until opened
        notes = explorer.locator(".jp-TraceExplorer-finding.jp-mod-info").all()
        noted += len(notes)
        for note in notes:
            assert not note.locator(".jp-TraceExplorer-message").is_visible()
            note.locator("summary").click()
            assert note.locator(".jp-TraceExplorer-message").is_visible()
        check_tab = explorer.locator('.jp-TraceExplorer-tab[data-tab="check"]').inner_text()
        roots = re.search(r"check failed: (\d+) root", header)
        assert (f"Check ({roots.group(1)} root" if roots else "Check") in check_tab, (header, check_tab)
        if label == "warnings":
            assert "BatchNorm traced in training mode" in reasons
        if label == "check failed":
            assert "torch's check failed" in reasons
        if label == "ok":
            assert "nothing says the trace is wrong" in reasons
    assert noted >= 1  # the checked runs note how often the Python code ran
    amber = explorer_in(lab, 2)
    lab.screenshot_themes("shell-badge-warnings", amber.locator(".jp-TraceExplorer-header"))
    assert not lab.extension_errors()


def test_splitter_full_screen_and_the_stacked_layout(lab):
    run_notebook(lab, "layout.ipynb", [SETUP, "e = tj.explore(Net().eval(), (torch.ones(2, 8),))\ne"])
    explorer = explorer_in(lab, 1)
    page = lab.page
    graph = explorer.locator(".jp-TraceExplorer-main > .jp-TraceExplorer-graph")
    side = explorer.locator(".jp-TraceExplorer-sidebar")
    bar = explorer.locator(".jp-TraceExplorer-splitter")
    assert bar.get_attribute("role") == "separator" and bar.get_attribute("aria-orientation") == "vertical"
    assert bar.get_attribute("aria-valuenow") == "60"

    # drag the bar to the left: the graph narrows, the side panel widens
    before = graph.bounding_box()["width"], side.bounding_box()["width"]
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    y = box["y"] + min(40, box["height"] / 2)  # a point of the bar inside the window
    page.mouse.move(box["x"] + box["width"] / 2, y)
    page.mouse.down()
    page.mouse.move(box["x"] - 150, y, steps=5)
    page.mouse.up()
    after = graph.bounding_box()["width"], side.bounding_box()["width"]
    assert after[0] < before[0] - 100 and after[1] > before[1] + 100, (before, after)
    dragged = int(bar.get_attribute("aria-valuenow"))
    assert dragged < 60

    # and with the keyboard
    bar.focus()
    page.keyboard.press("ArrowRight")
    assert int(bar.get_attribute("aria-valuenow")) == dragged + 5
    page.keyboard.press("End")
    assert bar.get_attribute("aria-valuenow") == "85"
    page.keyboard.press("Home")
    assert bar.get_attribute("aria-valuenow") == "20"
    page.keyboard.press("Enter")
    assert bar.get_attribute("aria-valuenow") == "60"

    # full screen fills the window; Esc gives the explorer back to its output
    button = explorer.locator(".jp-TraceExplorer-fullScreen")
    button.click()
    full = page.locator(f"body > {ROOT}.jp-mod-fullscreen")
    full.wait_for()
    viewport = page.viewport_size
    rect = full.bounding_box()
    assert (rect["x"], rect["y"], rect["width"], rect["height"]) == (0, 0, viewport["width"], viewport["height"])
    assert full.locator(".jp-TraceExplorer-fullScreen").get_attribute("aria-pressed") == "true"
    assert lab.outputs(1).locator(".jp-TraceExplorer-placeholder").count() == 1
    full.locator(".jp-TraceExplorer-canvas svg").wait_for()
    lab.screenshot("shell-full-screen")
    # from the graph (where a person is after panning), with nothing selected: Esc leaves full screen
    full.locator(".jp-TraceExplorer-canvas").focus()
    page.keyboard.press("Escape")
    full.wait_for(state="detached")
    back = explorer_in(lab, 1)
    assert "jp-mod-fullscreen" not in back.get_attribute("class")
    assert back.locator(".jp-TraceExplorer-fullScreen").get_attribute("aria-pressed") == "false"
    assert lab.outputs(1).locator(".jp-TraceExplorer-placeholder").count() == 0

    # a 1024 px window with the file browser open: the side panel goes under the graph
    page.set_viewport_size({"width": 1024, "height": 768})
    lab.command("filebrowser:activate")
    page.locator(".jp-FileBrowser:visible").first.wait_for()
    stacked = explorer_in(lab, 1)
    page.wait_for_function(
        "(sel) => document.querySelector(sel)?.classList.contains('jp-mod-stacked')",
        arg=f".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output {ROOT}",
    )
    assert stacked.locator(".jp-TraceExplorer-splitter").get_attribute("aria-orientation") == "horizontal"
    g, s = graph.bounding_box(), side.bounding_box()
    assert s["y"] >= g["y"] + g["height"] and abs(s["x"] - g["x"]) < 2 and s["width"] > 300, (g, s)
    side.scroll_into_view_if_needed()
    lab.screenshot_themes("shell-stacked-1024")  # the whole window: the file browser beside the notebook
    # wide again: side by side
    page.set_viewport_size({"width": 1600, "height": 900})
    page.wait_for_function(
        "(sel) => !document.querySelector(sel)?.classList.contains('jp-mod-stacked')",
        arg=f".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output {ROOT}",
    )
    assert not lab.extension_errors()


def test_option_clicks_show_at_once_and_cancel_drops_the_result(lab):
    run_notebook(
        lab,
        "cancel.ipynb",
        [SETUP + MODELS, "slow = tj.explore(Slow(delay=3.0), (torch.ones(2, 8),), check_trace=False)\nslow"],
        timeout=60_000,
    )
    explorer = explorer_in(lab, 1)
    status = explorer.locator(".jp-TraceExplorer-status")
    first_run = explorer.locator(".jp-TraceExplorer-summary").get_attribute("title")

    # the click shows at once: the control is pending and the status counts, before the kernel says anything
    no_grad = explorer.locator('input[data-option="no_grad"]')
    started = time.monotonic()
    no_grad.check()
    label = explorer.locator("label.jp-mod-pending", has=lab.page.locator('input[data-option="no_grad"]'))
    label.wait_for(timeout=1_000)
    status.get_by_text(re.compile(r"^(re-trace asked|tracing)… \d")).wait_for(timeout=1_000)
    assert time.monotonic() - started < 1.5
    assert status.get_by_role("button", name="cancel").is_visible()
    # the kernel starts tracing (about 3 s, during which it cannot read anything)
    status.get_by_text(re.compile(r"^tracing… \d")).wait_for(timeout=10_000)
    lab.screenshot("shell-tracing", explorer.locator(".jp-TraceExplorer-optionsBar"))
    status.get_by_role("button", name="cancel").click()
    status.get_by_text(re.compile("^cancelled")).wait_for(timeout=1_000)
    # the kernel reads the cancel when the trace ends, drops the result and puts the options back
    explorer.locator("label.jp-mod-pending").wait_for(state="detached", timeout=20_000)
    assert not no_grad.is_checked()
    lab.page.wait_for_timeout(1_000)
    assert explorer.locator(".jp-TraceExplorer-summary").get_attribute("title") == first_run
    assert explorer.locator(".jp-TraceExplorer-history select").count() == 0  # still one run: nothing was added
    # "cancelled" says what is on screen, then goes: the status line does not keep it
    status.get_by_text(re.compile("^cancelled")).wait_for(state="detached", timeout=10_000)

    # without cancel the run comes, and nothing is pending any more
    no_grad.check()
    explorer.locator(".jp-TraceExplorer-history select").wait_for(timeout=30_000)
    explorer.locator("label.jp-mod-pending").wait_for(state="detached", timeout=5_000)
    assert no_grad.is_checked()
    # picking the first run puts its options back in the bar
    history = explorer.locator(".jp-TraceExplorer-history select")
    history.select_option(index=0)
    lab.page.wait_for_function(
        "(sel) => !document.querySelector(sel).checked", arg=f'{ROOT} input[data-option="no_grad"]', timeout=10_000
    )
    assert explorer.locator("label.jp-mod-pending").count() == 0
    assert not lab.extension_errors()


def test_the_json_download_loads_back_into_python(lab, tmp_path):
    run_notebook(lab, "json.ipynb", [SETUP, "e = tj.explore(Net().eval(), (torch.ones(2, 8),))\ne"])
    explorer = explorer_in(lab, 1)
    with lab.page.expect_download() as download:
        explorer.get_by_role("button", name="JSON").click()
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    run = tj.TraceRun.load(path)
    assert run.target.name == "Net" and run.graphs["forward"] and run.verdict.label == "warnings"
    assert tj.TraceRun.from_json(json.loads(path.read_text())).to_json() == run.to_json()


CONTRAST_CELLS = [
    "branchy = tj.explore(Net().eval(), (torch.ones(2, 8),))\nbranchy",
    "amber = tj.explore(LinearBatchNorm().train(), (torch.randn(4, 8),), probe=True)\namber",
    "red = tj.explore(loop_in_traced_fn, (torch.rand(3, 4),), check_inputs=[(torch.rand(4, 4),)])\nred",
    "failed = tj.explore(DictNet().eval(), (torch.ones(2, 8),))\nfailed",
    "ok = tj.explore(nn.Sequential(nn.Linear(8, 8), nn.ReLU()).eval(), (torch.ones(2, 8),))\nok",
]


def test_text_contrast_of_the_whole_explorer_in_light_and_dark(lab):
    run_notebook(lab, "contrast.ipynb", [SETUP + MODELS, *CONTRAST_CELLS], timeout=90_000)
    branchy = explorer_in(lab, 1)
    amber = explorer_in(lab, 2)
    red = explorer_in(lab, 3)
    explorer_in(lab, 4, graph=False)
    ok = explorer_in(lab, 5)
    # everything a person looks at: an active warning card, a selected node in the inspector, the check tab with
    # a current divergence, a pending option
    branchy.locator('.jp-TraceExplorer-tab[data-tab="warnings"]').click()
    branchy.locator(".jp-TraceExplorer-warning.jp-mod-clickable").first.click()
    branchy.locator(".jp-TraceExplorer-warning.jp-mod-active").first.wait_for()
    amber.locator(".jp-TraceExplorer-canvas g.node.kind-aten-batch_norm").first.click()
    amber.locator(".jp-TraceExplorer-inspector .jp-TraceExplorer-nodeKind").wait_for()
    red.locator('.jp-TraceExplorer-tab[data-tab="check"]').click()
    red.get_by_role("button", name="first root").wait_for()  # a failed check opens on its first root
    open_comparison(red)
    ok.locator('input[data-option="strict"]').uncheck()  # pending until its re-trace comes
    explorers = ((1, branchy), (2, amber), (3, red), (5, ok))
    failures: dict[str, list[str]] = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        lab.set_theme(theme)
        lab.page.wait_for_timeout(500)
        measured = lab.page.evaluate(CONTRAST, f".jp-NotebookPanel:not(.lm-mod-hidden) {ROOT}")
        assert len(measured) > 200, len(measured)  # every explorer's texts, not a handful
        low = sorted((m for m in measured if m["ratio"] < MIN_CONTRAST), key=lambda m: m["ratio"])
        failures[theme] = sorted({f"{m['ratio']:.2f} {m['where']} in {m['parent']}: {m['text']!r}" for m in low})
        name = theme.split()[-1].lower()
        for cell, explorer in explorers:
            lab.screenshot(f"shell-contrast-{name}-{cell}", explorer)
    lab.set_theme("JupyterLab Light")
    (ARTIFACTS / "contrast-failures.json").write_text(json.dumps(failures, indent=1, ensure_ascii=False))
    assert failures == {"JupyterLab Light": [], "JupyterLab Dark": []}


def test_the_shell_in_notebook_7(lab):
    """Notebook 7 serves the same extension: placeholder, badge, splitter, full screen, stacking, live feedback."""
    pytest.importorskip("notebook", minversion="7", reason="Notebook 7 is not installed (pip install 'notebook>=7')")
    lab.write_notebook(
        "nb7-shell.ipynb",
        [
            SETUP + MODELS + "%load_ext jupyter_tracejit\nm = Slow(delay=5.0)\nx = torch.ones(2, 8)",
            "%trace --no-check m(x)",
        ],
    )
    page = lab.page
    page.goto(f"{lab.server.url}/notebooks/nb7-shell.ipynb")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    # Run All before the kernel is connected runs nothing: wait for the toolbar's kernel indicator to say idle
    page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').first.wait_for(timeout=60_000)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    cell = page.locator(".jp-NotebookPanel .jp-Cell").nth(1)
    cell.locator(".jp-TraceExplorer-progress").get_by_text(re.compile(r"^tracing Slow… \d+ s")).wait_for(timeout=90_000)
    # Notebook 7's shell reaches the kernel too: the placeholder offers its cancel
    assert cell.locator(".jp-TraceExplorer-progress").get_by_role("button", name="cancel").is_visible()
    explorer = cell.locator(f".jp-OutputArea-output {ROOT}").first
    explorer.locator(".jp-TraceExplorer-canvas svg").wait_for(timeout=30_000)
    assert explorer.locator(".jp-TraceExplorer-badge").inner_text() == "ok"
    assert explorer.locator(".jp-TraceExplorer-badge").get_attribute("data-level") == "ok"

    bar = explorer.locator(".jp-TraceExplorer-splitter")
    bar.focus()
    page.keyboard.press("ArrowLeft")
    assert bar.get_attribute("aria-valuenow") == "55"

    explorer.locator(".jp-TraceExplorer-fullScreen").click()
    full = page.locator(f"body > {ROOT}.jp-mod-fullscreen")
    full.wait_for()
    viewport = page.viewport_size
    assert full.bounding_box() == {"x": 0, "y": 0, "width": viewport["width"], "height": viewport["height"]}
    lab.screenshot("shell-notebook7-full-screen")
    page.keyboard.press("Escape")
    full.wait_for(state="detached")
    explorer.wait_for()

    page.set_viewport_size({"width": 700, "height": 800})
    page.wait_for_function(
        "(sel) => document.querySelector(sel)?.classList.contains('jp-mod-stacked')",
        arg=f".jp-OutputArea-output {ROOT}",
    )
    page.set_viewport_size({"width": 1280, "height": 860})

    explorer.locator('input[data-option="no_grad"]').check()
    status = explorer.locator(".jp-TraceExplorer-status")
    status.get_by_role("button", name="cancel").wait_for(timeout=1_000)
    explorer.locator("label.jp-mod-pending").wait_for(timeout=1_000)
    explorer.locator(".jp-TraceExplorer-history select").wait_for(timeout=30_000)
    assert explorer.locator("label.jp-mod-pending").count() == 0
    lab.screenshot("shell-notebook7", explorer)
    assert not lab.extension_errors()


def test_an_explorer_the_kernel_closes_stays_on_the_page_read_only(lab):
    lab.write_notebook(
        "closed.ipynb",
        [
            SETUP + "%load_ext jupyter_tracejit\nimport jupyter_tracejit.magic\n"
            "jupyter_tracejit.magic.MAX_LIVE_EXPLORERS = 1\nx = torch.ones(2, 8)\nm = nn.Linear(8, 8)",
            "%trace m(x)",
            "%trace m(x)",
        ],
    )
    lab.open_notebook("closed.ipynb")
    lab.run_cell(0, timeout=60_000)
    lab.run_cell(1, timeout=60_000)
    first = explorer_in(lab, 1)
    assert "jp-mod-readOnly" not in (first.get_attribute("class") or "")
    assert first.locator(".jp-TraceExplorer-optionsBar input").count() > 0
    lab.run_cell(2, timeout=60_000)
    explorer_in(lab, 2)
    # the first explorer's model was closed (one live explorer at most): it is read-only now, still showing its run
    lab.page.wait_for_function(
        "(el) => el.classList.contains('jp-mod-readOnly')",
        arg=lab.outputs(1).locator(ROOT).first.element_handle(),
        timeout=10_000,
    )
    explorer_in(lab, 1)
    assert not lab.extension_errors()
