"""The child process a TorchScript archive whose code runs at load is read in (``python -m
jupyter_tracejit.core.torchscript.saved.child PATH MAP_LOCATION MAX_MEMORY MAX_SIZE``, started by
:func:`.sandbox.load_bounded`): under its memory cap, marked bounded (so the load runs the code here), the run's
JSON on stdout."""

from __future__ import annotations

import json
import os
import sys

from ...archive.directory import limit_memory
from . import sandbox
from .load import load_archive


def main(argv: list[str]) -> int:
    """The child: ``PATH MAP_LOCATION MAX_MEMORY MAX_SIZE``; the run's JSON on stdout, what the load prints on
    stderr."""
    path, location, memory, max_size = argv
    limit_memory(int(memory))
    sandbox.mark_bounded()
    sys.stdout.flush()
    run_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what the archive's code prints (TorchScript's print writes to fd 1) goes to stderr
    sys.stdout = sys.stderr
    try:
        run = load_archive(path, map_location=location or None, max_size=int(max_size))
        if run.error is not None and sandbox.out_of_memory(run.error.message):
            return sandbox.OUT_OF_MEMORY
        text = json.dumps(run.to_json())
    except MemoryError:
        return sandbox.OUT_OF_MEMORY
    run_out.write(text)
    run_out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
