"""One contract, tested from both sides.

The fixtures in ``labextension/test/fixtures`` are real runs written by the Python model, the facts the Python
model derives from them and DOT cases (see :mod:`tests.frontend_fixtures`). The TypeScript unit tests (vitest)
decode the same files and must find the same facts and write the same DOT. The fixtures are committed, so
``npm test`` runs alone; here they must also be current, and generated code must be current too.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import jupyter_tracejit as tj

from .frontend_fixtures import FIXTURES, ROOT, fixture_files


@pytest.fixture(scope="module")
def fresh() -> dict[str, str]:
    return fixture_files()


def test_the_committed_fixtures_are_current(fresh: dict[str, str]) -> None:
    committed = {p.name: p.read_text(encoding="utf-8") for p in FIXTURES.glob("*.json")}
    assert sorted(committed) == sorted(fresh), "run `python -m tests.frontend_fixtures`"
    stale = [name for name, text in fresh.items() if committed[name] != text]
    assert stale == [], f"stale fixtures {stale}: run `python -m tests.frontend_fixtures` and commit them"


def test_fixtures_round_trip_in_python(fresh: dict[str, str]) -> None:
    for name, text in fresh.items():
        if name.endswith(".run.json"):
            data = json.loads(text)
            assert tj.TraceRun.from_json(data).to_json() == data, name


def _npm_bin(name: str) -> Path:
    path = ROOT / "node_modules" / ".bin" / name
    if not path.exists():
        pytest.skip("node_modules not installed: `pip install -e .` (or `npm ci`) installs it")
    return path


def test_typescript_model_agrees_with_python() -> None:
    result = subprocess.run(
        [str(_npm_bin("vitest")), "run", "--reporter=verbose"],
        cwd=ROOT,
        env={**os.environ, "TRACEJIT_FIXTURES": str(FIXTURES)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout


def test_the_generated_protocol_is_current() -> None:
    _npm_bin("json2ts")
    result = subprocess.run(
        ["node", "labextension/scripts/generate-protocol.mjs", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
