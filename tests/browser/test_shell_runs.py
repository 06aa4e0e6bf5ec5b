"""A run in flight in a real JupyterLab: %trace's placeholder, Python and the saved notebook following the run on
screen, the first trace's phase and its cancel, locations in notebook code, and cancel and the kernel's interrupt
stopping a long re-trace (the kernel lives on)."""

from __future__ import annotations

import re
import time

import pytest

from jupyter_tracejit.widgets import run_from_mime

from .helpers import explorer_in, run_notebook
from .shell_models import MODELS
from .test_explorer import SETUP

pytestmark = pytest.mark.browser


def start_trace_magic(lab, name: str, delay: float, magic: str, after: str):
    """Notebook ``name``: the setup and the models with ``m = Slow(delay=delay)``, then the ``%trace`` line ``magic``,
    then ``after``. Runs the first cell and starts the second: while the kernel traces, its output says what and for
    how long. That output."""
    setup = SETUP + MODELS + f"%load_ext jupyter_tracejit\nm = Slow(delay={delay})\nx = torch.ones(2, 8)"
    lab.write_notebook(name, [setup, magic, after])
    lab.open_notebook(name)
    lab.run_cell(0, timeout=60_000)
    cell = lab.notebook.locator(".jp-Cell").nth(1)
    cell.locator(".jp-InputArea-editor").click()
    lab.page.keyboard.press("Shift+Enter")
    progress = cell.locator(".jp-OutputArea-output.jp-TraceExplorer-progress")
    progress.get_by_text(re.compile(r"^tracing Slow… \d+ s \(started \d\d:\d\d:\d\d\)$")).wait_for(timeout=10_000)
    return progress


def test_trace_magic_placeholder_python_and_the_saved_notebook_follow_the_run_on_screen(lab):
    progress = start_trace_magic(
        lab,
        "magic.ipynb",
        1.5,
        "%trace --no-check -o run m(x)",
        "print(run.run_id == _trace_explorer.run.run_id, len(_trace_explorer.history), run.options['no_grad'])",
    )
    lab.screenshot("shell-trace-placeholder", lab.outputs(1).first)
    explorer = explorer_in(lab, 1)  # the explorer takes the placeholder's place
    assert lab.outputs(1).count() == 1 and progress.count() == 0
    lab.wait_for_idle()

    # a live re-trace: Python's variables follow it
    explorer.locator('input[data-option="no_grad"]').check()
    explorer.locator(".jp-TraceExplorer-history select").wait_for(timeout=30_000)
    lab.run_cell(2)
    assert lab.outputs(2).first.inner_text().strip() == "True 2 True"

    # the saved notebook holds the run on screen: its JSON, and the HTML that nbconvert and GitHub show
    lab.save()
    saved = lab.read_notebook("magic.ipynb")
    (output,) = saved.cells[1].outputs
    data = output["data"]
    assert isinstance(data["application/vnd.jupyter.tracejit+json"], str)  # the run's JSON text (explorer.py)
    shown = run_from_mime(data["application/vnd.jupyter.tracejit+json"])
    assert shown["options"]["no_grad"] is True
    assert shown["summary"] in data["text/html"] and shown["summary"] == data["text/plain"]
    assert 'class="tracejit-ok">ok</strong>' in data["text/html"]
    assert "application/vnd.jupyter.tracejit.progress+json" not in data
    assert not lab.extension_errors()


def test_the_first_trace_shows_its_phase_and_its_cancel_stops_it_and_the_kernel_lives_on(lab):
    # tracing (one call, 4 s), then checking (a re-trace and an eager run, 8 s)
    progress = start_trace_magic(
        lab,
        "first-cancel.ipynb",
        4.0,
        "%trace m(x)",
        "print('alive', '_trace' in globals(), '_trace_explorer' in globals())",
    )
    cancel = progress.get_by_role("button", name="cancel")
    assert cancel.is_visible()
    # the kernel says when the trace moves on to its check; the seconds count on from the start
    progress.get_by_text(re.compile(r"^checking Slow… \d+ s \(started \d\d:\d\d:\d\d\)$")).wait_for(timeout=15_000)
    assert progress.get_attribute("data-phase") == "checking"
    lab.screenshot_themes("shell-first-trace-checking", lab.outputs(1).first)

    started = time.monotonic()
    progress.get_by_role("button", name="cancel").click()
    # the kernel is interrupted in the check: one line says so, in the placeholder's place, no traceback
    cancelled = lab.outputs(1).get_by_text(re.compile(r"^cancelled after \d+\.\d s \(checking Slow\)$"))
    cancelled.wait_for(timeout=10_000)
    assert time.monotonic() - started < 10  # well before the check's 8 s of sleeping would have ended
    assert lab.outputs(1).count() == 1 and progress.count() == 0
    assert "Traceback" not in lab.outputs(1).first.inner_text()
    lab.screenshot_themes("shell-first-trace-cancelled", lab.outputs(1).first)
    lab.wait_for_idle(20_000)

    # the kernel lives on; the cancelled trace stored nothing
    lab.run_cell(2, timeout=30_000)
    assert lab.outputs(2).first.inner_text().strip() == "alive False False"
    assert not lab.extension_errors()


