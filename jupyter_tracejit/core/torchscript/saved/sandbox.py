"""A TorchScript archive whose code runs at load, loaded in a process of its own with bounded time and memory.

``torch.jit.load`` runs the ``__setstate__`` methods an archive's TorchScript code defines (a scripted module's
own, to rebuild its state): code from the file, which can print, allocate without end or loop forever, and which
Ctrl-C does not stop while it runs in torch's C++. Unless the file is trusted, :func:`load_bounded` loads such an
archive in a child process (``python -m jupyter_tracejit.core.torchscript.saved.child``) under a memory cap
(``RLIMIT_AS``) and a time limit, stops it on Ctrl-C, and reads back the run's JSON (a run without ``run.traced``:
the loaded module stays in the child). The run says what ran (the finding ``code_at_load``, with what it printed).
A process that is already bounded (the server extension's worker) marks itself with :func:`mark_bounded` and
loads in place.

Torch-free: the child imports torch, this module does not.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ...archive.guard import size_text
from ...archive.layout import file_run, load_error
from ...errors import TraceError
from ...hazards import Finding
from ...run import TraceRun

#: seconds a bounded load may take (importing torch included)
TIMEOUT = 120.0
#: the address space a bounded load may use beyond twice the archive's unpacked size (torch alone maps ~1 GiB)
BASE_MEMORY = 4 * 2**30
#: the exit status of a bounded process that ran out of its memory
OUT_OF_MEMORY = 4
#: the most of what the archive's code printed that the run quotes (its end)
PRINTED_TAIL = 2000
#: what a process says when an allocation failed (Python, torch's allocator, C++)
_OOM_WORDS = (
    "MemoryError",
    "can't allocate memory",
    "std::bad_alloc",
    "Cannot allocate memory",
    "out of memory",
    "failed to map segment",
)

_bounded = False


def mark_bounded() -> None:
    """Say that this process runs under limits of its own (a sandbox child, the server's worker): an archive whose
    code runs at load loads here rather than in yet another process."""
    global _bounded
    _bounded = True


def in_bounded_process() -> bool:
    return _bounded


def out_of_memory(text: str) -> bool:
    """Whether an error or a process's stderr says an allocation failed."""
    return any(w in text for w in _OOM_WORDS)


def code_at_load(methods: list[str], printed: str = "") -> Finding:
    """The finding of a load that ran the archive's code (``Evil.__setstate__ (code/__torch__.py)``)."""
    said = f" It printed: {printed.strip()[-PRINTED_TAIL:]!r}." if printed.strip() else " It printed nothing."
    return Finding(
        kind="code_at_load",
        severity="warning",
        title=f"the archive's code ran at load ({', '.join(m.split(' ')[0] for m in methods[:3])})",
        message="torch.jit.load ran TorchScript code from the file to rebuild the model's state: "
        f"{', '.join(methods)}. It ran in a process of its own, with limited time and memory, not in yours; the "
        f"model's forward was not run.{said}",
        hint="If you trust the file, tj.load(path, trusted=True) loads it in this process (and keeps run.traced); "
        "a model that needs no __setstate__ saves without one.",
    )


def load_bounded(
    path: str,
    *,
    map_location: Any,
    methods: list[str],
    unpacked: int,
    max_size: int,
    timeout: float | None = None,
    max_memory: int | None = None,
) -> TraceRun:
    """The run of the TorchScript archive at ``path`` (whose code ``methods`` run at load), read by a child process
    under ``timeout`` seconds (default :data:`TIMEOUT`) and ``max_memory`` bytes (default :data:`BASE_MEMORY` +
    twice ``unpacked``); a load that overruns them is the run's error (``load_timeout``, ``out_of_memory``,
    ``load_crashed``). Ctrl-C stops the child and is raised."""
    memory = max_memory if max_memory is not None else BASE_MEMORY + 2 * unpacked
    timeout = TIMEOUT if timeout is None else timeout
    location = map_location if isinstance(map_location, str) else "cpu"
    package_root = str(Path(__file__).resolve().parents[3])
    env = {
        **os.environ,
        "PYTHONSAFEPATH": "1",  # not the current directory's modules ahead of the installed ones
        "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p),
    }
    command = [
        sys.executable,
        "-m",
        "jupyter_tracejit.core.torchscript.saved.child",
        path,
        location,
        str(memory),
        str(max_size),
    ]
    started = time.perf_counter()
    code, stdout, stderr = _run_child(command, env, timeout)
    what = ", ".join(methods)
    if code is None:
        return _failed(
            path,
            map_location,
            started,
            "load_timeout",
            f"{path} was not loaded: torch.jit.load runs the archive's code ({what}) as it loads, and it did not "
            f"finish in {timeout:g} s, so its process was stopped.",
        )
    if code == OUT_OF_MEMORY or (code != 0 and out_of_memory(stderr)):
        return _failed(
            path,
            map_location,
            started,
            "out_of_memory",
            f"{path} was not loaded: the process loading it ran out of the {size_text(memory)} it may use while "
            f"torch.jit.load ran the archive's code ({what}), and stopped.",
        )
    if code != 0:
        how = f"was killed by signal {-code} ({_signal_name(-code)})" if code < 0 else f"exited with status {code}"
        return _failed(
            path,
            map_location,
            started,
            "load_crashed",
            f"{path} was not loaded: the process loading it {how} while torch.jit.load ran the archive's code "
            f"({what}).\n{stderr.strip()[-PRINTED_TAIL:]}".strip(),
        )
    run = TraceRun.from_json(json.loads(stdout))
    run.options = {"path": path, "map_location": None if map_location is None else str(map_location)}
    for i, finding in enumerate(run.findings):
        if finding.kind == "code_at_load":
            run.findings[i] = code_at_load(methods, stderr)
    return run


def _run_child(command: list[str], env: dict[str, str], timeout: float) -> tuple[int | None, str, str]:
    """Run the child to its end or ``timeout``: its exit status (None when it ran out of time), its stdout and its
    stderr. A timeout, Ctrl-C (KeyboardInterrupt) or anything else takes the child's whole session with it."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process: subprocess.Popen[bytes] | None = None
        try:
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, start_new_session=True
            )
            code: int | None = process.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            if process is not None and process.poll() is None:
                _stop(process)
        out.seek(0)
        err.seek(0)
        return code, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def _stop(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
    process.wait()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def _failed(path: str, map_location: Any, started: float, tag: str, message: str) -> TraceRun:
    run = file_run(path, map_location, "trace")
    run.error = _error(path, tag, message)
    run.timings["load"] = time.perf_counter() - started
    return run


def _error(path: str, tag: str, message: str) -> TraceError:
    return load_error(
        path,
        tag,
        message,
        "If you trust the file, tj.load(path, trusted=True) (tracejit view/diff --trusted) loads it in this process, "
        "without limits; otherwise ask for the model saved without code that runs at load (no __setstate__).",
    )
