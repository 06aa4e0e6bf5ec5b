"""``python -m jupyter_tracejit``: the ``tracejit`` command (see :mod:`jupyter_tracejit.cli`).

``python -m jupyter_tracejit demo`` traces the bundled example and prints what was found (the example has problems
on purpose); ``python -m jupyter_tracejit trace FILE.py:NAME --inputs EXPR`` traces yours (exit 1 on problems).
"""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m jupyter_tracejit"))
