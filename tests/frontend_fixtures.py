"""The fixtures the TypeScript unit tests read (``labextension/test/fixtures/``), written by the Python model.

Real runs as JSON, the facts the Python model derives from them (node counts, scopes, fold targets, divergences,
source lines), and DOT cases (a run, a view, and the DOT ``render/dot.py`` writes for it), which the TypeScript
DOT builder must reproduce byte for byte. The files are committed so ``npm test`` runs on its own;
``tests/test_frontend_contract.py`` fails when they are stale. Regenerate them with::

    python -m tests.frontend_fixtures
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.render.dot import visible_dot
from jupyter_tracejit.render.groups import GroupTree

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "labextension" / "test" / "fixtures"


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


HOSTILE_NAME = 'a"b\\N\n<script>alert(1)</script>&amp;🙂' + "x" * 60


class Hostile(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.add_module(HOSTILE_NAME, nn.Linear(3, 3))
        self.register_buffer("scale", torch.tensor(2.5))

    def forward(self, x):
        y = getattr(self, HOSTILE_NAME)(x) * self.scale
        return y.clamp(min=-1e-7, max=2**63 - 1), y.view(-1, 3).transpose(0, 1) + 0.5


def long_chain(x):
    # 300 ops in one scope and no module structure: the view splits them into sections (SECTION_SIZE ops each)
    for _ in range(300):
        x = x + 1
    return x


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
            "hostile": tj.trace(Hostile(), (torch.rand(2, 3),), check_trace=False),
            "chain": tj.trace(long_chain, (torch.rand(2),), check_trace=False),
            # a frozen branch, then a loop over rows: causes on three lines, each with its warning
            "causes": tj.trace(branch_then_rows, (torch.ones(2, 3),), check_inputs=[(-torch.ones(4, 3),)]),
            # a loop over a size downstream of a frozen branch: every op of it reads the branch's values
            "behind": tj.trace(branch_then_loop, (torch.rand(3, 8),), check_inputs=[(-torch.rand(5, 8),)]),
            # a device baked in: a portability note where it was traced, a warning for another target device
            "portable": tj.trace(positions_added, (torch.ones(2, 3),)),
            "served_elsewhere": tj.trace(positions_added, (torch.ones(2, 3),), target_device="cuda"),
        }


def branch_then_rows(x):
    if x.sum() > 0:
        x = x * 2
    out = x[0]
    for row in x:
        out = out + row.relu()
    return out


def branch_then_loop(x):
    x = x.relu() if x.sum() > 0 else x.abs()  # the frozen branch
    out = x[0]
    for i in range(x.size(0)):
        out = out + x[i].relu()
    return out


def positions_added(x):
    return x + torch.arange(x.shape[-1], device=x.device)


# -- machine-independent JSON ---------------------------------------------------------------------------------
#: this file as the fixtures write it (the file of the traced code: the checkout's prefix removed)
FIXTURE_FILE = "tests/frontend_fixtures.py"


def _prefixes() -> list[tuple[str, str]]:
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    found = [(str(ROOT) + os.sep, ""), (torch_dir + os.sep, "<torch>/")]
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        found.append((prefix + os.sep, "<python>/"))
    return sorted(found, key=lambda p: -len(p[0]))


def normalized(data: Any, prefixes: list[tuple[str, str]]) -> Any:
    """Paths of this checkout, torch and Python written so the fixtures do not depend on the machine."""
    if isinstance(data, str):
        for prefix, short in prefixes:
            data = data.replace(prefix, short)
        return data
    if isinstance(data, list):
        return [normalized(v, prefixes) for v in data]
    if isinstance(data, dict):
        return {k: normalized(v, prefixes) for k, v in data.items()}
    return data


def _without_tracebacks(data: Any) -> Any:
    """Tracebacks name lines of this package's own code: they would make every edit a fixture change."""
    if isinstance(data, dict):
        return {k: "" if k == "traceback" else _without_tracebacks(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_without_tracebacks(v) for v in data]
    return data


def portable(run: tj.TraceRun) -> dict[str, Any]:
    data = run.to_json()
    data.update(created="2026-01-01T00:00:00+00:00", run_id=f"fixture-{run.target.name}"[:40], timings={})
    if data.get("export"):
        # torch's log during an export: how much it says depends on what the process exported before
        data["export"]["log"] = ""
    return normalized(_without_tracebacks(data), _prefixes())


# -- what the TypeScript side must derive on its own ------------------------------------------------------------
def facts(run: tj.TraceRun) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ok": run.ok,
        "summary": run.summary(),
        "problems_text": run.verdict.problems_text,
        "graphs": {},
    }
    for name, g in run.graphs.items():
        out["graphs"][name] = {
            "nodes": len(g.nodes),
            "ops": sum(1 for n in g.nodes if not n.foldable),
            "kinds": g.kinds(),
            "scopes": {p: s.type for p, s in g.scopes.items()},
            "scope_children": {p: s.children for p, s in g.scopes.items()},
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
    out["findings"] = [[f.kind, f.portability, f.is_problem] for f in run.findings]
    out["problems"] = run.verdict.problems
    return out


def dot_views(runs: dict[str, tj.TraceRun]) -> list[dict[str, Any]]:
    """Views of the fixture runs: every group open or some closed, folded or not, highlighted, titled."""
    net, mlp, hostile, loop, chain = (runs[n].graph for n in ("net", "mlp", "hostile", "loop", "chain"))
    assert net is not None and mlp is not None and hostile is not None and loop is not None and chain is not None
    net_groups = GroupTree(net)
    repeat = next(gid for gid, g in net_groups.groups.items() if g.repeat)
    chain_groups = GroupTree(chain)
    sections = [gid for gid, g in chain_groups.groups.items() if g.section_of is not None]
    mlp_groups = GroupTree(mlp)
    first_bucket = mlp_groups.groups[""].children[0]
    view_op = next(n.id for n in net.nodes if n.kind == "aten::view")
    constant = next(n.id for n in net.nodes if n.kind == "prim::Constant" and net.consumers(n))
    in_block_1 = next(n.id for n in net.nodes if n.scope.startswith("blocks.1") and not n.foldable)
    loop_case = runs["loop"].check.cases[0] if runs["loop"].check else None
    divergent = {d.trace_node: [d.kind] for d in loop_case.diff.divergences} if loop_case and loop_case.diff else {}
    everything = lambda g: sorted(GroupTree(g).groups)  # noqa: E731
    return [
        {"name": "net-open", "run": "net", "expanded": everything(net)},
        {"name": "net-unfolded", "run": "net", "expanded": everything(net), "fold": False, "showShapes": False},
        {
            "name": "net-collapsed-highlighted",
            "run": "net",
            "expanded": [g for g in everything(net) if g != "blocks.1"],
            "highlights": {str(view_op): ["selected", "root"], str(constant): ["warning"], str(in_block_1): ["hazard"]},
            "rankdir": "LR",
            "title": 'Net: "trace" \\ check',
        },
        {"name": "net-root-only", "run": "net", "expanded": [""]},
        {"name": "net-repeat-folded", "run": "net", "expanded": [g for g in everything(net) if g != repeat]},
        {"name": "chain-sections", "run": "chain", "expanded": ["", sections[1]]},
        {"name": "chain-open", "run": "chain", "expanded": everything(chain), "showShapes": False},
        {"name": "mlp-one-bucket-open", "run": "mlp", "expanded": ["", first_bucket]},
        {"name": "mlp-open", "run": "mlp", "expanded": everything(mlp)},
        {
            "name": "hostile-open",
            "run": "hostile",
            "expanded": everything(hostile),
            "highlights": {"0": ["odd class!"], "1": [""]},
        },
        {"name": "hostile-closed", "run": "hostile", "expanded": [""]},
        # tooltips name a file the run names as every view does ("cell [9], line 7"), others by their base name
        {"name": "net-file-names", "run": "net", "expanded": everything(net), "fileNames": {FIXTURE_FILE: "cell [9]"}},
        {
            "name": "loop-divergences",
            "run": "loop",
            "expanded": everything(loop),
            "highlights": {str(k): v for k, v in divergent.items() if k is not None},
        },
    ]


def dot_of(graph: Any, view: dict[str, Any]) -> str:
    return visible_dot(
        graph,
        GroupTree(graph),
        expanded=set(view["expanded"]),
        fold=view.get("fold", True),
        highlights={int(k): v for k, v in view.get("highlights", {}).items()},
        show_shapes=view.get("showShapes", True),
        rankdir=view.get("rankdir", "TB"),
        title=view.get("title"),
        file_names=view.get("fileNames"),
    ).dot


def _nest(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


#: damaged runs that still match the run schema, but whose ids point nowhere: (name, fixture run, edits as
#: [JSON pointer, new value], the place the check must name). Both sides must refuse each with the same words
#: (core/validate.py, labextension/src/model/references.ts): references.cases.json holds the words Python gives.
REFERENCE_CASES: list[tuple[str, str, list[list[Any]], str]] = [
    ("a node input", "net", [["/graphs/forward/nodes/3/1/0", 999]], "/graphs/forward/nodes/3/1/0"),
    ("a node output", "net", [["/graphs/forward/nodes/3/2", [5, -1]]], "/graphs/forward/nodes/3/2/1"),
    ("a value's producer", "net", [["/graphs/forward/values/0/6", 4000]], "/graphs/forward/values/0/6"),
    ("a producer that does not output its value", "net", [["/graphs/forward/values/0/6", 0]],
     "/graphs/forward/values/0/6"),
    ("a value read before it is made", "net", [["/graphs/forward/nodes/1/1", [5]]], "/graphs/forward/nodes/1/1/0"),
    ("a node's kind string", "net", [["/graphs/forward/nodes/0/0", 100000]], "/graphs/forward/nodes/0/0"),
    ("a node's title string", "net", [["/graphs/forward/nodes/0/10", 100000]], "/graphs/forward/nodes/0/10"),
    ("a value's dtype string", "net", [["/graphs/forward/values/2/3", 96]], "/graphs/forward/values/2/3"),
    ("a node's stack", "net", [["/graphs/forward/nodes/1/4", 6]], "/graphs/forward/nodes/1/4"),
    ("a frame of a stack", "net", [["/graphs/forward/stacks/0/2", 12]], "/graphs/forward/stacks/0/2"),
    ("a stack's user frame", "net", [["/graphs/forward/stacks/0/0", 5]], "/graphs/forward/stacks/0/0"),
    ("a frame's file string", "net", [["/graphs/forward/frames/0/0", -3]], "/graphs/forward/frames/0/0"),
    ("a parent cycle", "net", [["/graphs/forward/nodes/2/7", 2]], "/graphs/forward/nodes/2/7"),
    ("a parent out of range", "net", [["/graphs/forward/nodes/2/7", 35]], "/graphs/forward/nodes/2/7"),
    ("a block holding a stranger", "net", [["/graphs/forward/nodes/0/6", [[[], [], [1]]]]],
     "/graphs/forward/nodes/0/6/0/2/0"),
    ("a block's input", "net", [["/graphs/forward/nodes/0/6", [[[999], [], []]]]], "/graphs/forward/nodes/0/6/0/0/0"),
    ("a graph input", "net", [["/graphs/forward/inputs/0", 37]], "/graphs/forward/inputs/0"),
    ("a graph output", "net", [["/graphs/forward/outputs/0", -1]], "/graphs/forward/outputs/0"),
    ("a scope's type string", "net", [["/graphs/forward/scopes/0/1", 5000]], "/graphs/forward/scopes/0/1"),
    ("a warning's node", "net", [["/warnings/1/node_ids", [3, 999]]], "/warnings/1/node_ids/1"),
    ("a warning of a method with no graph", "net", [["/warnings/1/method", "backward"]], "/warnings/1/node_ids/0"),
    ("a finding's node", "causes", [["/findings/0/node_ids/2", 14]], "/findings/0/node_ids/2"),
    ("a divergence's check node", "loop", [["/check/cases/0/diff/divergences/0/1", 4000]],
     "/check/cases/0/diff/divergences/0/1"),
    ("a matched run past the end", "loop", [["/check/cases/0/diff/matched_runs", [[0, 0, 1000000]]]],
     "/check/cases/0/diff/matched_runs/0"),
    ("a constant diff's check node", "loop",
     [["/check/cases/0/diff/constant_diffs", [{"trace_node": 0, "check_node": 999, "message": "", "max_abs": None}]]],
     "/check/cases/0/diff/constant_diffs/0/check_node"),
    ("a check graph's node input", "causes", [["/check/cases/0/graph/nodes/2/1/0", 500]],
     "/check/cases/0/graph/nodes/2/1/0"),
    ("attributes nested too deeply", "net", [["/graphs/forward/nodes/0/5", {"value": _nest(70)}]],
     "/graphs/forward/nodes/0/5"),
    ("a tensor constant of another form", "causes", [["/graphs/forward/nodes/0/5/value/tensor/shape", 3]],
     "/graphs/forward/nodes/0/5"),
]  # fmt: skip


def apply_edits(data: Any, edits: list[list[Any]]) -> Any:
    """``data`` with each ``[JSON pointer, value]`` set (``labextension/test/references.test.ts`` does the same)."""
    for path, value in edits:
        keys = [k.replace("~1", "/").replace("~0", "~") for k in path.split("/")[1:]]
        parent = data
        for key in keys[:-1]:
            parent = parent[int(key) if isinstance(parent, list) else key]
        last = keys[-1]
        parent[int(last) if isinstance(parent, list) else last] = value
    return data


def reference_cases(runs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The cases of :data:`REFERENCE_CASES` with the place and words the Python check gives for each."""
    from jupyter_tracejit.core.validate import reference_problem, schema_problem

    cases = []
    for name, run, edits, at in REFERENCE_CASES:
        damaged = apply_edits(json.loads(json.dumps(runs[run])), edits)
        assert schema_problem(damaged) is None, (name, schema_problem(damaged))
        problem = reference_problem(damaged)
        assert problem is not None and problem[0] == at, (name, problem)
        cases.append({"name": name, "run": run, "edits": edits, "at": at, "detail": problem[1]})
    return cases


def fixture_files() -> dict[str, str]:
    """File name -> text of every fixture."""
    files: dict[str, str] = {}
    runs = {}
    for name, run in {**make_runs(), **later_runs()}.items():
        data = portable(run)
        runs[name] = tj.TraceRun.from_json(data)  # facts and DOT from the machine-independent run
        files[f"{name}.run.json"] = json.dumps(data, allow_nan=False, indent=1, ensure_ascii=False) + "\n"
        files[f"{name}.facts.json"] = (
            json.dumps(facts(runs[name]), allow_nan=False, indent=1, ensure_ascii=False) + "\n"
        )
    cases = [{**view, "dot": dot_of(runs[view["run"]].graph, view)} for view in dot_views(runs)]
    files["dot.cases.json"] = json.dumps(cases, indent=1, ensure_ascii=False) + "\n"
    saved = {name: json.loads(text) for name, text in files.items() if name.endswith(".run.json")}
    references = reference_cases({name.removesuffix(".run.json"): data for name, data in saved.items()})
    files["references.cases.json"] = json.dumps(references, indent=1, ensure_ascii=False) + "\n"
    return files


def write(directory: Path = FIXTURES) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.json"):
        stale.unlink()
    written = []
    for name, text in fixture_files().items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


class ExportMLP(nn.Module):
    """An MLP exported with a dynamic batch (``Dim``), then a loop over a ``Dim.AUTO`` size that specialises it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x, steps):
        h = self.fc2(torch.relu(self.fc1(x)))
        # a loop over steps' Dim.AUTO size specialises it to 3; its add is the specialisation's node
        return h + sum([i for i in range(steps.size(0))])


def exported_mlp() -> tj.TraceRun:
    """The torch.export fixture (after the traced code above, so their lines stay put): symbols (the batch), a
    specialisation at its line and a ``dim_specialized`` finding."""
    from jupyter_tracejit.core.export.request import export  # internal until tj.export is public

    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=2, max=64)
    return export(
        ExportMLP(),
        (torch.ones(4, 8), torch.ones(3)),
        dynamic_shapes={"x": {0: batch}, "steps": {0: torch.export.Dim.AUTO}},
    )


class ShapeAndFrozen(nn.Module):
    """What a trace and an export of one model record differently, line by line: a size the trace computes (shape
    arithmetic), a ``contiguous`` export leaves out, and a size the trace freezes into a tensor constant."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.out = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        h = h.view(h.size(0), -1).contiguous()
        return self.out(h) + torch.tensor(x.shape[0])


def compared_export() -> tj.TraceRun:
    """The trace-versus-export fixture (``compare_trace=True``, after the fixtures above so their lines stay put):
    matched ops, and lines that differ for shape arithmetic, a no-op and a frozen value."""
    torch.manual_seed(0)
    return tj.export(ShapeAndFrozen(), (torch.ones(4, 8),), compare_trace=True)


class DiffConvNet(nn.Module):
    """A small convnet at two versions for the Diff view: the second changes the block's activation (one root op,
    named by its module) and widens the stem (parameters of another shape, the same ops)."""

    def __init__(self, act: type[nn.Module] = nn.ReLU, width: int = 8) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(width, 8, 3), act())
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.block(self.stem(x)).mean((2, 3)))


def diffed_convnet() -> tj.TraceRun:
    """The Diff view fixture (after the fixtures above so their lines stay put): ``tj.diff`` of the convnet and its
    next version, as the new run carrying the diff (what a displayed ``tj.diff`` saves)."""
    images = torch.ones(1, 3, 10, 10)
    torch.manual_seed(0)
    old = tj.trace(DiffConvNet(), (images,))
    torch.manual_seed(0)
    new = tj.trace(DiffConvNet(act=nn.GELU, width=16), (images,))
    return tj.diff(old, new).explorer_run()


class BreakingBlock(nn.Module):
    """A block that prints (a graph break in the block's frame and its caller's) and branches on a value (a break
    at the ``if``), compiled with further calls of other lengths (a recompilation): the compile views' fixture."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.out = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        print("block", tuple(h.shape))
        if h.sum() > 0:
            h = h * 2
        return self.out(h)


