"""One contract, tested from both sides.

Python writes real runs as JSON fixtures, together with facts about them computed by the Python
model (node counts, scopes, fold targets, divergences, source lines). The TypeScript unit tests
(`labextension/test/*.test.ts`, vitest) decode the same files and must find the same facts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "test-artifacts" / "fixtures"


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x)) + x


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block(), Block())
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        if x.sum() > 0:
            x = x * 2
        return self.head(self.blocks(x)).view(-1)


def loop_in_traced_fn(x):
    result = x[0]
    for i in range(x.size(0)):
        result = result * x[i]
    return result


def dict_output(x):
    return {"y": x * 2}


def facts(run: tj.TraceRun) -> dict[str, Any]:
    """What the TypeScript side must derive from the JSON on its own."""
    out: dict[str, Any] = {"ok": run.ok, "summary": run.summary(), "graphs": {}}
    for name, g in run.graphs.items():
        out["graphs"][name] = {
            "nodes": len(g.nodes),
            "ops": sum(1 for n in g.nodes if not n.foldable),
            "kinds": g.kinds(),
            "scopes": {p: s.type for p, s in g.scopes.items()},
            "fold_targets": {str(n.id): g.fold_target(n) for n in g.nodes if n.foldable},
            "users_of_inputs": [g.users(v) for v in g.inputs],
            "text_first_line": g.text().splitlines()[0],
            "node_text": {str(n.id): g.node_text(n) for n in g.nodes[:40]},
            "source_lines": [[f, line, ids] for (f, line), ids in sorted(g.source_lines().items())][:20],
        }
    if run.check is not None:
        out["divergences"] = [
            [c.index, c.method, d.trace_node, d.check_node, d.kind, d.reason]
            for c in run.check.cases
            for d in (c.diff.divergences if c.diff else [])
        ]
        out["matched"] = [[c.index, c.method, len(c.diff.matched) if c.diff else 0] for c in run.check.cases]
    out["warnings"] = [[w.category, w.count, w.line, w.node_ids] for w in run.warnings]
    return out


def make_runs() -> dict[str, tj.TraceRun]:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "net": tj.trace(Net().eval(), (torch.ones(2, 8),), check_inputs=[(-torch.ones(2, 8),)]),
            "loop": tj.trace(loop_in_traced_fn, (torch.rand(3, 4),), check_inputs=[(torch.rand(4, 4),)]),
            "error": tj.trace(dict_output, (torch.rand(2),)),
            "mlp": tj.trace(
                nn.Sequential(*[m for _ in range(150) for m in (nn.Linear(4, 4), nn.ReLU())]),
                (torch.rand(1, 4),),
                check_trace=False,
            ),
        }


@pytest.fixture(scope="module")
def fixture_dir() -> Path:
    if FIXTURES.exists():
        shutil.rmtree(FIXTURES)
    FIXTURES.mkdir(parents=True)
    for name, run in make_runs().items():
        (FIXTURES / f"{name}.run.json").write_text(json.dumps(run.to_json(), allow_nan=False))
        (FIXTURES / f"{name}.facts.json").write_text(json.dumps(facts(run), allow_nan=False))
    return FIXTURES


def test_fixtures_round_trip_in_python(fixture_dir: Path) -> None:
    for path in sorted(fixture_dir.glob("*.run.json")):
        data = json.loads(path.read_text())
        assert tj.TraceRun.from_json(data).to_json() == data, path.name


def test_typescript_model_agrees_with_python(fixture_dir: Path) -> None:
    vitest = ROOT / "node_modules" / ".bin" / "vitest"
    if not vitest.exists():
        pytest.skip("node_modules not installed: `pip install -e .` (or `npm install`) installs vitest")
    env = {**os.environ, "TRACEJIT_FIXTURES": str(fixture_dir)}
    result = subprocess.run(
        [str(vitest), "run", "--reporter=verbose"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout
