"""The torch.export back end: an ``ExportedProgram`` turned into the same torch-free
:class:`~jupyter_tracejit.core.graph.Graph` the TorchScript back end builds.

This package file imports nothing of torch, so ``import jupyter_tracejit.core.export`` stays cheap; the extraction
lives in :mod:`.graph` (which imports torch) and is loaded on first use of the names below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .graph import argument_names, graph_from_exported_program

__all__ = ["argument_names", "graph_from_exported_program"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import graph

        return getattr(graph, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
