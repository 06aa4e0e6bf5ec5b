"""The ``tracejit`` command, run as a user (or CI) runs it: the console script from this venv's bin.

Every command imports torch (1-2 s), so the cases run concurrently once per module (``results``) and each test
checks its own; the exit status is the contract: 0 ok, 1 problems, 2 usage error (one line on stderr).
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

import jupyter_tracejit as tj
from jupyter_tracejit import cli

from .models import LinearReLU, loop_in_traced_fn, source_of

BIN = Path(sys.executable).parent
STATIC_JS = Path(tj.__file__).parent / "static" / "report.js"

#: the file the cases trace: LinearReLU and loop_in_traced_fn of tests/models.py, then what the other cases need
MODEL = (
    "import torch\nimport torch.nn as nn\n\n\n"
    + source_of(LinearReLU, loop_in_traced_fn)
    + """

net = LinearReLU().eval()
EXAMPLE = torch.ones(2, 4)


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
)

BROKEN = """\
import torch

x = 1
y = x / 0
"""

HELPER = """\
def double(x):
    return x * 2
"""

USES_HELPER = """\
from helper import double
"""

NOT_PYTHON = """\
import torch

def f(x):
    return x +* 2
"""

SLOW = """\
import time


def slow(x):
    print("tracing", flush=True)
    time.sleep(60)
    return x * 2
"""


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    files: Path


def _cases(d: Path) -> dict[str, list[str]]:
    m = str(d / "model.py")
    loop = f"{m}:loop_in_traced_fn"
    # without the report bundle (no `npm run build`), -o would exit 2: the HTML is tested where it is built
    html = ["-o", str(d / "loop.html")] if STATIC_JS.exists() else []
    demo_html = ["-o", str(d / "demo.html")] if STATIC_JS.exists() else []
    return {
        "class_ok": ["trace", f"{m}:LinearReLU", "--inputs", "torch.rand(2, 4)"],
        "loop_diverges": [
            "trace", loop, "--inputs", "torch.rand(3, 4)", "--check-inputs", "[(torch.rand(4, 4),)]",
            "--json", str(d / "loop.json"), *html, "--dot", str(d / "loop.dot"),
        ],
        "branch_warns": ["trace", f"{m}:branchy", "--inputs", "torch.ones(3)"],
        "branch_fail_on_warnings": ["trace", f"{m}:branchy", "--inputs", "torch.ones(3)", "--fail-on-warnings"],
        "kwargs": ["trace", f"{m}:scaled", "--inputs", "{'x': torch.ones(2), 'scale': torch.tensor(3.0)}"],
        "dict_output_strict": ["trace", f"{m}:as_dict", "--inputs", "torch.ones(2)", "--json", str(d / "f.json")],
        "options": [
            "trace", f"{m}:LinearReLU", "--inputs", "torch.rand(2, 4)", "--eval", "--no-grad", "--tol", "1e-3",
            "--force-outplace", "--json", str(d / "opts.json"),
        ],
        # usage errors: exit 2, one line naming the problem
        "missing_file": ["trace", str(d / "nope.py") + ":f", "--inputs", "torch.ones(1)"],
        "missing_name": ["trace", f"{m}:missing", "--inputs", "torch.ones(1)"],
        "syntax": ["trace", loop, "--inputs", "torch.rand(3,"],
        "no_inputs": ["trace", loop],
        "demo": ["demo", "--no-probe", *demo_html, "--json", str(d / "demo.json")],
        "syntax_error_in_file": ["trace", str(d / "not_python.py") + ":f", "--inputs", "torch.ones(1)"],
        "two_inputs": ["trace", f"{m}:scaled", "--inputs", "torch.ones(2)", "torch.tensor(3.0)"],
        "unknown_option": ["trace", f"{m}:scaled", "--inputs", "torch.ones(2)", "--bogus"],
        "two_check_inputs": [
            "trace", loop, "--inputs", "torch.ones(2)", "--check-inputs", "(torch.ones(3),)", "(torch.ones(4),)",
        ],
        # outputs over files the run read: the traced file (given another way), a module its stacks point into
        "json_over_target": [
            "trace", str(d / "target.py") + ":loop_in_traced_fn", "--inputs", "torch.ones(2)", "--json", "target.py",
        ],
        "dot_over_source": ["trace", str(d / "uses_helper.py") + ":double", "--inputs", "torch.ones(2)", "--dot",
                            str(d / "helper.py")],
        "json_and_dot_alike": ["trace", loop, "--inputs", "torch.ones(2)", "--json", "same.out", "--dot",
                               "./same.out"],
    }  # fmt: skip


