"""Saved runs are checked before they are read (core/validate.py): whatever a file holds, ``TraceRun.from_json`` /
``TraceRun.load`` either give a run that can be summarized and rendered, or raise one ``ValueError`` naming where
it is wrong. Before, 290 of 1,500 mutations of a real run raised TypeError, IndexError, AttributeError or
KeyError, 93 more loaded and then crashed in ``summary()`` or ``to_html()``, and deep nesting gave RecursionError.

The runs are the real ones the front end's tests read (``labextension/test/fixtures``): no tracing here.
"""

from __future__ import annotations

import copy
import json
import os
import random
import reprlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import jupyter_tracejit as tj
from jupyter_tracejit.core import schema_validator
from jupyter_tracejit.core.run import TraceRun
from jupyter_tracejit.core.validate import RunInvalid, reference_problem, schema_problem
from jupyter_tracejit.render import html as html_render
from jupyter_tracejit.render.text import format_run
from tests.frontend_fixtures import apply_edits

FIXTURES = Path(__file__).resolve().parents[2] / "labextension" / "test" / "fixtures"
SCHEMA = json.loads((Path(tj.__file__).parent / "core" / "run.schema.json").read_text())
#: small real runs of every kind: a module with a branch, a loop that fails the check, a failed trace, findings,
#: hostile names (the 900-node ones would only make each mutation slower)
SMALL = ["net", "loop", "error", "causes", "hostile"]
#: mutations per run; TRACEJIT_FUZZ=5000 for a longer search
MUTATIONS = int(os.environ.get("TRACEJIT_FUZZ", "300"))


def real(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.run.json").read_text(encoding="utf-8"))
    return data


def test_every_real_run_passes_both_checks() -> None:
    for path in sorted(FIXTURES.glob("*.run.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert schema_problem(data) is None, path.name
        assert reference_problem(data) is None, path.name
        assert TraceRun.from_json(data).to_json() == data, path.name


# -- one clear error, naming the file and the place ----------------------------------------------------------
def test_load_names_the_file_and_where_it_is_wrong(tmp_path: Path) -> None:
    data = real("net")
    data["graphs"]["forward"]["nodes"][3][1][0] = 999
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError) as info:
        TraceRun.load(path)
    message = str(info.value)
    values = len(data["graphs"]["forward"]["values"])
    assert message == (
        f"{path}: not a valid jupyter-tracejit run: at /graphs/forward/nodes/3/1/0: value 999 points nowhere "
        f"(the graph has {values} values, 0..{values - 1})"
    )
    with pytest.raises(RunInvalid) as direct:  # from_json's own error: the same, without the path
        TraceRun.from_json(data)
    assert message == f"{path}: {direct.value}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"kind": "jupyter-tracejit.run", "schema',
            "not valid JSON (Unterminated string starting at: line 1 column 34 (char 33))",
        ),
        ("[" * 100_000 + "]" * 100_000, "its JSON nests too deeply"),
        (b"\xff\xfe{}", "not UTF-8 text"),
        ("[1, 2]", "not a jupyter-tracejit run: expected a dict"),
    ],
    ids=["cut short", "deep nesting", "not text", "not a run"],
)
def test_a_file_that_is_not_a_run_gives_one_value_error(tmp_path: Path, text: str | bytes, message: str) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError, match=r"^" + str(path).replace("\\", "\\\\") + ": ") as info:
        TraceRun.load(path)
    assert message in str(info.value)


def test_a_cut_short_file_says_so(tmp_path: Path) -> None:
    text = (FIXTURES / "net.run.json").read_text()
    path = tmp_path / "run.json"
    path.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match=r"not valid JSON .*cut short or edited: save the run again"):
        TraceRun.load(path)


