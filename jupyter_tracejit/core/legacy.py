"""Reading files written by earlier versions: each upgrade turns one version's JSON into the next, so the loaders
only ever read the current layout. Torch-free (a saved run opens where torch is not installed).

- run ``schema_version`` 1 -> 2: every run was a ``torch.jit.trace`` (``backend: "trace"``); its graphs are
  upgraded as below.
- ``graph_schema`` 1 -> 2: nodes gain their role (version 1 decided it from the TorchScript kind; that table is
  :data:`~.torchscript.roles.TORCHSCRIPT_ROLES`); sizes were all numbers, as version 2 still allows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .torchscript.roles import role_of


def upgrade_graph(data: Any) -> Any:
    """A version-1 graph as version 2 (a new dict; the input is not changed); anything else as it is."""
    if not isinstance(data, Mapping) or data.get("graph_schema") != 1:
        return data
    strings = data.get("strings")
    nodes = data.get("nodes")
    if not isinstance(strings, list) or not isinstance(nodes, list):
        return data  # malformed: the schema check says where
    rows = []
    for row in nodes:
        if isinstance(row, list) and row and isinstance(row[0], int) and 0 <= row[0] < len(strings):
            row = [*row, role_of(str(strings[row[0]]))]
        rows.append(row)
    return {**data, "graph_schema": 2, "nodes": rows}


def upgrade_run(data: Any) -> Any:
    """A version-1 run as version 2 (a new dict sharing the unchanged parts); anything else as it is."""
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
