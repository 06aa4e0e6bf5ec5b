"""The side panels in a real JupyterLab, on real models: each warning with its fix (the core's advice, as the CLI
prints it) and torch's numbers for an output mismatch; divergences grouped by cause with their lines and the
warnings that explain them, the stepper over the roots (starting on the first); a finding's fix as one click that
re-traces; locations as links that find their nodes. Light and dark screenshots."""

from __future__ import annotations

import re

import pytest

from jupyter_tracejit.core.tracer_warnings import ADVICE

from .contrast import CONTRAST, MIN_CONTRAST
from .helpers import ROOT, explorer_in, run_notebook
from .test_explorer import SETUP, open_comparison

pytestmark = pytest.mark.browser

MODELS = """\
class BranchLoop(nn.Module):
    # a frozen branch, then a loop unrolled for this batch size
    def forward(self, x):
        if x.sum() > 0:  # the frozen if
            x = x * 2  # the branch
        out = x[0]
        for i in range(x.size(0)):
            out = out + x[i].relu()  # the loop
        return out

def encoder():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
"""

#: line numbers inside the first cell (SETUP first, then MODELS)
CELL0 = SETUP + MODELS


def as_shown(advice: str) -> str:
    """An advice text as the page shows it: its `code` spans are <code> elements, without the backticks."""
    return advice.replace("`", "")


def line_in_cell(marker: str) -> int:
    return next(i for i, text in enumerate(CELL0.splitlines(), start=1) if marker in text)


def tab(explorer, name: str):
    return explorer.locator(f'.jp-TraceExplorer-tab[data-tab="{name}"]')


def panel(explorer, name: str):
    return explorer.locator(f'.jp-TraceExplorer-panel[data-panel="{name}"]')


def search_of(explorer) -> tuple[str, str]:
    box = explorer.locator(".jp-TraceExplorer-search")
    return box.input_value(), explorer.locator(".jp-TraceExplorer-searchLabel").inner_text()


def contrast_failures(lab) -> dict[str, list[str]]:
    """Texts of the explorers on the page under 4.5:1 against their background, in the light and the dark theme."""
    failures: dict[str, list[str]] = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        lab.set_theme(theme)
        measured = lab.page.evaluate(CONTRAST, f".jp-NotebookPanel:not(.lm-mod-hidden) {ROOT}")
        assert len(measured) > 20, len(measured)
        failures[theme] = sorted(
            f"{m['ratio']:.2f} {m['where']} in {m['parent']}: {m['text']!r}"
            for m in measured
            if m["ratio"] < MIN_CONTRAST
        )
    lab.set_theme("JupyterLab Light")
    return failures