def test_locations_in_notebook_code_read_cell_and_line(lab):
    run_notebook(
        lab,
        "cells.ipynb",
        [
            SETUP,
            "def branchy(x):\n    if x.sum() > 0:\n        return x * 2\n    return x - 1",
            "e = tj.explore(branchy, (torch.ones(3),))\ne",
        ],
    )
    explorer = explorer_in(lab, 2)
    explorer.locator('.jp-TraceExplorer-tab[data-tab="warnings"]').click()
    warning = explorer.locator('.jp-TraceExplorer-warning[data-category="to_bool"]')
    assert warning.locator(".jp-TraceExplorer-loc").inner_text() == "cell [2], line 2"
    warning.click()
    explorer.locator('.jp-TraceExplorer-tab[data-tab="inspector"]').click()
    assert "cell [2], line 3" in explorer.locator(".jp-TraceExplorer-inspector").inner_text()
    # no hash file names where the explorer names a place (the IR text keeps torch's own comments)
    for place in explorer.locator(".jp-TraceExplorer-loc").all_inner_texts():
        assert not re.search(r"\d{6,}\.py", place), place
    assert not lab.extension_errors()


def test_cancel_and_the_kernels_interrupt_stop_a_long_retrace_and_the_kernel_lives_on(lab):
    # a re-trace runs outside any kernel request: without care SIGINT is ignored there and the kernel looks idle
    lab.write_notebook(
        "interrupt.ipynb",
        [
            SETUP + MODELS,
            "slow_model = Slow(delay=0.2)\nslow = tj.explore(slow_model, (torch.ones(2, 8),), check_trace=False)\nslow",
            "slow_model.delay = 120",
            "print('alive', len(slow.history), slow.status)",
        ],
    )
    lab.open_notebook("interrupt.ipynb")
    for cell in range(3):
        lab.run_cell(cell, timeout=60_000)
    explorer = explorer_in(lab, 1)
    status = explorer.locator(".jp-TraceExplorer-status")
    first_run = explorer.locator(".jp-TraceExplorer-summary").get_attribute("title")
    no_grad = explorer.locator('input[data-option="no_grad"]')

    # cancel while the kernel traces (120 s): it interrupts the kernel, so the trace stops now
    no_grad.check()
    status.get_by_text(re.compile(r"^tracing… \d")).wait_for(timeout=10_000)
    lab.page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\|\s*Busy")).wait_for(timeout=5_000)
    started = time.monotonic()
    status.get_by_role("button", name="cancel").click()
    explorer.locator("label.jp-mod-pending").wait_for(state="detached", timeout=20_000)
    assert time.monotonic() - started < 20
    lab.wait_for_idle(20_000)
    assert not no_grad.is_checked()
    assert explorer.locator(".jp-TraceExplorer-summary").get_attribute("title") == first_run

    # the kernel's own Interrupt stops a re-trace too, and says so
    no_grad.check()
    status.get_by_text(re.compile(r"^tracing… \d")).wait_for(timeout=10_000)
    started = time.monotonic()
    # (the kernel also says busy while it reads the click's message, before its debounce: wait for the trace)
    status.get_by_text(re.compile(r"^tracing… ([2-9]|\d\d)")).wait_for(timeout=10_000)
    lab.command("notebook:interrupt-kernel")
    status.get_by_text("re-trace interrupted: the run on screen is the one before it").wait_for(timeout=20_000)
    assert time.monotonic() - started < 20
    assert explorer.locator(".jp-TraceExplorer-summary").get_attribute("title") == first_run

    # and the kernel lives on, with its history intact
    lab.run_cell(3, timeout=30_000)
    lab.outputs(3).get_by_text("alive 1 error").wait_for(timeout=10_000)
    assert not lab.extension_errors()
