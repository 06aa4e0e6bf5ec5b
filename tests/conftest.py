"""Suite-wide: the explorers made in this process are JupyterLab's unless a test picks a host."""

from __future__ import annotations

import pytest

from jupyter_tracejit.widgets import WIDGET_ENV

#: what makes ``tj.explore`` pick the anywidget explorer (widgets/__init__.py, ``uses_anywidget``): a suite run
#: from VS Code's terminal (VSCODE_PID), in Colab, or with the override set would otherwise change what the
#: widget and magic tests see; tests/widgets/test_hosts.py sets them itself
HOST_SIGNALS = (WIDGET_ENV, "VSCODE_PID", "COLAB_RELEASE_TAG")


@pytest.fixture(autouse=True)
def no_host_signals(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in HOST_SIGNALS:
        monkeypatch.delenv(name, raising=False)
