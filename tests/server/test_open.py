"""The server extension (jupyter_tracejit/server): a real JupyterLab answers POST /jupyter-tracejit/api/open for files
in its root dir, read by torch in a process of its own (tests/security/test_server.py attacks it)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
import venv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from jupyter_tracejit._dev.browser import ARTIFACTS, ROOT, JupyterServer, start_jupyter_lab, stop_jupyter_lab
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.core.run import TraceRun
from jupyter_tracejit.server.handler import OPEN_ROUTE, Refused, TracejitOpener
from tests.models import OneLinear, save_shipped_head
from tests.server.refusal import refusal

TOKEN = "tracejit-test-token"
#: small enough that a test can write a file over it, large enough for the saved trace
MAX_SIZE = 200_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    ARTIFACTS.mkdir(exist_ok=True)
    started = start_jupyter_lab(
        tmp_path_factory.mktemp("open-server"),
        ARTIFACTS / "jupyter-server-open.log",
        extra_args=[f"--TracejitOpener.max_size={MAX_SIZE}"],
        token=TOKEN,
    )
    try:
        yield started
    finally:
        stop_jupyter_lab(started)


def fetch(server: JupyterServer, path: str, token: str | None = TOKEN) -> tuple[int, Any]:
    """POST the handler for ``path`` (as the front end does, the token standing for its XSRF token): (status, JSON
    body)."""
    url = f"{server.url}{OPEN_ROUTE}"
    headers = {"Authorization": f"token {token}"} if token else {}
    request = urllib.request.Request(url, data=json.dumps({"path": path}).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        return exc.code, json.loads(body) if body.startswith(b"{") else body.decode(errors="replace")


def test_a_saved_trace_opens_as_its_run(server: JupyterServer) -> None:
    (server.root / "models").mkdir()
    save_shipped_head(server.root / "models" / "head.pt")
    status, data = fetch(server, "models/head.pt")
    assert status == 200, data
    run = TraceRun.from_json(data)  # checked against the run schema
    assert run.error is None and (run.backend, run.source) == ("trace", "file"), run.error
    assert run.target.type == "ShippedHead" and run.target.file == str(server.root / "models" / "head.pt")
    assert {"frozen_size", "nondeterministic"} <= {f.kind for f in run.findings}
    assert "forward" in run.graphs


def test_a_request_without_the_token_is_refused(server: JupyterServer) -> None:
    save_shipped_head(server.root / "secret.pt")
    status, _ = fetch(server, "secret.pt", token=None)
    assert status == 403


def test_a_get_is_answered_405_with_the_reason(server: JupyterServer) -> None:
    save_shipped_head(server.root / "linked.pt")
    url = f"{server.url}{OPEN_ROUTE}?{urllib.parse.urlencode({'path': 'linked.pt'})}"
    request = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(request, timeout=30)
    assert answer.value.code == 405 and answer.value.headers["Allow"] == "POST"
    assert "Files open with POST" in json.loads(answer.value.read())["message"]


def test_paths_that_leave_the_root_dir_are_refused(server: JupyterServer, tmp_path: Path) -> None:
    outside = save_shipped_head(tmp_path / "outside.pt")
    (server.root / "link.pt").symlink_to(outside)
    (server.root / "sub").mkdir(exist_ok=True)
    (server.root / ".hidden.pt").write_bytes(b"x")
    for path, status, words in [
        ("../outside.pt", 400, "'..'"),
        ("sub/../../outside.pt", 400, "'..'"),
        (str(outside), 400, "absolute path"),
        ("link.pt", 403, "leads outside the server's root dir"),
        (".hidden.pt", 403, "hidden"),
        ("absent.pt", 404, "No file absent.pt"),
        ("", 400, "No file given"),
        ("sub", 400, "is a directory, not a regular file"),
    ]:
        got, body = fetch(server, path)
        assert (got, words in body["message"]) == (status, True), (path, body)


def test_a_file_over_the_size_limit_is_refused_naming_the_limit(server: JupyterServer) -> None:
    (server.root / "big.pt").write_bytes(b"\0" * (MAX_SIZE + 1))
    status, body = fetch(server, "big.pt")
    assert status == 413
    assert body["message"] == (
        f"big.pt is 195 KiB, over the trace explorer's limit of 195 KiB ({MAX_SIZE} bytes). To read it, raise the "
        f"limit where the server starts: c.TracejitOpener.max_size = {MAX_SIZE + 1} in jupyter_server_config.py, "
        f"or --TracejitOpener.max_size={MAX_SIZE + 1}."
    )


def test_a_file_torch_cannot_read_opens_as_a_run_with_its_error(server: JupyterServer) -> None:
    (server.root / "notes.pt").write_text("not a model\n")
    torch.save(OneLinear(), server.root / "pickled.pt")  # a whole module pickled: never unpickled here
    for path, tag in [("notes.pt", "not_an_archive"), ("pickled.pt", "pickle")]:
        status, data = fetch(server, path)
        assert status == 200, data
        run = TraceRun.from_json(data)
        assert run.error is not None and run.error.tag == tag and run.error.hint, (path, run.error)


# -- the loading process, without a server -------------------------------------------------------------------------
def test_torch_missing_in_the_servers_environment_is_said_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a Python without torch (a bare venv) that finds this checkout's package
    venv.create(tmp_path / "no-torch", with_pip=False)
    python = str(tmp_path / "no-torch" / "bin" / "python")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    root = tmp_path / "root"
    save_shipped_head(root.mkdir() or root / "model.pt")
    opener = TracejitOpener(root_dir=str(root), python=python)
    refused = refusal(opener, "model.pt")
    assert refused.status == 500
    assert refused.message == (
        f"torch is not installed in the environment running the Jupyter server ({python}): "
        f"pip install torch there ({python} -m pip install torch), then open model.pt again."
    )


def test_a_load_that_does_not_finish_is_stopped(tmp_path: Path) -> None:
    save_shipped_head(tmp_path / "model.pt")
    opener = TracejitOpener(root_dir=str(tmp_path), timeout=0.01)  # importing torch alone takes longer
    refused = refusal(opener, "model.pt")
    assert refused.status == 504 and "c.TracejitOpener.timeout" in refused.message


def test_a_python_that_cannot_be_started_is_named(tmp_path: Path) -> None:
    save_shipped_head(tmp_path / "model.pt")
    opener = TracejitOpener(root_dir=str(tmp_path), python=str(tmp_path / "no-such-python"))
    refused = refusal(opener, "model.pt")
    assert refused.status == 500 and "check c.TracejitOpener.python" in refused.message
    assert os.fspath(tmp_path / "no-such-python") in refused.message


NOISY_WORKER = """\
import os, sys
from jupyter_tracejit.server import worker

