"""The command line as the CLI tests run it: ``tracejit ARGS`` through the CLI's ``main`` in a folder, its exit
status and what it printed, and ``sys.path`` as it was before (a command imports the user's file from there)."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

from jupyter_tracejit import cli


def run_cli(folder: Path, *args: str) -> tuple[int, str, str]:
    """``tracejit ARGS`` run in ``folder``: the exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    saved = list(sys.path)
    try:
        with contextlib.chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(list(args))
    finally:
        sys.path[:] = saved
    return code, out.getvalue(), err.getvalue()
