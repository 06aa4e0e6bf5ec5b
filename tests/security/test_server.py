"""The server extension attacked through a real JupyterLab with its XSRF protection on: hostile files opened with a
valid login are refused by the worker and nothing runs; a cross-site navigation or form post with the login cookie
is refused and starts no worker; 20 opens at once never run more workers than the limit; a client that goes away
takes its worker with it; a path that cannot be resolved is a 4xx with its reason.

Every worker is started through a wrapper of the server's Python (``c.TracejitOpener.python``) that writes
``start PID`` and ``end PID`` to a log: what ran, when, and how many at once, as the server's processes saw it.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import shutil
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_tracejit._dev.browser import ARTIFACTS, JupyterServer, start_jupyter_lab, stop_jupyter_lab
from jupyter_tracejit.core.run import TraceRun
from jupyter_tracejit.server.handler import OPEN_ROUTE, TracejitOpener
from tests.security import hostile as h
from tests.server.refusal import refusal

TOKEN = "tracejit-security-token"
MAX_WORKERS = 2
#: how long a test waits for something the server does on its own (not a timing assertion: a deadline)
PATIENCE = 60.0


@pytest.fixture(scope="module")
def workers_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workers") / "workers.log"


def wrapper(folder: Path, log: Path) -> Path:
    """A "Python" that logs each start and end of a worker, then runs the real one."""
    script = folder / "python-logged"
    script.write_text(
        f'#!/bin/sh\necho "start $$" >> {log}\n"{sys.executable}" "$@"\nrc=$?\necho "end $$" >> {log}\nexit $rc\n'
    )
    script.chmod(0o755)
    return script


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, Path], workers_log: Path
) -> Iterator[JupyterServer]:
    ARTIFACTS.mkdir(exist_ok=True)
    base = tmp_path_factory.mktemp("security-server")
    started = start_jupyter_lab(
        base,
        ARTIFACTS / "jupyter-server-security.log",
        extra_args=[
            f"--TracejitOpener.python={wrapper(base, workers_log)}",
            f"--TracejitOpener.max_workers={MAX_WORKERS}",
            "--TracejitOpener.timeout=120",
        ],
        token=TOKEN,
        check_xsrf=True,
    )
    for name, path in files.items():
        shutil.copy(path, started.root / name)
    try:
        yield started
    finally:
        stop_jupyter_lab(started)


def post(server: JupyterServer, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any, Any]:
    """POST the open route as the front end does (the token standing for its XSRF token): (status, JSON, headers)."""
    request = urllib.request.Request(
        f"{server.url}{OPEN_ROUTE}",
        data=json.dumps({"path": path}).encode(),
        headers=headers if headers is not None else {"Authorization": f"token {TOKEN}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=PATIENCE * 2) as resp:
            return resp.status, json.loads(resp.read()), resp.headers
    except urllib.error.HTTPError as exc:
        body = exc.read()
        return exc.code, json.loads(body) if body.startswith(b"{") else body.decode(errors="replace"), exc.headers


def starts(log: Path) -> list[int]:
    return (
        [int(line.split()[1]) for line in log.read_text().splitlines() if line.startswith("start")]
        if (log.exists())
        else []
    )


def most_at_once(log: Path) -> int:
    running, most = 0, 0
    for line in log.read_text().splitlines():
        running += 1 if line.startswith("start") else -1
        most = max(most, running)
    return most


def test_hostile_files_opened_with_a_valid_login_are_refused_and_nothing_runs(server: JupyterServer) -> None:
    """A .pt2 and a .pt (the worker runs tj.load: tests/security/test_files.py has every kind), at once."""
    expected = {
        "opaque_obj.pt2": ("untrusted_pickle", "pickled Python object"),
        "data_pkl.pt": ("untrusted_pickle", "posix.system"),
    }
    assert len(expected) <= MAX_WORKERS
    answers: dict[str, tuple[int, Any, Any]] = {}
    threads = [threading.Thread(target=lambda n=n: answers.__setitem__(n, post(server, n))) for n in expected]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name, (tag, words) in expected.items():
        status, data, _ = answers[name]
        assert status == 200, (name, data)
        run = TraceRun.from_json(data)
        assert run.error is not None and run.error.tag == tag and words in run.error.message, (name, run.error)
        assert "trusted=True" in run.error.hint


def login(server: JupyterServer) -> tuple[urllib.request.OpenerDirector, str]:
    """A browser's session: the login cookie (from the token once) and the ``_xsrf`` cookie."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{server.url}/lab?token={TOKEN}", timeout=PATIENCE).read()
    xsrf = next((c.value for c in jar if c.name == "_xsrf"), None)
    assert xsrf and any(c.name.startswith("username-") for c in jar), [c.name for c in jar]
    return opener, xsrf


