"""The process the server extension starts to read one file: ``python -m jupyter_tracejit.server.worker PATH
[--max-memory=BYTES] [--max-size=BYTES] [--import=MODULE ...]``.

torch is imported here, never in the Jupyter server: a file that makes torch crash or hang ends this process, not
the server. The process caps its own address space first (``--max-memory``, ``RLIMIT_AS``): an allocation past it
fails, and the process exits with :data:`OUT_OF_MEMORY` (the server words it like a crash, naming the setting). The
file is read with ``tj.load`` untrusted (nothing in it runs but in this bounded process: a TorchScript archive's
``__setstate__`` runs here, where time and memory are bounded, rather than in a process of its own), its zip
directory checked against ``--max-size`` before anything is read. The run's JSON is written to stdout; what torch
prints goes to stderr. Nothing here but the standard library is imported before torch is known to be there, so a
missing torch is told apart from a failing load.

``--import=MODULE`` (``tracejit view --import``'s, from the server's ``c.TracejitOpener.imports`` or the explorer's
"retry importing" button) imports an installed module before the load: a ``.pt2`` whose program takes or returns a
class its exporter registered with torch's pytree (a transformers ``ModelOutput``) loads only once the module
registering it is imported. Only dotted names are accepted, and the current directory is not on ``sys.path`` (the
server starts this with ``PYTHONSAFEPATH``): what imports is what is installed. A module that fails to import ends
the process with :data:`IMPORT_FAILED`, its exception on stderr.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from typing import Any

#: the exit status that says ``import torch`` found no torch in this environment (the server words the message)
TORCH_MISSING = 3
#: the exit status that says the load ran out of the memory this process may use (``--max-memory``)
OUT_OF_MEMORY = 4
#: the exit status that says an ``--import`` failed (its exception is the last line of stderr)
IMPORT_FAILED = 5
#: what ``--import`` takes: a dotted module name (``transformers.modeling_outputs``), nothing else
MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
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


def _options(argv: list[str]) -> tuple[str, dict[str, int], list[str]] | None:
    paths = [a for a in argv if not a.startswith("--")]
    options: dict[str, int] = {}
    imports: list[str] = []
    for a in argv:
        if a.startswith("--"):
            name, _, value = a[2:].partition("=")
            if name == "import" and MODULE_NAME.match(value):
                imports.append(value)
            elif name in ("max-memory", "max-size") and value.isdigit():
                options[name] = int(value)
            else:
                return None
    return (paths[0], options, imports) if len(paths) == 1 else None


def import_modules(names: list[str]) -> str | None:
    """Import each module (installed ones only: the current directory is not on ``sys.path``); the first failure
    as ``MODULE: Error: message``, else None."""
    for name in names:
        try:
            importlib.import_module(name)
        except MemoryError:
            raise
        except BaseException as exc:  # an import runs the module's code: whatever it raises is a failed import
            return f"{name}: {type(exc).__name__}: {exc}".splitlines()[0]
    return None


def main(argv: list[str]) -> int:
    parsed = _options(argv)
    if parsed is None:
        print(
            "usage: python -m jupyter_tracejit.server.worker PATH [--max-memory=BYTES] [--max-size=BYTES] "
            "[--import=MODULE ...]",
            file=sys.stderr,
        )
        return 2
    path, options, imports = parsed
    from jupyter_tracejit.core.archive.directory import limit_memory  # torch-free: torch comes under the cap

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

        failed = import_modules(imports)
        if failed is not None:
            print(failed, file=sys.stderr)
            return IMPORT_FAILED
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