def compiled_block() -> tj.TraceRun:
    """The torch.compile fixture (after the fixtures above so their lines stay put): regions between two breaks,
    and two further calls of other lengths, the first of which recompiles (dynamic=None makes the dim dynamic)."""
    import contextlib
    import io

    torch.manual_seed(0)
    # torch numbers frames process-wide (compile ids 0/0, 1/0...): from 0, as in a fresh process, whatever compiled
    # before in this one (a test run)
    torch._dynamo.reset()
    model = BreakingBlock()
    with contextlib.redirect_stdout(io.StringIO()):  # the model's own print, not the fixture writer's output
        run = tj.compile(model, (torch.ones(2, 8),), calls=[(torch.ones(3, 8),), (torch.ones(5, 8),)])
    # torch's log (how much it says depends on what the process compiled before) and seconds: not the model's
    run.compile.log = ""
    for region in run.compile.regions:
        region.compile_time = 0.0
    return run


def later_runs() -> dict[str, tj.TraceRun]:
    """The fixtures whose models are defined after the fixture writer (their lines must not move the others')."""
    return {
        "exported": exported_mlp(),
        "compared": compared_export(),
        "diffed": diffed_convnet(),
        "compiled": compiled_block(),
    }


if __name__ == "__main__":
    # imported under its package name, as the tests import it: the traced classes' qualified names (which the
    # graphs record) must not depend on how the fixtures were written
    from tests.frontend_fixtures import write as write_fixtures

    for path in write_fixtures():
        print(f"wrote {path.relative_to(ROOT)}")
