"""Hostile files through ``tj.load`` and ``tj.diff``: each is refused with one error that says what the file holds
and how to open it if trusted, and no payload runs (tests/security/conftest.py checks the marker folder after every
test). The controls load copies with ``trusted=True`` and see their payloads run: the files are really hostile."""

from __future__ import annotations

import _thread
import os
import pickle
import signal
import subprocess
import threading
from pathlib import Path

import pytest
import sympy
import torch

import jupyter_tracejit as tj
from jupyter_tracejit.core.archive import guard
from jupyter_tracejit.core.run import TraceRun
from jupyter_tracejit.core.torchscript.saved import sandbox
from tests.security import hostile as h
from tests.security.conftest import REFUSED, craft

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_tj_load_refuses_the_hostile_file_before_torch_reads_it(
    files: dict[str, Path], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tag, words = REFUSED[name]

    def no_torch_loader(*args: object, **kwargs: object) -> None:
        raise AssertionError("a torch loader was called on a hostile file")

    monkeypatch.setattr(torch.jit, "load", no_torch_loader)
    monkeypatch.setattr(torch.export, "load", no_torch_loader)
    run = tj.load(files[name])
    assert run.error is not None and (run.error.phase, run.error.tag) == ("load", tag), run.error
    assert words in run.error.message, run.error.message
    assert not run.graphs and run.verdict.level == "error"
    if tag.startswith("untrusted"):
        assert "tj.load(path, trusted=True)" in run.error.hint and "--trusted" in run.error.hint
    TraceRun.from_json(run.to_json())  # the refusal is a run like any other: saved, shown, read back


def test_tj_diff_refuses_each_side(files: dict[str, Path]) -> None:
    d = tj.diff(files["opaque_obj.pt2"], files["exported.pt2"])
    assert d.error is not None and "the old run failed" in d.error and "pickled Python object" in d.error
    d = tj.diff(files["traced.pt"], files["data_pkl.pt"])
    assert d.error is not None and "the new run failed" in d.error and "posix.system" in d.error
    d = tj.diff(files["expression.pt2"], files["program_bomb.pt2"])
    assert d.error is not None and "the old run failed" in d.error


def test_the_benign_files_they_were_made_from_load(files: dict[str, Path]) -> None:
    for name in ("exported.pt2", "traced.pt"):
        run = tj.load(files[name])
        assert run.error is None and run.graphs and run.traced is not None, run.error
        assert "code_at_load" not in {f.kind for f in run.findings}


@pytest.mark.parametrize(
    "name",
    [
        "opaque_obj.pt2",
        "opaque_obj_uint8.pt2",
        "use_pickle_constant.pt2",
        "raw_pickle_constant.pt2",
        "use_pickle_weight.pt2",
        "sample_inputs.pt2",
        "legacy_weights.pt2",
        "expression.pt2",
    ],
)
def test_control_trusted_runs_the_payload(files: dict[str, Path], tmp_path: Path, name: str) -> None:
    """The same attack, crafted again aiming at another folder and opened trusted: torch runs it."""
    ran = tmp_path / "ran"
    ran.mkdir()
    copies = craft(tmp_path, files["exported.pt2"], files["traced.pt"], lambda marker: ran / marker)
    tj.load(copies[name], trusted=True)
    assert list(ran.iterdir()), f"{name} is not hostile: trusted, nothing ran"


def test_a_zip_bomb_is_refused_trusted_or_not_and_the_limit_is_named(files: dict[str, Path]) -> None:
    run = tj.load(files["program_bomb.pt2"], trusted=True)
    assert run.error is not None and run.error.tag == "zip_bomb" and "Nothing was inflated" in run.error.message
    size = sum(len(data) for _, data in h.members(files["traced.pt"]))
    run = tj.load(files["traced.pt"], max_size=size - 1)
    assert run.error is not None and run.error.tag == "too_large"
    assert f"tj.load(path, max_size={size})" in run.error.hint
    assert tj.load(files["traced.pt"], max_size=size).error is None


# -- code that runs at load: in a bounded process ---------------------------------------------------------------------
def test_setstate_runs_in_a_process_of_its_own_and_the_run_says_so(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path = h.scripted(h.PrintsAtLoad(), tmp_path / "prints.pt")
    run = tj.load(path)
    assert run.error is None and run.graphs and run.traced is None  # the module stayed in the child
    (finding,) = [f for f in run.findings if f.kind == "code_at_load"]
    assert (
        finding.severity == "warning"
        and "PrintsAtLoad.__setstate__ (code/__torch__/tests/security/hostile.py)" in finding.message
    )
    assert "It printed: '__setstate__ ran'" in finding.message and "trusted=True" in finding.hint
    assert "__setstate__ ran" not in capfd.readouterr().out  # not in this process
    trusted = tj.load(path, trusted=True)
    assert trusted.error is None and trusted.traced is not None
    assert "__setstate__ ran" in capfd.readouterr().out


def test_a_setstate_that_loops_does_not_hang_tj_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "TIMEOUT", 5.0)
    run = tj.load(h.scripted(h.LoopsAtLoad(), tmp_path / "loops.pt"))
    assert run.error is not None and run.error.tag == "load_timeout", run.error
    assert "LoopsAtLoad.__setstate__" in run.error.message and "did not finish in 5 s" in run.error.message
    assert "trusted=True" in run.error.hint


def test_ctrl_c_stops_a_bounded_load_and_its_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the user's process, torch's C++ running __setstate__ would not see Ctrl-C; here the wait for the child
    does, and the child goes with it."""
    path = h.scripted(h.LoopsAtLoad(), tmp_path / "loops.pt")
    started: list[subprocess.Popen[bytes]] = []

    class Interrupted(subprocess.Popen):  # type: ignore[type-arg]
        def wait(self, timeout: float | None = None) -> int:
            if not started:
                started.append(self)
                _thread.interrupt_main()  # Ctrl-C while the load waits for its child
            return super().wait(timeout)

    monkeypatch.setattr(subprocess, "Popen", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        tj.load(path)
    (child,) = started
    assert child.returncode == -signal.SIGKILL  # stopped and reaped


def test_a_setstate_that_allocates_without_end_runs_out_of_its_memory(tmp_path: Path) -> None:
    run = tj.load(h.scripted(h.AllocatesAtLoad(), tmp_path / "allocates.pt"))
    assert run.error is not None and run.error.tag == "out_of_memory", run.error
    assert "ran out of the" in run.error.message and "AllocatesAtLoad.__setstate__" in run.error.message


# -- what is not a regular file -----------------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_a_device_and_a_directory_are_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.pt")  # opened for reading, it would wait for a writer forever
    (tmp_path / "zero.pt").symlink_to("/dev/zero")  # read, it never ends
    (tmp_path / "folder.pt").mkdir()
    for name, kind in [
        ("pipe.pt", "a FIFO (named pipe)"),
        ("zero.pt", "a character device"),
        ("folder.pt", "a directory"),
    ]:
        run = tj.load(tmp_path / name)
        assert run.error is not None and run.error.tag == "not_a_file", run.error
        assert f"is {kind}, not a regular file" in run.error.message
    with pytest.raises(ValueError, match="not a regular file"):
        TraceRun.load(tmp_path / "zero.pt")
    with pytest.raises(ValueError, match="not a regular file"):
        TraceRun.load(tmp_path / "pipe.pt")


def test_a_link_loop_is_a_missing_file(tmp_path: Path) -> None:
    (tmp_path / "a.pt").symlink_to(tmp_path / "b.pt")
    (tmp_path / "b.pt").symlink_to(tmp_path / "a.pt")
    run = tj.load(tmp_path / "a.pt")
    assert run.error is not None and run.error.tag == "not_found" and "symbolic links" in run.error.message


# -- the guard around torch's loader: a loader the pre-scan does not know fails closed ---------------------------------
def test_a_new_unpickling_path_in_torch_is_refused_inside_the_load(
    files: dict[str, Path], markers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if a future torch's .pt2 loader unpickled a member the scan does not know of: caught by the guard, even
    where the loader catches the refusal and goes on."""
    from torch.export.pt2_archive import _package

    real = _package._load_constants
    hostile = h.payload(markers / "future")

    def future_loader(reader: object, model_name: str) -> object:
        try:
            pickle.loads(hostile)
        except Exception:
            pass  # a loader that swallows what went wrong
        return real(reader, model_name)

    monkeypatch.setattr(_package, "_load_constants", future_loader)
    run = tj.load(files["exported.pt2"])
    assert run.error is not None and run.error.tag == "untrusted_pickle", run.error
    assert "torch.export.load reached for pickle.loads" in run.error.message


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("pickle.loads", lambda data: pickle.loads(data)),
        ("pickle.load", lambda data: pickle.load(__import__("io").BytesIO(data))),
        ("pickle.Unpickler", lambda data: pickle.Unpickler(__import__("io").BytesIO(data)).load()),
        ("torch._C._pickle_load_obj", lambda data: torch._C._pickle_load_obj(data)),
    ],
)
def test_every_unpickling_entry_point_refuses_in_the_guarded_block(markers: Path, name: str, call: object) -> None:
    data = h.payload(markers / "guarded")
    with guard.guarded_loaders("cpu") as refused, pytest.raises(guard.UntrustedLoad):
        call(data)  # type: ignore[operator]
    assert refused == [name]
    assert pickle.loads(pickle.dumps([1, 2])) == [1, 2]  # put back after


