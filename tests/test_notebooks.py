"""The tutorial notebooks run end to end in a real kernel, and say what they claim."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _outputs_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append(out["text"])
        for key in ("text/plain",):
            if key in out.get("data", {}):
                parts.append(out["data"][key])
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_tutorial_runs_end_to_end(path: Path, tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    work = tmp_path / path.name
    shutil.copy(path, work)
    nb = nbformat.read(work, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    # every %trace shows the explorer: the live widget with the run beside it, for kernel-free viewing
    explorers = [
        o
        for c in code
        for o in c.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
        and "application/vnd.jupyter.tracejit+json" in o.get("data", {})
    ]
    assert len(explorers) >= 5
    text = "\n".join(_outputs_text(c) for c in code)
    if path.name == "01-tracing-pitfalls.ipynb":
        assert "('to_bool', 2, 2)" in text  # line 2 of its cell, once per trace and re-trace
        assert "aten::mul in the trace, aten::sub in the check trace" in text
        assert "only in the check trace: aten::select" in text
        assert "'disagree'" in text  # the probe catches the frozen list index
        assert "'nondeterministic'" in text
        assert (tmp_path / "loop_trace.html").exists()
