"""The ``tracejit`` command, run as a user (or CI) runs it: the console script from this venv's bin.

Every command imports torch (1-2 s), so the cases run concurrently once per module (``results``) and each test
checks its own; the exit status is the contract: 0 ok, 1 problems, 2 usage error (one line on stderr).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

import jupyter_tracejit as tj
from jupyter_tracejit import cli

BIN = Path(sys.executable).parent
STATIC_JS = Path(tj.__file__).parent / "static" / "report.js"

MODEL = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return torch.relu(self.fc(x))


net = Net().eval()
EXAMPLE = torch.ones(2, 4)


def loop(x):
    result = x[0]
    for i in range(x.size(0)):
        result = result * x[i]
    return result


def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x


def scaled(x, scale):
    return x * scale


def as_dict(x):
    return {"y": x * 2}


def positions(x):
    return x + torch.arange(x.shape[-1], device=x.device)


class NeedsWidth(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)


NOT_CALLABLE = 3
"""

BROKEN = """\
import torch

x = 1
y = x / 0
"""


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    files: Path


def _cases(d: Path) -> dict[str, list[str]]:
    m = str(d / "model.py")
    # without the report bundle (no `npm run build`), -o would exit 2: the HTML is tested where it is built
    html = ["-o", str(d / "loop.html")] if STATIC_JS.exists() else []
    demo_html = ["-o", str(d / "demo.html")] if STATIC_JS.exists() else []
    return {
        "class_ok": ["trace", f"{m}:Net", "--inputs", "torch.rand(2, 4)"],
        "loop_diverges": [
            "trace", f"{m}:loop", "--inputs", "torch.rand(3, 4)", "--check-inputs", "[(torch.rand(4, 4),)]",
            "--json", str(d / "loop.json"), *html, "--dot", str(d / "loop.dot"),
        ],
        "branch_warns": ["trace", f"{m}:branchy", "--inputs", "torch.ones(3)"],
        "branch_fail_on_warnings": ["trace", f"{m}:branchy", "--inputs", "torch.ones(3)", "--fail-on-warnings"],
        "kwargs": ["trace", f"{m}:scaled", "--inputs", "{'x': torch.ones(2), 'scale': torch.tensor(3.0)}"],
        "dict_output_strict": ["trace", f"{m}:as_dict", "--inputs", "torch.ones(2)", "--json", str(d / "f.json")],
        "options": [
            "trace", f"{m}:Net", "--inputs", "torch.rand(2, 4)", "--eval", "--no-grad", "--tol", "1e-3",
            "--force-outplace", "--json", str(d / "opts.json"),
        ],
        # usage errors: exit 2, one line naming the problem
        "missing_file": ["trace", str(d / "nope.py") + ":f", "--inputs", "torch.ones(1)"],
        "missing_name": ["trace", f"{m}:missing", "--inputs", "torch.ones(1)"],
        "syntax": ["trace", f"{m}:loop", "--inputs", "torch.rand(3,"],
        "no_inputs": ["trace", f"{m}:loop"],
        "demo": ["demo", "--no-probe", *demo_html, "--json", str(d / "demo.json")],
    }  # fmt: skip


