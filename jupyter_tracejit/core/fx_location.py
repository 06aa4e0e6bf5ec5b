"""Where an FX node is: its module (``meta["nn_module_stack"]``: :func:`module_path`, :func:`type_name`) and its
source (``meta["stack_trace"]``: :func:`read_stack_trace`), as :mod:`.fx_graph` turns them into scopes and
:class:`~.graph.SourceLoc` s.
"""

from __future__ import annotations

import os
import re
from typing import Any

import torch

from .graph import Frame, SourceLoc
from .source import is_torch_file, source_line, user_frame_index

_FRAME_RE = re.compile(r'^\s*File "(?P<file>.*)", line (?P<line>\d+), in (?P<func>.*)$')
#: strict mode's (Dynamo's) spellings of a module path: ``L['self'].layers[0]._modules['a b']``
_DYNAMO_ITEM = re.compile(r"""(?:\._modules)?\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(-?\d+))\]""")
#: the marker torch puts in ``nn_module_stack`` of nodes it adds itself (``sym_size``): no module
NO_MODULE_KEY = "_empty_nn_module_stack_from_metadata_hook"
#: the attribute strict mode wraps the model under (``torch.export._trace``'s wrapper module)
_STRICT_ROOT = "_export_root"
_SITE_PACKAGES = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))


def module_path(path: str) -> str:
    """An ``nn_module_stack`` path as ``named_modules()`` names the module.

    Export writes ``layers.0`` already, except inside a subgraph of strict mode, where paths start at the wrapper
    strict mode puts around the model (``_export_root.fc``: the prefix is dropped). Dynamo's own spelling
    (``L['self'].layers[0]``, ``L['self']._modules['a b']``), which torch rewrites before it hands the program
    back, is read too in case a version does not.
    """
    if path.startswith("L["):
        path = re.sub(r"^L\[['\"]self['\"]\]", "", path)
        path = _DYNAMO_ITEM.sub(lambda m: "." + next(g for g in m.groups() if g is not None), path).lstrip(".")
    if path == _STRICT_ROOT:
        return ""
    if path.startswith(_STRICT_ROOT + "."):
        return path[len(_STRICT_ROOT) + 1 :]
    return path


def type_name(qualified: Any) -> str:
    """``torch.nn.modules.linear.Linear`` (or the class itself) -> ``Linear``."""
    if isinstance(qualified, type):
        return qualified.__name__
    return str(qualified).rsplit(".", 1)[-1]


def read_stack_trace(text: str, known: dict[tuple[str, int, str], Frame]) -> SourceLoc | None:
    """A traceback's frames (outermost first; each ``File "f", line n, in func`` and its code line) as a
    SourceLoc, innermost first. ``known``: the frames read so far (by file, line and function), filled in."""
    frames: list[Frame] = []
    lines = text.splitlines()
    for i, raw in enumerate(lines):
        m = _FRAME_RE.match(raw)
        if m is None:
            continue
        file, line, func = m.group("file"), int(m.group("line")), m.group("func")
        frame = known.get((file, line, func))
        if frame is None:
            following = lines[i + 1].strip() if i + 1 < len(lines) and not _FRAME_RE.match(lines[i + 1]) else ""
            if not os.path.isabs(file) and not file.startswith("<"):
                # torch writes its own frames relative to site-packages (``torch/fx/passes/...``)
                candidate = os.path.join(_SITE_PACKAGES, file)
                if os.path.exists(candidate):
                    file = candidate
            frame = known[(m.group("file"), line, func)] = Frame(
                file=file,
                line=line,
                func=func,
                code=source_line(file, line) or following,
                internal=is_torch_file(file) or file.startswith("<eval_with_key>"),
            )
        frames.append(frame)
    if not frames:
        return None
    stack = tuple(reversed(frames))
    return SourceLoc(stack=stack, user_index=user_frame_index(stack))