def test_causes_stepper_advice_and_locations_on_a_frozen_branch_and_loop(lab):
    run_notebook(
        lab,
        "panels.ipynb",
        [CELL0, "bl = tj.explore(BranchLoop(), (torch.ones(2, 3),), check_inputs=[(-torch.ones(4, 3),)])\nbl"],
        timeout=90_000,
    )
    explorer = explorer_in(lab, 1)
    check = panel(explorer, "check")
    # a failed check opens on its first root: "1 of N", as many as the tab and the header count
    assert check.is_visible()
    roots = int(re.search(r"Check \((\d+) roots?\)", tab(explorer, "check").inner_text()).group(1))
    assert f"check failed: {roots} root" in explorer.locator(".jp-TraceExplorer-summary").inner_text()
    step_label = check.locator(".jp-TraceExplorer-stepLabel")
    assert step_label.inner_text() == f"root 1 of {roots}"
    # grouped by cause, each with its line: the branch (explained by the frozen `if`) and the loop, not hidden
    branch, loop = line_in_cell("# the branch"), line_in_cell("# the loop")
    heads = check.locator(".jp-TraceExplorer-causeHead").all_inner_texts()
    assert heads[0] == f"cell [1], line {branch}: 1 op only in the trace", heads
    (loop_head,) = [h for h in heads if h.startswith(f"cell [1], line {loop}: ")]
    assert loop_head.startswith(f"cell [1], line {loop}: 4 ops only in the check trace · "), heads
    # the downstream divergences at the causes' lines and those at other lines add up to what the case counts
    at_lines = sum(int(m.group(1)) for m in re.finditer(r"(\d+) downstream at this line", "\n".join(heads)))
    elsewhere = re.search(r"(\d+) downstream divergences? at other lines", check.inner_text())
    counted = int(re.search(r"(\d+) downstream", check.locator(".jp-TraceExplorer-case").inner_text()).group(1))
    assert at_lines + (int(elsewhere.group(1)) if elsewhere else 0) == counted
    first = check.locator(".jp-TraceExplorer-cause").first
    frozen_if = line_in_cell("# the frozen if")
    assert f"tensor → Python bool (frozen branch) at cell [1], line {frozen_if}" in first.inner_text()
    assert f"Fix: {as_shown(ADVICE['to_bool'])}" in first.inner_text()
    assert first.locator(".jp-TraceExplorer-hint code").first.inner_text() == "if"  # `if` in the text: code
    assert first.evaluate("el => el.classList.contains('jp-mod-active')")
    lab.screenshot_themes("panels-causes", explorer)
    # the stepper walks the roots; downstream on request
    check.get_by_role("button", name="next root").click()
    assert step_label.inner_text() == f"root 2 of {roots}"
    check.locator('input[data-action="downstream"]').check()
    label = step_label.inner_text()
    total = int(re.search(r"of (\d+)", label).group(1))
    assert label.startswith("divergence ") and total > roots
    check.locator('input[data-action="downstream"]').uncheck()
    assert step_label.inner_text().startswith("root ")
    # the comparison: both graphs over the whole graph area, labelled by what they are, moving together
    assert check.locator(".jp-TraceExplorer-sideBySide svg").count() == 0  # no thumbnails in the panel
    panes = open_comparison(explorer)
    full = explorer.locator(".jp-TraceExplorer-compareFull")
    # root 2 is an op only in the check trace, with nothing matched near it: the trace side shows what stands in its
    # place (the ops of its line), and its header says so
    assert panes.locator(".jp-TraceExplorer-paneLabel").all_inner_texts() == [
        "trace · no counterpart: the ops of the same line here",
        "check with check_inputs[0]",
    ]
    assert panes.nth(0).locator("svg g.node").count() >= 1
    panes.nth(1).locator("svg g.node.current").wait_for()
    # the divergent node sits in the middle of its pane
    current = panes.nth(1).locator("svg g.node.current").bounding_box()
    canvas = panes.nth(1).locator(".jp-TraceExplorer-compareCanvas").bounding_box()
    assert abs(current["x"] + current["width"] / 2 - (canvas["x"] + canvas["width"] / 2)) < 3
    assert abs(current["y"] + current["height"] / 2 - (canvas["y"] + canvas["height"] / 2)) < 3
    # over the whole graph area (toolbar and canvas), the stepper beside it still in view
    graph_area = explorer.locator(".jp-TraceExplorer-graph").bounding_box()
    box = full.bounding_box()
    assert box["width"] >= graph_area["width"] - 2 and box["height"] >= graph_area["height"] - 2
    assert step_label.is_visible()
    view_boxes = (
        "(el) => [...el.querySelectorAll('.jp-TraceExplorer-compareCanvas > svg')].map(s => s.getAttribute('viewBox'))"
    )
    before = full.evaluate(view_boxes)
    canvas = panes.nth(0).locator(".jp-TraceExplorer-compareCanvas").bounding_box()
    lab.page.mouse.move(canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] / 2)
    lab.page.mouse.down()
    lab.page.mouse.move(canvas["x"] + canvas["width"] / 2 + 60, canvas["y"] + canvas["height"] / 2 + 30, steps=5)
    lab.page.mouse.up()
    after = full.evaluate(view_boxes)
    moved = [
        [float(a) - float(b) for a, b in zip(x.split(), y.split(), strict=True)]
        for x, y in zip(after, before, strict=True)
    ]
    assert moved[0] == pytest.approx(moved[1]) and moved[0][0] < 0 and moved[0][1] < 0, moved  # both panned alike
    lab.screenshot_themes("panels-compare-full", explorer)
    assert contrast_failures(lab) == {"JupyterLab Light": [], "JupyterLab Dark": []}
    full.get_by_role("button", name="zoom in").click()
    zoomed = full.evaluate(view_boxes)
    assert all(float(z.split()[2]) < float(a.split()[2]) for z, a in zip(zoomed, after, strict=True))
    # the wheel over either pane zooms both alike (the graph's viewport rules: the pane is a Viewport, and in a
    # notebook the wheel zooms with Ctrl held or once the pane was pressed)
    lab.page.mouse.move(canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] / 2)
    lab.page.keyboard.down("Control")
    lab.page.mouse.wheel(0, 200)
    lab.page.keyboard.up("Control")
    wheeled = full.evaluate(view_boxes)
    widths = [float(w.split()[2]) / float(z.split()[2]) for w, z in zip(wheeled, zoomed, strict=True)]
    assert widths[0] > 1 and widths[0] == pytest.approx(widths[1]), widths
    # the stepper moves the panes: the first root (an op only in the trace) is drawn current on the trace side
    title = full.locator(".jp-TraceExplorer-compareTitle").inner_text()
    check.get_by_role("button", name="first root").click()
    assert step_label.inner_text() == f"root 1 of {roots}"
    full.locator(".jp-TraceExplorer-compareTitle").filter(has_not_text=title).wait_for()
    panes.nth(0).locator("svg g.node.current").wait_for()
    full.locator(".jp-TraceExplorer-compareCanvas").first.focus()
    lab.page.keyboard.press("Escape")
    full.wait_for(state="detached")
    # a cause's line is a link: it searches for that place and selects its nodes
    check.locator(".jp-TraceExplorer-cause").nth(heads.index(next(h for h in heads if f"line {loop}:" in h))).locator(
        "button.jp-TraceExplorer-loc"
    ).click()
    query, hits = search_of(explorer)
    assert query == f"cell [1], line {loop}"
    assert re.fullmatch(r"1 of \d+", hits), hits
    # each warning shows its fix, and an output mismatch shows torch's numbers
    tab(explorer, "warnings").click()
    warnings = panel(explorer, "warnings")
    frozen = warnings.locator('.jp-TraceExplorer-warning[data-category="to_bool"]')
    assert f"Fix: {as_shown(ADVICE['to_bool'])}" in frozen.inner_text()
    mismatch = warnings.locator('.jp-TraceExplorer-warning[data-category="output_mismatch_python"]')
    assert "Greatest absolute difference" in mismatch.locator(".jp-TraceExplorer-detail").inner_text()
    assert f"Fix: {as_shown(ADVICE['output_mismatch_python'])}" in mismatch.inner_text()
    # and says why it is at its line, not at `def` where torch reports it
    placement = mismatch.locator(".jp-TraceExplorer-placement").inner_text()
    assert placement.endswith("torch reports it at the traced function's definition."), placement
    # the frozen `if` records nothing at its own line: its link finds the branch it froze
    frozen.locator("button.jp-TraceExplorer-loc").click()
    query, hits = search_of(explorer)
    assert query == f"cell [1], line {frozen_if}" and hits == "1 of 1"
    lab.screenshot_themes("panels-warnings", explorer)
    assert contrast_failures(lab) == {"JupyterLab Light": [], "JupyterLab Dark": []}
    # the inspector of the node a warning maps to says the same, with the same fix
    tab(explorer, "inspector").click()
    on_node = panel(explorer, "inspector").locator(".jp-TraceExplorer-problems")
    assert f"Fix: {as_shown(ADVICE['to_bool'])}" in on_node.inner_text()
    assert not lab.extension_errors()