def _in_process_cases(d: Path) -> dict[str, list[str]]:
    """Cases checked with ``cli.main()`` in this process (torch is imported already: fast)."""
    m = str(d / "model.py")
    loop = f"{m}:loop_in_traced_fn"
    return {
        "instance_namespace": ["trace", f"{m}:net", "--inputs", "(EXAMPLE,)"],
        "loop_unchecked": ["trace", loop, "--inputs", "torch.rand(3, 4)", "--no-check"],
        "dict_output_non_strict": ["trace", f"{m}:as_dict", "--inputs", "torch.ones(2)", "--non-strict"],
        "not_python": ["trace", str(d / "model.txt") + ":f", "--inputs", "torch.ones(1)"],
        "no_name": ["trace", m, "--inputs", "torch.ones(1)"],
        "not_callable": ["trace", f"{m}:NOT_CALLABLE", "--inputs", "torch.ones(1)"],
        "needs_args": ["trace", f"{m}:NeedsWidth", "--inputs", "torch.ones(1)"],
        "name_error": ["trace", loop, "--inputs", "undefined_thing + 1"],
        "wrong_type": ["trace", loop, "--inputs", "[torch.ones(2)]"],
        "bad_check_inputs": ["trace", loop, "--inputs", "torch.ones(2)", "--check-inputs", "[3]"],
        "broken_file": ["trace", str(d / "broken.py") + ":x", "--inputs", "torch.ones(1)"],
        "bad_output_dir": ["trace", loop, "--inputs", "torch.ones(2)", "-o", str(d / "no" / "r.html")],
        "negative_tol": ["trace", loop, "--inputs", "torch.ones(2)", "--tol", "-1"],
        "nan_tol": ["trace", loop, "--inputs", "torch.ones(2)", "--tol", "nan"],
        "inf_tol": ["trace", loop, "--inputs", "torch.ones(2)", "--tol", "inf"],
        "eval_and_train": ["trace", loop, "--inputs", "torch.ones(2)", "--eval", "--train"],
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
    (d / "target.py").write_text(MODEL)
    (d / "helper.py").write_text(HELPER)
    (d / "uses_helper.py").write_text(USES_HELPER)
    (d / "not_python.py").write_text(NOT_PYTHON)


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
    assert results["class_ok"].stdout.startswith("LinearReLU: ok;")
    assert results["instance_namespace"].stdout.startswith("LinearReLU: ok;")
    assert "not checked" in results["loop_unchecked"].stdout


def test_failed_check_exits_1_with_divergences_and_writes_json_html_dot(results):
    r = results["loop_diverges"]
    assert r.returncode == 1, ok(r)
    assert r.stdout.startswith("loop_in_traced_fn: problems;")
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
        ("syntax_error_in_file", "importing "),
        (
            "two_inputs",
            "--inputs takes one Python expression, but it was followed by 1 more (torch.tensor(3.0)); pass several "
            "as one expression, a tuple of the inputs: --inputs '(torch.ones(2), torch.tensor(3.0))'",
        ),
        ("two_check_inputs", "--check-inputs '[(torch.ones(3),), (torch.ones(4),)]'"),
        ("unknown_option", "unknown option --bogus; tracejit trace --help lists its options"),
        ("json_over_target", "--json target.py would overwrite "),
        ("dot_over_source", "helper.py, a source file of this run: write the output to another file, e.g. --dot "),
        ("json_and_dot_alike", "--json and --dot both name same.out: give each output its own file"),
    ],
)
def test_usage_errors_exit_2_with_one_clear_line(results, case, message):
    r = results[case]
    assert r.returncode == 2, ok(r)
    # a source file is known once the trace ran: its report is printed (nothing computed is lost), no file written
    assert r.stdout == "" or case == "dot_over_source", r.stdout
    # argparse prints its usage first and names the subcommand
    argparse_usage = case in ("no_inputs", "two_inputs", "two_check_inputs", "unknown_option")
    first = r.stderr.strip().splitlines()[-1] if argparse_usage else r.stderr.splitlines()[0]
    assert first.startswith("tracejit trace: error: " if case == "no_inputs" else "tracejit: error: "), r.stderr
    assert message in first, r.stderr
    if case not in ("broken_file", "syntax_error_in_file"):  # an import failure also prints the file's traceback
        assert len(r.stderr.strip().splitlines()) == 1 or argparse_usage, r.stderr


def test_an_output_never_overwrites_a_file_the_run_read(results):
    assert (results["json_over_target"].files / "target.py").read_text() == MODEL
    assert (results["dot_over_source"].files / "helper.py").read_text() == HELPER
    assert not (results["json_and_dot_alike"].files / "same.out").exists()


def test_a_syntax_error_in_the_file_shows_the_users_line_not_our_frames(results):
    r = results["syntax_error_in_file"]
    assert r.returncode == 2, ok(r)
    first, *rest = r.stderr.splitlines()
    assert "not_python.py failed (line 4): SyntaxError: invalid syntax" in first
    shown = "\n".join(rest)
    assert "jupyter_tracejit" not in shown and "importlib" not in shown, shown
    assert "Traceback" not in shown, shown  # no frame of the user's runs: a syntax error is its place alone
    assert 'not_python.py", line 4' in shown and "return x +* 2" in shown and "^" in shown


