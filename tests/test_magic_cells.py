"""``%%trace`` cells and re-runs of a cell: locations named by the cell's execution count, the explorers a re-run
closes, and ``%trace`` once through a real kernel (nbclient)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ipywidgets
import pytest
import torch
from IPython.core.interactiveshell import InteractiveShell
from torch import nn

import jupyter_tracejit as tj
from jupyter_tracejit import magic
from jupyter_tracejit.widgets import PROGRESS_MIME, RUN_MIME, TraceExplorer, run_from_mime

from .core.oracle import torch_deprecates_jit_trace
from .magic_shell import (
    WIDGET_MIME,
    relu_fn,
    require_kernel,
    run_magic,
    traced,
)


def test_locations_in_cells_are_named_by_their_execution_count(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    ip.run_cell("def branchy(x):\n    if x.sum() > 0:\n        return x * 2\n    return x\n", store_history=True)
    defined_in = ip.execution_count - 1
    run = traced(ip, monkeypatch, "branchy(x.abs())")
    (warning,) = run.user_warnings
    assert run.file_names[warning.file] == f"cell [{defined_in}]"
    assert run.file_names[run.target.file] == f"cell [{defined_in}]"
    assert all(name.startswith("cell [") for name in run.file_names.values())
    assert f"cell [{defined_in}], line 2" in run.to_html()
    run_magic(ip, monkeypatch, "", CELL.format(factor=3))
    cell_run = ip.user_ns["_trace"]
    assert cell_run.file_names[cell_run.target.file] == f"cell [{ip.execution_count}]"


def test_a_cell_magic_names_its_cell_by_the_number_the_cell_ran_as(ip: InteractiveShell) -> None:
    """IPython 9 counts a cell in ``execution_count`` before it runs: the %%trace cell's locations must still read
    the number the notebook shows for it."""
    result = ip.run_cell("%%trace\n" + CELL.format(factor=2), store_history=True)
    run = ip.user_ns["_trace"]
    assert run.file_names[run.target.file] == f"cell [{result.execution_count}]"


def test_nodes_inside_torch_point_at_the_trace_line_as_written_and_retraces_keep_it(ip: InteractiveShell) -> None:
    """nn.Sequential's nodes are all recorded inside torch: their location is the %trace line of the cell, as the
    user wrote it (not IPython's get_ipython().run_line_magic rewrite); a re-trace from the explorer (run from the
    event loop, nowhere near the cell) says the same, never a torch file."""
    ip.user_ns["seq"] = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    result = ip.run_cell("y = 1\n%trace seq(x)", store_history=True)
    run = ip.user_ns["_trace"]

    def located(r: tj.TraceRun) -> set[tuple[str, int, str]]:
        graph = r.graphs["forward"]
        return {
            (r.file_names.get(n.source.file, n.source.file), n.source.line, n.source.code)
            for n in graph.nodes
            if n.source
        }

    assert located(run) == {(f"cell [{result.execution_count}]", 2, "%trace seq(x)")}
    # torch's deprecation notice names its caller, which is this package's code: it is the %trace line's too
    notices = [w for w in run.warnings if w.category == "deprecated"]
    assert len(notices) == (1 if torch_deprecates_jit_trace() else 0)
    for deprecated in notices:
        assert (run.file_names.get(deprecated.file), deprecated.line, deprecated.code) == located(run).pop()
    explorer = ip.user_ns["_trace_explorer"]
    explorer.options = {"module_mode": "eval"}  # a re-trace (no event loop here: it runs at once)
    assert explorer.run is not run and located(explorer.run) == located(run)


# -- %%trace --------------------------------------------------------------------------------------------

CELL = """\
def g(x):
    return torch.relu(x) * {factor}
