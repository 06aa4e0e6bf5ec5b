"""The Jupyter server extension: JupyterLab's "Open With > Trace explorer" on a ``.pt`` / ``.pt2`` file.

``GET /jupyter-tracejit/api/open?path=model.pt`` (a path relative to the server's root dir) answers the run of that
file as JSON (``run.schema.json``), read with torch in the server's environment by a process of its own
(:mod:`.worker`). The front end (labextension/src/archive) shows it in the read-only explorer. Settings: see
:class:`~.handler.TracejitOpener` (``c.TracejitOpener.max_size`` and friends in ``jupyter_server_config.py``).

Users get it enabled by the wheel's ``etc/jupyter/jupyter_server_config.d/jupyter_tracejit.json``. Nothing here
imports torch; the handler is imported when the server loads the extension, so the worker process (``python -m
jupyter_tracejit.server.worker``) does not import jupyter_server.
"""

from __future__ import annotations

from typing import Any


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "jupyter_tracejit.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from jupyter_server.utils import url_path_join

    from .handler import OPEN_ROUTE, OpenHandler, TracejitOpener

    opener = TracejitOpener(
        parent=serverapp,
        root_dir=serverapp.root_dir,
        allow_hidden=bool(getattr(serverapp.contents_manager, "allow_hidden", False)),
    )
    web_app = serverapp.web_app
    route = url_path_join(web_app.settings["base_url"], OPEN_ROUTE)
    web_app.add_handlers(".*$", [(route, OpenHandler, {"opener": opener})])
    serverapp.log.info("jupyter_tracejit: .pt/.pt2 files open in the trace explorer (%s)", route)
