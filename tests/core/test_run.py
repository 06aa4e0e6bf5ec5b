"""TraceRun as data: its JSON follows run.schema.json and round-trips byte for byte, on real runs of every kind."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.core import probe_report as probe_module
from jupyter_tracejit.core.run import SCHEMA_VERSION, TraceRun
from jupyter_tracejit.core.torchscript.options import SPECS, TraceOptions
from jupyter_tracejit.core.tracer_warnings import CATEGORIES
from jupyter_tracejit.core.verdict import Verdict

from ..models import LinearWithEncode

SCHEMA_PATH = Path(tj.__file__).parent / "core" / "run.schema.json"


def run_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text())


# Not the shared models (tests/models.py): the schema corpus needs a branch, a loop over modules and Dropout in
# train mode, so that the checked run carries a check, a probe and findings.
class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        if x.sum() > 0:
            x = x * 2
        for block in self.blocks:
            x = block(x)
        return self.drop(x)


class TwoMethods(LinearWithEncode):
    """tests.models.LinearWithEncode whose encode also makes a tensor in the traced code (on the input's device),
    which the schema corpus wants in a trace_module run."""

    def encode(self, x):
        return torch.relu(self.fc(x)) * torch.ones(3, device=x.device)


# Not tests.models.MarkupEverywhere: a submodule path with a newline and a backslash escape, to round-trip through
# the JSON of a run (the report's model has neither).
class Hostile(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.add_module('<script>alert("x")</script>\n\\N', nn.Linear(2, 2))

    def forward(self, x):
        return getattr(self, '<script>alert("x")</script>\n\\N')(x)


def loop(x):
    out = x[0]
    for row in x:
        out = out + row
    return out


def dict_output(x):
    return {"y": x}


def runs() -> dict[str, TraceRun]:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "checked": tj.trace(Net().train(), (torch.rand(2, 4),), check_inputs=[(-torch.rand(2, 4),)], probe=True),
            "loop": tj.trace(loop, (torch.rand(3, 4),), check_inputs=[(torch.rand(5, 4),)]),
            "error": tj.trace(dict_output, (torch.rand(2),)),
            "bad_options": tj.trace(loop, (torch.rand(3, 4),), check_tolerance=float("inf"), strict="yes"),
            "trace_module": tj.trace_module(
                TwoMethods(3), {"forward": (torch.rand(3),), "encode": (torch.rand(3),)}, check_inputs=[]
            ),
            "kwargs": tj.trace(lambda x, y: x + y, example_kwarg_inputs={"x": torch.rand(2), "y": torch.rand(2)}),
            "hostile": tj.trace(Hostile(), (torch.rand(2),)),
            "unchecked": tj.trace(torch.sin, (torch.rand(2),), check_trace=False),
        }


@pytest.fixture(scope="module")
def all_runs() -> dict[str, TraceRun]:
    return runs()


def test_every_kind_of_run_validates_against_the_schema(all_runs: dict[str, TraceRun]) -> None:
    validator = jsonschema.Draft7Validator(run_schema())
    jsonschema.Draft7Validator.check_schema(run_schema())
    for name, run in all_runs.items():
        data = json.loads(json.dumps(run.to_json(), allow_nan=False))
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]
        assert errors == [], (name, errors[:5])
    # the corpus covers what the schema describes
    assert all_runs["checked"].probe is not None and all_runs["checked"].findings
    assert not all_runs["loop"].check.ok and all_runs["error"].error is not None
    assert all_runs["bad_options"].error is not None and all_runs["bad_options"].error.type == "ArgumentError"


def test_to_json_is_canonical(all_runs: dict[str, TraceRun]) -> None:
    for name, run in all_runs.items():
        text = json.dumps(run.to_json(), allow_nan=False)
        again = json.dumps(TraceRun.from_json(json.loads(text)).to_json(), allow_nan=False)
        assert again == text, name


def test_scopes_come_back_in_the_same_order() -> None:
    """The scope table is in tree order, parents first (it used to come back in another order after a round trip)."""
    run = tj.trace(Net().eval(), (torch.rand(2, 4),))
    rows = run.to_json()["graphs"]["forward"]["scopes"]
    strings = run.to_json()["graphs"]["forward"]["strings"]
    paths = [strings[p] for p, _ in rows]
    assert paths == run.graph.scope_preorder() and paths[0] == ""
    assert all(paths.index(p.rpartition(".")[0]) < i for i, p in enumerate(paths) if "." in p)


#: trace options added after runs were first saved: a saved run may lack them, so the schema does not require them
OPTIONS_ADDED_LATER = frozenset({"target_device"})


def test_the_schema_knows_what_the_code_writes() -> None:
    defs = run_schema()["definitions"]
    assert defs["TraceWarning"]["properties"]["category"]["enum"] == list(CATEGORIES)
    assert set(defs["ProbeCase"]["properties"]["status"]["enum"]) == set(probe_module.STATUSES)
    assert run_schema()["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    recorded = defs["RecordedOptions"]
    assert list(recorded["properties"])[: len(SPECS)] == list(TraceOptions.names()) == list(SPECS)
    # options added after runs were first saved are not required: a run saved before one existed has none
    assert recorded["required"] == [name for name in SPECS if name not in OPTIONS_ADDED_LATER]


def test_bad_options_are_recorded_by_their_repr(all_runs: dict[str, TraceRun]) -> None:
    options = all_runs["bad_options"].options
    assert options["check_tolerance"] == "inf" and options["strict"] == "'yes'"
    assert all_runs["kwargs"].options["example_kwarg_inputs"] == ["x", "y"]


def test_from_json_refuses_what_is_not_a_run() -> None:
    with pytest.raises(ValueError, match="not a jupyter-tracejit run"):
        TraceRun.from_json({"kind": "other"})
    with pytest.raises(ValueError, match="schema_version 99"):
        TraceRun.from_json({"kind": "jupyter-tracejit.run", "schema_version": 99})


# -- the verdict the explorer's badge shows ------------------------------------------------------------------


class TrainBatchNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x)


def noisy_relu(x):
    warnings.warn("attention falls back to the math kernel", UserWarning, stacklevel=1)
    return torch.relu(x)


def deprecated_relu(x):
    warnings.warn("`old_flag` is deprecated and will be removed in v6", FutureWarning, stacklevel=1)
    return torch.relu(x)


def test_the_verdict_is_green_only_when_nothing_says_the_trace_is_wrong(all_runs: dict[str, TraceRun]) -> None:
    def verdict(run: TraceRun) -> tuple[str, str]:
        return run.verdict.level, run.verdict.label

    assert verdict(all_runs["unchecked"]) == ("ok", "ok")
    assert all_runs["unchecked"].verdict.reasons == ["nothing says the trace is wrong; not checked (check_trace=False)"]
    assert verdict(tj.trace(torch.sin, (torch.rand(2),))) == ("ok", "ok")
    # a library's own warning is counted (the Warnings tab lists it) but says nothing about the trace
    noisy = tj.trace(noisy_relu, (torch.rand(2),))
    assert verdict(noisy) == ("ok", "ok") and noisy.verdict.warnings == 1
    assert noisy.verdict.reasons == [
        "nothing says the trace is wrong; torch's check passed on 1 input set",
        "1 other warning, not about the trace",
    ]
    # another library's deprecation notice (torch reads every attribute of a traced module, so a deprecated
    # property warns) is listed with torch's own notice and not counted
    notice = tj.trace(deprecated_relu, (torch.rand(2),))
    assert verdict(notice) == ("ok", "ok") and notice.verdict.warnings == 0
    (own,) = [w for w in notice.warnings if "old_flag" in w.message]
    assert (
        own.category == "deprecated"
        and own.advice == "A deprecation notice raised while tracing; it does not change the trace."
    )
    # right for these inputs, but something says it may be wrong for others: amber, and run.ok stays True
    frozen = tj.trace(Net().eval(), (torch.rand(2, 4),))
    assert frozen.ok and verdict(frozen) == ("warning", "warnings")
    assert frozen.verdict.reasons == ["1 tracer warning (to_bool)"] and frozen.verdict.warnings == 1
    bn = tj.trace(TrainBatchNorm().train(), (torch.rand(3, 4),))
    assert bn.ok and verdict(bn) == ("warning", "warnings")
    assert any("BatchNorm traced in training mode" in r for r in bn.verdict.reasons)
    assert bn.verdict.findings == len([f for f in bn.findings if f.severity != "info"]) >= 1
    # torch's check fails, or tracing fails: red
    assert verdict(all_runs["loop"]) == ("error", "check failed")  # the check raised (torch raises there too)
    assert all_runs["loop"].verdict.reasons[0].startswith("torch's check raised: TracingCheckError: running the trace")
    diverged = tj.trace(Net().eval(), (torch.rand(2, 4),), check_inputs=[(-torch.rand(2, 4),)])
    assert diverged.error is None and verdict(diverged) == ("error", "check failed")
    assert diverged.verdict.roots >= 1
    assert diverged.verdict.reasons[0].startswith(f"torch's check failed: {diverged.verdict.roots} root divergence")
    assert diverged.verdict.reasons[0].endswith(", 1 output mismatch")
    assert verdict(all_runs["error"]) == ("error", "failed")
    assert all_runs["error"].verdict.reasons[0].startswith("tracing failed: RuntimeError: Encountering a dict")
    assert verdict(all_runs["bad_options"]) == ("error", "failed")
    # what the Warnings tab counts
    checked = all_runs["checked"].verdict
    assert checked.problems == checked.warnings + checked.findings + checked.probe
    assert checked.probe == len(all_runs["checked"].probe.findings)


class BranchyBatchNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        if x.sum() > 0:
            x = x * 2
        return self.bn(x)


def test_warnings_and_findings_are_counted_apart() -> None:
    """A GRU's header said "3 warnings" for one tracer warning and two findings: torch warned once, the others are
    ours. The summary (the CLI's and the text report's first line) names them apart, as the explorer's header does."""
    assert Verdict("warning", "warnings", warnings=1, findings=2).problems_text == "1 warning, 2 findings"
    assert Verdict("warning", "warnings", findings=1, probe=2).problems_text == "1 finding, 2 probe disagreements"
    assert Verdict("ok", "ok").problems_text == ""
    run = tj.trace(BranchyBatchNorm().train(), (torch.rand(3, 4),))
    verdict = run.verdict
    assert verdict.warnings == 1 and verdict.findings >= 1 and run.graph is not None
    assert f"; {len(run.graph)} nodes, {verdict.problems_text}, check passed" in run.summary()
    assert verdict.problems_text.startswith("1 warning, ") and "finding" in verdict.problems_text


def test_the_verdict_is_in_the_json_for_readers_without_the_model(all_runs: dict[str, TraceRun]) -> None:
    for run in all_runs.values():
        assert run.to_json()["verdict"] == run.verdict.to_json()
        assert TraceRun.from_json(run.to_json()).verdict == run.verdict


# -- display names of files ---------------------------------------------------------------------------------


def test_a_registered_namer_names_the_files_of_new_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_tracejit.core import run as run_module

    here = __file__
    monkeypatch.setattr(run_module, "_FILE_NAMER", [])
    run_module.register_file_namer(lambda file: "cell [7]" if file == here else None)
    run = tj.trace(Net().eval(), (torch.rand(2, 4),))
    assert run.file_names == {here: "cell [7]"}  # only the files it names; torch's files are left alone
    (warning,) = run.user_warnings
    assert warning.file == here and run.to_json()["file_names"] == {here: "cell [7]"}
    assert TraceRun.from_json(run.to_json()).file_names == run.file_names

    def broken(file: str) -> str:
        raise RuntimeError("the shell went away")

    run_module.register_file_namer(broken)
    assert tj.trace(Net().eval(), (torch.rand(2, 4),)).file_names == {}  # a namer never breaks a trace
    run_module.register_file_namer(None)
    assert tj.trace(Net().eval(), (torch.rand(2, 4),)).file_names == {}


def test_outside_ipython_nothing_is_named() -> None:
    from jupyter_tracejit.cells import cell_name

    assert cell_name(__file__) is None
    assert tj.trace(Net().eval(), (torch.rand(2, 4),)).file_names == {}


# -- loading what was saved ------------------------------------------------------------------------------------


def test_load_reads_the_explorer_json_download(tmp_path: Path, all_runs: dict[str, TraceRun]) -> None:
    """graph/export.ts downloads ``JSON.stringify(run)``: no spaces, and whole floats written as integers."""
    for name, run in all_runs.items():
        data = run.to_json()
        text = json.dumps(data, separators=(",", ":"), allow_nan=False)
        text = text.replace('"check_tolerance":1e-05', '"check_tolerance":0.00001')  # as JavaScript writes it
        path = tmp_path / f"{name}.json"
        path.write_text(text, encoding="utf-8")
        loaded = TraceRun.load(path)
        assert loaded.to_json() == data, name
        assert loaded.verdict == run.verdict and loaded.summary() == run.summary()