load_run = worker.load_run

def noisy_load_run(path, *args):
    os.write(1, b"printed by C++ code\\n")
    print("printed by Python code")
    return load_run(path, *args)

worker.load_run = noisy_load_run
sys.exit(worker.main(sys.argv[1:]))
"""


def test_what_the_load_prints_does_not_mix_into_the_runs_json(tmp_path: Path) -> None:
    save_shipped_head(tmp_path / "model.pt")
    (tmp_path / "noisy.py").write_text(NOISY_WORKER)
    done = subprocess.run(
        [sys.executable, str(tmp_path / "noisy.py"), str(tmp_path / "model.pt")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert TraceRun.from_json(json.loads(done.stdout)).target.type == "ShippedHead"
    assert "printed by C++ code" in done.stderr and "printed by Python code" in done.stderr


@pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))
def test_an_exported_program_opens_as_its_export_run(server: JupyterServer) -> None:
    batch = torch.export.Dim("batch", min=2, max=64)
    program = torch.export.export(OneLinear(), (torch.randn(3, 2),), dynamic_shapes=({0: batch},))
    torch.export.save(program, str(server.root / "linear.pt2"))
    status, data = fetch(server, "linear.pt2")
    assert status == 200, data
    run = TraceRun.from_json(data)
    assert run.error is None and run.backend == "export", run.error
    assert run.export is not None and [(s.min, s.max) for s in run.export.symbols] == [(2, 64)]


PAIRS = """\
import torch
from torch.utils import _pytree as pytree


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