@pytest.mark.parametrize(
    ("edit", "where", "detail"),
    [
        (lambda d: d["graphs"]["forward"]["nodes"][2].__setitem__(7, 2), "/graphs/forward/nodes/2/7", "inside itself"),
        (lambda d: d["graphs"]["forward"]["values"][0].__setitem__(6, 10**6), "/graphs/forward/values/0/6", "node"),
        (lambda d: d["graphs"]["forward"]["outputs"].append(-1), "/graphs/forward/outputs/1", "value -1 points"),
        (lambda d: d["graphs"]["forward"]["stacks"][0].__setitem__(0, 50), "/graphs/forward/stacks/0/0", "user frame"),
        (lambda d: d["findings"][0]["node_ids"].append(7777), "/findings/0/node_ids/8", "node 7777 points nowhere"),
        (
            lambda d: d["graphs"]["forward"]["nodes"][5].__setitem__(5, {"value": _deep(70)}),
            "/graphs/forward/nodes/5/5",
            "deeper than 64 levels",
        ),
        (
            lambda d: d["graphs"]["forward"]["nodes"][5].__setitem__(5, {"value": {"tensor": {"shape": 3}}}),
            "/graphs/forward/nodes/5/5",
            "a tensor constant's shape must be array, not integer",
        ),
    ],
    ids=["parent cycle", "producer", "graph output", "user frame", "finding node", "deep attribute", "tensor"],
)
def test_ids_that_point_nowhere_are_named(edit: Callable[[dict[str, Any]], None], where: str, detail: str) -> None:
    data = real("causes")
    assert data["findings"] and data["graphs"]["forward"]["nodes"][2][7] == -1
    edit(data)
    assert schema_problem(data) is None  # the schema cannot see these
    with pytest.raises(RunInvalid) as info:
        TraceRun.from_json(data)
    assert info.value.location == where, info.value
    assert detail in info.value.detail


def _deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def test_divergence_endpoints_and_matched_runs_are_checked() -> None:
    data = real("loop")
    case = next(i for i, c in enumerate(data["check"]["cases"]) if c["diff"] and c["diff"]["divergences"])
    diff = data["check"]["cases"][case]["diff"]
    bad = copy.deepcopy(data)
    bad["check"]["cases"][case]["diff"]["divergences"][0][1] = 4000
    problem = reference_problem(bad)
    assert problem is not None and problem[0] == f"/check/cases/{case}/diff/divergences/0/1", problem
    bad = copy.deepcopy(data)
    bad["check"]["cases"][case]["diff"]["matched_runs"] = [[0, 0, 10**12]]  # once: 10**12 dict entries
    problem = reference_problem(bad)
    assert problem is not None and problem[0] == f"/check/cases/{case}/diff/matched_runs/0", problem
    assert diff["matched_runs"], "the fixture should have matched runs to break"


def test_the_schema_check_names_the_place_and_the_rule() -> None:
    data = real("net")
    data["graphs"]["forward"]["nodes"][3] = "oops"
    assert schema_problem(data) == ("/graphs/forward/nodes/3", "must be array, not string")
    data = real("net")
    del data["warnings"]
    assert schema_problem(data) == ("", 'missing field "warnings"')
    data = real("net")
    data["check"]["cases"][0]["surprise"] = 1
    assert schema_problem(data) == ("/check/cases/0", 'unexpected field "surprise"')
    data = real("net")
    data["graphs"]["forward"]["nodes"][0][1] = [True]
    assert schema_problem(data) == ("/graphs/forward/nodes/0/1/0", "must be integer, not boolean")


def test_the_validator_refuses_a_schema_keyword_it_does_not_know() -> None:
    """A schema change that uses a keyword the small validator lacks fails here, not silently at load."""
    with pytest.raises(NotImplementedError, match="pattern"):
        schema_validator.SchemaCompiler({}).compile({"type": "string", "pattern": "^a"})
    schema_validator.SchemaCompiler(SCHEMA).compile(SCHEMA)  # the real schema uses only what it knows


# -- fuzz: mutate real runs many ways ------------------------------------------------------------------------
#: values of every JSON kind, and ids just out of range
ODD_VALUES: list[Any] = [None, True, False, 0, -1, -7, 1, 2, 10**9, 0.5, -2.5, "", "x", [], [0], {}, {"a": 1}]


