"""Where the user asked for the trace: the line locations fall back to when everything happened inside torch.

Tracing ``nn.Transformer`` or ``nn.Sequential`` records nodes whose every frame is torch's own; their "user" line
must not be a torch file. It is the call into torch's module from user code: the line that called ``tj.trace``
(or the ``%trace`` line, or the file and name the ``tracejit`` command traced), together with the node's module
path. The API finds that line by walking the stack outward past this package, torch and installed libraries;
front ends that know better say so with :func:`call_site`.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import sys
from collections.abc import Iterator
from types import FrameType

from .graph import Frame
from .source import is_torch_file, source_line

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: installed libraries and the standard library (IPython's and runpy's frames sit between a cell and the call)
_LIBRARY = re.compile(r"[/\\](site-packages|dist-packages)[/\\]|[/\\]lib[/\\]python\d")

_call_site: contextvars.ContextVar[Frame | None] = contextvars.ContextVar("tracejit_call_site", default=None)


_INSTALLED = re.compile(r"[/\\](?:site-packages|dist-packages)[/\\]([^/\\]+)")


def installed_package(path: str) -> str | None:
    """The installed package a file belongs to (``transformers`` for ``.../site-packages/transformers/x.py``), or
    None for the user's own files."""
    found = _INSTALLED.search(path)
    if found is None:
        return None
    name = found.group(1)
    return name[:-3] if name.endswith(".py") else name


def is_own_file(path: str) -> bool:
    """A file of this package: a warning raised "at" it (torch's deprecation notice names the caller of
    torch.jit.trace, which is the session) belongs to the line that asked for the trace."""
    return path.startswith(_PACKAGE_DIR)


def _is_library(path: str) -> bool:
    return (
        path.startswith(_PACKAGE_DIR)
        or is_torch_file(path)
        or _LIBRARY.search(path) is not None
        or path.startswith("<frozen")
    )


def find_caller() -> Frame | None:
    """The frame that asked for the trace: :func:`call_site`'s when set, else the innermost frame outside this
    package, torch and installed libraries (a notebook cell, a script), or None."""
    given = _call_site.get()
    if given is not None:
        return given
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if not _is_library(os.path.abspath(path) if not path.startswith("<") else path):
            line = frame.f_lineno or 0
            return Frame(file=path, line=line, func=frame.f_code.co_name, code=source_line(path, line))
        frame = frame.f_back
    return None


@contextlib.contextmanager
def calls_from(frame: Frame | None) -> Iterator[None]:
    """Traces started inside this block name ``frame`` as the place that asked for them (``None``: the
    place is found as usual). A re-trace from an explorer runs from the kernel's event loop, far from the line
    that asked for the first trace: its request keeps that line and re-traces inside this block."""
    token = _call_site.set(frame) if frame is not None else None
    try:
        yield
    finally:
        if token is not None:
            _call_site.reset(token)


@contextlib.contextmanager
def call_site(file: str, line: int, func: str = "<module>", code: str = "") -> Iterator[None]:
    """Traces started inside this block name ``file:line`` as the place that asked for them."""
    with calls_from(Frame(file=file, line=line, func=func, code=code or source_line(file, line))):
        yield


__all__ = ["call_site", "calls_from", "find_caller", "is_own_file"]
