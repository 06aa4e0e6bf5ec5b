"""``tracejit view MODEL`` and ``tracejit diff OLD NEW``: saved models from the command line, with the exit status a CI
job reads (view: 0 loaded, 2 unreadable; diff: 0 same, 1 different, 2 a usage error)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
import torch

import jupyter_tracejit as tj
from jupyter_tracejit import cli
from jupyter_tracejit.core.export.options import export_support_problem
from tests.core.test_archive_load import BatchEight
from tests.core.test_saved_models import ConvNet, save_traced
from tests.models import MLP


def tracejit(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("saved")
    return {
        "v1": save_traced(ConvNet(), root / "v1.pt"),
        "v2": save_traced(ConvNet(act=torch.nn.GELU), root / "v2.pt"),
        "batch": save_traced(BatchEight(), root / "batch.pt", torch.randn(8, 12)),
    }


def test_view_writes_the_report_json_and_dot(models: dict[str, Path], tmp_path: Path) -> None:
    html, run_json, dot = tmp_path / "report.html", tmp_path / "run.json", tmp_path / "graph.dot"
    code, out, err = tracejit("view", models["v1"], "-o", html, "--json", run_json, "--dot", dot)
    assert (code, err) == (0, "")
    assert out.startswith("ConvNet: ok") and f"wrote {html}" in out
    data = json.loads(run_json.read_text())
    assert (data["backend"], data["source"]) == ("trace", "file") and data["options"]["path"] == str(models["v1"])
    assert "aten::_convolution" in dot.read_text() and html.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))
def test_view_opens_an_exported_program(tmp_path: Path) -> None:
    path = tmp_path / "mlp.pt2"
    seq = torch.export.Dim("seq", min=2, max=64)
    torch.export.save(torch.export.export(MLP(), (torch.randn(3, 5, 16),), dynamic_shapes={"x": {1: seq}}), str(path))
    code, out, _ = tracejit("view", path, "--json", tmp_path / "run.json")
    assert code == 0 and out.startswith("MLP: ok")
    data = json.loads((tmp_path / "run.json").read_text())
    assert data["backend"] == "export"
    assert [(s["min"], s["max"]) for s in data["records"]["symbols"]] == [(2, 64)]
    # the signature and the symbols with their ranges; a loaded file is never "not checked" (nothing ran)
    assert "signature: (x) -> (" in out and "parameters" in out
    symbol = data["records"]["symbols"][0]["name"]
    assert f"{symbol} = x.size()[1], range [2, 64]" in out
    assert "not checked" not in out and "check_trace=False" not in out and "read from a file, nothing run" in out
    page = tj.load(path).to_html()
    assert "nothing was checked" in page and "check_trace=False" not in page


def test_view_of_what_cannot_be_read_is_a_usage_error(tmp_path: Path) -> None:
    code, out, err = tracejit("view", tmp_path / "absent.pt")
    assert (code, out) == (2, "") and err == f"tracejit: error: no such file: {tmp_path / 'absent.pt'}\n"
    text = tmp_path / "notes.pt"
    text.write_text("not a model\n")
    code, _, err = tracejit("view", text)
    assert code == 2 and "is not a TorchScript archive nor an exported program" in err
    assert "torch.export.save" in err  # the hint, on its own line


def test_view_output_must_not_overwrite_the_model(models: dict[str, Path]) -> None:
    code, _, err = tracejit("view", models["v1"], "-o", models["v1"])
    assert code == 2 and "would overwrite" in err


def test_diff_exit_codes_and_outputs(models: dict[str, Path], tmp_path: Path) -> None:
    page, data = tmp_path / "diff.html", tmp_path / "diff.json"
    code, out, _ = tracejit("diff", models["v1"], models["v1"], "-o", page, "--json", data, "--values")
    assert code == 0 and out.startswith("same: ") and json.loads(data.read_text())["same"] is True
    code, out, _ = tracejit("diff", models["v1"], models["v2"], "-o", page, "--json", data)
    assert code == 1 and "block.1: 1 op changed (aten::relu -> aten::gelu)" in out
    assert json.loads(data.read_text())["scopes"][0]["scope"] == "block.1"
    # the explorer's page on the new model, carrying the diff for its Diff tab (tests/browser/test_diff_view.py)
    text = page.read_text()
    assert "<title>" in text and "-&gt; " in text and ": different · jupyter-tracejit</title>" in text
    assert "block.1: 1 op changed (aten::relu -&gt; aten::gelu)" in text  # the text, where scripts are off
    assert '"diff_against":' in text


def test_diff_usage_errors(models: dict[str, Path], tmp_path: Path) -> None:
    code, _, err = tracejit("diff", models["v1"], tmp_path / "absent.pt")
    assert code == 2 and "no such file" in err
    code, _, err = tracejit("diff", models["v1"], models["v2"], "--atol", "0.1")
    assert code == 2 and "--atol is the tolerance of --values" in err
    broken = tmp_path / "cut.pt"
    broken.write_bytes(models["v1"].read_bytes()[:200])
    code, _, err = tracejit("diff", models["v1"], broken)
    assert code == 2 and "cut short" in err


def test_view_fails_on_findings_when_asked(models: dict[str, Path]) -> None:
    assert tracejit("view", models["batch"])[0] == 0
    code, out, _ = tracejit("view", models["batch"], "--fail-on-warnings")
    assert code == 1 and "frozen" in out, out
    assert tracejit("view", models["v1"], "--fail-on-warnings")[0] == 0


PAIRS = """
import torch
from torch.utils import _pytree as pytree


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


pytree.register_pytree_node(
    Pair, lambda p: ([p.a, p.b], None), lambda values, _: Pair(*values), serialized_type_name=f"{__name__}.Pair"
)


class ReturnsPair(torch.nn.Module):
    def forward(self, x):
        return Pair(x + 1, x * 2)
"""


@pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))
def test_view_imports_the_module_that_registers_a_programs_output_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A .pt2 returning a class its exporter registered with torch's pytree (a transformers ModelOutput) loads in a
    fresh Python only once that module is imported: the error names the module and --import; --import loads it."""
    import importlib
    import sys

    from torch.utils import _pytree as pytree

    (tmp_path / "pairs_for_view.py").write_text(PAIRS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    pairs = importlib.import_module("pairs_for_view")
    torch.export.save(torch.export.export(pairs.ReturnsPair(), (torch.randn(3),)), "pair.pt2")
    pytree._deregister_pytree_node(pairs.Pair)  # as in a fresh Python that never imported it
    del sys.modules["pairs_for_view"]

    code, out, err = tracejit("view", "pair.pt2")
    assert code == 2 and "import pairs_for_view before tj.load" in err and "--import pairs_for_view" in err, err
    try:
        code, out, err = tracejit("view", "pair.pt2", "--import", "pairs_for_view")
        assert (code, err) == (0, "") and out.startswith("ReturnsPair: ok"), (out, err)
    finally:
        pytree._deregister_pytree_node(sys.modules.pop("pairs_for_view").Pair)
    code, _, err = tracejit("view", "pair.pt2", "--import", "no_such_module_here")
    assert code == 2 and "--import no_such_module_here: ModuleNotFoundError" in err, err
