"""Contracts of the JupyterLab extension's build that no browser is needed to check."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import jupyter_tracejit as tj

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_JSON = json.loads((ROOT / "package.json").read_text())
SRC = ROOT / "labextension" / "src"


def test_versions_agree_python_npm_and_widget_module():
    assert PACKAGE_JSON["name"] == "jupyter-tracejit"
    assert PACKAGE_JSON["version"] == tj.__version__
    generated = (SRC / "model" / "protocol.generated.ts").read_text()
    assert f"PACKAGE_VERSION = '{tj.__version__}'" in generated
    version_ts = (SRC / "version.ts").read_text()
    assert "MODULE_VERSION = PACKAGE_VERSION" in version_ts
    assert "MODULE_NAME = 'jupyter-tracejit'" in version_ts


def test_shared_packages_keep_widgets_base_singleton_and_graphviz_private():
    shared = PACKAGE_JSON["jupyterlab"]["sharedPackages"]
    assert shared["@jupyter-widgets/base"] == {"bundled": False, "singleton": True}
    # shared, the worker cannot load it (Module Federation) and dies on start
    assert shared["@hpcc-js/wasm-graphviz"] is False


def test_worker_is_created_in_one_expression_naming_the_compiled_file():
    # rspack emits a worker chunk only for this exact shape; split up, the "worker" runs on the main thread
    layout = (SRC / "graph" / "layout.ts").read_text()
    assert re.search(r"new Worker\(new URL\('\./layout\.worker\.js', import\.meta\.url\)\)", layout)


def test_mime_renderer_is_declared_safe():
    # untrusted notebooks (headless runs, received files) only use safe renderers: see tests/browser
    assert re.search(r"^\s*safe: true,", (SRC / "mime.ts").read_text(), re.MULTILINE)


def test_labextension_path_points_at_the_built_extension():
    (entry,) = tj._jupyter_labextension_paths()
    assert entry == {"src": "labextension", "dest": "jupyter-tracejit"}
    built = Path(tj.__file__).parent / entry["src"]
    if not (built / "package.json").exists():
        pytest.skip("the extension is not built (pip install -e . or npm run build)")
    meta = json.loads((built / "package.json").read_text())
    assert meta["name"] == "jupyter-tracejit" and meta["version"] == tj.__version__
    assert (built / meta["jupyterlab"]["_build"]["load"]).exists()
    chunks = [p.read_text(errors="replace") for p in (built / "static").glob("*.js")]
    assert any("new Worker(" in c for c in chunks), "no worker chunk: the layout would run on the main thread"
