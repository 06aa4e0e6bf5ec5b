"""Browser benchmarks of the trace explorer: what a person waits for in a real JupyterLab.

Run ``python benchmarks/bench_browser.py [--reps N]``. It starts JupyterLab from this venv on 127.0.0.1 and
drives Debian's chromium (``/usr/bin/chromium``, headless) with Playwright, the way ``tests/browser`` does. For
each model a notebook is written into a temporary root dir and its cell is run; the explorer appears in the
cell's output. Figures come from the browser's own performance APIs and are *printed* with their target and
PASS/MISS; nothing is asserted, so a slow or busy machine never fails a build.

1. real models: transformers BERT-base (traced, and exported with a dynamic length) and GPT-2 (a wrapper returning
   ``.logits``), random weights from their configs (offline), and a 12-layer ``nn.TransformerEncoder``: widget
   state arrival -> interactive graph;
2. big graphs: a 2,000-layer MLP (12k nodes), a 50k-node chain (``x = x + 1`` in a loop: one scope, shown in
   sections) and a 10,000-layer ``nn.Sequential`` of Linear + ReLU (60k nodes): first paint (collapsed), then
   expanding one collapsed group;
3. for every model, ``fit`` (a click on the button -> the whole graph on screen, the 250 ms pan included);
4. the longest main-thread task during each of these phases, and the kernel's time (trace, serialize, comm).

The models are in ``browser_models.py``, the page scripts in ``browser_page.py``, the figures and their report in
``browser_report.py``. See ``benchmarks/README.md`` ("Browser benchmark") for what each figure means.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# the harness the browser tests use too: JupyterLab on 127.0.0.1, Debian's chromium, the steps a person takes
from jupyter_tracejit._dev.browser import (  # noqa: E402
    CHROMIUM,
    JupyterServer,
    Lab,
    launch_chromium,
    record_page_errors,
    start_jupyter_lab,
    stop_jupyter_lab,
)

sys.path.insert(0, str(ROOT / "benchmarks"))
from browser_models import FIRST_PAINT_TARGET_MS, LONG_TASK_TARGET_MS, MODEL_CELL, MODELS, SETUP_CELL  # noqa: E402
from browser_page import (  # noqa: E402
    BREAKDOWN,
    CLICK_COLLAPSED,
    CLICK_FIT,
    COLLECT,
    INIT_SCRIPT,
    PANELS,
    VIEWPORT,
    WAIT_FIRST_PAINT,
    WAIT_MS,
    WAIT_NEXT_INTERACTIVE,
)
from browser_report import (  # noqa: E402
    ModelResult,
    Row,
    chromium_version,
    extension_build,
    fmt_ms,
    fmt_task,
    med,
    phase_of,
    print_breakdown,
    report,
    timing_row,
)
from table import print_rows, verdict  # noqa: E402

# -- a saved explorer, opened without a kernel ---------------------------------------------------------------

SAVED_KEY = "saved"
SAVED_LAYERS = 2000  # the MLP of MODELS: 12,000 nodes
SAVED_FORMS = ("text", "object")
OPEN_SAVED = """(path) => { window.jupyterapp.commands.execute('docmanager:open', { path }); return null; }"""
SAVED_FIGURES = """([t0, panels]) => {
  const inter = performance.getEntriesByName('tracejit:interactive').map(e => e.startTime).filter(t => t > t0);
  const tasks = window.__tjLongTasks.filter(x => x.start + x.duration > t0);
  return { interactive: inter.length ? inter[0] - t0 : null, longest: Math.max(0, ...tasks.map(x => x.duration)) };
}"""


def write_saved_notebooks(lab: Lab) -> None:
    """The MLP's run saved in a notebook's output twice: as its JSON text (what the kernel writes) and as a JSON
    object (what earlier versions wrote, and what JupyterLab deep-copies at every read of the output's data)."""
    import torch
    from torch import nn

    import jupyter_tracejit as tj
    from jupyter_tracejit.widgets import RUN_MIME, run_mime_payload

    model = nn.Sequential(*[m for _ in range(SAVED_LAYERS) for m in (nn.Linear(16, 16), nn.ReLU())])
    run = tj.trace(model, (torch.randn(8, 16),), check_trace=False)
    as_json = run.to_json()
    for form, payload in zip(SAVED_FORMS, (run_mime_payload(as_json), as_json), strict=True):
        data = {RUN_MIME: payload, "text/html": run.to_html(), "text/plain": run.summary()}
        output = {"output_type": "display_data", "metadata": {}, "data": data}
        lab.write_notebook(f"saved-{form}.ipynb", ["# traced elsewhere"], outputs={0: [output]})
    lab.write_notebook("saved-start.ipynb", ["# the page starts here"])


def measure_saved(browser: Any, server: JupyterServer, reps: int) -> dict[str, list[dict[str, float]]]:
    """Open each saved notebook in a page that has JupyterLab up (no kernel), alternating which goes first: from
    the open command to the explorer's interactive graph, and the longest main-thread task in that time."""
    figures: dict[str, list[dict[str, float]]] = {form: [] for form in SAVED_FORMS}
    for rep in range(reps):
        for form in SAVED_FORMS if rep % 2 == 0 else SAVED_FORMS[::-1]:
            context = browser.new_context(viewport=VIEWPORT)
            context.set_default_timeout(WAIT_MS)
            context.add_init_script(INIT_SCRIPT)
            page = context.new_page()
            lab = Lab(page, server)
            lab.open_notebook("saved-start.ipynb", wait_for_kernel=False)
            page.wait_for_timeout(1500)  # JupyterLab's own start-up work is done
            t0 = page.evaluate("() => performance.now()")
            page.evaluate(OPEN_SAVED, f"saved-{form}.ipynb")
            page.locator(f"{PANELS}:not(.lm-mod-hidden) .jp-TraceExplorer-graph svg").first.wait_for()
            page.wait_for_timeout(500)
            figures[form].append(page.evaluate(SAVED_FIGURES, [t0, PANELS]))
            context.close()
        got = ", ".join(f"{form} {fmt_ms(figures[form][-1]['interactive'] or 0)}" for form in SAVED_FORMS)
        print(f"  rep {rep + 1} saved explorer, open -> interactive: {got}")
        sys.stdout.flush()
    server.shutdown_kernels()
    return figures


def saved_rows(figures: dict[str, list[dict[str, float]]]) -> list[Row]:
    text, obj = figures["text"], figures["object"]
    opened = [f["interactive"] or 0.0 for f in text]
    longest = [f["longest"] for f in text]
    obj_opened = med([f["interactive"] or 0.0 for f in obj])
    obj_longest = med([f["longest"] for f in obj])
    name = f"saved MLP {SAVED_LAYERS:,} layers, no kernel: open -> interactive"
    row = timing_row(name, opened, FIRST_PAINT_TARGET_MS)
    row.details = [
        "the run saved as JSON text (this version); opened side by side with the same run saved as a JSON object "
        f"(earlier versions): {fmt_ms(obj_opened)}, {obj_opened / max(med(opened), 1):.1f}x as long",
    ]
    task = Row(
        "  longest main-thread task in it",
        f"{fmt_task(med(longest))} / {fmt_task(max(longest))}",
        f"<= {fmt_ms(LONG_TASK_TARGET_MS)}",
        verdict(med(longest) <= LONG_TASK_TARGET_MS),
        [f"saved as a JSON object: {fmt_task(obj_longest)} (JupyterLab deep-copies it at every read of the data)"],
    )
    return [row, task]


# -- server and browser -------------------------------------------------------------------------------


def start_server(base: Path) -> JupyterServer:
    """JupyterLab started as the ``jupyter_server`` test fixture starts it."""
    return start_jupyter_lab(base, base / "jupyter-server.log")


def stop_server(server: JupyterServer) -> None:
    stop_jupyter_lab(server)


def kernel_figures(lab: Lab, cell: int) -> dict[str, Any]:
    """The figures the model cell printed (its stdout only: the explorer's own text is not read)."""
    stdout = (
        lab.notebook.locator(".jp-Cell")
        .nth(cell)
        .locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]')
    )
    text = stdout.all_inner_texts()
    m = re.search(r"TRACEJIT_BENCH (\{.*\})", "\n".join(text))
    return json.loads(m.group(1)) if m else {}


