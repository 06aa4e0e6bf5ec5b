"""Driving JupyterLab in Debian's chromium with Playwright: what tests/browser and benchmarks/bench_browser.py share.

- :func:`start_jupyter_lab` / :func:`stop_jupyter_lab`: ``python -m jupyterlab`` from this venv on 127.0.0.1 and a
  free port, with fresh root, config, data, settings and runtime dirs, no token and no news prompt.
- :func:`launch_chromium`: headless ``/usr/bin/chromium`` with the flags that work on these machines
  (``playwright install`` cannot download browsers here).
- :func:`record_page_errors`: collect a page's uncaught errors and console errors.
- :class:`Lab`: what a person does in JupyterLab (write and open a notebook, run cells, save, switch theme,
  screenshot), as steps a test or a benchmark can call.

Why things are done the way they are (see the build recipe): waiting on the toolbar's idle indicator is flaky (we
wait for the status bar's ``| Idle`` and for the prompts), and the notebook is opened with ``?reset`` and looked up
in the *visible* notebook panel only. Playwright and nbformat are imported where they are used: both come with the
test extras (``pip install -e '.[test]'``).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: the source checkout (this module is not in the wheel, so it only ever runs from one)
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SERVER_START_TIMEOUT = 90.0
#: default for waits on the page (kernel start + `import torch` + a trace fit well inside)
WAIT_MS = 30_000

#: the visible notebook panel (JupyterLab keeps hidden panels in the DOM)
NOTEBOOK = ".jp-NotebookPanel:visible"


# -- server -------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class JupyterServer:
    url: str
    root: Path
    log: Path
    process: subprocess.Popen[bytes] = field(repr=False)
    #: what a request must send (``Authorization: token ...``); empty: none
    token: str = field(default="", repr=False)

    def api(self, method: str, path: str) -> Any:
        headers = {"Authorization": f"token {self.token}"} if self.token else {}
        req = urllib.request.Request(f"{self.url}{path}", method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Shut down every session and kernel (frees the memory a torch kernel holds)."""
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")
        for kernel in self.api("GET", "/api/kernels"):
            self.api("DELETE", f"/api/kernels/{kernel['id']}")

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


class ServerStartError(RuntimeError):
    """JupyterLab exited or did not answer; the message carries the end of its log."""


def start_jupyter_lab(
    base: Path, log: Path, extra_args: Sequence[str] = (), token: str = "", check_xsrf: bool = False
) -> JupyterServer:
    """``python -m jupyterlab`` from this venv on 127.0.0.1 and a free port, with fresh root, config, data,
    settings and runtime dirs under ``base``, no token (unless given), no news prompt, and this package's server
    extension (``.pt`` files open in the explorer); ``extra_args`` follow on the command line (a later option wins).
    ``check_xsrf``: keep jupyter_server's XSRF check (off by default: tests drive the API without a browser's
    cookies). Returns once it answers."""
    root, config, data, settings, workspaces, runtime, ipython = (
        base / name for name in ("root", "config", "data", "settings", "workspaces", "runtime", "ipython")
    )
    for d in (root, config, data, settings, workspaces, runtime, ipython):
        d.mkdir()
    # without this, JupyterLab asks whether to fetch news, and the prompt stays up over the page
    notification = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text(json.dumps({"fetchNews": "false"}))

    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(config),
        # the user data dir only (notebook-signing key, ...): extensions and kernels still come from sys.prefix
        JUPYTER_DATA_DIR=str(data),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(workspaces),
        JUPYTER_RUNTIME_DIR=str(runtime),
        IPYTHONDIR=str(ipython),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONUNBUFFERED="1",
    )
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.password=",
        f"--ServerApp.disable_check_xsrf={not check_xsrf}",
        # tests drive JupyterLab's own commands (e.g. the theme) through window.jupyterapp
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        # no extension manager calls out to PyPI
        "--LabApp.extension_manager=readonly",
        # an editable install does not put the wheel's jupyter-config in the venv: enable the extension here
        "--ServerApp.jpserver_extensions={'jupyter_tracejit.server': True}",
        *extra_args,
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # CI containers run as root
    with log.open("wb") as out:
        process = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    server = JupyterServer(url=url, root=root, log=log, process=process, token=token)
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while True:
        if process.poll() is not None:
            raise ServerStartError(f"jupyter lab exited with {process.returncode}:\n{server.log_tail()}")
        try:
            server.api("GET", "/api/status")
            return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                stop_jupyter_lab(server)
                raise ServerStartError(
                    f"jupyter lab did not answer /api/status in {SERVER_START_TIMEOUT:.0f} s:\n{server.log_tail()}"
                ) from None
            time.sleep(0.25)


