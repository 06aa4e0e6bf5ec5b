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

See ``benchmarks/README.md`` ("Browser benchmark") for what each figure means.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
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
from table import print_rows, verdict  # noqa: E402

TTI_TARGET_MS = 1000.0  # real models: state arrival -> interactive graph
FIRST_PAINT_TARGET_MS = 2000.0  # big graphs: state arrival -> interactive graph (collapsed)
BIG_FIRST_PAINT_TARGET_MS = 5000.0  # 50k / 60k nodes: "within a few seconds"
EXPAND_TARGET_MS = 300.0  # big graphs: click on a collapsed group -> interactive graph
FIT_TARGET_MS = 500.0  # click on fit -> the fitted view on screen (a 250 ms animation of it included)
LONG_TASK_TARGET_MS = 100.0  # longest main-thread task during a phase
LONG_TASK_THRESHOLD_MS = 50.0  # the Long Tasks API reports tasks of more than this only

WAIT_MS = 420_000  # kernel start + `import torch` + tracing 10,000 layers on a busy 2-core machine
VIEWPORT = {"width": 1280, "height": 860}
#: notebook panels, for page scripts (they pick the visible one: JupyterLab keeps hidden panels in the DOM)
PANELS = ".jp-NotebookPanel"
# the page scripts below read the performance marks the explorer sets: 'tracejit:state' when a run's state arrives,
# 'tracejit:interactive' when its picture can be used (MARK_STATE / MARK_INTERACTIVE in labextension/src/graph)

SETUP_CELL = """\
import json, os, time
os.environ["HF_HUB_OFFLINE"] = "1"  # models are built from configs with random weights: nothing is downloaded
import torch
from torch import nn
import jupyter_tracejit as tj
torch.manual_seed(0)
"""

# every model cell: build the model (untimed), trace (or export) it (timed), create the explorer widget (timed: this
# serializes the run and sends it over the comm), print the kernel-side figures, show the explorer
MODEL_CELL = """\
{build}
t0 = time.perf_counter()
run = {capture}
t1 = time.perf_counter()
json_bytes = len(json.dumps(run.to_json()))
t2 = time.perf_counter()
e = tj.explore(run)
t3 = time.perf_counter()
print("TRACEJIT_BENCH " + json.dumps({{
    "trace_s": t1 - t0, "json_s": t2 - t1, "explore_s": t3 - t2, "json_bytes": json_bytes,
    "nodes": sum(len(g) for g in run.graphs.values()), "torch": torch.__version__,
}}))
e
"""

TRANSFORMER = """\
layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True)
model = nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False).eval()
x = torch.randn(2, 16, 256)"""

MLP = """\
model = nn.Sequential(*[m for _ in range(2000) for m in (nn.Linear(16, 16), nn.ReLU())])
x = torch.randn(8, 16)"""

BERT = """\
from transformers import BertConfig, BertModel
model = BertModel(BertConfig(return_dict=False)).eval()
x = torch.randint(0, 1000, (1, 64))"""

GPT2 = """\
from transformers import GPT2Config, GPT2LMHeadModel
class GPT2Logits(nn.Module):
    def __init__(self):
        super().__init__()
        self.lm = GPT2LMHeadModel(GPT2Config(use_cache=False))
    def forward(self, input_ids):
        return self.lm(input_ids).logits
model = GPT2Logits().eval()
x = torch.randint(0, 1000, (1, 64))"""

# about 50,000 nodes (an add and its two constants per step), all in one scope: no module structure to collapse
CHAIN_50K = """\
def model(x):
    for _ in range(16_700):
        x = x + 1
    return x
x = torch.rand(2)"""

SEQUENTIAL_10K = """\
model = nn.Sequential(*[m for _ in range(10_000) for m in (nn.Linear(4, 4), nn.ReLU())])
x = torch.randn(2, 4)"""


TRACE = "tj.trace(model, (x,), check_trace=False)"
# the export explorer must be as quick as the trace's on the same model: its graph carries symbolic sizes, a Guards
# tab and the export report besides (the export check runs in the kernel: its time is the kernel's, not the page's)
EXPORT_DYNAMIC = 'tj.export(model, (x,), dynamic_shapes=({1: torch.export.Dim("seq", min=2, max=128)},), draft="never")'


@dataclass(frozen=True)
class Model:
    key: str
    label: str
    build: str
    first_target_ms: float
    first_name: str
    expand: bool
    capture: str = TRACE


