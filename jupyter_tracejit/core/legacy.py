"""Reading files written by earlier versions: each upgrade turns one version's JSON into the next, so the loaders
only ever read the current layout. Torch-free (a saved run opens where torch is not installed).

- run ``schema_version`` 1 -> 2: every run was a ``torch.jit.trace`` (``backend: "trace"``); its graphs are
  upgraded as below.
- run ``schema_version`` 2 -> 3 (the back-end registry): ``source`` says where a run came from, apart from its
  ``backend``: a TorchScript archive read back (``backend: "torchscript-archive"``) is ``trace`` from a ``file``, an
  exported program read back (options ``path`` and ``map_location`` only) ``export`` from a ``file``; an export's
  ``export`` records are the run's ``records``.
- ``graph_schema`` 1 -> 2: nodes gain their role (version 1 decided it from the TorchScript kind; that table is
  :data:`~.torchscript.roles.TORCHSCRIPT_ROLES`, read here from the run schema's copy, ``x-torchscript-roles``, as the
  front end reads it); sizes were all numbers, as version 2 still allows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .validate import run_schema


def upgrade_graph(data: Any) -> Any:
    """A version-1 graph as version 2 (a new dict; the input is not changed); anything else as it is."""
    if not isinstance(data, Mapping) or data.get("graph_schema") != 1:
        return data
    strings = data.get("strings")
    nodes = data.get("nodes")
    if not isinstance(strings, list) or not isinstance(nodes, list):
        return data  # malformed: the schema check says where
    roles: dict[str, str] = run_schema()["definitions"]["NodeRole"]["x-torchscript-roles"]
    rows = []
    for row in nodes:
        if isinstance(row, list) and row and isinstance(row[0], int) and 0 <= row[0] < len(strings):
            row = [*row, roles.get(str(strings[row[0]]), "op")]
        rows.append(row)
    return {**data, "graph_schema": 2, "nodes": rows}


def upgrade_run(data: Any) -> Any:
    """A run of an earlier version as the current one (a new dict sharing the unchanged parts); anything else as it
    is."""
    return _upgrade_2(_upgrade_1(data))


def _upgrade_2(data: Any) -> Any:
    """A version-2 run as version 3."""
    if not isinstance(data, Mapping) or data.get("schema_version") != 2:
        return data
    run = {key: value for key, value in data.items() if key != "export"}
    options = data.get("options")
    from_file = data.get("backend") == "torchscript-archive" or (
        isinstance(options, Mapping) and set(options) == {"path", "map_location"}
    )
    run.update(
        schema_version=3,
        backend="trace" if data.get("backend") == "torchscript-archive" else data.get("backend"),
        source="file" if from_file else "capture",
    )
    if data.get("export") is not None:
        run["records"] = data["export"]
    return run


def _upgrade_1(data: Any) -> Any:
    """A version-1 run as version 2."""
    if not isinstance(data, Mapping) or data.get("schema_version") != 1:
        return data
    run = {**data, "schema_version": 2, "backend": "trace"}
    graphs = run.get("graphs")
    if isinstance(graphs, Mapping):
        run["graphs"] = {name: upgrade_graph(g) for name, g in graphs.items()}
    check = run.get("check")
    if isinstance(check, Mapping) and isinstance(check.get("cases"), list):
        run["check"] = {**check, "cases": [_upgrade_case(case) for case in check["cases"]]}
    return run


def _upgrade_case(case: Any) -> Any:
    """A check case's re-trace graph, when it has one, upgraded."""
    if isinstance(case, Mapping) and "graph" in case:
        return {**case, "graph": upgrade_graph(case["graph"])}
    return case
