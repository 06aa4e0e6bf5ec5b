"""``tj.load``: a saved model read back as a run, whichever kind of file it is (read from its content, not its
name), by the back end that declares that kind of file in the registry: a TorchScript archive (``.pt``, backend
``trace``) or an exported program (``.pt2``, backend ``export``), each run's ``source`` ``file``. Never raises for
the file: what is wrong with it is ``run.error``. Nothing in the file runs unless it is trusted (:mod:`.guard`, and
the bounded process of ``core/torchscript/saved/sandbox.py``)."""

from __future__ import annotations

import os
import time
from typing import Any

from ..capture import stamp
from ..registry import backends, loader
from ..run import TraceRun
from .guard import DEFAULT_MAX_SIZE
from .layout import ArchiveLayout, file_run, inspect_file, load_error


def load(
    path: str | os.PathLike[str],
    *,
    map_location: Any = "cpu",
    trusted: bool = False,
    max_size: int = DEFAULT_MAX_SIZE,
) -> TraceRun:
    """Read a ``torch.jit.save`` archive (``.pt``) or a ``torch.export.save`` program (``.pt2``) into a run,
    without running the model. ``map_location``: where its tensors load (``"cpu"``; ``None``: where they were
    saved).

    Unless ``trusted=True``, nothing in the file runs in this process: a file holding pickled objects beyond
    tensors (an exported program's opaque or custom objects, a pickle naming a Python function), compiled code or
    a shape expression that is more than arithmetic is refused before torch reads it (``run.error``, tag
    ``untrusted_pickle`` or ``untrusted_code``), and a TorchScript archive whose code runs at load (a
    ``__setstate__``) is loaded in a process of its own with limited time and memory (the finding
    ``code_at_load`` says what ran). ``trusted=True`` lets torch read the file as it would: only for files whose
    origin you trust. ``max_size``: the largest total unpacked size read (bytes, from the zip directory: a zip
    bomb is refused before anything is inflated, trusted or not)."""
    started = time.perf_counter()
    path_text = os.fspath(path)
    layout = inspect_file(path_text)
    read = loader(layout.kind) if isinstance(layout, ArchiveLayout) else None
    if read is not None:
        return read(path_text, layout=layout, map_location=map_location, trusted=trusted, max_size=max_size)
    # not a file any back end reads: the run of the first that reads files says what it is instead
    first = next(b for b in backends() if b.files)
    run = file_run(path_text, map_location, first.name)
    run.error = (
        layout
        if not isinstance(layout, ArchiveLayout)
        else load_error(
            path_text,
            "unsupported_archive",
            f"{path_text} is an archive of a kind ({layout.kind}) that no back end of this jupyter-tracejit reads.",
            "Open it with the version of jupyter-tracejit that wrote it, or with torch itself if you trust it.",
        )
    )
    return stamp(run, started)


__all__ = ["load"]
