"""torch's log records (and what it prints to stderr) kept for a capture instead of printed: a failing export or
compile writes several kB of partial graphs and guard tracebacks through torch's loggers. Every back end's."""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator

#: torch's loggers an export writes to stderr through (each has its own stderr handler and does not propagate);
#: any other ``torch`` logger holding handlers when the export starts is captured too
EXPORT_LOGGERS = ("torch", "torch._dynamo", "torch.fx.experimental.symbolic_shapes", "torch.export", "torch._export")

_LOG_FORMAT = "%(levelname).1s %(name)s: %(message)s"


class LogCollector(logging.Handler):
    """Keeps each record's text (exception tracebacks included) instead of printing it."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.setFormatter(logging.Formatter(_LOG_FORMAT))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record))
        except Exception:  # a record whose arguments do not format: keep what can be said of it
            self.lines.append(f"{record.levelname[:1]} {record.name}: {record.msg!r}")

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


#: torch's structured trace (``TORCH_TRACE``, read by tlparse): records with an empty message and the payload in
#: their metadata, written to the user's trace files by its own handler; never taken from them (as many records as
#: torch's trace state in the process decides, so capturing them also made the log differ from run to run)
_STRUCTURED_TRACE = "torch.__trace"


def _torch_loggers() -> list[logging.Logger]:
    """The named loggers, and every existing ``torch.*`` logger with handlers of its own (torch's structured trace
    aside)."""
    names = dict.fromkeys(EXPORT_LOGGERS)
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if name == _STRUCTURED_TRACE:
            continue
        if name.startswith("torch.") and isinstance(logger, logging.Logger) and logger.handlers:
            names[name] = None
    return [logging.getLogger(name) for name in names]


@contextlib.contextmanager
def captured_torch_logs() -> Iterator[LogCollector]:
    """torch's log records go to the yielded collector, not to stderr (nor to the root logger's handlers), for the
    block only: each logger's own handler list (the same list object) and ``propagate`` are put back on every exit
    path. Levels are left alone, so what is captured is what torch would have printed.

    ``sys.stderr`` is swapped too: a failing export ``print`` s its partial FX graph there (torch/export/_trace.py),
    not through a logger. What was written is added to the collector's lines when the block ends."""
    collector = LogCollector()
    saved = [(logger, logger.handlers, logger.propagate) for logger in _torch_loggers()]
    printed = io.StringIO()
    try:
        for logger, _, _ in saved:
            logger.handlers = [collector]
            logger.propagate = False
        with contextlib.redirect_stderr(printed):
            yield collector
    finally:
        for logger, handlers, propagate in saved:
            logger.handlers = handlers
            logger.propagate = propagate
        if printed.getvalue().strip():
            collector.lines.append(printed.getvalue().strip("\n"))


__all__ = ["EXPORT_LOGGERS", "LogCollector", "captured_torch_logs"]