MODELS = (
    Model("bert", "BERT-base", BERT, TTI_TARGET_MS, "state -> interactive", False),
    Model(
        "bert-export",
        "BERT-base, torch.export (Dim seq)",
        BERT,
        TTI_TARGET_MS,
        "state -> interactive",
        False,
        EXPORT_DYNAMIC,
    ),
    Model("gpt2", "GPT-2 (logits)", GPT2, TTI_TARGET_MS, "state -> interactive", False),
    Model("transformer", "TransformerEncoder x12", TRANSFORMER, TTI_TARGET_MS, "state -> interactive", False),
    Model("mlp", "MLP 2,000 layers", MLP, FIRST_PAINT_TARGET_MS, "first paint (collapsed)", True),
    Model("chain", "chain of 16,700 adds", CHAIN_50K, BIG_FIRST_PAINT_TARGET_MS, "first paint (collapsed)", True),
    Model(
        "sequential",
        "Sequential 10,000 x (Linear, ReLU)",
        SEQUENTIAL_10K,
        BIG_FIRST_PAINT_TARGET_MS,
        "first paint (collapsed)",
        True,
    ),
)

# Installed before any page script runs. Collects long tasks and long animation frames (buffered), and
# timestamps the explorer's layout requests to its Graphviz worker (sent / answered) and big kernel messages
# arriving over the websocket; the page code itself is not changed.
INIT_SCRIPT = """
(() => {
  const longTasks = (window.__tjLongTasks = []);
  const frames = (window.__tjFrames = []);
  try {
    new PerformanceObserver(list => {
      for (const e of list.getEntries()) longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  } catch (err) {
    window.__tjLongTaskError = String(err);
  }
  try {
    new PerformanceObserver(list => {
      for (const e of list.getEntries()) {
        frames.push({
          start: e.startTime,
          duration: e.duration,
          renderStart: e.renderStart,
          styleAndLayoutStart: e.styleAndLayoutStart,
          scripts: (e.scripts || []).map(s => ({
            duration: s.duration,
            invoker: s.invoker,
            fn: s.sourceFunctionName,
            src: (s.sourceURL || '').split('/').pop().split('?')[0],
            layout: s.forcedStyleAndLayoutDuration
          }))
        });
      }
    }).observe({ type: 'long-animation-frame', buffered: true });
  } catch (err) {
    // long animation frames are optional detail
  }
  // the native class, its instances also calling heard(data) with every message they receive
  const hearing = (Native, heard) =>
    class extends Native {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', ev => heard(ev.data));
      }
    };
  const layouts = (window.__tjLayouts = new Map());
  window.Worker = class extends hearing(window.Worker, d => {
    const r = d && layouts.get(d.id);
    if (r && r.received === undefined) {
      r.received = performance.now();
      r.svgChars = typeof d.svg === 'string' ? d.svg.length : -1;
      if (typeof d.svg === 'string') window.__tjLastSvg = d.svg;
    }
  }) {
    postMessage(msg, ...rest) {
      if (msg && typeof msg.dot === 'string' && typeof msg.id === 'number') {
        layouts.set(msg.id, { id: msg.id, sent: performance.now(), dotChars: msg.dot.length });
      }
      return super.postMessage(msg, ...rest);
    }
  };
  const messages = (window.__tjMessages = []);
  window.WebSocket = hearing(window.WebSocket, d => {
    const n = typeof d === 'string' ? d.length : d.byteLength ?? d.size ?? 0;
    if (n > 100000) messages.push({ t: performance.now(), bytes: n });
  });
})();
"""

# 'ok' once this output's explorer has received its run (state mark after t0) and drawn a graph after it;
# the error text when JupyterLab shows the output's renderer failing instead
WAIT_FIRST_PAINT = """([t0, sel]) => {
  const s = performance.getEntriesByName('tracejit:state').find(e => e.startTime >= t0);
  if (s && performance.getEntriesByName('tracejit:interactive').some(e => e.startTime >= s.startTime)) return 'ok';
  const panel = [...document.querySelectorAll(sel)].find(p => p.offsetParent !== null);
  const cell = panel && panel.querySelectorAll('.jp-Cell')[1];
  // JupyterLab replaces a renderer that throws with the text "Javascript Error: <message>"
  const area = cell && cell.querySelector('.jp-OutputArea');
  const text = area ? area.textContent || '' : '';
  const at = text.indexOf('Javascript Error');
  return at >= 0 ? text.slice(at, at + 300).split('\\n')[0] : false;
}"""