def _in_process_cases(d: Path) -> dict[str, list[str]]:
    """Cases checked with ``cli.main()`` in this process (torch is imported already: fast)."""
    m = str(d / "model.py")
    return {
        "instance_namespace": ["trace", f"{m}:net", "--inputs", "(EXAMPLE,)"],
        "loop_unchecked": ["trace", f"{m}:loop", "--inputs", "torch.rand(3, 4)", "--no-check"],
        "dict_output_non_strict": ["trace", f"{m}:as_dict", "--inputs", "torch.ones(2)", "--non-strict"],
        "not_python": ["trace", str(d / "model.txt") + ":f", "--inputs", "torch.ones(1)"],
        "no_name": ["trace", m, "--inputs", "torch.ones(1)"],
        "not_callable": ["trace", f"{m}:NOT_CALLABLE", "--inputs", "torch.ones(1)"],
        "needs_args": ["trace", f"{m}:NeedsWidth", "--inputs", "torch.ones(1)"],
        "name_error": ["trace", f"{m}:loop", "--inputs", "undefined_thing + 1"],
        "wrong_type": ["trace", f"{m}:loop", "--inputs", "[torch.ones(2)]"],
        "bad_check_inputs": ["trace", f"{m}:loop", "--inputs", "torch.ones(2)", "--check-inputs", "[3]"],
        "broken_file": ["trace", str(d / "broken.py") + ":x", "--inputs", "torch.ones(1)"],
        "bad_output_dir": ["trace", f"{m}:loop", "--inputs", "torch.ones(2)", "-o", str(d / "no" / "r.html")],
        "negative_tol": ["trace", f"{m}:loop", "--inputs", "torch.ones(2)", "--tol", "-1"],
        "nan_tol": ["trace", f"{m}:loop", "--inputs", "torch.ones(2)", "--tol", "nan"],
        "inf_tol": ["trace", f"{m}:loop", "--inputs", "torch.ones(2)", "--tol", "inf"],
        "eval_and_train": ["trace", f"{m}:loop", "--inputs", "torch.ones(2)", "--eval", "--train"],
        "target_device": [
            "trace", f"{m}:positions", "--inputs", "torch.ones(2, 3)", "--target-device", "cuda",
            "--json", str(d / "target.json"),
        ],
        "bad_target_device": ["trace", f"{m}:positions", "--inputs", "torch.ones(2)", "--target-device", "gpu"],
    }  # fmt: skip


def _files(d: Path) -> None:
    (d / "model.py").write_text(MODEL)
    (d / "model.txt").write_text(MODEL)
    (d / "broken.py").write_text(BROKEN)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    """``tracejit ...`` from the venv's bin, the cases run concurrently; plus the in-process ones."""
    exe = BIN / "tracejit"
    if not exe.exists():
        pytest.skip(f"{exe} is missing: reinstall the package (pip install -e .) to get the console script")
    d = tmp_path_factory.mktemp("cli")
    _files(d)
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")

    def run(args: list[str]) -> Result:
        done = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300, cwd=d, env=env)
        return Result(done.returncode, done.stdout, done.stderr, d)

    cases = _cases(d)
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        out = dict(zip(cases, pool.map(run, cases.values()), strict=True))

    saved_path = list(sys.path)
    try:
        for name, args in _in_process_cases(d).items():
            stdout, stderr = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                code = cli.main(args)
            out[name] = Result(code, stdout.getvalue(), stderr.getvalue(), d)
    finally:
        sys.path[:] = saved_path
    return out


def ok(r: Result) -> str:
    return f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"


# -- exit 0 / 1 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["class_ok", "instance_namespace", "loop_unchecked", "kwargs", "options"])
def test_ok_traces_exit_0(results, case):
    r = results[case]
    assert r.returncode == 0, ok(r)
    assert ": ok;" in r.stdout.splitlines()[0]
    assert r.stderr.strip() == "", r.stderr


def test_class_is_instantiated_and_instance_taken_as_is(results):
    assert results["class_ok"].stdout.startswith("Net: ok;")
    assert results["instance_namespace"].stdout.startswith("Net: ok;")
    assert "not checked" in results["loop_unchecked"].stdout


def test_failed_check_exits_1_with_divergences_and_writes_json_html_dot(results):
    r = results["loop_diverges"]
    assert r.returncode == 1, ok(r)
    assert r.stdout.startswith("loop: problems;")
    assert "check FAILED" in r.stdout
    assert "only in the check trace: aten::select" in r.stdout
    assert "model.py:" in r.stdout  # source lines
    run = tj.TraceRun.from_json(json.loads((r.files / "loop.json").read_text()))
    assert not run.ok and run.check is not None and not run.check.ok
    assert (r.files / "loop.dot").read_text().startswith("digraph")
    for name in ("loop.json", "loop.dot"):
        assert f"wrote {r.files / name}" in r.stdout
    if STATIC_JS.exists():
        page = (r.files / "loop.html").read_text()
        assert 'id="tracejit-run"' in page and page.rstrip().endswith("</html>")
        assert f"wrote {r.files / 'loop.html'} (" in r.stdout


def test_warnings_alone_exit_0_unless_fail_on_warnings(results):
    r = results["branch_warns"]
    assert r.returncode == 0, ok(r)
    assert "[to_bool]" in r.stdout and "model.py:" in r.stdout
    strict = results["branch_fail_on_warnings"]
    assert strict.returncode == 1, ok(strict)