def _popen(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    exe = BIN / "tracejit"
    if not exe.exists():
        pytest.skip(f"{exe} is missing: reinstall the package (pip install -e .) to get the console script")
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return subprocess.Popen(
        [str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env
    )


def test_a_closed_pipe_is_quiet_and_the_outputs_are_still_written(tmp_path):
    """``tracejit ... | head -1``: the reader goes away; no "Broken pipe" error, and nothing computed is lost."""
    _files(tmp_path)
    proc = _popen(["trace", f"{tmp_path / 'model.py'}:branchy", "--inputs", "torch.ones(3)", "--json", "run.json"],
                  tmp_path)  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before anything is printed: every print meets a closed pipe
    stderr = proc.stderr.read()
    assert proc.wait(timeout=300) == 0, stderr  # the run's own status (warnings alone: 0)
    assert stderr == ""
    assert tj.TraceRun.load(tmp_path / "run.json").target.name == "branchy"


def test_ctrl_c_prints_one_line_exits_130_and_touches_no_file(tmp_path):
    _files(tmp_path)
    (tmp_path / "slow.py").write_text(SLOW)
    (tmp_path / "run.json").write_text("previous")
    proc = _popen(["trace", f"{tmp_path / 'slow.py'}:slow", "--inputs", "torch.ones(2)", "--json", "run.json"],
                  tmp_path)  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == "tracing\n"  # inside the traced function
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    assert proc.stderr.read() == "tracejit: interrupted; no file was written\n"
    assert (tmp_path / "run.json").read_text() == "previous"


def test_ctrl_c_while_torch_imports_is_one_line_too(tmp_path):
    """``import torch`` takes a second or more, and it is what an early Ctrl-C interrupts: a stand-in torch that
    announces itself and waits puts the interrupt there, every time (before: a 17-35 line traceback)."""
    _files(tmp_path)
    slow_torch = tmp_path / "stand_in"
    slow_torch.mkdir()
    (slow_torch / "torch.py").write_text("import sys, time\nprint('importing torch', flush=True)\ntime.sleep(60)\n")
    (tmp_path / "run.json").write_text("previous")
    exe = BIN / "tracejit"
    if not exe.exists():
        pytest.skip(f"{exe} is missing: reinstall the package (pip install -e .) to get the console script")
    env = dict(os.environ, PYTHONPATH=str(slow_torch), PYTHONWARNINGS="ignore")
    proc = subprocess.Popen(
        [str(exe), "trace", f"{tmp_path / 'model.py'}:branchy", "--inputs", "torch.ones(3)", "--json", "run.json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == "importing torch\n"
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    assert proc.stderr.read() == "tracejit: interrupted; no file was written\n"
    assert (tmp_path / "run.json").read_text() == "previous"


@pytest.mark.parametrize("failing", [1, 2], ids=["the first output", "the second output"])
def test_a_full_disk_leaves_the_previous_outputs_whole(tmp_path, monkeypatch, failing):
    """The JSON is written first, then the page: the disk fills up in one of them; neither old file is replaced
    (before: a 64 KiB cut-off page and 45 KB of invalid JSON), and no temporary file is left."""
    _files(tmp_path)
    old = {"run.json": '{"previous": "run"}', "report.html": "<html>previous</html>", "graph.dot": "digraph {}"}
    for name, text in old.items():
        (tmp_path / name).write_text(text)
    real_write, real_fsync, synced = os.write, os.fsync, [0]

    def full_disk(fd: int, data: bytes) -> int:
        if synced[0] == failing - 1:  # files before it were written whole (and synced)
            real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        synced[0] += 1
        real_fsync(fd)

    monkeypatch.setattr(os, "write", full_disk)
    monkeypatch.setattr(os, "fsync", fsync)
    args = ["trace", f"{tmp_path / 'model.py'}:loop_in_traced_fn", "--inputs", "torch.ones(2)"]
    args += ["--json", str(tmp_path / "run.json"), "--dot", str(tmp_path / "graph.dot")]
    args += ["-o", str(tmp_path / "report.html")] if STATIC_JS.exists() else []
    stdout, stderr = io.StringIO(), io.StringIO()
    saved_path = list(sys.path)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = cli.main(args)
    finally:
        sys.path[:] = saved_path
        monkeypatch.undo()
    assert code == 2, stderr.getvalue()
    assert stderr.getvalue().splitlines() == ["tracejit: error: [Errno 28] No space left on device"]
    assert {name: (tmp_path / name).read_text() for name in old} == old
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


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
