"""``tj.load``: a saved model read back as a run, whichever kind of file it is (read from its content, not its
name): a TorchScript archive (:func:`~.load.load_archive`, backend ``torchscript-archive``) or an exported program
(:func:`~.exported.load_exported`, backend ``export``). Never raises for the file: what is wrong with it is
``run.error``."""

from __future__ import annotations

import os
from typing import Any

from ..run import TraceRun
from .exported import load_exported
from .layout import ArchiveLayout, inspect_file
from .load import load_archive


def load(path: str | os.PathLike[str], *, map_location: Any = "cpu") -> TraceRun:
    """Read a ``torch.jit.save`` archive (``.pt``) or a ``torch.export.save`` program (``.pt2``) into a run,
    without running the model. ``map_location``: where its tensors load (``"cpu"``; ``None``: where they were
    saved)."""
    path_text = os.fspath(path)
    layout = inspect_file(path_text)
    if isinstance(layout, ArchiveLayout) and layout.kind == "export":
        return load_exported(path_text, layout, map_location=map_location)
    return load_archive(path_text, map_location=map_location, layout=layout)


__all__ = ["load"]