WAIT_NEXT_INTERACTIVE = """(t) => performance.getEntriesByName('tracejit:interactive').some(e => e.startTime > t)"""

COLLECT = """(sel) => {
  const panel = [...document.querySelectorAll(sel)].find(p => p.offsetParent !== null) || document;
  const svg = panel.querySelector('.jp-TraceExplorer-canvas svg');
  return {
    now: performance.now(),
    state: performance.getEntriesByName('tracejit:state').map(e => e.startTime),
    interactive: performance.getEntriesByName('tracejit:interactive').map(e => e.startTime),
    longTasks: window.__tjLongTasks || [],
    longTaskError: window.__tjLongTaskError || null,
    frames: window.__tjFrames || [],
    layouts: [...(window.__tjLayouts || new Map()).values()],
    messages: window.__tjMessages || [],
    status: [...panel.querySelectorAll('.jp-TraceExplorer-graphStatus')].map(e => e.textContent),
    collapsed: panel.querySelectorAll('.jp-TraceExplorer-canvas g.node.scope-collapsed').length,
    svgElements: svg ? svg.querySelectorAll('*').length : 0
  };
}"""

# a click on the first collapsed group box, timed from right before the event is dispatched
CLICK_COLLAPSED = """(sel) => {
  const panel = [...document.querySelectorAll(sel)].find(p => p.offsetParent !== null) || document;
  const el = panel.querySelector('.jp-TraceExplorer-canvas g.node.scope-collapsed');
  if (!el) return null;
  const label = [...el.querySelectorAll('text')].map(t => t.textContent).join(' ');
  const t = performance.now();
  el.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
  return { t, handlerDone: performance.now(), id: el.id, label };
}"""

# a click on the explorer's fit button, timed until the view (the SVG's viewBox) has stopped changing for two
# frames: the fit and its animation are on screen
CLICK_FIT = """async (sel) => {
  const panel = [...document.querySelectorAll(sel)].find(p => p.offsetParent !== null) || document;
  const svg = panel.querySelector('.jp-TraceExplorer-canvas svg');
  const fit = [...panel.querySelectorAll('.jp-TraceExplorer-toolbar button')].find(b => b.textContent === 'fit');
  if (!svg || !fit) return null;
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  const t = performance.now();
  fit.click();
  let last = svg.getAttribute('viewBox');
  let still = 0;
  let end = performance.now();
  while (still < 2 && performance.now() - t < 5000) {
    await frame();
    const now = svg.getAttribute('viewBox');
    if (now === last) {
      still += 1;
    } else {
      still = 0;
      last = now;
      end = performance.now();
    }
  }
  return { t, end, viewBox: last };
}"""

# Once per model, after the timed repetitions: time the explorer's own steps on its own objects (found through
# JupyterLab's widget tree; `window.jupyterapp` is exposed by the server flag), one by one on the main thread.
BREAKDOWN = """async (sel) => {
  const app = window.jupyterapp;
  let found = null;
  const seen = new Set();
  const visit = w => {
    if (!w || found || seen.has(w)) return;
    seen.add(w);
    if (w.explorer && w.explorer.graph && w.explorer.ctx) {
      found = w.explorer;
      return;
    }
    if (typeof w.children === 'function') for (const c of w.children()) visit(c);
  };
  for (const w of app.shell.widgets('main')) visit(w);
  if (!found) return { error: 'no explorer found in the widget tree' };
  const ex = found;
  const median = xs => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const timed = f => {
    const t = performance.now();
    f();
    return performance.now() - t;
  };
  const raw = ex.ctx.host.get('run');
  let text = '';
  const stringify = median([0, 1, 2].map(() => timed(() => (text = JSON.stringify(raw)))));
  const parse = median([0, 1, 2].map(() => timed(() => JSON.parse(text))));
  const Ctx = ex.ctx.constructor;
  const decode = [];
  const groups = [];
  for (let i = 0; i < 3; i++) {
    const c = new Ctx(ex.ctx.host);
    decode.push(timed(() => c.run));
    groups.push(timed(() => c.groups()));
  }
  // a re-layout of what is on screen: the synchronous part (visible DOT), the worker, then the SVG insert
  const before = performance.now();
  const refreshSync = timed(() => ex.graph.refresh());
  await ex.graph.rendered;
  const done = performance.now();
  const layout = [...window.__tjLayouts.values()].filter(r => r.sent >= before).pop() || null;
  // the SVG step, redone by hand on the worker's last answer: XML parse, the sanitizer's walk over every
  // element and attribute (graph/svg.ts; nothing is removed from Graphviz output), import, insert + layout
  const svgText = window.__tjLastSvg || '';
  let doc = null;
  const svgParse = timed(() => (doc = new DOMParser().parseFromString(svgText, 'image/svg+xml')));
  const svgWalk = timed(() => {
    for (const el of [doc.documentElement, ...doc.documentElement.querySelectorAll('*')]) {
      el.localName.toLowerCase();
      for (const attr of Array.from(el.attributes)) attr.name.toLowerCase().startsWith('on');
    }
  });
  let imported = null;
  const svgImport = timed(() => (imported = document.importNode(doc.documentElement, true)));
  const box = document.createElement('div');
  box.style.cssText = 'position:fixed;left:0;top:0;width:800px;height:600px;overflow:hidden;visibility:hidden';
  document.body.appendChild(box);
  const svgInsertLayout = timed(() => {
    box.appendChild(imported);
    imported.getBBox();
  });
  box.remove();
  return {
    svgParse,
    svgWalk,
    svgImport,
    svgInsertLayout,
    jsonChars: text.length,
    stringify,
    parse,
    decode: median(decode),
    groups: median(groups),
    refreshSync,
    worker: layout && layout.received !== undefined ? layout.received - layout.sent : null,
    insert: layout && layout.received !== undefined ? done - layout.received : null,
    dotChars: layout ? layout.dotChars : null,
    svgChars: layout ? layout.svgChars : null,
    svgElements: ex.graph.element.querySelectorAll('.jp-TraceExplorer-canvas svg *').length
  };
}"""


