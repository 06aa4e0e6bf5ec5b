"""Display names of notebook cells' files: ``cell [9]`` for the file IPython compiled cell 9 into.

IPython compiles each cell into a file named by a hash of its code (``/tmp/ipykernel_123/2749541092.py``), which
says nothing to the reader; its compiler knows which execution count each such file belongs to
(``shell.compile.format_code_name``), as its tracebacks show (``Cell In[9], line 7``). Registered with the core by
``import jupyter_tracejit`` (:func:`jupyter_tracejit.core.run.register_file_namer`), so every new run carries the
names in ``run.file_names``. IPython is never imported here: without a running shell nothing is named.
"""

from __future__ import annotations

import re
import sys

_IN = re.compile(r"In\s*\[(\d+)\]")


def cell_name(file: str) -> str | None:
    """``cell [9]`` when ``file`` is the code of cell 9 of the running IPython shell, else ``None``."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if get_ipython is not None else None
    format_code_name = getattr(getattr(shell, "compile", None), "format_code_name", None)
    if format_code_name is None:
        return None
    named = format_code_name(file)
    if not named:
        return None
    label, name = named
    found = _IN.fullmatch(str(name))
    return f"cell [{found.group(1)}]" if found else f"{label} {name}"


__all__ = ["cell_name"]
