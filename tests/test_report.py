"""The static HTML of a run: ``run.to_html()`` (the ``text/html`` fallback) and ``run.save_html(path)`` (one
self-contained offline file with the read-only explorer). The browser side is in tests/browser/test_report.py."""

from __future__ import annotations

import errno
import html
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.render import html as html_report
from jupyter_tracejit.render import page as report

from .models import MARKUP_NAME, MarkupEverywhere

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "jupyter_tracejit" / "static"
#: every way a string could leave its element or become markup
HOSTILE = '</script><script>alert("x")</script><!--<img src=x onerror=alert(1)>&amp;'


def loop_in_traced_fn(x):
    result = x[0]
    for i in range(x.size(0)):  # </script><script>alert("loop")</script><!-- <a href="javascript:alert(1)">
        result = result * x[i]
    return result


@pytest.fixture(scope="module")
def loop_run() -> tj.TraceRun:
    torch.manual_seed(0)
    return tj.trace(loop_in_traced_fn, (torch.rand(3, 4),), check_inputs=[(torch.rand(4, 4),)])


@pytest.fixture(scope="module")
def hostile_run() -> tj.TraceRun:
    torch.manual_seed(0)
    run = tj.trace(MarkupEverywhere().eval(), (torch.ones(2, 4),))  # its branch is taken whatever the weights
    run.target.name = HOSTILE  # as if the class were called that
    return run


