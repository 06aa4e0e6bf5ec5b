"""Where no front end renders the explorer: a plain IPython terminal (``ipython``, no kernel, no page).

There, ``tj.explore``, a displayed run and ``%trace`` print the text report (what ``tracejit trace`` prints) and one
line saying where the explorer renders and how to take the run there. Imports no IPython: it reads the shell it is
given (or the running one) by its class names, so this works with any IPython that has a terminal shell.
"""

from __future__ import annotations

import sys
from typing import Any

from ..core.run import TraceRun

#: the hosts the explorer renders in (the anywidget module reaches VS Code, Colab and marimo; see the README)
EXPLORER_HOSTS = "JupyterLab, Notebook 7, VS Code, Colab or marimo"


def in_terminal(shell: Any = None) -> bool:
    """True when ``shell`` (default: the running IPython shell) is IPython's terminal shell, which renders no
    widget; False in a kernel (Jupyter, VS Code, Colab), in marimo and outside IPython."""
    if shell is None:
        ipython = sys.modules.get("IPython")  # never imported here: without IPython there is no terminal shell
        get_ipython = getattr(ipython, "get_ipython", None)
        shell = get_ipython() if callable(get_ipython) else None
    if shell is None:
        return False
    return any(cls.__name__ == "TerminalInteractiveShell" for cls in type(shell).__mro__)


def where_the_explorer_renders(run_name: str = "run") -> str:
    """The line printed under the report in a terminal; ``run_name`` is the variable that holds the run."""
    return (
        f"the explorer renders in {EXPLORER_HOSTS}: run this in a notebook, or save the run as an offline page "
        f"with {run_name}.save_html('report.html')"
    )


def terminal_report(run: TraceRun, run_name: str = "run") -> str:
    """The text report of ``run`` and where its explorer would render."""
    from ..render.text import format_run

    return f"{format_run(run)}\n{where_the_explorer_renders(run_name)}"


__all__ = ["EXPLORER_HOSTS", "in_terminal", "terminal_report", "where_the_explorer_renders"]
