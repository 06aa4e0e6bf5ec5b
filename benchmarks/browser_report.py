"""The browser benchmark's results and report: the phases measured on a page, a model's figures over the
repetitions, and the rows printed with their targets."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from browser_models import EXPAND_TARGET_MS, FIT_TARGET_MS, LONG_TASK_TARGET_MS, LONG_TASK_THRESHOLD_MS, Model
from table import verdict

ROOT = Path(__file__).resolve().parents[1]

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
