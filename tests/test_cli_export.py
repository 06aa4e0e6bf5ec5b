"""``tracejit export FILE.py:NAME``: torch.export from the command line, with the exit status of ``trace`` (0 ok,
1 a failed export or check, 2 a usage error) and nothing of torch's logs on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_tracejit.core.export.options import export_support_problem

from .cli_run import run_cli
from .models import LinearReLU, line_in, source_of

pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))

#: the file the commands export: LinearReLU of tests/models.py (a Linear and a ReLU, 4 wide), a loop over the rows
#: (its trip count a size the export fixes) and a branch on a value (an export refuses it)
MODEL = (
    "import torch\nimport torch.nn as nn\n\n\n"
    + source_of(LinearReLU)
    + """

class Rows(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        for i in range(x.size(0)):
            x = x + i
        return self.fc(x)


def branchy(x):
    if x.sum() > 0:
        return x.sin()
    return x.cos()
"""
)


def tracejit(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    (tmp_path / "model.py").write_text(MODEL)
    return run_cli(tmp_path, "export", *args)


def test_an_export_that_passes_exits_0_and_writes_its_run(tmp_path, capfd):
    code, out, err = tracejit(tmp_path, "model.py:LinearReLU", "--inputs", "torch.randn(3, 4)", "--json", "run.json")
    assert code == 0, out + err
    assert out.startswith("LinearReLU: ok;") and err == ""
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["backend"] == "export" and run["options"]["draft"] == "on_request"
    assert capfd.readouterr().err == ""


def test_a_dim_the_code_fixes_exits_1_with_the_line_and_the_failed_check(tmp_path):
    code, out, _ = tracejit(
        tmp_path, "model.py:Rows", "--inputs", "torch.randn(3, 8)", "--dynamic", "x:0", "--check-inputs",
        "[torch.randn(5, 8)]",
    )  # fmt: skip
    assert code == 1, out
    assert f"x.size()[0] became 3 at line {line_in(MODEL, 'for i in range(x.size(0)):')}" in out
    assert "check FAILED: 1 input set raised" in out.splitlines()[0]
    assert "Guard failed: x.size()[0] == 3" in out


def test_a_refused_export_exits_1_at_the_users_line_with_the_fix(tmp_path, capfd):
    code, out, err = tracejit(tmp_path, "model.py:branchy", "--inputs", "torch.ones(3)", "--draft", "never")
    assert code == 1 and err == ""
    assert out.startswith("branchy: FAILED (GuardOnDataDependentSymNode")
    assert f"at model.py:{line_in(MODEL, 'if x.sum() > 0:')}: if x.sum() > 0:" in out and "torch.cond" in out
    assert capfd.readouterr().err == ""


def test_compare_trace_reports_the_match(tmp_path):
    code, out, _ = tracejit(tmp_path, "model.py:LinearReLU", "--inputs", "torch.randn(3, 4)", "--compare-trace")
    assert code == 0, out
    assert "compared with a trace: 2 of 2 trace ops matched (100%" in out


def test_keyword_inputs_and_their_dims(tmp_path, capfd):
    code, out, err = tracejit(
        tmp_path, "model.py:LinearReLU", "--inputs", "{'x': torch.randn(3, 4)}", "--dynamic", "x:0=batch[1,16]",
        "--check-inputs", "[{'x': torch.randn(5, 4)}]", "--compare-trace", "--json", "run.json",
    )  # fmt: skip
    assert code == 0 and err == "", out
    assert out.startswith("LinearReLU: ok;") and "compared with a trace: 2 of 2 trace ops matched (100%" in out
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["inputs"]["forward"] == ["x=Float(3, 4)"]
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--dynamic", "x:0=b[9,2]"], "min > max"),
        (["--dynamic", "x0"], "is not of the form NAME:DIM"),
        (["--auto-dynamic"], "--auto-dynamic needs --check-inputs"),
        (["--auto-dynamic", "--dynamic", "x:0", "--check-inputs", "[torch.ones(2, 4)]"], "contradict each other"),
        (["--eval", "--train"], "--eval and --train contradict each other"),
    ],
)
def test_usage_errors_exit_2_in_one_line(tmp_path, args, words):
    code, out, err = tracejit(tmp_path, "model.py:LinearReLU", "--inputs", "torch.randn(3, 4)", *args)
    assert code == 2 and out == ""
    assert err.startswith("tracejit: error: ") and words in err and err.count("\n") == 1, err
