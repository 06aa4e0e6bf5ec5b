"""The process the server extension starts to read one file: ``python -m jupyter_tracejit.server.worker PATH``.

torch is imported here, never in the Jupyter server: a file that makes torch crash or hang ends this process, not
the server. The run's JSON is written to stdout; what torch prints goes to stderr. Nothing here but the standard
library is imported before torch is known to be there, so a missing torch is told apart from a failing load.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

#: the exit status that says ``import torch`` found no torch in this environment (the server words the message)
TORCH_MISSING = 3


def load_run(path: str) -> Any:
    """The run of the file at ``path``, a TorchScript archive or an exported program (``tj.load``: a failed load is
    the run's error, never an exception)."""
    import jupyter_tracejit

    return jupyter_tracejit.load(path, map_location="cpu")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m jupyter_tracejit.server.worker PATH", file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise  # torch is there but broken: its own traceback says why
        return TORCH_MISSING
    # only the run's JSON on stdout: whatever the load prints, from Python or from torch's C++, goes to stderr
    sys.stdout.flush()
    run_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    data = load_run(argv[0]).to_json()
    json.dump(data, run_out)
    run_out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
