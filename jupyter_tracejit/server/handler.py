"""``GET /jupyter-tracejit/api/open?path=...``: the run of a ``.pt`` / ``.pt2`` file under the server's root dir.

The file is read by :mod:`.worker` in a process of its own started from the server's Python: torch is never
imported into the server, and a file that crashes or hangs torch costs that process (stopped after
``TracejitOpener.timeout``), not the server. Read-only: nothing is written, and only files inside the root dir that
the file browser would show (no ``..``, no link out, no hidden file unless the server allows them) are read.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath

from jupyter_core.paths import is_hidden
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web
from traitlets import Bool, Float, Int, Unicode
from traitlets.config import Configurable

from .worker import TORCH_MISSING

#: the handler's route, under the server's base URL
OPEN_ROUTE = "/jupyter-tracejit/api/open"
#: the most of the loader's stderr a failure message quotes (its end: where the traceback says what went wrong)
STDERR_TAIL = 2000


class Refused(Exception):
    """What the handler answers instead of a run: an HTTP status and a message naming the problem and the fix."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def size_text(size: int) -> str:
    """``2 GiB``, ``1.5 MiB``, ``312 bytes``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


class TracejitOpener(Configurable):
    """How the server extension reads ``.pt`` / ``.pt2`` files for the trace explorer (``c.TracejitOpener.*`` in
    ``jupyter_server_config.py``, or ``--TracejitOpener.max_size=...`` on the command line)."""

    max_size = Int(
        2 * 2**30,
        help="The largest file (in bytes) the trace explorer reads: torch loads the whole archive into the memory "
        "of a process on the server machine.",
    ).tag(config=True)
    timeout = Float(300.0, help="Seconds torch may take to read one file before its process is stopped.").tag(
        config=True
    )
    python = Unicode(
        sys.executable,
        help="The Python that reads the files: it needs torch and jupyter-tracejit (default: the server's own).",
    ).tag(config=True)
    root_dir = Unicode(help="The server's root dir: only files under it are read (set by the extension).")
    allow_hidden = Bool(False, help="Read hidden files too (set from the contents manager's allow_hidden).")

    def resolve(self, path: str) -> Path:
        """The file ``path`` (relative to the root dir, as the file browser names it) names, or :class:`Refused`."""
        if not path:
            raise Refused(400, "No file given: name it relative to the server's root dir (?path=model.pt).")
        if PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute() or PureWindowsPath(path).drive:
            raise Refused(400, f"{path} is an absolute path: name the file relative to the server's root dir.")
        if ".." in PurePosixPath(path.replace("\\", "/")).parts:
            raise Refused(400, f"{path} goes up with '..': name the file by its path under the server's root dir.")
        root = Path(self.root_dir).resolve()
        full = (root / path).resolve()
        if not full.is_relative_to(root):
            raise Refused(403, f"{path} leads outside the server's root dir (through a link): it is not read.")
        if not self.allow_hidden and is_hidden(str(full), str(root)):
            raise Refused(403, f"{path} is hidden, and this server does not show hidden files (allow_hidden).")
        if not full.is_file():
            raise Refused(404, f"No file {path} in the server's root dir.")
        size = full.stat().st_size
        if size > self.max_size:
            raise Refused(
                413,
                f"{path} is {size_text(size)}, over the trace explorer's limit of {size_text(self.max_size)} "
                f"({self.max_size} bytes). To read it, raise the limit where the server starts: "
                f"c.TracejitOpener.max_size = {size} in jupyter_server_config.py, or "
                f"--TracejitOpener.max_size={size}.",
            )
        return full

    async def open(self, path: str) -> str:
        """The run of ``path`` as JSON text (a file torch cannot read gives a run with its error), or
        :class:`Refused`."""
        full = self.resolve(path)
        try:
            process = await asyncio.create_subprocess_exec(
                self.python,
                "-m",
                "jupyter_tracejit.server.worker",
                str(full),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                # the current directory (the user's files) is not put ahead of the installed packages
                env={**os.environ, "PYTHONSAFEPATH": "1"},
            )
        except OSError as exc:
            raise Refused(
                500, f"Could not start {self.python} to read {path} ({exc}): check c.TracejitOpener.python."
            ) from None
        try:
            out, err = await asyncio.wait_for(process.communicate(), self.timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise Refused(
                504,
                f"torch did not finish reading {path} in {self.timeout:g} s, so its process was stopped. A large "
                "file may need longer: c.TracejitOpener.timeout (seconds) where the server starts.",
            ) from None
        code = await process.wait()
        if code == TORCH_MISSING:
            raise Refused(
                500,
                f"torch is not installed in the environment running the Jupyter server ({self.python}): "
                f"pip install torch there ({self.python} -m pip install torch), then open {path} again.",
            )
        if code != 0:
            how = f"was killed by signal {-code} ({signal_name(-code)})" if code < 0 else f"exited with status {code}"
            tail = err.decode(errors="replace").strip()[-STDERR_TAIL:]
            raise Refused(500, f"Reading {path} failed: the process that loads it with torch {how}.\n{tail}".strip())
        return out.decode()


class OpenHandler(APIHandler):
    """``GET ?path=``: the run's JSON, or ``{"message": ...}`` with the status of :class:`Refused`."""

    auth_resource = "contents"

    def initialize(self, opener: TracejitOpener) -> None:
        self.opener = opener

    @web.authenticated
    @authorized
    async def get(self) -> None:
        path = self.get_query_argument("path", "")
        try:
            text = await self.opener.open(path)
        except Refused as refused:
            self.log.warning("jupyter_tracejit: %s", refused.message)
            self.set_status(refused.status)
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps({"message": refused.message}))
            return
        self.set_header("Content-Type", "application/json")
        self.finish(text)
