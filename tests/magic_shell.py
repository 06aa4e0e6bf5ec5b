"""What the magic tests share: the user's notebook namespace of the ``%trace`` tests, ``run_magic`` recording what
a ``%trace`` (``%export``, ``%compile``) call printed and displayed, and the check for a real kernel (the shell
itself is tests/conftest.py's fixture)."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ipywidgets
import pytest
import torch
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from torch import nn

import jupyter_tracejit as tj
from jupyter_tracejit import magic_output

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


# -- what the user's notebook holds -------------------------------------------------------------------


# Not a shared model: the magic's tests assert the target name "Net", and need Dropout (train/eval) beside a
# second method, encode.
class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.lin(x))

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * 2


class Masked(nn.Module):
    def forward(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return input_ids * mask + 1


def relu_fn(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) + 1


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y


def pick(d: dict[str, torch.Tensor]) -> torch.Tensor:
    return d["a"] * 2


def boom(x: torch.Tensor) -> torch.Tensor:
    raise ValueError("boom inside the traced code")


def returns_a_dict(x: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"a": x + 1}


def notebook() -> dict[str, Any]:
    """The notebook namespace of the ``%trace`` tests (seeded: the same tensors each test)."""
    torch.manual_seed(0)
    return dict(
        torch=torch,
        net=Net(),
        masked=Masked(),
        relu_fn=relu_fn,
        add=add,
        pick=pick,
        boom=boom,
        returns_a_dict=returns_a_dict,
        x=torch.randn(2, 4),
        x2=torch.randn(3, 4),
        x3=torch.randn(5, 4),
        ids=torch.randn(2, 3),
        m=torch.ones(2, 3),
        xs=[torch.randn(3)],
    )


@contextlib.contextmanager
def namespace(shell: InteractiveShell, names: dict[str, Any]) -> Iterator[InteractiveShell]:
    """The shell with ``names`` in its notebook namespace; afterwards the namespace as it was and every widget shown
    in it closed."""
    baseline = dict(shell.user_ns)
    shell.user_ns.update(names)
    try:
        yield shell
    finally:
        ipywidgets.Widget.close_all()
        shell.user_ns.clear()
        shell.user_ns.update(baseline)


@dataclass
class Shown:
    """What one magic call printed and displayed."""

    stdout: str
    stderr: str
    #: the MIME bundles published, updates of a display included
    bundles: list[dict[str, Any]]
    #: the objects handed to magic_output._display
    objects: list[Any] = field(default_factory=list)
    #: ``(display_id, update)`` of each object handed to magic_output._display
    displays: list[tuple[str | None, bool]] = field(default_factory=list)
    #: the UsageError the magic raised (IPython prints it as one line and fails the cell); "" when none
    usage_error: str = ""

    @property
    def final(self) -> list[Any]:
        """What stays on screen: each display's last object (a placeholder is replaced by its update)."""
        last: dict[Any, Any] = {}
        for i, (obj, (display_id, _update)) in enumerate(zip(self.objects, self.displays, strict=True)):
            last[display_id if display_id is not None else i] = obj
        return list(last.values())


def run_magic(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, cell: str | None = None, name: str = "trace"
) -> tuple[Any, Shown]:
    """Run ``%trace line`` (or ``%%trace line`` + cell; ``name="export"``: ``%export``); returns the magic's return
    value and its output."""
    objects: list[Any] = []
    displays: list[tuple[str | None, bool]] = []
    real_display = magic_output._display

    def recording_display(obj: Any, *, raw: bool = False, display_id: str | None = None, update: bool = False) -> None:
        objects.append(obj)
        displays.append((display_id, update))
        real_display(obj, raw=raw, display_id=display_id, update=update)

    monkeypatch.setattr(magic_output, "_display", recording_display)
    usage_error = ""
    with capture_output() as cap:
        try:
            result = ip.run_line_magic(name, line) if cell is None else ip.run_cell_magic(name, line, cell)
        except UsageError as e:
            result, usage_error = None, str(e)
    return result, Shown(cap.stdout, cap.stderr, [o.data for o in cap.outputs], objects, displays, usage_error)


def traced(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, line: str, name: str = "_trace") -> tj.TraceRun:
    """Run ``%trace line`` that must succeed; returns the stored run."""
    result, shown = run_magic(ip, monkeypatch, line)
    assert result is None
    assert shown.stderr == "", shown.stderr
    run = ip.user_ns[name]
    assert isinstance(run, tj.TraceRun)
    return run


def require_kernel() -> None:
    for module in ("ipykernel", "nbclient", "nbformat"):
        pytest.importorskip(module)
    jupyter = Path(sys.executable).parent / "jupyter"
    exe = str(jupyter) if jupyter.exists() else shutil.which("jupyter")
    if exe is None:
        pytest.skip("the jupyter command is not installed")
    out = subprocess.run([exe, "kernelspec", "list"], capture_output=True, text=True)
    if out.returncode != 0 or "python3" not in out.stdout:
        pytest.skip("no python3 kernelspec (pip install ipykernel)")
