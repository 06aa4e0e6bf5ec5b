"""``tracejit migrate``: many models exported (a trace beside each) and reported in one table, one offline page with
each model's explorer beside it, and the JSON a later run compares against (exit 1 on a regression, 2 on a usage
error, before anything runs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.migrate.report import Coverage, MigrationReport, ModelResult, Place, Specialized, compare

from .cli_run import run_cli
from .models import line_in

needs_export = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))

MODELS = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Rows(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        for i in range(x.size(0)):  # specialises x's dim 0
            x = x + i
        return self.fc(x)


def branchy(x):
    if x.sum() > 0:  # refused: a branch on a value
        return x.sin()
    return x.cos()
"""

LIST = """\
[defaults]
draft = "never"

[[models]]
target = "models/zoo.py:Net"
inputs = "torch.randn(3, 8)"
dynamic = ["x:0=batch[2,64]"]

[[models]]
name = "rows"
target = "models/zoo.py:Rows"
inputs = "torch.randn(3, 8)"
dynamic = ["x:0"]

[[models]]
target = "models/zoo.py:branchy"
inputs = "torch.randn(3, 8)"
"""


def tracejit(folder: Path, *args: str) -> tuple[int, str, str]:
    return run_cli(folder, "migrate", *args)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "zoo.py").write_text(MODELS)
    (tmp_path / "models.toml").write_text(LIST)
    return tmp_path


@needs_export
def test_a_list_of_models_is_one_table_one_page_and_a_page_per_model(project: Path) -> None:
    code, out, err = tracejit(project, "models.toml", "-o", "report.html", "--json", "report.json")
    assert code == 0 and err == "", out + err
    lines = out.splitlines()
    assert re.match(r"model\s+status\s+refused at / specialised\s+check\s+trace ops\s+time", lines[0]), lines[0]
    net, rows, branchy = lines[1:4]
    assert re.match(r"Net\s+ok\s+-\s+passed \(3 input sets\)\s+100% \(2/2\)\s+[\d.]+ s", net), net
    assert re.match(rf"rows\s+warnings\s+x\.size\(\)\[0\] = 3 at zoo\.py:{line_in(MODELS, 'specialises')}\s", rows)
    refused = line_in(MODELS, "refused: a branch")
    assert re.match(rf"branchy\s+refused\s+zoo\.py:{refused}: GuardOnDataDependentSymNode", branchy), branchy
    assert lines[4] == "3 models: 1 ok, 1 warnings, 1 refused"
    report = MigrationReport.read(json.loads((project / "report.json").read_text()), "report.json")
    by_name = {m.name: m for m in report.models}
    assert by_name["rows"].specialized[0].place.line == line_in(MODELS, "specialises")
    assert by_name["rows"].coverage is not None and by_name["rows"].coverage.share == 1.0
    assert by_name["branchy"].refusal is not None and by_name["branchy"].refusal.line == refused
    assert by_name["branchy"].check == "not_run" and by_name["Net"].check == "passed"
    assert set(by_name["Net"].timings) >= {"export", "check", "trace", "total"}
    # the page: a row per model, each name linking its explorer page, written beside it
    page = (project / "report.html").read_text()
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', page)
    assert links == [("report_files/Net.html", "Net"), ("report_files/rows.html", "rows"),
                     ("report_files/branchy.html", "branchy")]  # fmt: skip
    for href, _ in links:
        assert 'id="tracejit-run"' in (project / href).read_text()
    assert 'data-status="refused"' in page and "Content-Security-Policy" in page


@needs_export
def test_a_regression_against_the_baseline_exits_1_and_says_what_regressed(project: Path) -> None:
    code, _, _ = tracejit(project, "models.toml", "--only", "Net", "--only", "rows", "--json", "base.json")
    assert code == 0
    code, out, _ = tracejit(project, "models.toml", "--only", "Net", "--only", "rows", "--baseline", "base.json")
    assert code == 0, out
    assert "against base.json: 2 same" in out and "REGRESSED" not in out and re.search(r"^Net .* same$", out, re.M)
    # Net's forward now loops over its batch dim, which is declared dynamic: export refuses it
    zoo = project / "models" / "zoo.py"
    zoo.write_text(MODELS.replace("return torch.relu(self.fc(x))", "return torch.relu(self.fc(x)) * len(x)"))
    code, out, _ = tracejit(
        project, "models.toml", "--only", "Net", "--only", "rows", "--baseline", "base.json", "-o", "now.html"
    )
    assert code == 1, out
    assert re.search(r"^REGRESSED Net: was ok, now refused at zoo\.py:\d+", out, re.M), out
    assert "REGRESSED rows" not in out and "against base.json: 1 regressed, 1 same" in out
    page = (project / "now.html").read_text()
    assert '<p class="change-regressed">1 regressed against base.json</p>' in page
    assert re.search(r'<span class="change-regressed">regressed</span><ul><li>was ok, now refused at zoo\.py:\d+', page)


