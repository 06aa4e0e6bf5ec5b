"""The README's main job: ``python -m jupyter_tracejit demo``."""

from __future__ import annotations

import json
import subprocess
import sys

import jupyter_tracejit as tj
from jupyter_tracejit.render.text import format_run


def test_demo_command_prints_the_report_and_writes_json_and_dot(tmp_path):
    out_json, out_dot = tmp_path / "run.json", tmp_path / "run.dot"
    result = subprocess.run(
        [sys.executable, "-m", "jupyter_tracejit", "demo", "--json", str(out_json), "--dot", str(out_dot)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr  # the problems found are the demo working
    text = result.stdout
    assert "[to_bool] (x2) demo.py:" in text and "[to_int] (x2) demo.py:" in text
    assert "only in the check trace: aten::select" in text
    assert "input 1 of aten::mul differs: tensor constant 0.5 vs 2.0" in text
    assert "generalization probe: trace does not generalize" in text
    run = tj.TraceRun.from_json(json.loads(out_json.read_text()))
    assert not run.ok and run.probe is not None and not run.probe.ok
    assert out_dot.read_text().startswith("digraph")


def test_text_report_of_a_failed_trace_shows_error_and_hint():
    run = tj.trace(lambda x: {"y": x}, (1.0,))
    text = format_run(run)
    assert "<lambda>: FAILED (RuntimeError: Type" in text.splitlines()[0]
    assert "hint:" in text