def stop_jupyter_lab(server: JupyterServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(timeout=5)


# -- browser ------------------------------------------------------------------------------------------


def launch_chromium(playwright: Any) -> Any:
    """Headless Debian chromium from a started ``sync_playwright()``; ``launch()`` uses a fresh profile."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


def record_page_errors(page: Any) -> list[str]:
    """Collect uncaught page errors and console errors on ``page.tracejit_errors`` (and return that list)."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on("console", lambda msg: errors.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None)
    page.tracejit_errors = errors
    return errors


# -- what a person does in JupyterLab ---------------------------------------------------------------


class Lab:
    """What a person does in JupyterLab, as steps a test can call."""

    def __init__(self, page: Any, server: JupyterServer) -> None:
        self.page = page
        self.server = server

    # notebooks on disk
    def write_notebook(
        self, name: str, cells: list[str], outputs: dict[int, list[dict[str, Any]]] | None = None
    ) -> Path:
        """Write ``name`` (code cells from ``cells``) into the server's root dir. ``outputs`` maps a cell
        index to ready-made outputs (nbformat dicts): a notebook written this way is *not trusted*."""
        import nbformat

        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
        for i, src in enumerate(cells):
            cell = nbformat.v4.new_code_cell(src)
            if outputs and i in outputs:
                cell.outputs = [nbformat.from_dict(o) for o in outputs[i]]
                cell.execution_count = i + 1
            nb.cells.append(cell)
        path = self.server.root / name
        nbformat.write(nb, path)
        return path

    def read_notebook(self, name: str) -> Any:
        import nbformat

        return nbformat.read(self.server.root / name, as_version=4)

    # the page
    @property
    def notebook(self) -> Any:
        """The visible notebook panel (scope every selector to it)."""
        return self.page.locator(NOTEBOOK)

    def open_notebook(self, name: str, wait_for_kernel: bool = True) -> Any:
        self.page.goto(f"{self.server.url}/lab/tree/{name}?reset")
        self.page.locator(f"{NOTEBOOK} .jp-Cell").first.wait_for()
        if wait_for_kernel:
            self.wait_for_idle()
        return self.notebook

    def wait_for_idle(self, timeout: float = WAIT_MS) -> None:
        """The status bar says ``| Idle`` (the toolbar's idle indicator is flaky)."""
        self.page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\|\s*Idle")).wait_for(timeout=timeout)

    def run_all(self, timeout: float = WAIT_MS) -> None:
        """Run > Run All Cells from the menu bar, then wait until every code cell has run."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        self.wait_for_cells_run(timeout)

    def run_cell(self, index: int, timeout: float = WAIT_MS) -> None:
        """Click into code cell ``index`` and press Shift+Enter; wait for its prompt to show a number."""
        cell = self.notebook.locator(".jp-Cell").nth(index)
        cell.locator(".jp-InputArea-editor").click()
        self.page.keyboard.press("Shift+Enter")
        expect_prompt = re.compile(r"^\[\d+\]:$")
        prompt = cell.locator(".jp-InputArea-prompt")
        deadline = time.monotonic() + timeout / 1000
        while not expect_prompt.match(prompt.inner_text().strip()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"cell {index} did not finish running in {timeout / 1000:.0f} s")
            self.page.wait_for_timeout(100)
        self.wait_for_idle(timeout)

    def wait_for_cells_run(self, timeout: float = WAIT_MS) -> None:
        """Every code cell's prompt went from ``[ ]:`` / ``[*]:`` to ``[n]:``, and the kernel is idle again."""
        self.page.wait_for_function(
            """(sel) => {
                const panel = [...document.querySelectorAll(sel)].find(p => p.offsetParent !== null);
                if (!panel) return false;
                const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
                return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p.textContent.trim()));
            }""",
            arg=".jp-NotebookPanel",
            timeout=timeout,
        )
        self.wait_for_idle(timeout)

    def outputs(self, cell_index: int) -> Any:
        return self.notebook.locator(".jp-Cell").nth(cell_index).locator(".jp-OutputArea-output")

    def save(self) -> None:
        """Ctrl+S in the notebook, then wait until the tab is no longer marked dirty."""
        self.notebook.locator(".jp-Notebook").click(position={"x": 5, "y": 5})
        self.page.keyboard.press("Control+s")
        self.page.wait_for_function(
            "() => !document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty')", timeout=WAIT_MS
        )

    def command(self, command: str, args: dict[str, Any] | None = None) -> Any:
        """Run a JupyterLab command (``window.jupyterapp``: the server runs with ``expose_app_in_browser``)."""
        self.page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands")
        return self.page.evaluate("([c, a]) => window.jupyterapp.commands.execute(c, a)", [command, args or {}])

    def set_theme(self, theme: str) -> None:
        """``JupyterLab Light`` or ``JupyterLab Dark``; waits until the theme's CSS applies."""
        self.command("apputils:change-theme", {"theme": theme})
        self.page.wait_for_function("(t) => document.body.dataset.jpThemeName === t", arg=theme, timeout=WAIT_MS)
        # let the CSS variables settle before a screenshot
        self.page.wait_for_timeout(300)

    def screenshot(self, name: str, target: Any = None) -> Path:
        """Save ``test-artifacts/screenshots/<name>.png`` of ``target`` (a locator) or of the page."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        (target or self.page).screenshot(path=str(path))
        return path

    def screenshot_themes(self, name: str, target: Any = None) -> list[Path]:
        """Screenshots in the light and the dark theme (``<name>-light.png``, ``<name>-dark.png``); the
        theme is a user setting shared by the session's tests, so it ends light again."""
        paths = [self.screenshot(f"{name}-light", target)]
        self.set_theme("JupyterLab Dark")
        try:
            paths.append(self.screenshot(f"{name}-dark", target))
        finally:
            self.set_theme("JupyterLab Light")
        return paths

    def extension_errors(self) -> list[str]:
        """Browser errors that mention this extension."""
        return [e for e in self.page.tracejit_errors if "tracejit" in e.lower()]