def _paths(value: Any) -> Iterator[tuple[Any, ...]]:
    """Every place in ``value`` (iteratively, and not inside a nest a mutation made: it may be 2000 deep)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        yield path
        if len(path) > 12:
            continue
        children = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        stack.extend((child, (*path, key)) for key, child in children)


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def mutate(data: dict[str, Any], rng: random.Random, deepest: int = 2000) -> str:
    """Change ``data`` in place in one random way; returns what was done."""
    path = rng.choice(list(_paths(data))[1:])
    parent, key = _get(data, path[:-1]), path[-1]
    old = parent[key]
    how = rng.choice(["delete", "swap", "swap", "shift", "shift", "nest", "duplicate", "empty"])
    if how == "delete":
        del parent[key]
    elif how == "swap":
        parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    elif how == "shift" and isinstance(old, int) and not isinstance(old, bool):
        parent[key] = old + rng.choice([-2, -1, 1, 2, 50, 10**6])
    elif how == "nest":
        parent[key] = _deep(rng.choice([5, 80, deepest]))
    elif how == "duplicate" and isinstance(old, list) and old:
        old.append(rng.choice(old))  # shared, not copied: it may be a 2000-deep nest
    elif how == "empty" and isinstance(old, (list, dict, str)):
        parent[key] = type(old)()
    else:
        parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
        how = "swap"
    return f"{how} at /{'/'.join(map(str, path))} (was {reprlib.repr(old)})"


def use_everything(run: TraceRun) -> None:
    """What a loaded run is for: its summary, report, DOT of every graph, text report and JSON."""
    repr(run)
    run.summary()
    assert run.verdict.label
    run.to_html()
    run.to_dot()
    for method in run.graphs:
        run.to_dot(method)
        run.graphs[method].text()
    if run.check is not None:
        for case in run.check.cases:
            if case.graph is not None:
                case.graph.text()
    format_run(run)
    run.to_json()


@pytest.mark.parametrize("name", SMALL)
def test_every_mutated_run_loads_and_renders_or_raises_one_value_error(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the IR text stands in for Graphviz's SVG: the same graph walk, without a `dot` process per mutation
    monkeypatch.setattr(html_render.shutil, "which", lambda _: None)
    base = real(name)
    rng = random.Random(f"tracejit-{name}")
    crashes: list[str] = []
    refused = 0
    for _ in range(MUTATIONS):
        data = copy.deepcopy(base)
        what = "; ".join(mutate(data, rng) for _ in range(rng.choice([1, 1, 1, 2, 3])))
        try:
            run = TraceRun.from_json(data)
        except ValueError as exc:
            refused += 1
            text = str(exc)
            assert text.startswith(("not a valid jupyter-tracejit run: at ", "not a jupyter-tracejit run", "this run"))
            continue
        except Exception as exc:  # the point: anything but a ValueError is a crash
            crashes.append(f"{what}: from_json raised {type(exc).__name__}: {exc}")
            continue
        try:
            use_everything(run)
        except Exception as exc:
            crashes.append(f"{what}: loaded, then {type(exc).__name__}: {exc}")
    assert not crashes, f"{len(crashes)} of {MUTATIONS} mutations crashed:\n" + "\n".join(crashes[:15])
    assert 0 < refused < MUTATIONS  # both outcomes happen: the mutations are neither all harmless nor all fatal


@pytest.mark.parametrize("name", ["net", "loop"])
def test_the_schema_check_agrees_with_jsonschema(name: str) -> None:
    """The small validator says what the reference implementation says, on valid and damaged runs alike."""
    reference = jsonschema.Draft7Validator(SCHEMA)
    base = real(name)
    rng = random.Random(f"agree-{name}")
    disagreements = []
    for _ in range(150):
        data = copy.deepcopy(base)
        what = mutate(data, rng, deepest=80)  # deeper, jsonschema itself dies of RecursionError
        ours = schema_problem(data) is None
        theirs = reference.is_valid(data)
        if ours != theirs:
            disagreements.append(f"{what}: ours {ours}, jsonschema {theirs}")
    assert not disagreements, "\n".join(disagreements[:10])


# -- the rules the front end shares --------------------------------------------------------------------------
SHARED = json.loads((FIXTURES / "references.cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", SHARED, ids=[c["name"] for c in SHARED])
def test_the_shared_damaged_runs_are_refused_with_their_words(case: dict[str, Any]) -> None:
    """``references.cases.json`` (tests/frontend_fixtures.py) is what the TypeScript check must also say."""
    data = apply_edits(real(case["run"]), case["edits"])
    assert schema_problem(data) is None  # only the ids are wrong
    with pytest.raises(RunInvalid) as info:
        TraceRun.from_json(data)
    assert (info.value.location, info.value.detail) == (case["at"], case["detail"])


class CountedRow(list):  # type: ignore[type-arg]
    """A node row that counts how often its parent (column 7) is read."""

    parent_reads = 0

    def __getitem__(self, index: Any) -> Any:
        if index == 7:
            CountedRow.parent_reads += 1
        return super().__getitem__(index)


def test_a_parent_cycle_is_found_in_one_pass_over_a_long_chain() -> None:
    data = real("chain")
    nodes = data["graphs"]["forward"]["nodes"]
    for i, row in enumerate(nodes):
        row[7] = i - 1  # every node inside the one before it: 900 deep
    nodes[0][7] = len(nodes) - 1  # and the first inside the last
    nodes[:] = [CountedRow(row) for row in nodes]
    CountedRow.parent_reads = 0
    assert reference_problem(data) == (
        "/graphs/forward/nodes/0/7",
        "node 0 is inside itself (its parents go round in a circle)",
    )
    # each parent read about once (a walk up from every node would read it 900 x 900 / 2 times)
    assert len(nodes) > 800 and CountedRow.parent_reads <= 3 * len(nodes)