def result(name: str, status: str = "ok", share: float = 1.0, dims: tuple[str, ...] = ()) -> ModelResult:
    found = [Specialized(d, 3, Place("m.py", 7)) for d in dims]
    return ModelResult(name, "m.py:Net", status, specialized=found, coverage=Coverage(9, 10, share))


def test_what_counts_as_a_regression() -> None:
    before = MigrationReport(
        [result("a"), result("b", "warnings"), result("c", share=0.9), result("d"), result("e", dims=("x.size()[0]",))]
    )
    now = MigrationReport(
        [
            result("a", "refused"),  # worse status
            result("b", "ok"),  # better status
            result("c", share=0.895),  # within the tolerance
            result("d", dims=("x.size()[1]",)),  # a dim newly specialised
            result("e", share=0.5),  # fewer ops matched, the specialisation gone
            result("f"),  # not in the baseline
        ]
    )
    changes = {c.name: c for c in compare(now, before, coverage_drop=0.01)}
    assert {n: c.kind for n, c in changes.items()} == {
        "a": "regressed", "b": "improved", "c": "same", "d": "regressed", "e": "regressed", "f": "new",
    }  # fmt: skip
    assert changes["a"].reasons == ["was ok, now refused"]
    assert changes["d"].reasons == ["x.size()[1] now specialised to 3 at m.py:7"]
    assert changes["e"].reasons == ["trace ops matched 100% -> 50%"]
    round_tripped = MigrationReport.read(json.loads(json.dumps(now.to_json())), "r.json")
    assert round_tripped == now


@needs_export
def test_a_python_list_builds_its_models_and_a_model_that_fails_to_load_is_a_row(tmp_path: Path) -> None:
    (tmp_path / "zoo.py").write_text(MODELS)
    (tmp_path / "listing.py").write_text(
        "import torch\nfrom zoo import Net\n\n"
        "def broken():\n    raise RuntimeError('no weights here')\n\n"
        "MODELS = [\n"
        "    {'name': 'net', 'build': Net, 'inputs': (torch.randn(3, 8),), 'draft': 'never',\n"
        "     'dynamic_shapes': {'x': {0: torch.export.Dim('batch', min=2, max=16)}}},\n"
        "    {'name': 'broken', 'build': broken, 'inputs': torch.randn(3, 8)},\n"
        "]\n"
    )
    code, out, _ = tracejit(tmp_path, "listing.py:MODELS", "--json", "r.json")
    assert code == 0, out
    assert re.search(r"^net\s+ok\s", out, re.M) and re.search(r"^broken\s+not run\s+not run: ", out, re.M), out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["models"][0]["dynamic"] == ["{'x': {0: Dim('batch', min=2, max=16)}}"]
    assert "build() failed: RuntimeError: no weights here" in data["models"][1]["refusal"]["message"]


@pytest.mark.parametrize(
    ("listing", "args", "expected"),
    [
        ('[[models]]\ntarget = "models/zoo.py:Net"\ninputs = "x"\nshape = 3\n', (),
         "models.toml, models[0]: unknown key 'shape'; the keys are: target, inputs, name"),
        ('[[models]]\ntarget = "models/nope.py:Net"\ninputs = "x"\n', (),
         "models.toml, models[0]: target 'models/nope.py:Net': no such Python file"),
        ('[[models]]\ntarget = "models/zoo.py:Net"\ninputs = "x"\ndynamic = ["x:zero"]\n', (),
         "models.toml, models[0]: --dynamic 'x:zero' is not of the form NAME:DIM"),
        ('[[models]]\ntarget = "models/zoo.py:Net"\ninputs = "x"\n' * 2, (), "two models are named 'Net'"),
        ("[[models]\n", (), "models.toml is not valid TOML"),
        (LIST, ("--baseline", "missing.json"), "--baseline missing.json: no such file"),
        (LIST, ("--only", "Bert"), "--only Bert: no model of that name in the lists (they are: Net, rows, branchy)"),
        (LIST, ("-o", "models.toml"), "-o models.toml: the report is an HTML page"),
        (LIST, ("--json", "models.toml"), "--json models.toml would overwrite models.toml"),
    ],
)  # fmt: skip
def test_a_wrong_list_or_option_is_a_usage_error_before_anything_runs(
    project: Path, listing: str, args: tuple[str, ...], expected: str
) -> None:
    (project / "models.toml").write_text(listing)
    code, out, err = tracejit(project, "models.toml", *args)
    assert code == 2 and out == "", out
    assert expected in err, err
    assert not (project / "report.json").exists()