class Tags(HTMLParser):
    """Every start tag and attribute of a document or fragment, and the text of <script>/<style> elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.raw: dict[str, list[str]] = {}
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._in = tag if tag in ("script", "style") else None

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in:
            self.raw.setdefault(self._in, []).append(data)


def parse(text: str) -> Tags:
    p = Tags()
    p.feed(text)
    p.close()
    return p


def assert_inert(fragment: str) -> None:
    """No scripts, links, event handlers, frames or external resources: only the markup to_html writes."""
    allowed = {
        "div", "style", "p", "strong", "em", "code", "br", "h4", "ul", "ol", "li", "details", "summary", "pre",
        # inline SVG from Graphviz
        "svg", "g", "title", "path", "polygon", "ellipse", "polyline", "text", "span",
    }  # fmt: skip
    for tag, attrs in parse(fragment).tags:
        assert tag in allowed, tag
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            assert name not in ("href", "src", "xlink:href", "style", "action", "formaction"), (tag, name)
            assert "javascript:" not in (value or "").lower(), (tag, name, value)


# -- to_html ------------------------------------------------------------------------------------------------
def test_to_html_has_summary_warnings_with_lines_and_divergences(loop_run, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    text = loop_run.to_html()
    assert text.startswith('<div class="tracejit-html">') and text.endswith("</div>")
    assert html.escape(loop_run.summary()) in text
    # the explorer badge's verdict, with its reasons
    assert '<strong class="tracejit-error">check failed</strong>' in text
    assert "<li>torch&#x27;s check failed: 1 root divergence" in text
    # the check case and its root divergences with both source lines
    assert "check_inputs[0]" in text and "FAILED" in text
    assert "only in the check trace: aten::select" in text
    assert "test_report.py:" in text and "<code>result = result * x[i]</code>" in text
    assert_inert(text)


def test_to_html_escapes_hostile_names_code_and_scopes(hostile_run, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert hostile_run.user_warnings, "the data-dependent branch should warn"
    text = hostile_run.to_html()
    # the warning's source line, the target name, the module path: all there, all as text
    assert html.escape('</script><script>alert("branch")</script><!-- & <b>bold</b>') in text
    assert html.escape(HOSTILE) in text
    assert html.escape(MARKUP_NAME) in text
    for raw in ("<script>", "</script>", "<!--", "<img", "<b>", "<a "):
        assert raw not in text, raw
    assert_inert(text)


def test_to_html_of_a_failed_trace_shows_the_error_and_hint():
    run = tj.trace(lambda x: {"y": x}, (torch.ones(2),))
    text = run.to_html()
    assert '<strong class="tracejit-error">failed</strong>' in text
    assert html.escape(run.error.type) in text and "Hint:" in text
    assert "<svg" not in text and "<pre>" not in text  # no graph: tracing failed
    assert_inert(text)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed (apt-get install graphviz)")
def test_graph_is_inline_svg_when_dot_is_installed(loop_run):
    text = loop_run.to_html()
    (svg,) = re.findall(r"<svg.*?</svg>", text, re.DOTALL)
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    assert "<?xml" not in text and "<!DOCTYPE" not in text and "<!--" not in text
    assert 'class="node' in svg and "kind-aten-select" in svg
    # divergences and warnings are marked on the drawn nodes
    assert re.search(r'class="node [^"]*\bwarning\b', svg)
    assert "<details open" in text and "<pre>" not in text
    assert_inert(text)
    assert "<svg" not in loop_run.to_html(graph=False)


def test_graph_is_ir_text_when_dot_is_missing(loop_run, monkeypatch):
    calls = []
    monkeypatch.setattr(shutil, "which", lambda name: calls.append(name))
    text = loop_run.to_html()
    assert calls == ["dot"]
    assert "<svg" not in text
    (pre,) = re.findall(r"<pre>(.*?)</pre>", text, re.DOTALL)
    assert html.unescape(pre) == loop_run.graph.text().rstrip("\n")
    assert html.escape("graph(%x : Float(3, 4)):") in pre


def test_graph_falls_back_to_text_when_dot_fails_or_the_graph_is_large(loop_run, monkeypatch, tmp_path):
    real_dot = shutil.which("dot")
    broken = tmp_path / "dot"
    broken.write_text("#!/bin/sh\necho 'Error: syntax error' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setattr(shutil, "which", lambda name: str(broken))
    assert "<svg" not in loop_run.to_html() and "<pre>" in loop_run.to_html()
    if real_dot is not None:
        monkeypatch.setattr(shutil, "which", lambda name: real_dot)
        monkeypatch.setattr(html_report, "MAX_SVG_NODES", 2)
        assert "<svg" not in loop_run.to_html()


def test_sanitize_svg_strips_scripts_links_handlers_and_foreign_content():
    svg = (
        '<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://example.com/x.dtd">'
        '<!-- comment --><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        'width="10pt" onload="alert(1)"><script>alert(2)</script><style>*{}</style>'
        '<g id="n1" class="node"><a xlink:href="javascript:alert(3)" href="https://example.com" target="_top">'
        '<title>&lt;b&gt;</title><path d="M0 0" style="x" onclick="alert(4)"/></a></g>'
        '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>'
        '<image xlink:href="https://example.com/x.png"/><use xlink:href="#n1"/></svg>'
    )
    out = html_report.sanitize_svg(svg)
    assert out == (
        '<svg xmlns="http://www.w3.org/2000/svg" width="10pt"><g id="n1" class="node">'
        '<title>&lt;b&gt;</title><path d="M0 0"></path></g></svg>'
    )
    with pytest.raises(ValueError):
        html_report.sanitize_svg("<svg")
    with pytest.raises(ValueError):
        html_report.sanitize_svg("<html/>")


# -- save_html ----------------------------------------------------------------------------------------------
@pytest.fixture
def bundle_built() -> None:
    if not (STATIC / "report.js").exists():
        pytest.skip("the report bundle is not built (npm run build, or pip install -e .)")


def embedded_run(page: str) -> str:
    (data,) = re.findall(r'<script type="application/json" id="tracejit-run">(.*?)</script>', page, re.DOTALL)
    return data


def test_embed_json_cannot_end_the_script_element():
    data = {"a": HOSTILE, "b": ["</SCRIPT >", "<!--", "-->", "\u2028"], "c": 1.5}
    text = report.embed_json(data)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == data


def test_save_html_writes_one_self_contained_file(hostile_run, tmp_path, bundle_built):
    path = hostile_run.save_html(tmp_path / "report.html")
    assert path == tmp_path / "report.html" and list(tmp_path.iterdir()) == [path]
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # the run, safely embedded: exactly our two script elements close, and the JSON reads back as the run
    assert page.count("</script>") == 2 and "<!--" not in page
    assert json.loads(embedded_run(page)) == json.loads(json.dumps(hostile_run.to_json()))
    # the bundle and its stylesheet, inline
    js, css = (STATIC / "report.js").read_text(), (STATIC / "report.css").read_text()
    assert js in page and css in page
    tags = parse(page)
    scripts = [attrs for tag, attrs in tags.tags if tag == "script"]
    assert scripts == [[("type", "application/json"), ("id", "tracejit-run")], []]
    assert ("id", "tracejit-root") in next(a for t, a in tags.tags if t == "div" and ("id", "tracejit-root") in a)
    assert 'id="tracejit-fallback"' in page and "<noscript>" in page
    assert html.escape(HOSTILE) in page and HOSTILE not in page
    # a CSP that forbids the network
    csp = next(dict(a)["content"] for t, a in tags.tags if t == "meta" and dict(a).get("http-equiv"))
    assert csp.startswith("default-src 'none';") and "connect-src" not in csp


def test_saved_report_refers_to_nothing_outside_itself(loop_run, tmp_path, bundle_built):
    page = loop_run.save_html(tmp_path / "r.html").read_text()
    data = embedded_run(page)
    outside = page.replace(data, "")
    urls = re.findall(r"(?i)(?:https?|ftp|wss?)://[^\s\"'<>)]*", outside)
    # SVG's namespaces, and the one link a reader may follow (torch's page on a graph break's registry code, opened
    # in a new tab on a click): neither is fetched by the page
    allowed = ("http://www.w3.org/", "https://meta-pytorch.github.io/compile-graph-break-site/gb/")
    assert urls and all(u.startswith(allowed) for u in urls), sorted(set(urls))
    for tag, attrs in parse(page).tags:
        for name, _ in attrs:
            assert name not in ("src", "href", "action", "poster", "srcset", "xlink:href"), (tag, name)
    css = report.bundle()[1]
    assert "url(" not in css and "@import" not in css


def test_report_css_defines_every_theme_variable_the_explorer_uses(bundle_built):
    css = (STATIC / "report.css").read_text()
    styles = "".join(p.read_text() for p in (ROOT / "labextension" / "style").glob("*.css"))
    used = set(re.findall(r"var\((--jp-[a-z0-9-]+)", styles))
    light_part, _, dark_part = css.partition("prefers-color-scheme:dark")
    light = set(re.findall(r"(--jp-[a-z0-9-]+):", light_part))
    assert used and not (used - light), sorted(used - light)
    dark = set(re.findall(r"(--jp-[a-z0-9-]+):", dark_part))
    assert {"--jp-layout-color0", "--jp-ui-font-color1", "--jp-border-color1", "--jp-brand-color1"} <= dark
    assert ".jp-TraceExplorer-root" in css  # the explorer's own stylesheet follows


def test_bundle_is_one_iife_with_graphviz_inlined_and_no_worker_url(bundle_built):
    js = (STATIC / "report.js").read_text()
    assert js.startswith("/* jupyter-tracejit ")
    assert "import.meta" not in js and "layout.worker" not in js and "importScripts(" not in js
    assert "</script" not in js.lower() and "<!--" not in js
    assert len(js) > 500_000  # Graphviz's WASM, base64-inlined


def test_missing_bundle_names_the_fix(loop_run, tmp_path, monkeypatch):
    monkeypatch.setattr(report, "static_dir", lambda: tmp_path)
    with pytest.raises(report.ReportBundleMissing, match=r"npm run build.*reinstall"):
        loop_run.save_html(tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()
    assert issubclass(report.ReportBundleMissing, FileNotFoundError)


def test_save_html_failing_midway_leaves_the_previous_report(loop_run, tmp_path, monkeypatch, bundle_built):
    """A full disk while the page is written (before: a previous good report became a 64 KiB cut-off page)."""
    path = tmp_path / "report.html"
    path.write_text("<html>the previous good report</html>")
    real_write = os.write

    def full_disk(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError, match="No space left on device"):
        loop_run.save_html(path)
    monkeypatch.undo()
    assert path.read_text() == "<html>the previous good report</html>"
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left


def test_to_dot_of_a_failed_trace_says_why_there_is_no_graph():
    """``TraceRun`` promises nothing on it raises: a failed trace's DOT is a graph of one note (as to_html says)."""
    run = tj.trace(lambda x: {"y": x}, (torch.ones(2),))
    assert run.error is not None and run.graph is None
    dot = run.to_dot()
    assert dot.startswith("digraph {") and "no graph: tracing failed (trace)" in dot
    assert f"{run.error.type}: " in dot
    assert "no graph: tracing failed" in run.to_dot("forward")
    if shutil.which("dot"):  # Graphviz reads it
        import subprocess

        done = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "<svg" in done.stdout, done.stderr


def test_save_html_never_overwrites_a_source_file_of_the_run(tmp_path, monkeypatch):
    import importlib.util

    source = tmp_path / "user_model.py"
    source.write_text("def double(x):\n    return x * 2\n")
    spec = importlib.util.spec_from_file_location("user_model_for_save_html", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    run = tj.trace(module.double, (torch.ones(2),), check_trace=False)
    assert str(source) in set(run.files())
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"would overwrite .*user_model\.py, a source file of this run: save the"):
        run.save_html("user_model.py")  # the same file by a relative name
    assert source.read_text() == "def double(x):\n    return x * 2\n"