def measure_once(browser: Any, server: JupyterServer, notebook: str, result: ModelResult) -> Any:
    """One repetition on a fresh page: open the notebook (fresh kernel), run the setup cell, then time the
    model cell's explorer from its state arrival to its first interactive graph (and one expansion). Returns
    the page, still open: the caller closes it with :func:`close_page`."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(WAIT_MS)
    context.add_init_script(INIT_SCRIPT)
    page = context.new_page()
    errors = record_page_errors(page)
    lab = Lab(page, server)
    try:
        lab.open_notebook(notebook)
        lab.run_cell(0, timeout=WAIT_MS)
        cell = lab.notebook.locator(".jp-Cell").nth(1)
        cell.locator(".jp-InputArea-editor").click()
        page.wait_for_timeout(300)  # let the click's own work settle
        t0 = page.evaluate("() => performance.now()")
        page.keyboard.press("Shift+Enter")
        outcome = page.wait_for_function(WAIT_FIRST_PAINT, arg=[t0, PANELS], timeout=WAIT_MS, polling=100)
        outcome = outcome.json_value()
        lab.wait_for_idle(WAIT_MS)
        page.wait_for_timeout(500)  # the long tasks of the phase are reported, the page is quiet
        data = page.evaluate(COLLECT, PANELS)
        if data["longTaskError"]:
            raise RuntimeError(f"the Long Tasks API is unavailable: {data['longTaskError']}")
        result.kernel.append(kernel_figures(lab, 1))
        states = [s for s in data["state"] if s >= t0]
        result.marks.append(f"{len(states)} state / {sum(i >= t0 for i in data['interactive'])} interactive")
        if outcome != "ok":
            result.error = str(outcome)
            result.error_state_ms = states[0] - t0 if states else None
            return page
        state = states[0]
        interactive = next(i for i in data["interactive"] if i >= state)
        result.first.append(phase_of(data, state, interactive))
        result.cell_to_state.append(state - t0)
        messages = [m for m in data["messages"] if t0 <= m["t"] <= state]
        if messages:
            biggest = max(messages, key=lambda m: m["bytes"])
            result.message_to_state.append(state - biggest["t"])
            result.message_bytes.append(biggest["bytes"])
        result.status_first.append(" | ".join(data["status"]))
        result.svg_elements.append(data["svgElements"])
        fit = page.evaluate(CLICK_FIT, PANELS)
        if fit is None:
            raise RuntimeError("no graph or no fit button to click")
        page.wait_for_timeout(500)
        result.fit.append(phase_of(page.evaluate(COLLECT, PANELS), fit["t"], fit["end"]))
        if result.model.expand:
            click = page.evaluate(CLICK_COLLAPSED, PANELS)
            if click is None:
                raise RuntimeError("no collapsed group (g.node.scope-collapsed) to click")
            page.wait_for_function(WAIT_NEXT_INTERACTIVE, arg=click["t"], timeout=WAIT_MS, polling=50)
            page.wait_for_timeout(500)
            data = page.evaluate(COLLECT, PANELS)
            done = next(i for i in data["interactive"] if i > click["t"])
            result.expand.append(phase_of(data, click["t"], done))
            result.clicked.append(f"{click['id']} ({click['label']})")
            result.click_handler.append(click["handlerDone"] - click["t"])
            result.status_expanded.append(" | ".join(data["status"]))
        return page
    except Exception:
        print(f"  failed on {notebook}; browser errors:\n    " + "\n    ".join(errors[-10:]))
        print("  server log tail:\n" + server.log_tail(2000))
        context.close()
        server.shutdown_kernels()
        raise


def close_page(page: Any, server: JupyterServer) -> None:
    page.context.close()
    server.shutdown_kernels()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="repetitions, each on a fresh page (default 3)")
    keys = [m.key for m in MODELS] + [SAVED_KEY]
    parser.add_argument(
        "--only", nargs="+", choices=keys, metavar="MODEL", help=f"measure these models only ({', '.join(keys)})"
    )
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    models = [m for m in MODELS if not args.only or m.key in args.only]
    saved = not args.only or SAVED_KEY in args.only
    saved_figures: dict[str, list[dict[str, float]]] | None = None
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
        return 1
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    base = Path(tempfile.mkdtemp(prefix="tracejit-bench-browser-"))
    server = start_server(base)
    results = [ModelResult(m) for m in models]
    version = "?"
    try:
        lab = Lab(None, server)
        for m in models:
            lab.write_notebook(f"{m.key}.ipynb", [SETUP_CELL, MODEL_CELL.format(build=m.build, capture=m.capture)])
        if saved:
            write_saved_notebooks(lab)
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            version = chromium_version(browser)
            import jupyterlab

            print("jupyter-tracejit browser benchmarks (figures are printed, never asserted)")
            print(
                f"machine: {platform.platform()}; {os.cpu_count()} CPUs"
                f" ({len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'} usable);"
                f" chromium {version} (headless, {CHROMIUM}); JupyterLab {jupyterlab.__version__};"
                f" Python {platform.python_version()}; extension {extension_build()}"
                + (f"; load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}" if load else "")
            )
            print(
                f"{args.reps} repetition(s), each on a fresh page with a fresh kernel; verdicts on the median;"
                " times are the page's performance.now() between marks"
            )
            sys.stdout.flush()
            for rep in range(args.reps):
                last = rep == args.reps - 1
                for res in results:
                    if res.error is not None:
                        continue  # it failed to draw: that does not depend on timing
                    page = measure_once(browser, server, f"{res.model.key}.ipynb", res)
                    if last and res.error is None:
                        page.wait_for_timeout(300)
                        res.breakdown = page.evaluate(BREAKDOWN, PANELS)
                    close_page(page, server)
                    if res.error is not None:
                        line = f"  rep {rep + 1} {res.model.key}: ERROR, the output shows: {res.error[:120]}"
                    else:
                        line = f"  rep {rep + 1} {res.model.key}: state -> interactive {fmt_ms(res.first[-1].ms)}"
                        if res.model.expand:
                            line += f", expand {fmt_ms(res.expand[-1].ms)}"
                    print(f"{line}  ({time.monotonic() - started:.0f} s elapsed)")
                    sys.stdout.flush()
            if saved:
                saved_figures = measure_saved(browser, server, args.reps)
            browser.close()
    finally:
        stop_server(server)
        shutil.rmtree(base, ignore_errors=True)

    torch_version = next((k.get("torch") for res in results for k in res.kernel if k), "?")
    print()
    print(f"[browser] explorer in JupyterLab; chromium {version}; {os.cpu_count()} CPUs; kernel torch {torch_version}")
    print_rows(report(results) + (saved_rows(saved_figures) if saved_figures else []), "measured (median / max)")
    print()
    print("marks seen per repetition (state / interactive marks after Shift+Enter; 1 / 1 expected):")
    for res in results:
        print(f"  {res.model.label}: {'; '.join(res.marks)}")
    print(
        "in-page breakdown (last repetition: the explorer's steps again, on the main thread, after the timed phases):"
    )
    for res in results:
        print_breakdown(res.model.label, res.breakdown)
    end_load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(
        f"total {time.monotonic() - started:.0f} s"
        + (f"; load average at end {end_load[0]:.2f} {end_load[1]:.2f} {end_load[2]:.2f}" if end_load else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
