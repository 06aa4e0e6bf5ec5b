"""Output files are written whole or not at all (core/files.py): a full disk or an interrupt midway leaves the files
that were there, and no temporary file."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from jupyter_tracejit.core import files
from jupyter_tracejit.core.files import same_file, write_file, write_files


def failing_write(fail_on_call: int, exc: BaseException) -> Callable[[int, bytes], int]:
    """``os.write`` that writes half of what it is given on each call before call ``fail_on_call`` (1-based), then
    raises ``exc``: a disk that fills up in the middle of a file."""
    real = os.write
    calls = [0]

    def write(fd: int, data: bytes) -> int:
        calls[0] += 1
        if calls[0] >= fail_on_call:
            raise exc
        return real(fd, bytes(data[: max(1, len(data) // 2)]))

    return write


def full_disk() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_write_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old")
    big = "x" * (3 * files.CHUNK + 5)  # several os.write calls
    assert write_file(target, big) == target
    assert target.read_text() == big
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


@pytest.mark.parametrize("exc", [full_disk(), KeyboardInterrupt()], ids=["ENOSPC", "Ctrl-C"])
def test_a_write_failing_midway_leaves_the_old_file_and_no_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: BaseException
) -> None:
    target = tmp_path / "run.json"
    target.write_text('{"good": true}')
    monkeypatch.setattr(os, "write", failing_write(2, exc))
    with pytest.raises(type(exc)):
        write_file(target, "y" * (2 * files.CHUNK))
    monkeypatch.undo()
    assert target.read_text() == '{"good": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]


def test_several_outputs_are_replaced_only_when_all_were_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "run.json", tmp_path / "report.html"
    first.write_text("old json")
    second.write_text("old html")
    # the first file is written whole (one call), the second fails
    monkeypatch.setattr(os, "write", failing_write(2, full_disk()))
    with pytest.raises(OSError, match="No space left"):
        write_files({first: "n", second: "new html"})
    monkeypatch.undo()
    assert (first.read_text(), second.read_text()) == ("old json", "old html")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "run.json"]


def test_a_replaced_file_keeps_its_permissions_and_a_new_one_gets_the_usual(tmp_path: Path) -> None:
    kept = tmp_path / "shared.html"
    kept.write_text("old")
    kept.chmod(0o640)
    write_file(kept, "new")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    fresh = tmp_path / "new.html"
    umask = os.umask(0o022)
    os.umask(umask)
    write_file(fresh, "new")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask


def test_same_file_sees_through_relative_paths_and_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "model.py"
    model.write_text("x = 1")
    (tmp_path / "link.py").symlink_to(model)
    monkeypatch.chdir(tmp_path)
    assert same_file("model.py", model)
    assert same_file("./sub/../model.py", model)
    assert same_file("link.py", model)
    assert not same_file("report.html", model)
