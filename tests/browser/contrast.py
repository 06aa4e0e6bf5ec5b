"""Text contrast in the explorer, as the browser tests measure it: WCAG 2 AA's ratio, a theme variable's computed
colour, and the page script that reads every visible text's colour over its effective background."""

from __future__ import annotations

#: WCAG 2 AA for normal text
MIN_CONTRAST = 4.5


def css_colour(page, variable: str) -> str:
    """What ``var(<variable>)`` computes to on this page (as getComputedStyle writes colours)."""
    return page.evaluate(
        """(v) => { const el = document.createElement('div'); el.style.background = `var(${v})`;
            document.body.appendChild(el); const c = getComputedStyle(el).backgroundColor; el.remove(); return c; }""",
        variable,
    )


#: every visible text of every explorer on the page, with its colour and its effective background:
#: HTML text over the composited backgrounds of its ancestors (opacity included), inputs by their value, and the
#: graph's SVG text over the fill of the shape it labels
CONTRAST = """
(rootSelector) => {
  const parse = c => {
    const m = /rgba?\\(([^)]+)\\)/.exec(c || '');
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => {
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat([1]);
  };
  const lum = c => {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const chain = el => { const out = []; for (let e = el; e; e = e.parentElement) out.push(e); return out.reverse(); };
  const background = el => {
    let bg = [255, 255, 255, 1];
    for (const e of chain(el)) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) bg = over(c, bg);
    }
    return bg;
  };
  const opacity = el => chain(el).reduce((o, e) => o * Number(getComputedStyle(e).opacity || 1), 1);
  const visible = el => {
    if (!el.getClientRects().length) return false;
    const s = getComputedStyle(el);
    return s.visibility !== 'hidden' && s.display !== 'none';
  };
  const describe = el => {
    const cls = (el.getAttribute('class') || '').split(/\\s+/).filter(c => c).slice(0, 3).join('.');
    return `${el.tagName.toLowerCase()}${cls ? '.' + cls : ''}`;
  };
  const results = [];
  const add = (el, text, fg, bg) => {
    results.push({ where: describe(el), parent: describe(el.parentElement), text: text.slice(0, 40),
                   ratio: Math.round(ratio(over(fg, bg), bg) * 100) / 100 });
  };
  for (const root of document.querySelectorAll(rootSelector)) {
    for (const el of root.querySelectorAll('*')) {
      if (!visible(el) || el.closest('svg')) continue;
      if (el.matches('[disabled], [disabled] *')) continue;  // WCAG exempts inactive controls
      const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
      const value = el.matches('input[type=number], input[type=search], input[type=text], select')
        ? (el.value || '') : '';
      const text = own || value;
      if (!text) continue;
      const fg = parse(getComputedStyle(el).color);
      fg[3] *= opacity(el);
      add(el, text, fg, background(el));
    }
    for (const t of root.querySelectorAll('svg text')) {
      if (!visible(t) || !t.textContent.trim()) continue;
      const fg = parse(getComputedStyle(t).fill);
      if (!fg) continue;
      // drawn over its node's or frame's shape, or over its own backdrop (a pinned group label, a repeat badge)
      const holder = t.closest('g.node, g.cluster, g[data-backdrop]');
      const shape = holder && holder.querySelector('path, polygon, ellipse, rect');
      let bg = background(t.closest('svg').parentElement);
      const fill = shape && parse(getComputedStyle(shape).fill);
      if (fill && fill[3] > 0) bg = over(fill, bg);
      add(t, t.textContent.trim(), fg, bg);
    }
  }
  return results;
}
"""
