"""``draft_export`` 's private report (``ep._report``) as records (:class:`~.records.DraftFailure`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .guards import _user_at
from .records import DraftFailure
from .shape_env import _safely

_log = logging.getLogger(__name__)


def _printer(failure: Any, files: dict[Any, Any]) -> Callable[[], str]:
    return lambda: str(failure.print(files))


def _interned_files() -> dict[str, int]:
    """torch's process-wide table of interned file names (``torch._logging.structured.INTERN_TABLE``); {} if
    this torch has none."""
    try:
        from torch._logging import structured

        table = getattr(structured, "INTERN_TABLE", None)
        return dict(table) if isinstance(table, dict) else {}
    except Exception:  # a private table: never let it break a report
        return {}


def draft_report(ep: Any) -> list[DraftFailure] | None:
    """``draft_export`` 's private report (``ep._report``: ``failures`` with ``failure_type`` and ``data``, and
    ``str_to_filename`` for the stacks' file numbers) as records; None when the program has none (a plain export)
    or it is not shaped as torch 2.13 makes it."""
    report = getattr(ep, "_report", None)
    if report is None:
        return None
    try:
        # the report lists only the file numbers first seen during the draft: torch interns file names once per
        # process (a file an earlier export met is not repeated), so its whole table fills in the rest
        files = {number: name for name, number in _interned_files().items()}
        files.update(dict(getattr(report, "str_to_filename", None) or {}))
        out = []
        for failure in report.failures:
            ftype = getattr(failure.failure_type, "name", str(failure.failure_type)).lower()
            data = failure.data if isinstance(failure.data, dict) else {}
            file, line = "", 0
            for frame in data.get("user_stack") or data.get("stack") or []:
                name = frame.get("filename")
                # a frame names its file by number; a number the table lacks is no file at all (not "10")
                path = files.get(name, "") if isinstance(name, int) else name
                at = _user_at(str(path or ""), int(frame.get("line") or 0))
                if at[0]:
                    file, line = at[0], at[1]
            message = _safely("a draft failure's text", _printer(failure, files), str(failure))
            out.append(DraftFailure(ftype, str(data.get("expr", "") or ""), file, line, message))
        return out
    except Exception as e:  # a private report whose shape changed
        _log.debug("export report: draft report unreadable: %r", e)
        return None


__all__ = ["draft_report"]
