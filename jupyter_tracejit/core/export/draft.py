"""``draft_export`` 's report as records (:func:`draft_report`), and a refused dim located by a draft's
specialisation (:func:`locate_refused_dim`)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from ..errors import TraceError
from ..source import is_torch_file, source_line
from .guards import _user_at
from .records import DraftFailure, ExportReport
from .shape_env import _safely, specialization

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


def locate_refused_dim(error: TraceError, report: ExportReport) -> None:
    """Export refused a ``Dim`` ("Constraints violated") without naming a line of the user's; the draft's
    specialisation of that dim names it. The error moves to that line, its hint saying which size became which
    constant. A range only some of whose sizes the code takes ("Not all values of n ... satisfy the generated
    guard") is put at the draft's first guard added in the user's code, the hint quoting that guard."""
    if error.tag != "constraint_violation":
        return
    # the user's line of a draft guard: where the code called into torch's (nn.LSTM specialises the length inside)
    added_at = {
        f.expr: (f.file, f.line)
        for f in reversed(report.draft or [])
        if f.failure_type == "guard_added" and f.file and not is_torch_file(f.file)
    }
    for guard in report.guards_of("specialization"):
        spec = specialization(guard.expr)
        at = (guard.file, guard.line) if guard.file else added_at.get(guard.expr)
        if spec is None or at is None:
            continue
        name, value = spec
        symbol = report.symbol(name)
        what = symbol.sources[0] if symbol is not None and symbol.sources else name
        error.file, error.line = at
        error.code = guard.code if guard.file else source_line(*at)
        error.hint = f"{what} became the constant {value} on this line ({guard.expr}). {error.hint}"
        return
    if "Not all values of" not in error.message:
        return
    # a range only some of whose sizes the code takes: the draft's first guard added at a line of the user's
    for failure in report.draft or []:
        if failure.failure_type != "guard_added" or not failure.file or is_torch_file(failure.file):
            continue
        sources = [
            f"{name} is {symbol.sources[0]}"
            for name in dict.fromkeys(re.findall(r"\b[su]\d+\b", failure.expr))
            if (symbol := report.symbol(name)) is not None and symbol.sources
        ]
        error.file, error.line = failure.file, failure.line
        error.code = source_line(failure.file, failure.line)
        where = f" ({', '.join(sources)})" if sources else ""
        error.hint = f"This line works for only some sizes: export needs {failure.expr}{where}. {error.hint}"
        return


__all__ = ["draft_report", "locate_refused_dim"]