def test_failed_trace_exits_1_with_error_and_hint(results):
    r = results["dict_output_strict"]
    assert r.returncode == 1, ok(r)
    assert "as_dict: FAILED" in r.stdout and "hint:" in r.stdout
    run = tj.TraceRun.from_json(json.loads((r.files / "f.json").read_text()))
    assert run.error is not None
    assert results["dict_output_non_strict"].returncode == 0, ok(results["dict_output_non_strict"])


def test_a_target_device_reaches_the_trace(results):
    r = results["target_device"]
    assert r.returncode == 0, ok(r)  # warnings alone exit 0
    run = tj.TraceRun.from_json(json.loads((r.files / "target.json").read_text()))
    assert run.options["target_device"] == "cuda"
    (finding,) = [f for f in run.findings if f.kind == "device_constant"]
    assert finding.severity == "warning" and run.verdict.level == "warning"


def test_options_reach_the_trace(results):
    run = tj.TraceRun.from_json(json.loads((results["options"].files / "opts.json").read_text()))
    o = run.options
    assert o["module_mode"] == "eval" and o["no_grad"] is True and o["force_outplace"] is True
    assert run.check is not None and run.check.tolerance == 1e-3


# -- exit 2: usage errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing_file", "no such file: "),
        ("not_python", "is not a .py file"),
        ("no_name", "expected FILE.py:NAME"),
        ("missing_name", "has no attribute 'missing'"),
        ("not_callable", "NOT_CALLABLE is not a function or an nn.Module: it is of type int"),
        ("needs_args", "could not instantiate NeedsWidth() with no arguments: TypeError"),
        ("syntax", "--inputs 'torch.rand(3,' is not a Python expression"),
        ("name_error", "--inputs 'undefined_thing + 1' failed: NameError"),
        ("wrong_type", "--inputs must give a tuple of inputs, a single tensor or a dict of keyword inputs, not a"),
        ("bad_check_inputs", "--check-inputs must give a tuple of inputs, a single tensor or a dict"),
        ("broken_file", "broken.py failed (line 4): ZeroDivisionError: division by zero"),
        ("no_inputs", "the following arguments are required: --inputs"),
        ("bad_output_dir", "cannot write "),
        ("negative_tol", "--tol needs a finite number >= 0 (torch's check_tolerance, default 1e-5), got '-1'"),
        ("nan_tol", "--tol needs a finite number >= 0"),
        ("inf_tol", "got 'inf'"),
        ("eval_and_train", "--eval and --train contradict each other"),
        ("bad_target_device", "--target-device needs a device name such as 'cuda', 'cuda:0' or 'cpu', got 'gpu'"),
    ],
)
def test_usage_errors_exit_2_with_one_clear_line(results, case, message):
    r = results[case]
    assert r.returncode == 2, ok(r)
    assert r.stdout == "", r.stdout
    # argparse prints its usage first and names the subcommand
    first = r.stderr.strip().splitlines()[-1] if case == "no_inputs" else r.stderr.splitlines()[0]
    assert first.startswith("tracejit trace: error: " if case == "no_inputs" else "tracejit: error: "), r.stderr
    assert message in first, r.stderr
    if case != "broken_file":  # an import failure also prints the file's traceback after the line
        assert len(r.stderr.strip().splitlines()) == 1 or case == "no_inputs", r.stderr


# -- demo ----------------------------------------------------------------------------------------------------
def test_demo_writes_the_html_report_and_exits_0(results):
    r = results["demo"]
    assert r.returncode == 0, ok(r)  # the example has problems on purpose: finding them is the demo working
    assert r.stdout.startswith("DemoModel: problems;")
    assert "[to_bool] (x2) demo.py:" in r.stdout
    if STATIC_JS.exists():
        page = (r.files / "demo.html").read_text()
        assert 'id="tracejit-run"' in page and "DemoModel" in page
    run = tj.TraceRun.from_json(json.loads((r.files / "demo.json").read_text()))
    assert run.target.name == "DemoModel"


def test_python_m_runs_the_same_cli():
    done = subprocess.run(
        [sys.executable, "-m", "jupyter_tracejit", "trace", "x.py"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert done.stderr.startswith("usage: python -m jupyter_tracejit trace")
    assert "--inputs" in done.stderr