def test_a_findings_fix_is_one_click_that_retraces(lab):
    run_notebook(
        lab, "fastpath.ipynb", [CELL0, "enc = tj.explore(encoder(), (torch.rand(2, 3, 8),))\nenc"], timeout=90_000
    )
    explorer = explorer_in(lab, 1)
    badge = explorer.locator(".jp-TraceExplorer-header .jp-TraceExplorer-badge")
    assert badge.inner_text() == "check failed"
    check = panel(explorer, "check")
    fix = check.locator(".jp-TraceExplorer-fix").first
    assert fix.inner_text() == "tick no_grad and re-trace"
    assert "Transformer fast path" in check.locator(".jp-TraceExplorer-cause").first.inner_text()
    lab.screenshot_themes("panels-fastpath-fix", explorer)
    assert contrast_failures(lab) == {"JupyterLab Light": [], "JupyterLab Dark": []}
    # the inspector names the arguments from the op's schema, constants inline, parameters with their shapes
    explorer.locator(".jp-TraceExplorer-search").fill("kind:scaled_dot_product_attention")
    explorer.locator(".jp-TraceExplorer-search").press("Enter")
    tab(explorer, "inspector").click()
    inspector = panel(explorer, "inspector")
    assert inspector.locator(".jp-TraceExplorer-nodeKind").inner_text().startswith("aten::scaled_dot_product_attention")
    arguments = inspector.locator(".jp-TraceExplorer-arguments")
    assert arguments.locator('tr[data-argument="dropout_p"]').inner_text().split() == ["dropout_p", "0.0"]
    assert arguments.locator('tr[data-argument="is_causal"]').inner_text().split() == ["is_causal", "False"]
    assert arguments.locator('tr[data-argument="attn_mask"]').inner_text().split() == ["attn_mask", "None"]
    lab.page.evaluate(
        "() => { window.copied = []; navigator.clipboard.writeText = t => { window.copied.push(t); "
        "return Promise.resolve(); }; }"
    )
    inspector.get_by_role("button", name="copy node info").click()
    inspector.get_by_role("button", name="copied").wait_for()
    (copied,) = lab.page.evaluate("() => window.copied")
    assert copied.startswith("aten::scaled_dot_product_attention (node ")
    assert "  dropout_p = 0.0\n  is_causal = False" in copied
    lab.screenshot_themes("panels-inspector-sdpa", explorer)
    assert contrast_failures(lab) == {"JupyterLab Light": [], "JupyterLab Dark": []}
    explorer.locator(".jp-TraceExplorer-search").fill("kind:linear")
    explorer.locator(".jp-TraceExplorer-search").press("Enter")
    weight = arguments.locator('tr[data-argument="weight"]').inner_text()
    assert weight.split(None, 2) == ["weight", "layers.0.self_attn.in_proj_weight", "Float(24, 8)"], weight
    tab(explorer, "warnings").click()
    assert panel(explorer, "warnings").locator(".jp-TraceExplorer-fix").inner_text() == "tick no_grad and re-trace"
    panel(explorer, "warnings").locator(".jp-TraceExplorer-fix").click()
    # the option is set at once, the kernel re-traces with it, and the check passes
    assert explorer.locator('input[data-option="no_grad"]').is_checked()
    lab.page.wait_for_function(
        "(sel) => document.querySelector(sel)?.textContent !== 'check failed'",
        arg=f"{ROOT} .jp-TraceExplorer-header .jp-TraceExplorer-badge",
        timeout=90_000,
    )
    assert badge.inner_text() in ("ok", "warnings")
    assert tab(explorer, "check").inner_text() == "Check"
    assert explorer.locator(".jp-TraceExplorer-fix").count() == 0
    # picking the first run of the history shows it and puts its options back in the options bar
    history = explorer.locator(".jp-TraceExplorer-history select")
    history.select_option(index=0)
    lab.page.wait_for_function(
        "(sel) => document.querySelector(sel)?.textContent === 'check failed'",
        arg=f"{ROOT} .jp-TraceExplorer-header .jp-TraceExplorer-badge",
        timeout=30_000,
    )
    assert not explorer.locator('input[data-option="no_grad"]').is_checked()
    tab(explorer, "check").click()
    assert check.locator(".jp-TraceExplorer-stepLabel").inner_text() == "root 1 of 1"
    assert check.locator(".jp-TraceExplorer-fix").first.is_visible()
    # two runs in the history: compared side by side over the graph area, the sides named "run 1" and "run 2"
    check.get_by_role("button", name="compare", exact=True).click()
    full = explorer.locator(".jp-TraceExplorer-compareFull")
    full.locator('.jp-TraceExplorer-comparePane[data-side="run 1"] svg g.node').first.wait_for(timeout=60_000)
    full.locator('.jp-TraceExplorer-comparePane[data-side="run 2"] svg g.node').first.wait_for()
    assert full.locator(".jp-TraceExplorer-paneLabel").all_inner_texts() == ["run 1", "run 2"]
    assert check.locator(".jp-TraceExplorer-compare svg").count() == 0
    lab.screenshot_themes("panels-compare-runs", explorer)
    full.get_by_role("button", name="close").click()
    full.wait_for(state="detached")
    check.locator(".jp-TraceExplorer-compare .jp-TraceExplorer-openCompare").click()  # open again from the panel
    full.locator('.jp-TraceExplorer-comparePane[data-side="run 2"] svg g.node').first.wait_for()
    lab.page.keyboard.press("Escape")
    full.wait_for(state="detached")
    assert not lab.extension_errors()


