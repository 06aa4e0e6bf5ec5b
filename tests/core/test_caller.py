"""Where the user asked for the trace: find_caller walks outward past this package, torch, installed libraries and
the standard library to the user's line; call_site lets a front end name the line instead, nested and reset on
every exit."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import pytest
import torch

import jupyter_tracejit
from jupyter_tracejit.core.caller import call_site, find_caller
from jupyter_tracejit.core.graph import Frame

from ..models import line_of

HERE = __file__
PACKAGE = os.path.dirname(jupyter_tracejit.__file__)
TORCH = os.path.dirname(torch.__file__)


def through(filename: str, inner: Any) -> Any:
    """Call ``inner()`` from a function whose code lives in ``filename`` (as if that file called it)."""
    namespace: dict[str, Any] = {}
    exec(compile("def call(inner):\n    return inner()\n", filename, "exec"), namespace)
    return namespace["call"](inner)  # calls into the library


def asks() -> Frame | None:
    return find_caller()  # the asking line


def test_the_caller_is_the_innermost_frame_outside_libraries() -> None:
    line = sys._getframe().f_lineno + 1
    frame = find_caller()
    assert frame == Frame(file=HERE, line=line, func=sys._getframe().f_code.co_name, code="frame = find_caller()")
    assert asks() == Frame(HERE, line_of(asks, "# the asking line"), "asks", "return find_caller()  # the asking line")


@pytest.mark.parametrize(
    "library",
    [
        os.path.join(PACKAGE, "core", "session.py"),
        os.path.join(PACKAGE, "widgets", "explorer.py"),
        os.path.join(TORCH, "jit", "_trace.py"),
        "/opt/venv/lib/python3.11/site-packages/transformers/modeling_utils.py",
        "/usr/lib/python3/dist-packages/somelib/core.py",
        "/usr/lib/python3.11/runpy.py",
        "<frozen runpy>",
    ],
)
def test_library_frames_are_skipped(library: str) -> None:
    frame = through(library, find_caller)
    assert (frame.file, frame.line, frame.func) == (HERE, line_of(through, "# calls into the library"), "through")


def test_a_notebook_cell_is_a_caller() -> None:
    frame = through("<ipython-input-3-abc>", find_caller)
    assert (frame.file, frame.line, frame.func) == ("<ipython-input-3-abc>", 2, "call")
    assert frame.code == ""


def test_no_caller_when_every_frame_is_a_library() -> None:
    # a thread whose frames are threading's (the standard library) and one of this package's files
    found: list[Any] = []
    code = compile("found.append(find_caller())", os.path.join(PACKAGE, "core", "session.py"), "exec")
    worker = threading.Thread(target=exec, args=(code, {"found": found, "find_caller": find_caller}))
    worker.start()
    worker.join()
    assert found == [None]


def test_call_site_overrides_and_resets() -> None:
    with call_site("model.py", 12, code="model = Net()"):
        assert find_caller() == Frame("model.py", 12, "<module>", "model = Net()")
    assert find_caller().file == HERE


def test_call_site_reads_the_code_of_its_line() -> None:
    line = line_of(asks, "# the asking line")
    with call_site(HERE, line, func="cell"):
        assert find_caller() == Frame(HERE, line, "cell", "return find_caller()  # the asking line")


def test_nested_call_sites_restore_the_outer_one() -> None:
    with call_site("outer.py", 1, code="outer"):
        with call_site("inner.py", 2, code="inner"):
            assert find_caller().file == "inner.py"
        assert find_caller() == Frame("outer.py", 1, "<module>", "outer")
        with pytest.raises(ValueError), call_site("failing.py", 3, code="x"):
            raise ValueError("the trace failed")
        assert find_caller().file == "outer.py"
    assert find_caller().file == HERE


def test_a_call_site_belongs_to_its_own_thread() -> None:
    seen: list[Any] = []
    with call_site("model.py", 12, code="m"):
        worker = threading.Thread(target=lambda: seen.append(find_caller()))
        worker.start()
        worker.join()
    assert seen[0].file == HERE  # the other thread found its own caller, not this thread's call site