pytree.register_pytree_node(
    Pair, lambda p: ([p.a, p.b], None), lambda values, _: Pair(*values), serialized_type_name="pairs_mod.Pair"
)


class ReturnsPair(torch.nn.Module):
    def forward(self, x):
        return Pair(x + 1, x * 2)
"""


@pytest.mark.slow  # three reading processes, each importing torch: 30 s on a loaded 2-core machine
@pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))
def test_a_program_returning_a_registered_class_opens_once_its_module_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The unregistered class names its module; the request's imports (the explorer's "retry importing" button)
    or the server's c.TracejitOpener.imports are imported by the reading process first; a module that does not
    import is a 400 naming it and the fix."""
    lib, root = tmp_path / "lib", tmp_path / "root"
    lib.mkdir(), root.mkdir()
    (lib / "pairs_mod.py").write_text(PAIRS)
    monkeypatch.syspath_prepend(str(lib))
    import pairs_mod  # type: ignore[import-not-found]

    torch.export.save(torch.export.export(pairs_mod.ReturnsPair(), (torch.randn(3),)), str(root / "pair.pt2"))
    monkeypatch.setenv("PYTHONPATH", str(lib))  # installed where the server runs, as a package would be
    opener = TracejitOpener(root_dir=str(root))
    refused = TraceRun.from_json(json.loads(asyncio.run(opener.open("pair.pt2"))))
    assert refused.error is not None and refused.error.tag == "unregistered_pytree", refused.error
    assert "Deserializing pairs_mod.Pair in pytree is not registered" in refused.error.message
    loaded = TraceRun.from_json(
        json.loads(asyncio.run(opener.open("pair.pt2", opener.requested_imports(["pairs_mod"]))))
    )
    assert loaded.error is None and loaded.backend == "export", loaded.error
    configured = TracejitOpener(root_dir=str(root), imports=["pairs_mod", "no_such_module_here"])
    failed = refusal(configured, "pair.pt2")
    assert failed.status == 400
    assert failed.message.startswith(
        "Reading pair.pt2 needs modules imported first, and importing no_such_module_here: ModuleNotFoundError: "
        "No module named 'no_such_module_here'."
    ), failed.message


def test_the_modules_a_request_asks_to_import_are_checked(tmp_path: Path) -> None:
    opener = TracejitOpener(root_dir=str(tmp_path))
    assert opener.requested_imports(None) == [] and opener.requested_imports([]) == []
    assert opener.requested_imports(["a.b", "c", "a.b"]) == ["a.b", "c"]
    for bad, status, words in [
        ("transformers", 400, 'must be a list of module names: ["transformers.modeling_outputs"]'),
        ([1], 400, "must be a list of module names"),
        (["os; rm -rf /"], 400, "'os; rm -rf /' is not a module name: only dotted names"),
        (["../x"], 400, "is not a module name"),
        (["m"] * 9, 400, "At most 8 modules are imported for one file; 9 were asked."),
    ]:
        with pytest.raises(Refused) as refused:
            opener.requested_imports(bad)
        assert refused.value.status == status and words in refused.value.message, refused.value.message
    closed = TracejitOpener(root_dir=str(tmp_path), request_imports=False)
    with pytest.raises(Refused) as refused:
        closed.requested_imports(["transformers.modeling_outputs"])
    assert refused.value.status == 403 and "add transformers.modeling_outputs to c.TracejitOpener.imports" in (
        refused.value.message
    )
    with pytest.raises(Exception, match=r"'a b' is not one"):
        TracejitOpener(root_dir=str(tmp_path), imports=["a b"])
