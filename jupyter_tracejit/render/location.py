"""How every view names a place in the user's code: ``cell [9], line 7`` for a notebook cell's file (the run's
``file_names``, filled by the kernel), else ``model.py:7`` (the file's base name). The one rule of the reports (text,
HTML, DOT tooltips); ``labextension/src/model/location.ts`` ``locationLabel`` is the explorer's copy of it."""

from __future__ import annotations

import re
from collections.abc import Mapping

_PATH_SEP = re.compile(r"[\\/]")


def basename(file: str) -> str:
    """The file's last path part, for ``/`` and ``\\`` paths alike (a run saved on Windows read on Linux)."""
    return _PATH_SEP.split(file)[-1] or file


def location_label(file: str, line: int, file_names: Mapping[str, str]) -> str:
    """``cell [9], line 7`` for a file ``file_names`` names, else ``model.py:7``; ``?`` when there is no file."""
    name = file_names.get(file)
    if name:
        return f"{name}, line {line}"
    return f"{basename(file)}:{line}" if file else "?"
