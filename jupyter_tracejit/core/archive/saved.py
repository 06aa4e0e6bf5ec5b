"""``tj.load``: a saved model read back as a run, whichever kind of file it is (read from its content, not its
name): a TorchScript archive (:func:`~.load.load_archive`, backend ``torchscript-archive``) or an exported program
(:func:`~.exported.load_exported`, backend ``export``). Never raises for the file: what is wrong with it is
``run.error``. Nothing in the file runs unless it is trusted (:mod:`.guard`, :mod:`.sandbox`)."""

from __future__ import annotations

import os
from typing import Any

from ..run import TraceRun
from .exported import load_exported
from .guard import DEFAULT_MAX_SIZE
from .layout import ArchiveLayout, inspect_file
from .load import load_archive


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
    path_text = os.fspath(path)
    layout = inspect_file(path_text)
    if isinstance(layout, ArchiveLayout) and layout.kind == "export":
        return load_exported(path_text, layout, map_location=map_location, trusted=trusted, max_size=max_size)
    return load_archive(path_text, map_location=map_location, layout=layout, trusted=trusted, max_size=max_size)


__all__ = ["load"]