# -- results ------------------------------------------------------------------------------------------


@dataclass
class Phase:
    """One timed phase of one repetition (times in ms of the page's performance clock)."""

    start: float
    end: float
    longest_task: float  # 0 when no task over the Long Tasks threshold overlapped the phase
    longest_task_offset: float  # when that task began, relative to the phase start
    before_layout: float | None = None  # phase start -> layout request posted to the worker
    worker: float | None = None  # posted -> answer received
    after_layout: float | None = None  # answer received -> interactive (SVG parse, sanitize, insert, fit)
    frame: str = ""  # the longest animation frame in the phase, split into script and rendering

    @property
    def ms(self) -> float:
        return self.end - self.start


@dataclass
class ModelResult:
    model: Model
    error: str | None = None  # what the output showed instead of the explorer
    error_state_ms: float | None = None  # Shift+Enter -> state mark, when it failed after the state arrived
    first: list[Phase] = field(default_factory=list)
    expand: list[Phase] = field(default_factory=list)
    fit: list[Phase] = field(default_factory=list)
    kernel: list[dict[str, Any]] = field(default_factory=list)
    cell_to_state: list[float] = field(default_factory=list)
    message_to_state: list[float] = field(default_factory=list)
    message_bytes: list[int] = field(default_factory=list)
    status_first: list[str] = field(default_factory=list)
    status_expanded: list[str] = field(default_factory=list)
    clicked: list[str] = field(default_factory=list)
    click_handler: list[float] = field(default_factory=list)
    svg_elements: list[int] = field(default_factory=list)
    marks: list[str] = field(default_factory=list)
    breakdown: dict[str, Any] | None = None


def phase_of(data: dict[str, Any], start: float, end: float) -> Phase:
    overlapping = [t for t in data["longTasks"] if t["start"] < end and t["start"] + t["duration"] > start]
    longest = max(overlapping, key=lambda t: t["duration"], default=None)
    phase = Phase(
        start=start,
        end=end,
        longest_task=longest["duration"] if longest else 0.0,
        longest_task_offset=longest["start"] - start if longest else 0.0,
    )
    layouts = [r for r in data["layouts"] if start <= r["sent"] <= end]
    if layouts:
        r = layouts[-1]
        phase.before_layout = r["sent"] - start
        if r.get("received") is not None and r["received"] <= end:
            phase.worker = r["received"] - r["sent"]
            phase.after_layout = end - r["received"]
    frames = [f for f in data["frames"] if f["start"] < end and f["start"] + f["duration"] > start]
    frame = max(frames, key=lambda f: f["duration"], default=None)
    if frame:
        frame_end = frame["start"] + frame["duration"]
        render = frame_end - frame["renderStart"] if frame["renderStart"] else 0.0
        style_layout = frame_end - frame["styleAndLayoutStart"] if frame["styleAndLayoutStart"] else 0.0
        scripts = sorted(frame["scripts"], key=lambda s: -s["duration"])[:2]
        where = ", ".join(
            f"{short_url(s['invoker'] or '?')}"
            + (f" -> {s['fn'] or '(anonymous)'} in {s['src']}" if s["src"] else "")
            + f" {s['duration']:.0f} ms"
            + (f", {s['layout']:.0f} ms forced style+layout" if s["layout"] and s["layout"] >= 1 else "")
            for s in scripts
        )
        phase.frame = (
            f"longest frame {frame['duration']:.0f} ms: scripts {frame['duration'] - render:.0f} ms"
            f" ({where or 'none over 5 ms'}), render {render:.0f} ms (style+layout {style_layout:.0f} ms)"
        )
    return phase


