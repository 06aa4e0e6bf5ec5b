"""What a file is, read from its first bytes and its zip directory only: nothing is unpickled here.

``torch.jit.load`` is asked to open a file only when it has the layout of a TorchScript archive (a zip whose one
top-level folder holds ``constants.pkl``, ``data.pkl`` and ``code/``). Everything else gets one clear
:class:`~..errors.TraceError` (phase ``load``) here, before torch sees it:

- ``not_found``: no such file, or it cannot be read;
- ``not_a_file``: a FIFO, a device, a directory: only regular files are opened (a FIFO would block, ``/dev/zero``
  never end);
- ``not_an_archive``: not a zip and not a pickle (a text file, an ONNX model...);
- ``pickle``: a ``torch.save`` file (a zip holding ``data.pkl`` without TorchScript code, or an old-style raw
  pickle): it is never unpickled, since unpickling a whole module runs code from the file;
- ``truncated_archive``: a zip whose directory cannot be read (the file was cut short or damaged);
- ``export_archive`` (from :func:`~.load.load_archive` only): a ``torch.export.save`` archive (``.pt2``), which
  :func:`inspect_file` recognises (an :class:`ArchiveLayout` of kind ``export``) and :func:`~.open.load` reads;
- ``not_torchscript``: a zip of something else.

Torch-free: reading the layout needs no torch.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
from dataclasses import dataclass, field
from typing import IO, Any

from ..errors import TraceError
from ..run import Target, TraceRun

ZIP_MAGIC = b"PK\x03\x04"
#: the most members a zip directory may list (a 24-layer transformer's archive has about a thousand): zipfile
#: builds an object per member, so a small file listing millions would take gigabytes before anything is read
MAX_MEMBERS = 100_000
#: the first byte of a pickle of protocol 2 or later (torch.save's legacy format writes protocol 2)
PICKLE_PROTO = 0x80


@dataclass
class ArchiveLayout:
    """The zip directory of a TorchScript archive or an exported program, as far as :func:`inspect_file` read it."""

    #: the archive's top-level folder (``m`` for ``m/code/__torch__.py``)
    prefix: str
    #: every member's name
    names: list[str] = field(default_factory=list)
    #: ``torchscript`` (``torch.jit.save``) or ``export`` (``torch.export.save``, a ``.pt2``)
    kind: str = "torchscript"
    #: the zip directory's entries (sizes packed and unpacked), read before any member is
    infos: list[zipfile.ZipInfo] = field(default_factory=list, repr=False)

    @property
    def has_debug_info(self) -> bool:
        """Whether the archive kept the source ranges of its code (``code/*.debug_pkl``, written unless it was
        saved without debug information)."""
        return any(n.startswith(f"{self.prefix}/code/") and n.endswith(".debug_pkl") for n in self.names)

    @property
    def has_traced_inputs(self) -> bool:
        """Whether ``torch.jit.trace`` stored its example inputs in the archive (``traced_inputs.pkl``)."""
        return f"{self.prefix}/traced_inputs.pkl" in self.names

    @property
    def code_files(self) -> list[str]:
        """The archive's TorchScript source files (``code/__torch__.py`` ...), relative to its folder."""
        start = f"{self.prefix}/"
        return [n[len(start) :] for n in self.names if n.startswith(f"{start}code/") and n.endswith(".py")]


class NotRegularFile(OSError):
    """A path that names something other than a regular file (a FIFO, a device, a directory)."""


def file_kind(mode: int) -> str:
    """``a FIFO (named pipe)``, ``a character device``... for what a mode says a file is."""
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def open_regular(path: str) -> IO[bytes]:
    """``open(path, "rb")`` for a regular file only: a FIFO, a device (``/dev/zero``) or a directory raises
    :class:`NotRegularFile` at once instead of blocking or reading forever (opened non-blocking, then checked,
    so what is checked is what is read)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"{path} is {file_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def member_count(f: IO[bytes]) -> int:
    """How many members the zip directory of ``f`` says it lists (its end record, zip64's where the count
    overflows), read before ``zipfile`` builds an object per member; 0 where no end record is found (``zipfile``
    then says the file is damaged)."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    tail_size = min(size, 22 + 0xFFFF)  # the end record and the longest comment
    f.seek(size - tail_size)
    tail = f.read(tail_size)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        return 0
    count = int.from_bytes(tail[at + 10 : at + 12], "little")
    locator = tail[at - 20 : at] if at >= 20 else b""
    if count == 0xFFFF and locator[:4] == b"PK\x06\x07":
        f.seek(int.from_bytes(locator[8:16], "little"))
        record = f.read(56)
        if record[:4] == b"PK\x06\x06" and len(record) == 56:
            count = int.from_bytes(record[32:40], "little")
    f.seek(0)
    return count


def load_error(path: str, tag: str, message: str, hint: str) -> TraceError:
    """The run's error for a file that could not be loaded."""
    return TraceError(type="ArchiveError", message=message, phase="load", tag=tag, hint=hint, file=path)


_TORCHSCRIPT_HINT = (
    "tj.load reads TorchScript archives (what torch.jit.save or ScriptModule.save writes for a traced or scripted "
    "model) and exported programs (what torch.export.save writes, a .pt2)."
)


def inspect_file(path: str) -> ArchiveLayout | TraceError:
    """The layout of the TorchScript archive or exported program at ``path`` (by its content, whatever its name),
    or the error that says what the file is instead."""
    try:
        f = open_regular(path)
    except NotRegularFile as e:
        return load_error(
            path,
            "not_a_file",
            f"{e}: only regular files are read (a FIFO would wait for a writer, a device never end).",
            "Name the saved model's file itself (a link to it is fine).",
        )
    except OSError as e:
        return load_error(
            path,
            "not_found",
            f"cannot read {path}: {e.strerror or e}",
            "Check the path (it is read on the machine the kernel runs on).",
        )
    with f:
        try:
            head = f.read(4)
            count = member_count(f) if head == ZIP_MAGIC else 0
            if count > MAX_MEMBERS:
                return load_error(
                    path,
                    "zip_bomb",
                    f"{path} lists {count} members in its zip directory (a saved model has a few thousand at "
                    f"most; the limit is {MAX_MEMBERS}): it is not read.",
                    "torch.jit.save and torch.export.save never write such a file: save the model again.",
                )
            infos = zipfile.ZipFile(f).infolist() if head == ZIP_MAGIC else []
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
            return load_error(
                path,
                "truncated_archive",
                f"{path} starts like a zip archive but its directory cannot be read ({e}): the file was cut short "
                "or damaged.",
                "Copy or download the file again (compare its size with the original), or save the model again.",
            )
    if head != ZIP_MAGIC:
        if head[:1] == bytes([PICKLE_PROTO]):
            return _pickle_error(path, "an old-style torch.save file (a raw pickle)")
        what = "an empty file" if not head else "neither a zip archive nor a pickle"
        return load_error(
            path,
            "not_an_archive",
            f"{path} is not a TorchScript archive nor an exported program: it is {what}.",
            _TORCHSCRIPT_HINT,
        )
    names = [i.filename for i in infos]
    prefixes = {n.split("/", 1)[0] for n in names if "/" in n}
    for prefix in sorted(prefixes):
        own = {n[len(prefix) + 1 :] for n in names if n.startswith(f"{prefix}/")}
        has_code = any(n.startswith("code/") for n in own)
        if "constants.pkl" in own and "data.pkl" in own and has_code:
            return ArchiveLayout(prefix=prefix, names=names, infos=infos)
    # torch.export.save: <folder>/archive_format and <folder>/models/ (a TorchScript archive's code may have a
    # models/ folder deeper down: transformers/models/bert/...)
    exported = [n for n in names if n.count("/") >= 1 and n.split("/")[1] in ("archive_format", "models")]
    if exported:
        return ArchiveLayout(prefix=exported[0].split("/", 1)[0], names=names, kind="export", infos=infos)
    if any(n.endswith("/data.pkl") for n in names):
        return _pickle_error(path, "a torch.save file (a zipped pickle with no TorchScript code)")
    return load_error(
        path,
        "not_torchscript",
        f"{path} is a zip archive, but not a TorchScript archive (no constants.pkl, data.pkl and code/ in one "
        "folder) nor an exported program (no archive_format, models/).",
        _TORCHSCRIPT_HINT,
    )


def _pickle_error(path: str, what: str) -> TraceError:
    return load_error(
        path,
        "pickle",
        f"{path} is {what}, not a TorchScript archive; it was not opened: unpickling a whole module runs code "
        "from the file (torch.load with weights_only=False).",
        "Save a TorchScript archive instead (torch.jit.save(torch.jit.trace(model, inputs), 'model.pt') or "
        "torch.jit.script), or trace the model itself with tj.trace. For a state_dict, load it into the model "
        "with torch.load(path, weights_only=True) and trace that.",
    )


#: (words in torch's message, tag, hint) for what ``torch.jit.load`` raises on a file with the archive's layout
_LOAD_FAILURES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (
        ("Attempted to read a PyTorch file with version", "maximum supported version"),
        "newer_torch",
        "The archive was written by a newer torch than this one ({torch}): upgrade torch where you load it, or save "
        "it again with this version.",
    ),
    (
        ("Unknown builtin op", "Unknown type name", "unknown builtin op", "Unknown type constructor"),
        "unknown_op",
        "The archive uses an op or type this torch ({torch}) does not know: it comes from a newer torch, or needs a "
        "library of custom ops loaded first (torch.ops.load_library).",
    ),
    (
        ("does not match our current schema version", "does not match our current archive version"),
        "version_mismatch",
        "The program was saved by a torch whose export format this one ({torch}) does not read: load it with the "
        "torch version that saved it, or export and save it again with this one.",
    ),
    (
        ("Expecting value", "Expecting property name", "JSONDecodeError", "Unterminated string"),
        "corrupt_archive",
        "The archive's description of the program (models/*.json) is damaged: copy or download it again, or save "
        "the program again.",
    ),
    (
        ("in pytree is not registered",),
        "unregistered_pytree",
        "The program takes or returns a class (named in torch's message: a transformers ModelOutput, a dataclass) "
        "that the exporting code registered with torch's pytree; a fresh Python does not know it. Import the "
        "module that defines and registers it, then load ({imports}), or export a wrapper whose forward returns "
        "tensors, tuples or dicts.",
    ),
    (
        ("invalid header or archive is corrupted", "failed finding central directory", "crc", "CRC", "corrupt"),
        "corrupt_archive",
        "The archive's contents are damaged: copy or download it again, or save the model again.",
    ),
)


def archive_options(path: str, map_location: Any) -> dict[str, Any]:
    """What the run records of the load (run.schema.json ``RecordedArchiveOptions``)."""
    return {"path": path, "map_location": None if map_location is None else str(map_location)}


def file_run(path: str, map_location: Any, backend: str, kind: str = "script") -> TraceRun:
    """The run of a file read back (``source`` ``file``), named by the file, before anything is read into it."""
    return TraceRun(
        target=Target(name=os.path.basename(path), kind=kind, file=path),
        options=archive_options(path, map_location),
        backend=backend,
        source="file",
    )


#: the class torch names when a .pt2's program takes or returns one this Python has not registered with its pytree
_UNREGISTERED = re.compile(r"Deserializing ([\w.]+) in pytree is not registered")


#: what torch.jit.load says of a global its unpickler does not know (``Unknown type name 'posix.system'``)
_UNKNOWN_TYPE = re.compile(r"Unknown type name '([\w.]+)'")


def load_failure(path: str, exc: BaseException, loader: str = "torch.jit.load") -> TraceError:
    """The run's error for what ``loader`` (``torch.jit.load``, ``torch.export.load``) raised on a file with the
    layout of an archive."""
    text = str(exc).split("\nException raised from", 1)[0].strip() or type(exc).__name__
    foreign = _UNKNOWN_TYPE.search(text)
    if foreign and not foreign.group(1).startswith(("__torch__.", "torch.")):
        error = load_error(
            path,
            "corrupt_archive",
            f"{loader} could not read {path}: its pickles name {foreign.group(1)}, which is neither a TorchScript "
            "type of the archive nor part of torch: the file is hostile or corrupt (no torch writes that).",
            "Do not use this file: ask where it came from for the model saved again with torch.jit.save.",
        )
        error.type = type(exc).__name__
        return error
    tag, hint = next(
        ((tag, hint) for words, tag, hint in _LOAD_FAILURES if any(w in text for w in words)),
        ("load_failed", f"{loader} could not read the archive: see torch's message."),
    )
    registered = _UNREGISTERED.search(text)
    module = registered.group(1).rpartition(".")[0] if registered else ""
    imports = (
        f"import {module} before tj.load; tracejit view or diff --import {module}"
        if module
        else "tj.load in that session; tracejit view or diff --import MODULE"
    )
    import torch  # a loader raised: torch is there (the rest of this module is torch-free)

    error = load_error(
        path, tag, f"{loader} could not read {path}: {text}", hint.format(torch=torch.__version__, imports=imports)
    )
    error.type = type(exc).__name__
    return error
