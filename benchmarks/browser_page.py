"""What the browser benchmark runs in the page: the script installed before any other (long tasks, long animation
frames, layout requests and big kernel messages), the waits for the explorer's marks, the timed clicks and the
in-page breakdown of the explorer's own steps."""

from __future__ import annotations

WAIT_MS = 420_000  # kernel start + `import torch` + tracing 10,000 layers on a busy 2-core machine
VIEWPORT = {"width": 1280, "height": 860}
#: notebook panels, for page scripts (they pick the visible one: JupyterLab keeps hidden panels in the DOM)
PANELS = ".jp-NotebookPanel"
# the page scripts below read the performance marks the explorer sets: 'tracejit:state' when a run's state arrives,
# 'tracejit:interactive' when its picture can be used (MARK_STATE / MARK_INTERACTIVE in labextension/src/graph)

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
