"""How a run travels as a notebook output without a kernel: its MIME types and payload.

The extension's kernel-free renderer (labextension/src/mime.ts) reads ``RUN_MIME``; ``%trace`` shows ``PROGRESS_MIME``
while the kernel traces. Kept apart from the widget class, which shows a run through them (`_repr_mimebundle_`).
"""

from __future__ import annotations

import json
from typing import Any

#: the static representation of a run, for renderers without a kernel (and for nbconvert): the run's JSON as one
#: string (see :func:`run_mime_payload`)
RUN_MIME = "application/vnd.jupyter.tracejit+json"
#: the placeholder shown while the kernel traces (explorer.schema.json TraceProgress)
PROGRESS_MIME = "application/vnd.jupyter.tracejit.progress+json"


def run_mime_payload(run_json: dict[str, Any]) -> str:
    """A run as the ``RUN_MIME`` value of an output: its JSON text, not the object.

    JupyterLab deep-copies a JSON output's data (``JSON.parse(JSON.stringify(...))``) each time anything reads the
    output model's ``data``, several times while it adds the output and again for the table of contents; for a
    12,000-node run that object copy is most of the ~0.2 s it blocks the page. A string is copied whole, and the
    renderer parses it once. nbformat keeps a ``+json`` value that is a string as one string.
    """
    return json.dumps(run_json, separators=(",", ":"), ensure_ascii=False)


def run_from_mime(value: Any) -> dict[str, Any]:
    """The run JSON of a saved ``RUN_MIME`` value: the string this version writes, or the object earlier ones wrote."""
    found = json.loads(value) if isinstance(value, str) else value
    if not isinstance(found, dict):
        raise ValueError(f"not a saved jupyter-tracejit run: {RUN_MIME} holds {type(found).__name__}")
    return found


__all__ = ["PROGRESS_MIME", "RUN_MIME", "run_from_mime", "run_mime_payload"]
