"""Where each guard of an export was made: the user's line, and the library line beside it when the guard was made
inside library code (``nn.LSTM``, transformers' Whisper), recorded while torch exports.

torch keeps one frame per guard (``ShapeGuard.sloc.framework_loc``): the first frame outside a few of its own files.
That is the user's line for ``for i in range(x.size(0))``, but a line of torch (``torch/_ops.py:920`` for a GRU,
``torch/_refs/__init__.py`` for a ``view``) or of transformers for a guard made in their code, with nothing said of
the user's frame that called into it. :func:`recording_places` wraps ``ShapeEnv._get_sloc`` (the one place every
guard, specialisation and replacement gets its location) for the length of one export, under the capture lock:

- the location torch computes is unchanged (the wrapper computes ``framework_loc`` from its caller's frame, as torch
  does from its own, so that this file is never the location);
- when that location is not the user's, the Python stack is walked inward-out (strict mode: dynamo's user stack,
  ``TracingContext.extract_stack()``) to the innermost frame of the user's code, noting the innermost library frame
  on the way (an installed package, or ``torch.nn`` 's modules): a :class:`Place`;
- the ``ShapeEnv`` itself is kept, so that a refused export, which returns no program, can still be read (its
  guards, specialisations and sources) as soon as torch refuses.

Frames are classified by file name, each file once. Nothing is recorded for a guard made at the user's own line.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

from ..caller import installed_package, is_own_file
from ..source import is_torch_file, source_line

#: a frame's file, classified: the user's code, a library's code worth naming (a line the user may recognise: an
#: installed package's, or ``torch.nn`` 's modules), or internal (torch's machinery, this package, the standard
#: library, generated code)
USER, LIBRARY, INTERNAL = "user", "library", "internal"
_NN = os.sep + os.path.join("torch", "nn") + os.sep
_NN_MACHINERY = ("module.py", "container.py", "functional.py", "_functions.py")
_STDLIB = os.path.dirname(os.__file__) + os.sep


@dataclass(frozen=True)
class Place:
    """Where a guard was made: the user's line, and the library's line when the guard was made in library code."""

    file: str
    line: int
    code: str = ""
    #: the library it was made in (``torch.nn``, ``transformers``); ``""`` when the line is the user's own
    library: str = ""
    library_file: str = ""
    library_line: int = 0
    library_code: str = ""


_kinds: dict[str, str] = {}


def frame_kind(file: str) -> str:
    """:data:`USER`, :data:`LIBRARY` or :data:`INTERNAL` for a frame's file (cached per file)."""
    kind = _kinds.get(file)
    if kind is None:
        kind = _kinds[file] = _classify(file)
    return kind


def _classify(file: str) -> str:
    if not file or file.startswith("<"):
        # a notebook cell's file is named "<ipython-input-...>" by plain IPython only; generated code otherwise
        return USER if file.startswith("<ipython-input-") else INTERNAL
    path = os.path.abspath(file)
    if is_torch_file(path):
        nn = path.find(_NN)
        if nn >= 0 and os.path.basename(path) not in _NN_MACHINERY:
            return LIBRARY
        return INTERNAL
    if is_own_file(path) or (path.startswith(_STDLIB) and installed_package(path) is None):
        return INTERNAL
    return LIBRARY if installed_package(path) is not None else USER


def library_name(file: str) -> str:
    """What to call the library a file is in: ``torch.nn`` for torch's modules, else the installed package."""
    if is_torch_file(os.path.abspath(file)):
        return "torch.nn" if _NN in os.path.abspath(file) else "torch"
    return installed_package(file) or ""


def place_of_frames(frames: list[tuple[str, int]]) -> Place | None:
    """The :class:`Place` of a stack given innermost first as ``(file, line)``: its innermost user frame, with the
    library frame inside it: the innermost frame of an installed package's code when there is one (transformers'
    line, not that of the ``nn.Linear`` it called), else of ``torch.nn`` 's; None when no frame is the user's."""
    library: tuple[str, int] | None = None
    for file, line in frames:
        kind = frame_kind(file)
        if kind == LIBRARY and (library is None or is_torch_file(os.path.abspath(library[0]))):
            library = (file, line)
        elif kind == USER:
            if library is None:
                return Place(file, line, source_line(file, line))
            lib_file, lib_line = library
            return Place(
                file,
                line,
                source_line(file, line),
                library_name(lib_file),
                lib_file,
                lib_line,
                source_line(lib_file, lib_line),
            )
    return None