BEHIND = """\
def branch_then_loop(x):
    x = x.relu() if x.sum() > 0 else x.abs()  # the frozen branch
    out = x[0]
    for i in range(x.size(0)):
        out = out + x[i].relu()  # the loop
    return out

def positions_added(x):
    return x + torch.arange(x.shape[-1], device=x.device)  # the baked device
"""
CELL_BEHIND = SETUP + BEHIND


def line_in(cell: str, marker: str) -> int:
    return next(i for i, text in enumerate(cell.splitlines(), start=1) if marker in text)


def test_a_loop_behind_a_frozen_branch_is_a_cause_of_its_own_named_and_stepped_to(lab):
    """`if x.sum() > 0` then `for i in range(x.size(0))`, checked with -torch.rand(5, 8): every op of the loop reads
    the branch's values, yet the loop's 2 passes more are a second cause, with its line, its finding and its roots."""
    run_notebook(
        lab,
        "behind.ipynb",
        [
            CELL_BEHIND,
            "bt = tj.explore(branch_then_loop, (torch.rand(3, 8),), check_inputs=[(-torch.rand(5, 8),)])\nbt",
        ],
        timeout=90_000,
    )
    explorer = explorer_in(lab, 1)
    check = panel(explorer, "check")
    branch, loop = line_in(CELL_BEHIND, "# the frozen branch"), line_in(CELL_BEHIND, "# the loop")
    heads = check.locator(".jp-TraceExplorer-causeHead").all_inner_texts()
    assert len(heads) == 2, heads
    assert heads[0].startswith(f"cell [1], line {branch}: 1 op differs"), heads
    assert heads[1].startswith(f"cell [1], line {loop}: 6 ops only in the check trace"), heads
    causes = check.locator(".jp-TraceExplorer-cause")
    assert "tensor → Python bool (frozen branch)" in causes.nth(0).inner_text()
    behind = causes.nth(1)
    finding = behind.locator('.jp-TraceExplorer-because[data-kind="frozen_loop"]')
    assert "1 loop unrolled with the example's count" in finding.inner_text()
    assert "ran 3 times in the trace, 5 in the check trace" in finding.inner_text()
    assert "records it 3 times in the trace, 5 in the check trace" in behind.inner_text()
    # the stepper walks the roots of both causes, as many as the tab and the header count
    roots = int(re.search(r"Check \((\d+) roots?\)", tab(explorer, "check").inner_text()).group(1))
    assert roots == 7
    step_label = check.locator(".jp-TraceExplorer-stepLabel")
    assert step_label.inner_text() == "root 1 of 7"
    check.get_by_role("button", name="next root").click()
    assert step_label.inner_text() == "root 2 of 7"
    assert behind.evaluate("el => el.classList.contains('jp-mod-active')")
    assert not causes.nth(0).evaluate("el => el.classList.contains('jp-mod-active')")
    behind.scroll_into_view_if_needed()
    lab.screenshot_themes("panels-cause-behind-a-cause", explorer)
    assert contrast_failures(lab) == {"JupyterLab Light": [], "JupyterLab Dark": []}
    assert not lab.extension_errors()


