"""Where a node of a loaded archive came from, read from its ``sourceRange()`` text.

A TorchScript archive keeps each node's original source range in ``code/*.debug_pkl``, unless it was saved
without debug information. After ``torch.jit.load`` a node's text is the original range, then torch's
``Serialized   File "code/..."`` block that points into the archive's own TorchScript code:

- a traced model: the tracer's Python stack (``file(line): func`` per line, innermost first), which
  :func:`~..torchscript.scope_and_stack.parse_stack` reads as for a live trace;
- a scripted model: one ``  File "model.py", line 12`` header and the original lines, the node's range underlined
  with ``~~~~ <--- HERE``: the archive keeps the source text itself, so the line reads even where the file is
  missing;
- an archive without debug information: only the ``File "code/__torch__.py", line 14`` block of the archive's
  code: no original line (``None``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ...graph import Frame, SourceLoc
from ...source import is_torch_file, user_frame_index
from ..scope_and_stack import parse_stack

SERIALIZED = "Serialized   File"
_SCRIPT_HEADER = re.compile(r'^\s*File "(.*)", line (\d+)')
_UNDERLINE = re.compile(r"^\s*~+")


def archive_source(text: str, frames_seen: dict[str, Frame | None]) -> SourceLoc | None:
    """The original location of a node of a loaded archive (``None`` where the archive kept none)."""
    at = text.find(SERIALIZED)
    return _original_source(text[:at] if at >= 0 else text, at >= 0, frames_seen)


def archive_source_reader() -> Callable[[str, dict[str, Frame | None]], SourceLoc | None]:
    """:func:`archive_source` for the nodes of one graph, each original range read once: the texts of a graph's
    nodes differ in their ``Serialized`` block (each node's own place in the archive's code) far more often than
    in their original range (a 1,356-node encoder: 853 texts, 34 original ranges)."""
    read: dict[tuple[str, bool], SourceLoc | None] = {}

    def reader(text: str, frames_seen: dict[str, Frame | None]) -> SourceLoc | None:
        at = text.find(SERIALIZED)
        key = (text[:at] if at >= 0 else text, at >= 0)
        if key not in read:
            read[key] = _original_source(*key, frames_seen)
        return read[key]

    return reader


def _original_source(original: str, serialized: bool, frames_seen: dict[str, Frame | None]) -> SourceLoc | None:
    """:func:`archive_source` of a text's original range (``serialized``: whether torch's ``Serialized`` block
    followed it)."""
    if not original.strip():
        return None
    header = _SCRIPT_HEADER.match(original)
    if header is None:
        return parse_stack(original, frames_seen)
    file, line = header.group(1), int(header.group(2))
    if not file or not line:
        return None  # torch's 'File "", line 0': a node the tracer recorded with no stack (an int() it inserted)
    if not serialized and file.startswith("code/"):
        return None  # the archive's own code only: saved without debug information
    lines = original.splitlines()
    code = ""
    for i, raw in enumerate(lines[1:], start=1):
        if _UNDERLINE.match(raw):
            code = lines[i - 1].strip()
            break
    stack = (Frame(file=file, line=line, func="", code=code, internal=is_torch_file(file)),)
    return SourceLoc(stack=stack, user_index=user_frame_index(stack))