def _python_frames(frame: FrameType | None) -> list[tuple[str, int]]:
    frames: list[tuple[str, int]] = []
    while frame is not None:
        frames.append((frame.f_code.co_filename, frame.f_lineno or 0))
        if frame_kind(frame.f_code.co_filename) == USER:
            break  # the innermost user frame: nothing outside it is needed
        frame = frame.f_back
    return frames


def _dynamo_frames() -> list[tuple[str, int]]:
    """Strict export's user stack (the code dynamo is tracing), innermost first; [] outside dynamo."""
    try:
        from torch._guards import TracingContext

        stack = TracingContext.extract_stack()
    except Exception:  # a private API that moved: the Python stack is used instead
        return []
    return [(fs.filename, fs.lineno or 0) for fs in reversed(stack)]


class PlaceRecorder:
    """What :func:`recording_places` saw: the ``ShapeEnv`` of the export, and a :class:`Place` per location torch made
    (a guard's ``sloc``) outside the user's code."""

    def __init__(self) -> None:
        #: the last ShapeEnv that made a location (the export's), or None
        self.env: Any = None
        #: ``id(sloc) -> (sloc, place)``: the sloc is held so that its id stays its own
        self._places: dict[int, tuple[Any, Place | None]] = {}

    def place_of(self, sloc: Any) -> Place | None:
        """Where the guard with this ``sloc`` was made, when it was made outside the user's code; None otherwise (or
        when it was not recorded)."""
        found = self._places.get(id(sloc))
        return found[1] if found is not None and found[0] is sloc else None

    def _seen(self, env: Any, sloc: Any, caller: FrameType | None) -> None:
        self.env = env
        loc = getattr(sloc, "framework_loc", None)
        file = getattr(loc, "filename", None)
        if isinstance(file, str) and frame_kind(file) == USER:
            return  # torch's own location is the user's line
        frames = _dynamo_frames() or _python_frames(caller)
        self._places[id(sloc)] = (sloc, place_of_frames(frames))


@contextlib.contextmanager
def recording_places() -> Iterator[PlaceRecorder]:
    """Record where guards are made for the block (see the module's docstring); the ``ShapeEnv`` method is put back
    on every exit path. Records nothing where torch lacks that method (a torch that changed)."""
    recorder = PlaceRecorder()
    try:
        from torch.fx.experimental.symbolic_shapes import ShapeEnv, uninteresting_files
    except ImportError:  # pragma: no cover - torch without symbolic shapes
        yield recorder
        return
    original = ShapeEnv.__dict__.get("_get_sloc")
    if original is None:
        yield recorder
        return

    def _get_sloc(self: Any, framework_loc: Any = None) -> Any:
        caller: FrameType | None = sys._getframe(1)
        if framework_loc is None:
            # torch's own rule (the first frame outside its uninteresting files), from the caller's frame: from
            # here it would be this file
            skip, frame = uninteresting_files(), caller
            while frame is not None and frame.f_code.co_filename in skip:
                frame = frame.f_back
            if frame is not None:
                framework_loc = traceback.FrameSummary(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
            del frame
        sloc = original(self, framework_loc)
        try:
            recorder._seen(self, sloc, caller)
        except Exception:  # a location we cannot read: torch's own stands
            pass
        return sloc

    ShapeEnv._get_sloc = _get_sloc  # type: ignore[method-assign]
    try:
        yield recorder
    finally:
        ShapeEnv._get_sloc = original  # type: ignore[method-assign]


def env_of_exception(exc: BaseException) -> Any:
    """The ``ShapeEnv`` an export that raised ``exc`` worked with, from the frames of its traceback (torch's
    ``_non_strict_export`` holds it as its fake mode's); None when none is found."""
    try:
        from torch.fx.experimental.symbolic_shapes import ShapeEnv
    except ImportError:  # pragma: no cover
        return None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        tb = current.__traceback__
        while tb is not None:
            if is_torch_file(tb.tb_frame.f_code.co_filename):
                for value in tb.tb_frame.f_locals.values():
                    env = value if isinstance(value, ShapeEnv) else getattr(value, "shape_env", None)
                    if isinstance(env, ShapeEnv):
                        return env
            tb = tb.tb_next
        current = current.__cause__ or current.__context__
    return None


__all__ = ["Place", "PlaceRecorder", "env_of_exception", "frame_kind", "place_of_frames", "recording_places"]