def test_sympify_reads_plain_expressions_only_in_the_guarded_block(markers: Path) -> None:
    code = f"__import__('os').system('touch {markers / 'sympify'}')"
    with guard.guarded_loaders("cpu") as refused:
        assert sympy.sympify("Symbol('s0', positive=True, integer=True) * 2") is not None
        with pytest.raises(guard.UntrustedLoad):
            sympy.sympify(code)
    assert len(refused) == 1 and "sympy.sympify" in refused[0]


def test_other_threads_keep_their_pickle_during_a_guarded_load() -> None:
    seen: list[object] = []
    with guard.guarded_loaders("cpu"):
        worker = threading.Thread(target=lambda: seen.append(pickle.loads(pickle.dumps({"a": 1}))))
        worker.start()
        worker.join()
    assert seen == [{"a": 1}]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Symbol('s77', positive=True, integer=True)", None),
        ("Mul(Integer(2), Symbol('s0', integer=True))", None),
        ("FloorDiv(s0, 2) + Max(1, s1)", None),
        ("Float('1.5', precision=53)", None),
        ("StrictLessThan(Integer(2), Symbol('s0'))", None),
        ("Piecewise((Integer(1), true), (Integer(2), false))", None),
        ("__import__('os').system('x')", "it calls __import__('os').system"),
        ("s0.__class__", "attribute"),
        ("Symbol('a b')", "it passes the text 'a b' to Symbol"),
        ("sympify('x')", "it calls sympify"),
        ("(lambda: 1)()", "it calls lambda: 1"),
        ("Pow(Integer(10), Integer(10000000))", "too large to compute"),
        ("(2**64)**64", "too large to compute"),
        ("'text'", "it holds the text 'text'"),
    ],
)
def test_the_expressions_the_guard_lets_sympy_read(text: str, problem: str | None) -> None:
    found = guard.expression_problem(text)
    assert (found is None) if problem is None else (found is not None and problem in found), found


def test_the_globals_of_a_pickle_are_read_without_unpickling(markers: Path) -> None:
    for protocol in (0, 2, 4, 5):
        assert guard.pickle_globals(h.payload(markers / "never", protocol)) == ["posix.system"]
    assert guard.pickle_globals(pickle.dumps({"a": [1, 2.0, "x"]})) == []
    with pytest.raises(guard.PickleProblem, match="copyreg extension registry"):
        guard.pickle_globals(b"\x80\x02\x82\x01.")  # EXT1
