"""Writing output files so that a failed write never destroys a good one.

Every file the package writes (``tracejit -o / --json / --dot``, ``run.save_html``) goes through
:func:`write_files`: each text is written to a temporary file in the target's own folder (so the rename stays on
one file system and is atomic), flushed to disk, and only when every output was written are they renamed into
place. On a full disk or an interrupt the previous files stay as they were and no temporary file is left.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["same_file", "source_overwritten", "write_file", "write_files"]

#: bytes handed to ``os.write`` at a time (a short write on a full disk is retried, then raises)
CHUNK = 1 << 16


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view[:CHUNK])
        view = view[written:]


def _temporary_beside(path: Path) -> tuple[Path, int]:
    """A new file next to ``path`` (hidden, unique), opened for writing; mode 0o666 less the umask, as
    ``open(path, "w")`` would create it."""
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue


def _remove(paths: Iterable[Path]) -> None:
    for tmp in paths:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def write_files(contents: Mapping[Path, str | bytes] | Mapping[str, str | bytes]) -> list[Path]:
    """Write every ``path -> text`` (UTF-8) or none: the old files are replaced only once all new ones are on
    disk. Raises what the write raised (``OSError``, ``KeyboardInterrupt``), with the old files intact and no
    temporary file left. Returns the paths, in order."""
    pending: list[tuple[Path, Path]] = []
    try:
        for target, text in contents.items():
            path = Path(target)
            tmp, fd = _temporary_beside(path)
            pending.append((tmp, path))
            try:
                _write_all(fd, text.encode("utf-8") if isinstance(text, str) else text)
                os.fsync(fd)
            finally:
                os.close(fd)
            if path.exists():  # keep the permissions the user gave the file it replaces
                os.chmod(tmp, path.stat().st_mode & 0o7777)
        for tmp, path in pending:
            os.replace(tmp, path)
    except BaseException:
        _remove(tmp for tmp, _ in pending)
        raise
    return [path for _, path in pending]


def write_file(path: str | os.PathLike[str], text: str | bytes) -> Path:
    """:func:`write_files` for one file."""
    return write_files({Path(path): text})[0]


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name the same file (resolved: symlinks, ``..``, relative paths; hard links too when
    both exist)."""
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        pass
    return Path(a).resolve() == Path(b).resolve()


def source_overwritten(path: str | os.PathLike[str], sources: Iterable[str]) -> str | None:
    """The file of ``sources`` (a run's :meth:`~.run.TraceRun.files`) that writing ``path`` would overwrite, or
    ``None``: an output must never replace the code it reports on. Names like ``<string>`` are no files."""
    for source in dict.fromkeys(sources):
        if source and not source.startswith("<") and same_file(path, source):
            return source
    return None