def short_url(text: str) -> str:
    """A script URL as its file name (LoAF names a script's evaluation by its URL)."""
    return text.split("?")[0].rsplit("/", 1)[-1] if "://" in text else text


def extension_build() -> str:
    """Which build of the extension the server serves (develop mode: this checkout's build output)."""
    static = ROOT / "jupyter_tracejit" / "labextension" / "static"
    entries = sorted(static.glob("remoteEntry.*.js"))
    if not entries:
        return "not built?"
    built = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entries[-1].stat().st_mtime))
    return f"{entries[-1].name}, built {built}"


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def fmt_ms(ms: float) -> str:
    return f"{ms:,.0f} ms"


def fmt_task(ms: float) -> str:
    return f"<{LONG_TASK_THRESHOLD_MS:.0f} ms" if ms <= 0 else fmt_ms(ms)


@dataclass
class Row:
    name: str
    measured: str
    target: str
    status: str
    details: list[str] = field(default_factory=list)


def timing_row(name: str, values: list[float], target: float, fmt: Any = fmt_ms) -> Row:
    m, worst = med(values), max(values)
    return Row(name, f"{fmt(m)} / {fmt(worst)}", f"<= {fmt_ms(target)}", verdict(m <= target))


def split_line(phases: list[Phase]) -> str:
    """The median split of a phase: main thread before the layout request, worker, after the answer."""
    parts = []
    for label, values in (
        ("before layout (main thread)", [p.before_layout for p in phases]),
        ("Graphviz worker", [p.worker for p in phases]),
        ("after layout (SVG in, main thread)", [p.after_layout for p in phases]),
    ):
        known = [v for v in values if v is not None]
        parts.append(f"{label} {fmt_ms(med(known))}" if known else f"{label} n/a")
    return "split (medians): " + ", ".join(parts)


def task_row(phases: list[Phase]) -> Row:
    """The longest main-thread task overlapping each phase (median / max over the repetitions)."""
    tasks = [p.longest_task for p in phases]
    m = med(tasks)
    return Row(
        "  longest main-thread task in it",
        f"{fmt_task(m)} / {fmt_task(max(tasks))}",
        f"<= {fmt_ms(LONG_TASK_TARGET_MS)}",
        verdict(m <= LONG_TASK_TARGET_MS),
        task_details(phases),
    )