def send(opener: urllib.request.OpenerDirector, request: urllib.request.Request) -> tuple[int, str]:
    try:
        with opener.open(request, timeout=PATIENCE * 2) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def test_a_cross_site_navigation_or_form_post_with_the_login_cookie_starts_no_worker(
    server: JupyterServer, workers_log: Path
) -> None:
    opener, xsrf = login(server)
    before = starts(workers_log)
    url = f"{server.url}{OPEN_ROUTE}"
    # a link or `location = ...` on another site: a top-level GET, the Lax cookie sent along
    status, body = send(
        opener, urllib.request.Request(f"{url}?path=opaque_obj.pt2", headers={"Referer": "https://evil.example/"})
    )
    assert status == 405 and "Files open with POST" in body, body
    # a form on another site posting here: the cookie, no XSRF token (with and without its Origin)
    form = b"path=opaque_obj.pt2"
    for headers in ({"Origin": "https://evil.example"}, {}):
        request = urllib.request.Request(
            url, data=form, headers={"Content-Type": "application/x-www-form-urlencoded", **headers}, method="POST"
        )
        status, body = send(opener, request)
        assert status in (403, 404), (headers, status, body)
    assert starts(workers_log) == before, "a cross-site request started a worker"
    # the page itself (its X-XSRFToken header, as ServerConnection sends it) is answered
    request = urllib.request.Request(
        url, data=json.dumps({"path": "traced.pt"}).encode(), headers={"X-XSRFToken": xsrf}, method="POST"
    )
    status, body = send(opener, request)
    assert status == 200 and TraceRun.from_json(json.loads(body)).error is None, body


def test_twenty_opens_at_once_never_run_more_workers_than_the_limit(server: JupyterServer, workers_log: Path) -> None:
    workers_log.write_text("")
    answers: list[tuple[int, Any, Any]] = []
    threads = [threading.Thread(target=lambda: answers.append(post(server, "traced.pt"))) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(status for status, _, _ in answers)
    assert set(statuses) <= {200, 503} and 200 in statuses and 503 in statuses, statuses
    busy = next(data for status, data, _ in answers if status == 503)
    assert "try again" in busy["message"] and "c.TracejitOpener.max_workers" in busy["message"]
    assert next(headers for status, _, headers in answers if status == 503)["Retry-After"]
    assert len(starts(workers_log)) == statuses.count(200)
    assert most_at_once(workers_log) <= MAX_WORKERS


def test_a_client_that_goes_away_takes_its_worker_with_it(
    server: JupyterServer, workers_log: Path, tmp_path: Path
) -> None:
    h.scripted(h.LoopsAtLoad(), server.root / "loops.pt")  # loaded in the worker, it never finishes
    before = starts(workers_log)
    body = json.dumps({"path": "loops.pt"}).encode()
    host, port = re.match(r"http://([^:]+):(\d+)", server.url).groups()  # type: ignore[union-attr]
    client = socket.create_connection((host, int(port)), timeout=PATIENCE)
    client.sendall(
        f"POST /{OPEN_ROUTE.lstrip('/')} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: token {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    deadline = time.monotonic() + PATIENCE
    while len(starts(workers_log)) == len(before):
        assert time.monotonic() < deadline, "no worker started"
        time.sleep(0.1)
    worker = starts(workers_log)[-1]
    client.close()
    while True:
        try:
            os.killpg(worker, 0)
        except ProcessLookupError:
            break  # its whole process group is gone
        assert time.monotonic() < deadline, "the worker outlived its client"
        time.sleep(0.1)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_every_path_error_is_a_4xx_with_its_reason(server: JupyterServer, workers_log: Path) -> None:
    (server.root / "loop-a.pt").symlink_to(server.root / "loop-b.pt")
    (server.root / "loop-b.pt").symlink_to(server.root / "loop-a.pt")
    os.mkfifo(server.root / "pipe.pt")
    before = starts(workers_log)
    for path, status, words in [
        ("loop-a.pt", 400, "goes through a loop of links"),
        ("x" * 5000 + ".pt", 414, "is a name too long for the file system"),
        ("d/" * 3000 + "m.pt", 404, "No file d/d/"),
        ("pipe.pt", 400, "is a FIFO (named pipe), not a regular file"),
        ("traced.pt/inside", 404, "a part of the path is not a folder"),
    ]:
        got, body, _ = post(server, path)
        assert (got, words in body["message"]) == (status, True), (path[:40], got, body)
        assert len(body["message"]) < 400  # a long name is shortened in the answer
    assert starts(workers_log) == before


# -- the reading process, without a server ----------------------------------------------------------------------------
def test_a_worker_that_runs_out_of_its_memory_is_told_like_a_crash(files: dict[str, Path], tmp_path: Path) -> None:
    """A cap too small for torch itself (a __setstate__ allocating past the cap: tests/security/test_files.py)."""
    shutil.copy(files["traced.pt"], tmp_path / "model.pt")
    opener = TracejitOpener(root_dir=str(tmp_path), max_memory=256 * 2**20)
    refused = refusal(opener, "model.pt")
    assert refused.status == 500
    assert refused.message.startswith(
        "Reading model.pt failed: the process that loads it with torch ran out of memory (it may use 256 MiB). "
        "A large model may need more: c.TracejitOpener.max_memory (bytes) where the server starts."
    )
