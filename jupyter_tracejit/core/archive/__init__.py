"""A saved model read back as a run, the model never run: :func:`.saved.load` (``tj.load``) reads either kind,
:func:`.load.load_archive` TorchScript archives (``.pt``), :func:`.exported.load_exported` exported programs
(``.pt2``). (``load`` is not re-exported here: it would hide the :mod:`.load` module of the package.)

Imported on first use (PEP 562): :mod:`.guard` and :mod:`.layout` are torch-free, and the server extension reads a
file's zip directory with them without importing torch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .load import BACKEND, load_archive

__all__ = ["BACKEND", "load_archive"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import load

        return getattr(load, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
