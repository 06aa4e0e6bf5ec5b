"""``tracejit view`` and ``tracejit diff`` as a user runs them (the console script, in processes of their own) on
hostile files: exit 2 with the refusal and ``--trusted`` named, nothing run; ``--trusted`` loads in the process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.security import hostile as h

EXE = Path(sys.executable).parent / "tracejit"


def start(*args: str | Path) -> subprocess.Popen[str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return subprocess.Popen(
        [str(EXE), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def test_view_and_diff_refuse_hostile_files_and_trusted_loads_in_process(
    files: dict[str, Path], tmp_path: Path
) -> None:
    if not EXE.exists():
        pytest.skip(f"{EXE} is missing: reinstall the package (pip install -e .) to get the console script")
    prints = h.scripted(h.PrintsAtLoad(), tmp_path / "prints.pt")
    runs = {  # at once: each pays for importing torch
        "view": start("view", files["opaque_obj.pt2"]),
        "diff": start("diff", files["expression.pt2"], files["data_pkl.pt"]),
        "bounded": start("view", prints),
        "trusted": start("view", prints, "--trusted"),
    }
    done = {name: (p.wait(timeout=300), *p.communicate()) for name, p in runs.items()}
    code, out, err = done["view"]
    assert (code, out) == (2, ""), err
    assert "was not loaded: its constant 'k' is a pickled Python object" in err and "--trusted" in err
    code, out, err = done["diff"]
    assert (code, out) == (2, "") and "shape expression" in err and "sympy.sympify" in err, err
    code, out, err = done["bounded"]
    assert code == 0 and "the archive's code ran at load (PrintsAtLoad.__setstate__)" in out, (out, err)
    assert "__setstate__ ran" not in out.replace("It printed: '__setstate__ ran'", "")
    code, out, err = done["trusted"]
    assert code == 0 and out.startswith("__setstate__ ran\n") and "code ran at load" not in out, (out, err)