def test_a_baked_device_is_a_portability_note_here_and_a_warning_for_another_target(lab):
    run_notebook(
        lab,
        "portable.ipynb",
        [
            CELL_BEHIND,
            "here = tj.explore(positions_added, (torch.ones(2, 3),))\nhere",
            "gpu = tj.explore(positions_added, (torch.ones(2, 3),), target_device='cuda')\ngpu",
        ],
        timeout=90_000,
    )
    here, gpu = explorer_in(lab, 1), explorer_in(lab, 2)
    badge = ".jp-TraceExplorer-header .jp-TraceExplorer-badge"
    assert here.locator(badge).inner_text() == "ok"
    assert gpu.locator(badge).inner_text() == "warnings"
    for explorer, severity in ((here, "info"), (gpu, "warning")):
        tab(explorer, "warnings").click()
        group = panel(explorer, "warnings").locator(".jp-TraceExplorer-portability")
        assert group.locator("h4").inner_text() == "Portability: where the trace can run"
        finding = group.locator('.jp-TraceExplorer-finding[data-kind="device_constant"]')
        assert finding.evaluate("(el, s) => el.classList.contains(`jp-mod-${s}`)", severity)
        # shown in full, not folded like a note: what, why, the fix
        assert finding.locator("strong").first.inner_text() == 'device "cpu" baked into the graph'
        assert finding.locator(".jp-TraceExplorer-message").is_visible()
        assert finding.locator(".jp-TraceExplorer-hint").inner_text().startswith("Fix: Create tensors with")
        # listed once, in its group, not among the findings torch does not report
        listed = panel(explorer, "warnings").locator('.jp-TraceExplorer-finding[data-kind="device_constant"]')
        assert listed.count() == 1
    assert (
        "no target device was given: fine where it was traced"
        in here.locator(".jp-TraceExplorer-portability .jp-TraceExplorer-message").inner_text()
    )
    assert 'The target device is "cuda"' in gpu.locator(".jp-TraceExplorer-portability").inner_text()
    lab.screenshot_themes("panels-portability-here", here)
    lab.screenshot_themes("panels-portability-gpu", gpu)
    assert contrast_failures(lab) == {"JupyterLab Light": [], "JupyterLab Dark": []}
    # the options bar: the second explorer shows its target; typing one in the first re-traces for it
    assert gpu.locator('input[data-option="target_device"]').input_value() == "cuda"
    device = here.locator('input[data-option="target_device"]')
    assert device.input_value() == "" and device.get_attribute("placeholder") == "as traced"
    device.fill("cuda")
    device.press("Enter")
    device.blur()
    here.locator(badge, has_text="warnings").wait_for(timeout=90_000)
    history = here.locator(".jp-TraceExplorer-history select option").all_inner_texts()
    assert len(history) == 2 and 'target_device="cuda"' in history[1], history


