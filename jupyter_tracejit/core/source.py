"""Where code lives, for every capture back end: torch's own files versus the user's, a file's source line, the
user's frame of a stack, and locations moved to the line that asked for the capture.

Back ends (the TorchScript extraction today) record stacks of :class:`~.graph.Frame`; these rules say which frame a
node is shown at, whatever recorded it. Nothing here walks a torch graph.
"""

from __future__ import annotations

import importlib.util
import linecache
import os
import re

from .graph import Frame, Graph, SourceLoc


def _torch_dir() -> str:
    """Where torch is installed, found without importing it (a saved run is read where torch may be missing)."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):  # a stand-in module without a spec, or no torch at all
        spec = None
    origin = spec.origin if spec is not None else None
    return os.path.dirname(os.path.abspath(origin)) + os.sep if origin else os.sep + "torch-not-installed" + os.sep


_TORCH_DIR = _torch_dir()
_SITE_TORCH = re.compile(r"[/\\]site-packages[/\\]torch[/\\]")


def is_torch_file(path: str) -> bool:
    """True for files inside the installed torch package (library frames, not the user's)."""
    return path.startswith(_TORCH_DIR) or _SITE_TORCH.search(path) is not None


def is_trace_entry_file(path: str) -> bool:
    """Frames from ``torch/jit/_trace.py`` outward are the caller of trace, not traced code."""
    return path.replace("\\", "/").endswith("torch/jit/_trace.py")


def source_line(file: str, line: int) -> str:
    return linecache.getline(file, line).strip()


def user_frame_index(stack: tuple[Frame, ...]) -> int:
    """The innermost frame outside torch; the outermost frame when every frame is torch's own."""
    for i, fr in enumerate(stack):
        if not fr.internal:
            return i
    return len(stack) - 1


def attribute_to_caller(graph: Graph, caller: Frame) -> None:
    """Give nodes recorded entirely inside torch the caller's frame as their user frame (outermost)."""
    replaced: dict[int, SourceLoc] = {}
    for n in graph.nodes:
        src = n.source
        if src is None or not src.user_frame.internal:
            continue
        new = replaced.get(id(src))
        if new is None:
            new = replaced[id(src)] = SourceLoc(stack=(*src.stack, caller), user_index=len(src.stack))
        n.source = new


__all__ = ["attribute_to_caller", "is_torch_file", "is_trace_entry_file", "source_line", "user_frame_index"]
