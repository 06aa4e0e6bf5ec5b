"""Runs saved by earlier versions still open: upgraded on reading, shown and saved again as the current version.

- version 1: every tutorial's outputs and the front-end fixtures as they were before roles became data
  (tests/data/v1-runs.json.gz);
- version 2: every run saved in the checkout before the back-end registry (the tutorials' outputs, the front end's
  fixtures, a loaded .pt and .pt2; tests/data/v2-runs.json.gz), when ``backend`` still said
  ``"torchscript-archive"`` for a loaded archive and an export's records were ``export``."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from jupyter_tracejit.core.categories import SCHEMA_PATH
from jupyter_tracejit.core.graph import GRAPH_SCHEMA_VERSION, NODE_ROLES, Graph
from jupyter_tracejit.core.legacy import upgrade_graph, upgrade_run
from jupyter_tracejit.core.run import SCHEMA_VERSION, TraceRun
from jupyter_tracejit.core.torchscript.roles import TORCHSCRIPT_ROLES, role_of

V1_RUNS = Path(__file__).parent.parent / "data" / "v1-runs.json.gz"
V2_RUNS = Path(__file__).parent.parent / "data" / "v2-runs.json.gz"


def v1_runs() -> dict[str, dict]:
    with gzip.open(V1_RUNS, "rt", encoding="utf-8") as f:
        return json.load(f)


def v2_runs() -> dict[str, dict]:
    with gzip.open(V2_RUNS, "rt", encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def saved() -> dict[str, dict]:
    return v1_runs()


def in_todays_words(summary: str) -> str:
    """A version-1 summary as today's summary words it: counts with real plurals ("1 input set", "2 input sets"),
    where version 1 wrote "1 input set(s)" and "1 nodes"."""

    def count(m: re.Match[str]) -> str:
        n, word, suffix = int(m.group(1)), m.group(2), m.group(3) or ""
        return f"{n} {word}{suffix if n != 1 else ''}"

    summary = re.sub(r"\b(\d+) ([a-z][a-z ]*?[a-z])\((s|es)\)", count, summary)
    return re.sub(r"\b1 nodes\b", "1 node", summary)


def test_the_saved_runs_are_version_1(saved):
    assert len(saved) >= 40
    assert {run["schema_version"] for run in saved.values()} == {1}
    assert any(name.startswith("06-real-model") for name in saved)


def test_every_version_1_run_opens_shows_and_saves_as_version_2(saved):
    for name, data in saved.items():
        before = json.dumps(data, sort_keys=True)
        run = TraceRun.from_json(data)
        assert json.dumps(data, sort_keys=True) == before, f"{name}: reading changed the caller's data"
        assert run.backend == "trace", name
        assert run.summary() == in_todays_words(data["summary"]), name
        run.to_html()
        for graph in run.graphs.values():
            graph.lint()
            assert all(node.role == role_of(node.kind) for node in graph.nodes), name
        again = run.to_json()
        assert again["schema_version"] == SCHEMA_VERSION == 3 and again["source"] == "capture"
        assert all(g["graph_schema"] == GRAPH_SCHEMA_VERSION == 2 for g in again["graphs"].values())
        assert TraceRun.from_json(json.loads(json.dumps(again))).to_json() == again, name


def test_a_version_1_graph_reads_with_the_roles_version_1_gave(saved):
    data = next(iter(saved["net.run.json"]["graphs"].values()))
    graph = Graph.from_json(data)
    kinds = {n.kind: n.role for n in graph.nodes}
    assert kinds["prim::Constant"] == "constant" and kinds["prim::GetAttr"] == "getattr"
    assert kinds["prim::ListConstruct"] == "list" and kinds["aten::linear"] == "op"
    assert upgrade_graph(graph.to_json()) == graph.to_json(), "a version-2 graph passes through unchanged"


def test_every_version_2_run_opens_shows_and_saves_as_version_3():
    saved = v2_runs()
    assert len(saved) >= 50 and {run["schema_version"] for run in saved.values()} == {2}
    backends = {run["backend"] for run in saved.values()}
    assert backends == {"trace", "export", "torchscript-archive"}, "every kind of run version 2 wrote"
    for name, data in saved.items():
        before = json.dumps(data, sort_keys=True)
        run = TraceRun.from_json(data)
        assert json.dumps(data, sort_keys=True) == before, f"{name}: reading changed the caller's data"
        from_file = data["backend"] == "torchscript-archive" or set(data["options"]) == {"path", "map_location"}
        assert run.backend == ("trace" if data["backend"] == "torchscript-archive" else data["backend"]), name
        assert run.source == ("file" if from_file else "capture") and run.from_file == from_file, name
        # a file's run read "not checked" then; nothing of it ran, which it now says
        summary = (
            data["summary"].replace("not checked", "read from a file, nothing run") if from_file else data["summary"]
        )
        assert run.summary() == summary, name
        assert (run.records is None) == (data.get("export") is None), name
        if data.get("export") is not None:
            assert run.export is run.records and run.records.to_json() == data["export"], name
        run.to_html()
        again = run.to_json()
        assert again["schema_version"] == SCHEMA_VERSION and "export" not in again, name
        assert TraceRun.from_json(json.loads(json.dumps(again))).to_json() == again, name


def test_the_upgrade_leaves_other_data_for_the_checks_to_name(saved):
    assert upgrade_run({"kind": "jupyter-tracejit.run", "schema_version": 4}) == {
        "kind": "jupyter-tracejit.run",
        "schema_version": 4,
    }
    with pytest.raises(ValueError, match="schema_version 4"):
        TraceRun.from_json({"kind": "jupyter-tracejit.run", "schema_version": 4})
    broken = json.loads(json.dumps(saved["net.run.json"]))
    broken["graphs"]["forward"]["nodes"][3] = "not a row"
    with pytest.raises(ValueError, match="graphs/forward/nodes/3"):
        TraceRun.from_json(broken)


def test_the_schema_carries_the_role_tables():
    definitions = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))["definitions"]
    assert definitions["NodeRole"]["enum"] == list(NODE_ROLES)
    assert definitions["NodeRole"]["x-torchscript-roles"] == TORCHSCRIPT_ROLES
    assert set(TORCHSCRIPT_ROLES.values()) <= set(NODE_ROLES)


def test_the_schema_names_the_back_ends_the_code_knows():
    from jupyter_tracejit.core.registry import names, schema_table

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["properties"]["backend"]["enum"] == list(names())
    assert schema["properties"]["backend"]["x-backends"] == schema_table()
