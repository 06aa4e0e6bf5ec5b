"""What the corpus tests read off a run: its user warnings as (category, count, line), node kinds, and a JSON round
trip that must give the same run."""

from __future__ import annotations

import json

import jupyter_tracejit as tj


def user_warnings(run: tj.TraceRun) -> list[tuple[str, int, int]]:
    return sorted((w.category, w.count, w.line) for w in run.user_warnings)


def roundtrip(run: tj.TraceRun) -> None:
    data = json.loads(json.dumps(run.to_json(), allow_nan=False))
    again = tj.TraceRun.from_json(data)
    assert again.to_json() == run.to_json()
    assert again.ok == run.ok


def kinds_of(graph: tj.Graph, ids: list[int]) -> list[str]:
    return [graph.nodes[i].kind for i in ids]
