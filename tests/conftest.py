"""Suite-wide: the explorers made in this process are JupyterLab's unless a test picks a host; the IPython shell the
magic tests (``%trace``, ``%export``, ``%compile``) run in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from jupyter_tracejit.widgets import WIDGET_ENV

from .magic_shell import namespace, notebook

#: what makes ``tj.explore`` pick the anywidget explorer (widgets/__init__.py, ``uses_anywidget``): a suite run
#: from VS Code's terminal (VSCODE_PID), in Colab, or with the override set would otherwise change what the
#: widget and magic tests see; tests/widgets/test_hosts.py sets them itself
HOST_SIGNALS = (WIDGET_ENV, "VSCODE_PID", "COLAB_RELEASE_TAG")


@pytest.fixture(autouse=True)
def no_host_signals(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in HOST_SIGNALS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InteractiveShell]:
    """The IPython shell the magic tests run in, the extension loaded: one per test module (each InteractiveShell
    costs a gc pass at interpreter exit)."""
    from traitlets.config import Config

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
        config = Config()
        config.HistoryManager.hist_file = ":memory:"
        ip = InteractiveShell.instance(config=config)
        ip.run_line_magic("load_ext", "jupyter_tracejit")
        yield ip
        InteractiveShell.clear_instance()


@pytest.fixture
def ip(shell: InteractiveShell) -> Iterator[InteractiveShell]:
    """The shell with the ``%trace`` tests' fresh notebook namespace (restored afterwards); the ``%export`` and
    ``%compile`` tests have their own."""
    with namespace(shell, notebook()) as ip:
        yield ip
