"""``POST /jupyter-tracejit/api/open`` (body ``{"path": ...}``): the run of a ``.pt`` / ``.pt2`` file under the
server's root dir.

The file is read by :mod:`.worker` in a process of its own started from the server's Python: torch is never
imported into the server, and a file that crashes or hangs torch costs that process, not the server. Each such
process is bounded: at most ``TracejitOpener.max_workers`` at once (another open is answered 503 "busy, try
again"), ``max_memory`` of address space each (an out-of-memory death is told like a crash), stopped after
``timeout`` or as soon as its client goes away; the worker reads the zip directory before any member (a file
unpacking to more than ``max_size`` is refused, a zip bomb before it is inflated) and loads nothing that would run
code from the file (:mod:`jupyter_tracejit.core.archive.guard`). Read-only: nothing is written, and only regular
files inside the root dir that the file browser would show (no ``..``, no link out, no hidden file unless the
server allows them) are read; a path that cannot be resolved (a link loop, a name too long) is a 4xx with its
reason.

Body ``{"path": ..., "imports": [MODULE, ...]}``: ``imports`` (optional, dotted module names, allowed unless
``c.TracejitOpener.request_imports`` is False) are imported by the reading process before the load, after
``c.TracejitOpener.imports`` (the explorer's "retry importing" button for a ``.pt2`` returning a class a module
registers with torch's pytree). Importing runs the module's code, in that process; only installed modules import.

POST, not GET: the open starts a process, and a GET can be sent by another site (a link, a page setting
``location``) with the user's login cookie (``SameSite=Lax`` lets top-level navigations carry it). A POST needs
jupyter_server's XSRF token (the ``X-XSRFToken`` header JupyterLab's ``ServerConnection`` sends, or a token in the
``Authorization`` header), which another site cannot read; a GET is answered 405.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from jupyter_core.paths import is_hidden
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web
from traitlets import Bool, Float, Int, List, TraitError, Unicode, validate
from traitlets.config import Configurable

from ..core.archive.directory import size_text
from ..core.archive.layout import file_kind
from .worker import IMPORT_FAILED, MODULE_NAME, OUT_OF_MEMORY, TORCH_MISSING

#: the handler's route, under the server's base URL
OPEN_ROUTE = "/jupyter-tracejit/api/open"
#: the most modules one open may ask to import
MAX_REQUEST_IMPORTS = 8
#: the most of the loader's stderr a failure message quotes (its end: where the traceback says what went wrong)
STDERR_TAIL = 2000


class Refused(Exception):
    """What the handler answers instead of a run: an HTTP status and a message naming the problem and the fix."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def _shown(path: str) -> str:
    """The path as an answer quotes it: a long one shortened."""
    return path if len(path) <= 200 else f"{path[:100]}...{path[-40:]} ({len(path)} characters)"


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
    max_workers = Int(
        2,
        help="The most files read at once, each by a process of its own; another open is answered 503 (busy, try "
        "again).",
    ).tag(config=True)
    max_memory = Int(
        8 * 2**30,
        help="The address space (bytes) each reading process may use (RLIMIT_AS; 0: no limit): importing torch takes "
        "about 1 GiB, then the archive's tensors.",
    ).tag(config=True)
    python = Unicode(
        sys.executable,
        help="The Python that reads the files: it needs torch and jupyter-tracejit (default: the server's own).",
    ).tag(config=True)
    imports = List(
        Unicode(),
        help="Modules the reading process imports before every load (dotted names, e.g. "
        "['transformers.modeling_outputs']): a .pt2 whose program takes or returns a class its exporter registered "
        "with torch's pytree (a transformers ModelOutput) loads only once the module registering it is imported. "
        "Importing a module runs its code, in the reading process; only installed modules import (the current "
        "directory is not on its path).",
    ).tag(config=True)
    request_imports = Bool(
        True,
        help="Let the explorer ask for modules to import before a load (its 'retry importing MODULE' button on a "
        ".pt2 whose program returns a class the reading process has not imported). False: only "
        "c.TracejitOpener.imports are imported.",
    ).tag(config=True)
    root_dir = Unicode(help="The server's root dir: only files under it are read (set by the extension).")
    allow_hidden = Bool(False, help="Read hidden files too (set from the contents manager's allow_hidden).")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: how many files are being read now, each by a process of its own
        self.active = 0

    @validate("imports")
    def _valid_imports(self, proposal: Any) -> list[str]:
        bad = [name for name in proposal["value"] if not MODULE_NAME.match(name)]
        if bad:
            raise TraitError(
                f"c.TracejitOpener.imports takes dotted module names (transformers.modeling_outputs); {bad[0]!r} is "
                "not one"
            )
        return list(proposal["value"])

    def requested_imports(self, names: Any) -> list[str]:
        """The modules a request asks to import before its load, checked: dotted names only, at most
        :data:`MAX_REQUEST_IMPORTS`, and only where :attr:`request_imports` allows it; else :class:`Refused`."""
        if names is None or names == []:
            return []
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise Refused(
                400, 'The request\'s "imports" must be a list of module names: ["transformers.modeling_outputs"].'
            )
        if not self.request_imports:
            raise Refused(
                403,
                "This server does not import modules on the explorer's request (c.TracejitOpener.request_imports is "
                f"False): ask its administrator to add {names[0]} to c.TracejitOpener.imports.",
            )
        if len(names) > MAX_REQUEST_IMPORTS:
            raise Refused(
                400, f"At most {MAX_REQUEST_IMPORTS} modules are imported for one file; {len(names)} were asked."
            )
        for name in names:
            if not MODULE_NAME.match(name):
                raise Refused(
                    400,
                    f"{_shown(name)!r} is not a module name: only dotted names (transformers.modeling_outputs) are "
                    "imported.",
                )
        return list(dict.fromkeys(names))

    def resolve(self, path: str) -> Path:
        """The file ``path`` (relative to the root dir, as the file browser names it) names, or :class:`Refused`."""
        if not path:
            raise Refused(400, 'No file given: name it relative to the server\'s root dir ({"path": "model.pt"}).')
        if PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute() or PureWindowsPath(path).drive:
            raise Refused(400, f"{path} is an absolute path: name the file relative to the server's root dir.")
        if ".." in PurePosixPath(path.replace("\\", "/")).parts:
            raise Refused(400, f"{path} goes up with '..': name the file by its path under the server's root dir.")
        if "\0" in path:
            raise Refused(400, "The path holds a NUL character: name the file as the file browser shows it.")
        try:
            root = Path(self.root_dir).resolve()
            full = (root / path).resolve(strict=True)
            if not full.is_relative_to(root):
                raise Refused(403, f"{path} leads outside the server's root dir (through a link): it is not read.")
            if not self.allow_hidden and is_hidden(str(full), str(root)):
                raise Refused(403, f"{path} is hidden, and this server does not show hidden files (allow_hidden).")
            info = full.stat()
        except FileNotFoundError:
            raise Refused(404, f"No file {_shown(path)} in the server's root dir.") from None
        except (OSError, RuntimeError) as exc:
            raise self._path_error(path, exc) from None
        if not stat.S_ISREG(info.st_mode):
            raise Refused(
                400, f"{path} is {file_kind(info.st_mode)}, not a regular file: only saved model files are read."
            )
        size = info.st_size
        if size > self.max_size:
            raise Refused(
                413,
                f"{path} is {size_text(size)}, over the trace explorer's limit of {size_text(self.max_size)} "
                f"({self.max_size} bytes). To read it, raise the limit where the server starts: "
                f"c.TracejitOpener.max_size = {size} in jupyter_server_config.py, or "
                f"--TracejitOpener.max_size={size}.",
            )
        return full

    @staticmethod
    def _path_error(path: str, exc: BaseException) -> Refused:
        """A path the file system cannot resolve, as a 4xx naming why."""
        shown = _shown(path)
        number = getattr(exc, "errno", None)
        if number == errno.ELOOP or isinstance(exc, RuntimeError):
            return Refused(400, f"{shown} goes through a loop of links: it names no file.")
        if number == errno.ENAMETOOLONG:
            return Refused(414, f"{shown} is a name too long for the file system: it names no file.")
        if number == errno.ENOTDIR:
            return Refused(404, f"No file {shown} in the server's root dir (a part of the path is not a folder).")
        if number in (errno.EACCES, errno.EPERM):
            return Refused(403, f"{shown} cannot be read: permission denied.")
        reason = getattr(exc, "strerror", None) or str(exc)
        return Refused(400, f"{shown} cannot be read: {reason}.")

    def busy_message(self) -> str:
        return (
            f"The trace explorer is reading {self.max_workers} file{'s' if self.max_workers != 1 else ''} already "
            "(its limit at once): try again in a moment. To read more at once, raise "
            "c.TracejitOpener.max_workers where the server starts."
        )

    async def open(self, path: str, imports: list[str] | None = None) -> str:
        """The run of ``path`` as JSON text (a file torch cannot read gives a run with its error), or
        :class:`Refused`; :attr:`imports` and then ``imports`` (the request's, checked by :meth:`requested_imports`)
        are imported first. At most :attr:`max_workers` at once: another is refused at once (503). Cancelled (the
        client went away), its process is stopped."""
        full = self.resolve(path)
        modules = list(dict.fromkeys([*self.imports, *(imports or [])]))
        if self.active >= self.max_workers:
            raise Refused(503, self.busy_message(), {"Retry-After": "5"})
        self.active += 1  # no await between the test and this: one event loop, so no two opens pass at once
        try:
            return await self._read(path, full, modules)
        finally:
            self.active -= 1

    async def _read(self, path: str, full: Path, imports: list[str]) -> str:
        try:
            process = await asyncio.create_subprocess_exec(
                self.python,
                "-m",
                "jupyter_tracejit.server.worker",
                str(full),
                f"--max-memory={self.max_memory}",
                f"--max-size={self.max_size}",
                *(f"--import={name}" for name in imports),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                # the current directory (the user's files) is not put ahead of the installed packages
                env={**os.environ, "PYTHONSAFEPATH": "1"},
                # a group of its own: stopping it stops whatever it started too
                start_new_session=True,
            )
        except OSError as exc:
            raise Refused(
                500, f"Could not start {self.python} to read {path} ({exc}): check c.TracejitOpener.python."
            ) from None
        try:
            out, err = await asyncio.wait_for(process.communicate(), self.timeout)
        except TimeoutError:
            await _stop(process)
            raise Refused(
                504,
                f"torch did not finish reading {path} in {self.timeout:g} s, so its process was stopped. A large "
                "file may need longer: c.TracejitOpener.timeout (seconds) where the server starts.",
            ) from None
        except BaseException:  # cancelled (the client went away) or the server stopping: the process goes too
            await _stop(process)
            raise
        code = await process.wait()
        if code == TORCH_MISSING:
            raise Refused(
                500,
                f"torch is not installed in the environment running the Jupyter server ({self.python}): "
                f"pip install torch there ({self.python} -m pip install torch), then open {path} again.",
            )
        tail = err.decode(errors="replace").strip()[-STDERR_TAIL:]
        if code == IMPORT_FAILED:
            failed = tail.splitlines()[-1] if tail else "?"
            raise Refused(
                400,
                f"Reading {path} needs modules imported first, and importing {failed}. The module must be installed "
                f"where the server runs ({self.python} -m pip install ...), or removed from c.TracejitOpener.imports.",
            )
        if code == OUT_OF_MEMORY:
            raise Refused(
                500,
                f"Reading {path} failed: the process that loads it with torch ran out of memory (it may use "
                f"{size_text(self.max_memory)}). A large model may need more: c.TracejitOpener.max_memory (bytes) "
                f"where the server starts.\n{tail}".strip(),
            )
        if code != 0:
            how = f"was killed by signal {-code} ({signal_name(-code)})" if code < 0 else f"exited with status {code}"
            raise Refused(500, f"Reading {path} failed: the process that loads it with torch {how}.\n{tail}".strip())
        return out.decode()


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Kill the reading process and its group (it is the leader of one), and reap it."""
    if process.returncode is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
    await process.wait()


class OpenHandler(APIHandler):
    """``POST`` ``{"path": ...}``: the run's JSON, or ``{"message": ...}`` with the status of :class:`Refused`;
    ``GET``: 405 (see the module's docstring)."""

    auth_resource = "contents"

    def initialize(self, opener: TracejitOpener) -> None:
        self.opener = opener
        self._task: asyncio.Task[str] | None = None
        self._client_gone = False

    def get(self) -> None:
        self._answer(
            Refused(
                405,
                "Files open with POST (the JupyterLab front end sends it, with the XSRF token); a GET, as a link or "
                "another site's page would send, is not answered.",
                {"Allow": "POST"},
            )
        )

    @web.authenticated
    @authorized
    async def post(self) -> None:
        try:
            path, imports = self._body()
            self._task = asyncio.ensure_future(self.opener.open(path, self.opener.requested_imports(imports)))
            text = await self._task
        except Refused as refused:
            self._answer(refused)
            return
        except asyncio.CancelledError:
            if self._client_gone:
                return  # the client went away: its process is stopped, and there is nobody to answer
            raise
        self.set_header("Content-Type", "application/json")
        self.finish(text)

    def on_connection_close(self) -> None:
        """The client went away (its tab closed, the request aborted): stop reading the file."""
        self._client_gone = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def _body(self) -> tuple[str, Any]:
        """The file's path and the modules to import (unchecked: :meth:`TracejitOpener.requested_imports`)."""
        try:
            body: Any = json.loads(self.request.body or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("path", ""), str):
            raise Refused(400, 'The request\'s body must be JSON naming the file: {"path": "models/model.pt"}.')
        return str(body.get("path", "")), body.get("imports")

    def _answer(self, refused: Refused) -> None:
        self.log.warning("jupyter_tracejit: %s", refused.message)
        self.set_status(refused.status)
        for name, value in refused.headers.items():
            self.set_header(name, value)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"message": refused.message}))