LIBRARY_MODEL = """\
import os
os.environ["HF_HUB_OFFLINE"] = "1"
from transformers import GPT2Config, GPT2Model

class GPT2Hidden(nn.Module):
    def __init__(self):
        super().__init__()
        self.gpt2 = GPT2Model(GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=100, use_cache=False))

    def forward(self, ids):
        return self.gpt2(ids).last_hidden_state

gpt2 = tj.explore(GPT2Hidden().eval(), (torch.randint(0, 100, (1, 8)),))
gpt2"""


def test_a_librarys_warnings_say_torchs_paragraph_and_the_fix_once(lab):
    run_notebook(lab, "library.ipynb", [SETUP, LIBRARY_MODEL], timeout=120_000)
    explorer = explorer_in(lab, 1)
    tab(explorer, "warnings").click()
    warnings = panel(explorer, "warnings")
    group = warnings.locator(".jp-TraceExplorer-group").filter(
        has=lab.page.locator('.jp-TraceExplorer-warning[data-category="to_bool"]')
    )
    cards = group.locator('.jp-TraceExplorer-warning[data-category="to_bool"]')
    assert cards.count() >= 2  # transformers' frozen branches, each at its own line
    text = group.inner_text()
    # torch's paragraph and the fix (the library advice) once for them all, not on every card
    assert text.count("Converting a tensor to a Python boolean") == 1, text
    assert text.count("This line is in the installed package transformers") == 1, text
    assert text.count("Fix: ") == 1, text
    places = group.locator(".jp-TraceExplorer-warning button.jp-TraceExplorer-loc").all_inner_texts()
    assert len(set(places)) == cards.count(), places  # each card keeps its own place
    lab.screenshot_themes("panels-library-warnings", panel(explorer, "warnings"))
    assert not lab.extension_errors()
