"""A saved model's zip directory, checked before anything in it is read: one top-level folder, no name twice, a
total unpacked size under a cap, no member that inflates more than :data:`MAX_RATIO` times (a zip bomb is refused
before anything is inflated); and the words every refusal of the guard (:mod:`.guard`) shares; the memory cap of a
process that loads one. Torch-free."""

from __future__ import annotations

import zipfile
from collections.abc import Callable

from ..errors import TraceError
from .layout import load_error

#: the largest total unpacked size (bytes, from the zip directory) ``tj.load`` reads unless told more
DEFAULT_MAX_SIZE = 8 * 2**30
#: a member that inflates more than this many times is a zip bomb (torch stores tensors uncompressed, and its
#: compressed code and debug members inflate about 3 to 10 times)
MAX_RATIO = 100
#: members smaller than this (unpacked) are not judged by their ratio: a small member cannot hurt
RATIO_FLOOR = 2**20

#: how to open a trusted file, as every refusal says it
TRUSTED_HINT = (
    "If you trust where the file comes from (you saved it yourself), open it in a notebook with tj.load(path, "
    "trusted=True), or with --trusted on tracejit view and tracejit diff: torch then reads it as it would, running "
    "what it holds."
)


class UntrustedLoad(Exception):
    """Raised inside :func:`guarded_loaders` when torch's loader reaches an entry point that would run code from
    the file (and recorded there: a loader that catches it still fails)."""


def size_text(size: int) -> str:
    """``2 GiB``, ``1.5 MiB``, ``312 bytes``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


def limit_memory(max_bytes: int) -> None:
    """Cap this process's address space (``RLIMIT_AS``) at ``max_bytes`` (0: no cap), where the platform can: what
    bounds a process that loads a saved model (the sandbox's child, the server's worker)."""
    if max_bytes <= 0:
        return
    try:
        import resource
    except ImportError:  # not on this platform
        return
    resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))


# -- the zip directory -------------------------------------------------------------------------------------------
def directory_problem(
    path: str, infos: list[zipfile.ZipInfo], max_size: int, raise_limit: Callable[[int], str]
) -> TraceError | None:
    """What is wrong with a zip directory before any member is read: a name twice or members in more than one
    top-level folder (torch reads the folder of the first member; a reader of another folder could be shown one
    file and torch load another), a total unpacked size over ``max_size`` (``raise_limit(size)`` says how to allow
    it), a member inflating more than :data:`MAX_RATIO` times."""
    names = [i.filename for i in infos]
    twice = sorted({n for n in names if names.count(n) > 1}) if len(set(names)) != len(names) else []
    if twice:
        return load_error(
            path,
            "corrupt_archive",
            f"{path} names {twice[0]} twice in its zip directory: readers disagree on which one is the member, "
            "so it is not read.",
            "torch.jit.save and torch.export.save never write such a file: save the model again.",
        )
    folders = sorted({n.split("/", 1)[0] if "/" in n else "" for n in names})
    if len(folders) > 1:
        shown = ", ".join(f or "(the top level)" for f in folders[:4])
        return load_error(
            path,
            "corrupt_archive",
            f"{path} has members in more than one top-level folder ({shown}); torch.jit.save and torch.export.save "
            "write one, and torch reads only the first member's folder, so it is not read.",
            "Save the model again with torch, or open the zip and keep the one saved model in it.",
        )
    total = sum(i.file_size for i in infos)
    if total > max_size:
        return load_error(
            path,
            "too_large",
            f"{path} unpacks to {size_text(total)} ({total} bytes, from its zip directory), over the limit of "
            f"{size_text(max_size)} ({max_size} bytes): loading it would take at least that much memory.",
            raise_limit(total),
        )
    for info in infos:
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            ratio = info.file_size // max(info.compress_size, 1)
            return load_error(
                path,
                "zip_bomb",
                f"{path} is a zip bomb: its member {info.filename} inflates {ratio} times, from "
                f"{size_text(info.compress_size)} to {size_text(info.file_size)} (torch stores tensors "
                "uncompressed). Nothing was inflated.",
                "If you compressed a saved model yourself, unzip it and save it again with torch.jit.save or "
                "torch.export.save, which write it as torch reads it.",
            )
    return None


def max_size_hint(size: int) -> str:
    """How ``tj.load`` reads a file over its size limit."""
    return (
        f"If the file is what you expect and the memory is there, raise the limit: tj.load(path, max_size={size}) "
        f"(jupyter_tracejit.core.archive.guard.DEFAULT_MAX_SIZE is {size_text(DEFAULT_MAX_SIZE)})."
    )