def task_details(phases: list[Phase]) -> list[str]:
    lines = []
    offsets = [f"{p.longest_task_offset:+,.0f}" for p in phases if p.longest_task > 0]
    if offsets:
        lines.append(f"longest task began at {', '.join(offsets)} ms from the phase start (per repetition)")
    frames = [p.frame for p in phases if p.frame]
    if frames:
        lines.append(frames[len(frames) // 2] + " (median repetition)")
    return lines


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


# -- report -------------------------------------------------------------------------------------------


def first_rows(res: ModelResult) -> list[Row]:
    m = res.model
    name = f"{m.label}: {m.first_name}"
    rows: list[Row] = []
    k = next((k for k in reversed(res.kernel) if k), {})
    size = f"{k.get('nodes', 0):,} nodes, run JSON {k.get('json_bytes', 0) / 1e6:.2f} MB" if k else ""
    if res.error is not None:
        when = (
            f"{fmt_ms(res.error_state_ms)} after Shift+Enter the state arrived (state mark), but no graph was drawn"
            if res.error_state_ms is not None
            else "no state mark"
        )
        row = Row(name, "ERROR", f"<= {fmt_ms(m.first_target_ms)}", "MISS", [f"the output shows: {res.error}", when])
        if size:
            row.details.append(size)
        if len(res.marks) == 1:
            row.details.append("measured once: the failure does not depend on timing, so it is not repeated")
        rows.append(row)
        if m.expand:
            rows.append(Row(f"{m.label}: expand one group", "n/a", f"<= {fmt_ms(EXPAND_TARGET_MS)}", "MISS"))
        return rows
    row = timing_row(name, [p.ms for p in res.first], m.first_target_ms)
    row.details.append(split_line(res.first))
    row.details.append(f"first paint: {res.status_first[-1]!r}; {res.svg_elements[-1]:,} SVG elements")
    if size:
        if res.message_bytes:
            size += f" (biggest kernel message of the cell {med(res.message_bytes) / 1e6:.2f} MB)"
        row.details.append(size)
    row.details.append("per repetition: " + ", ".join(fmt_ms(p.ms) for p in res.first))
    rows.append(row)
    rows.append(task_row(res.first))
    if res.fit:
        fit = timing_row(f"{m.label}: fit", [p.ms for p in res.fit], FIT_TARGET_MS)
        fit.details.append("click -> the view stops changing (the 250 ms pan is part of it)")
        rows.append(fit)
        rows.append(task_row(res.fit))
    if m.expand and res.expand:
        exp = timing_row(f"{m.label}: expand one group", [p.ms for p in res.expand], EXPAND_TARGET_MS)
        exp.details.append(split_line(res.expand))
        exp.details.append(
            f"clicked {res.clicked[-1]}; click handler (sync, visible DOT) {fmt_ms(med(res.click_handler))}"
        )
        exp.details.append(f"after: {res.status_expanded[-1]!r}")
        exp.details.append("per repetition: " + ", ".join(fmt_ms(p.ms) for p in res.expand))
        rows.append(exp)
        rows.append(task_row(res.expand))
    return rows


def info_rows(res: ModelResult) -> list[Row]:
    rows: list[Row] = []
    label = res.model.label
    ks = [k for k in res.kernel if k]
    if ks:
        trace = [k["trace_s"] * 1000 for k in ks]
        explore = [k["explore_s"] * 1000 for k in ks]
        rows.append(
            Row(
                f"{label}: kernel, {res.model.capture.split('(')[0]}",
                f"{fmt_ms(med(trace))} / {fmt_ms(max(trace))}",
                "-",
                "-",
                [f"tj.explore(run) (serialize + comm open) {fmt_ms(med(explore))} / {fmt_ms(max(explore))}"],
            )
        )
    if res.cell_to_state:
        row = Row(
            f"{label}: Shift+Enter -> state",
            f"{fmt_ms(med(res.cell_to_state))} / {fmt_ms(max(res.cell_to_state))}",
            "-",
            "-",
        )
        if res.message_to_state:
            row.details.append(
                f"biggest kernel message arrived -> state mark: {fmt_ms(med(res.message_to_state))}"
                " (websocket decode, widget model, output render)"
            )
        rows.append(row)
    return rows


def report(results: list[ModelResult]) -> list[Row]:
    rows = [row for res in results for row in first_rows(res)]
    return rows + [row for res in results for row in info_rows(res)]


def print_breakdown(label: str, b: dict[str, Any] | None) -> None:
    if not b:
        return
    if "error" in b:
        print(f"  {label}: {b['error']}")
        return
    worker = "n/a" if b["worker"] is None else fmt_ms(b["worker"])
    insert = "n/a" if b["insert"] is None else fmt_ms(b["insert"])
    print(
        f"  {label}: run JSON {b['jsonChars'] / 1e6:.2f} M chars: JSON.parse {b['parse']:.0f} ms,"
        f" JSON.stringify {b['stringify']:.0f} ms; decode run {b['decode']:.0f} ms, group tree {b['groups']:.0f} ms;"
    )
    print(
        f"  {'':<{len(label)}}  re-layout of the view: sync part (visible DOT, {b['dotChars'] or 0:,} chars)"
        f" {b['refreshSync']:.0f} ms, Graphviz worker (warm) {worker}, SVG ({(b['svgChars'] or 0) / 1e6:.2f} M chars,"
        f" {b['svgElements']:,} elements) parse/insert {insert}"
    )
    print(
        f"  {'':<{len(label)}}  that SVG by hand: XML parse {b['svgParse']:.0f} ms, sanitizer-style walk"
        f" {b['svgWalk']:.0f} ms, importNode {b['svgImport']:.0f} ms, insert + layout (getBBox)"
        f" {b['svgInsertLayout']:.0f} ms"
    )


def chromium_version(browser: Any) -> str:
    try:
        return str(browser.version)
    except Exception:
        return "?"


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
