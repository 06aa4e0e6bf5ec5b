"""The process the server extension starts to read one file: ``python -m jupyter_tracejit.server.worker PATH
[--max-memory=BYTES] [--max-size=BYTES]``.

torch is imported here, never in the Jupyter server: a file that makes torch crash or hang ends this process, not
the server. The process caps its own address space first (``--max-memory``, ``RLIMIT_AS``): an allocation past it
fails, and the process exits with :data:`OUT_OF_MEMORY` (the server words it like a crash, naming the setting). The
file is read with ``tj.load`` untrusted (nothing in it runs but in this bounded process: a TorchScript archive's
``__setstate__`` runs here, where time and memory are bounded, rather than in a process of its own), its zip
directory checked against ``--max-size`` before anything is read. The run's JSON is written to stdout; what torch
prints goes to stderr. Nothing here but the standard library is imported before torch is known to be there, so a
missing torch is told apart from a failing load.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

#: the exit status that says ``import torch`` found no torch in this environment (the server words the message)
TORCH_MISSING = 3
#: the exit status that says the load ran out of the memory this process may use (``--max-memory``)
OUT_OF_MEMORY = 4
#: the largest total unpacked size read unless the server says (its ``c.TracejitOpener.max_size``)
DEFAULT_MAX_SIZE = 2 * 2**30


def load_run(path: str, max_size: int = DEFAULT_MAX_SIZE) -> Any:
    """The run of the file at ``path``, a TorchScript archive or an exported program (``tj.load``: a failed load is
    the run's error, never an exception), untrusted; a file over ``max_size`` unpacked says which server setting
    reads it."""
    import jupyter_tracejit
    from jupyter_tracejit.core.torchscript.saved import sandbox

    sandbox.mark_bounded()
    run = jupyter_tracejit.load(path, map_location="cpu", max_size=max_size)
    if run.error is not None and run.error.tag == "too_large":
        run.error.hint = (
            "To read it, raise the trace explorer's limit where the server starts: c.TracejitOpener.max_size in "
            "jupyter_server_config.py, or --TracejitOpener.max_size=BYTES."
        )
    return run


def limit_memory(max_bytes: int) -> None:
    """Cap this process's address space at ``max_bytes`` (0: no cap), where the platform can."""
    if max_bytes <= 0:
        return
    try:
        import resource
    except ImportError:  # not on this platform
        return
    resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))


def _options(argv: list[str]) -> tuple[str, dict[str, int]] | None:
    paths = [a for a in argv if not a.startswith("--")]
    options: dict[str, int] = {}
    for a in argv:
        if a.startswith("--"):
            name, _, value = a[2:].partition("=")
            if name not in ("max-memory", "max-size") or not value.isdigit():
                return None
            options[name] = int(value)
    return (paths[0], options) if len(paths) == 1 else None


def main(argv: list[str]) -> int:
    parsed = _options(argv)
    if parsed is None:
        print(
            "usage: python -m jupyter_tracejit.server.worker PATH [--max-memory=BYTES] [--max-size=BYTES]",
            file=sys.stderr,
        )
        return 2
    path, options = parsed
    limit_memory(options.get("max-memory", 0))
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise  # torch is there but broken: its own traceback says why
        return TORCH_MISSING
    except MemoryError:
        return OUT_OF_MEMORY
    except ImportError as exc:
        if "failed to map segment" in str(exc) or "Cannot allocate memory" in str(exc):
            print(exc, file=sys.stderr)
            return OUT_OF_MEMORY  # torch's libraries did not fit in --max-memory
        raise
    # only the run's JSON on stdout: whatever the load prints, from Python or from torch's C++, goes to stderr
    sys.stdout.flush()
    run_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        from jupyter_tracejit.core.torchscript.saved.sandbox import out_of_memory

        run = load_run(path, options.get("max-size", DEFAULT_MAX_SIZE))
        if run.error is not None and out_of_memory(f"{run.error.type}: {run.error.message}"):
            print(run.error.message, file=sys.stderr)
            return OUT_OF_MEMORY
        data = run.to_json()
    except MemoryError:
        return OUT_OF_MEMORY
    json.dump(data, run_out)
    run_out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
