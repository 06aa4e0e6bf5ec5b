"""Where a TorchScript node comes from, read from the texts it carries: its source range (``file(line): func`` per
frame, innermost first: :func:`parse_stack`), its scope name (``__module.layer1/__module.layer1.0``:
:func:`scope_path`) and its module hierarchy (``layer1(Sequential).0(Block)``: :func:`parse_hierarchy`). Each text is
read once per distinct text by :func:`.extract.extract_graph`.
"""

from __future__ import annotations

import re

from ..graph import Frame, SourceLoc
from ..source import is_torch_file, is_trace_entry_file, source_line, user_frame_index
from ..values import demangle

_FRAME_RE = re.compile(r"^(.*)\((\d+)\): (.*)$")
_HIERARCHY_RE = re.compile(r"([^.()]+)\(([^()]*)\)")


def parse_stack(text: str, frames_seen: dict[str, Frame | None] | None = None) -> SourceLoc | None:
    """Parse ``Node.sourceRange()`` (``file(line): func`` per line, innermost first).

    ``frames_seen`` (line -> its frame, None for the trace entry) lets the stacks of one graph share the work:
    they differ in a frame or two and repeat the rest.
    """
    frames: list[Frame] = []
    for raw in text.splitlines():
        if frames_seen is not None and raw in frames_seen:
            frame = frames_seen[raw]
        else:
            m = _FRAME_RE.match(raw)
            if not m:
                continue
            file, line = m.group(1), int(m.group(2))
            frame = (
                None
                if is_trace_entry_file(file)
                else Frame(
                    file=file, line=line, func=m.group(3), code=source_line(file, line), internal=is_torch_file(file)
                )
            )
            if frames_seen is not None:
                frames_seen[raw] = frame
        if frame is None:
            break
        frames.append(frame)
    if not frames:
        return None
    stack = tuple(frames)
    return SourceLoc(stack=stack, user_index=user_frame_index(stack))


def scope_path(scope_name: str) -> str:
    """``__module.layer1/__module.layer1.0`` -> ``layer1.0``; ``__module`` -> ``""``."""
    if not scope_name:
        return ""
    # levels are joined by "/", and a module name may hold "/" itself (add_module("a/b", ...)): split where the
    # next level starts
    last = scope_name.rsplit("/__module.", 1)[-1]
    if "/__module." in scope_name:
        last = "__module." + last
    if last == "__module":
        return ""
    if last.startswith("__module."):
        return last[len("__module.") :]
    return last


def parse_hierarchy(text: str) -> dict[str, str]:
    """``layer1(Sequential).0(Block)`` -> ``{"layer1": "Sequential", "layer1.0": "Block"}``."""
    out: dict[str, str] = {}
    path = ""
    for m in _HIERARCHY_RE.finditer(text):
        path = m.group(1) if not path else f"{path}.{m.group(1)}"
        out[path] = demangle(m.group(2))
    return out