g(x)
"""


def test_cell_defines_then_traces_its_last_line(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    _, shown = run_magic(ip, monkeypatch, "", CELL.format(factor=3))
    assert shown.stderr == ""
    run = ip.user_ns["_trace"]
    assert run.ok and run.target.name == "g"
    assert run.request.target is ip.user_ns["g"]  # the definition landed in the namespace
    assert run.target.line == 2  # line 1 of the cell is %%trace
    assert any(n.kind == "aten::mul" for n in run.graph.nodes)
    (explorer,) = shown.final
    assert isinstance(explorer, TraceExplorer) and explorer.live
    # edit the function, re-run the cell: options on the first line
    _, shown = run_magic(ip, monkeypatch, "--no-check -o edited", CELL.format(factor="x"))
    edited = ip.user_ns["edited"]
    assert edited.options["check_trace"] is False and ip.user_ns["_trace"] is run
    assert edited.graph.to_json() != run.graph.to_json()


def test_cell_error_in_the_code_before_the_call_shows_its_traceback_and_traces_nothing(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    previous = traced(ip, monkeypatch, "relu_fn(x)")
    _, shown = run_magic(ip, monkeypatch, "", "y = 1\n1 / 0\nrelu_fn(x)\n")
    assert "ZeroDivisionError" in shown.stdout + shown.stderr
    assert "magic.py" not in shown.stdout + shown.stderr
    assert ip.user_ns["_trace"] is previous and shown.objects == []


# -- what shown explorers keep alive --------------------------------------------------------------------


def test_rerunning_a_cell_closes_the_explorer_its_previous_run_showed(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(magic, "_cell_id", lambda shell: "cell-a")
    traced(ip, monkeypatch, "relu_fn(x)")
    first = ip.user_ns["_trace_explorer"]
    traced(ip, monkeypatch, "relu_fn(x)")
    second = ip.user_ns["_trace_explorer"]
    assert first.comm is None and first not in ipywidgets.Widget.widgets.values()
    assert second.comm is not None
    monkeypatch.setattr(magic, "_cell_id", lambda shell: "cell-b")  # another cell leaves it open
    traced(ip, monkeypatch, "relu_fn(x)")
    assert second.comm is not None


def test_beyond_the_bound_the_oldest_explorer_is_closed(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(magic, "MAX_LIVE_EXPLORERS", 3)
    monkeypatch.setattr(magic, "_cell_id", lambda shell: None)  # no cell ids (a console): only the bound applies
    shown = []
    for _ in range(5):
        traced(ip, monkeypatch, "relu_fn(x)")
        shown.append(ip.user_ns["_trace_explorer"])
    assert [e.comm is not None for e in shown] == [False, False, True, True, True]
    assert shown[0].run is not None  # a closed explorer's run stays readable


def test_fifty_runs_of_a_cell_leave_one_explorer_registered(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-running a cell closes its previous explorer, and with it the Layout widget every DOMWidget makes: before,
    that one stayed registered (comm open) per run, 51 widgets after 50 runs."""
    monkeypatch.setattr(magic, "_cell_id", lambda shell: "the-same-cell")
    before = set(ipywidgets.Widget.widgets)
    for _ in range(50):
        run_magic(ip, monkeypatch, "--no-check relu_fn(x)")
    explorer = ip.user_ns["_trace_explorer"]
    left = {ipywidgets.Widget.widgets[k] for k in set(ipywidgets.Widget.widgets) - before}
    assert left == {explorer, explorer.layout}, sorted(type(w).__name__ for w in left)


def test_a_closed_explorer_closes_its_layout(ip: InteractiveShell) -> None:
    explorer = tj.explore(tj.trace(relu_fn, (torch.ones(2),), check_trace=False))
    layout = explorer.layout
    explorer.close()
    assert layout.comm is None and layout not in ipywidgets.Widget.widgets.values()


# -- a real kernel -------------------------------------------------------------------------------------


def test_notebook_with_load_ext_and_trace(tmp_path: Path) -> None:
    require_kernel()
    import nbformat
    from nbclient import NotebookClient

    cells = [
        "%load_ext jupyter_tracejit\nimport torch\ndef f(x):\n    return torch.relu(x) + 1\nx = torch.randn(3)",
        "%trace f(x)",
        "%trace --static -o static_run f(x)",
        "%trace --tol abc f(x)",
        "print(_trace.ok, static_run.ok, type(_trace).__name__)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.cells[3].metadata["tags"] = ["raises-exception"]  # a magic error fails its cell; Run All would stop there
    path = tmp_path / "magic.ipynb"
    nbformat.write(nb, path)
    client = NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}, allow_errors=False
    )
    client.execute()

    def outputs(i: int) -> list[dict[str, Any]]:
        return nb.cells[i]["outputs"]

    (live,) = outputs(1)  # the placeholder was replaced in place
    assert live["output_type"] == "display_data"
    assert {WIDGET_MIME, RUN_MIME, "text/html", "text/plain"} <= set(live["data"])
    assert PROGRESS_MIME not in live["data"]
    assert run_from_mime(live["data"][RUN_MIME])["ok"] is True
    assert "cell [1]" in run_from_mime(live["data"][RUN_MIME])["file_names"].values()  # f is defined in the first cell
    (static,) = outputs(2)
    assert RUN_MIME in static["data"] and WIDGET_MIME not in static["data"]
    assert "text/html" in static["data"]
    (error,) = outputs(3)
    assert error["output_type"] == "stream" and error["name"] == "stderr"
    assert error["text"].startswith("UsageError: %trace: --tol needs a finite number")
    assert error["text"].count("\n") == 1
    (printed,) = outputs(4)
    assert printed["text"] == "True True TraceRun\n"
