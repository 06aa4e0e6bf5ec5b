"""A plain IPython terminal renders no widget: ``tj.explore``, a displayed run and ``%trace`` print the text report
and say where the explorer renders. Through a real ``ipython`` session, its input piped in as a person types it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell

from jupyter_tracejit.widgets import in_terminal, where_the_explorer_renders

SESSION = """\
import torch
import jupyter_tracejit as tj
def relu_fn(x):
    return torch.relu(x) + 1

x = torch.randn(3)
tj.explore(relu_fn, (x,))
%load_ext jupyter_tracejit
%trace -o r relu_fn(x)
print("stored:", type(r).__name__, "_trace_explorer" in globals())
r
%trace --quiet relu_fn(x)
exit
"""


def ipython_terminal(session: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "IPYTHONDIR": str(tmp_path / "ipython"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "IPython",
            "--simple-prompt",
            "--no-banner",
            "--colors=NoColor",
            "--HistoryManager.enabled=False",
        ],
        input=session,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )


def test_explore_trace_and_a_run_print_the_report_and_where_the_explorer_renders(tmp_path: Path) -> None:
    done = ipython_terminal(SESSION, tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    summary = "relu_fn: ok; 4 nodes, check passed (1 input set)"
    report = f"{summary}\ncheck (1 input set, tolerance 1e-05):\n  example inputs (forward, Float(3)): ok\n"
    # tj.explore's result, %trace and the run displayed: the report, then the line naming the hosts
    assert out.count(report) == 3, out
    assert out.count(where_the_explorer_renders("run")) == 2, out  # the explorer's and the displayed run's
    assert out.count(where_the_explorer_renders("r")) == 1, out  # %trace names its variable
    assert "renders in JupyterLab, Notebook 7, VS Code, Colab or marimo" in out
    # %trace's phases print as they come, the run is stored, no explorer is made for a terminal
    assert "tracing relu_fn… (started " in out and "checking relu_fn… (started " in out
    assert "stored: TraceRun False" in out
    # --quiet prints its one line, as in a notebook
    assert re.search(rf"In \[\d+\]: {re.escape(summary)}\n\n", out), out
    # no widget's repr, no traceback
    assert "TraceExplorer(" not in out and "Traceback" not in out + done.stderr, out + done.stderr


def test_only_ipythons_terminal_shell_is_a_terminal() -> None:
    from IPython.terminal.interactiveshell import TerminalInteractiveShell

    class KernelShell(InteractiveShell):  # what ipykernel's ZMQInteractiveShell is to this test
        pass

    class CustomTerminal(TerminalInteractiveShell):
        pass

    # read from the shell's class alone (making a shell here would install it as the running one)
    assert in_terminal(object.__new__(TerminalInteractiveShell))
    assert in_terminal(object.__new__(CustomTerminal))
    assert not in_terminal(object.__new__(KernelShell))
    assert not in_terminal(object())
