"""``tracejit migrate``: many models moved from ``torch.jit.trace`` to ``torch.export`` at once, and kept there.

Each model of the lists (:mod:`.listing`: a TOML or JSON file of ``[[models]]``, or a Python file defining
``MIGRATE``) is exported with ``tj.export(..., compare_trace=True)`` (:mod:`.runner`); its row (:mod:`.report`) says
whether export took it, refused it at which line, which dims it specialised at which lines, what the export check
found, how many of the trace's ops the export matched, and how long each part took. The table is printed, the
report written as JSON (the next run's ``--baseline``: exit 1 when a model regressed) and as one offline HTML page
(:mod:`jupyter_tracejit.render.migration`) whose rows open each model's explorer page. The command line is
:mod:`.command`.
"""

from __future__ import annotations

from .report import MigrationReport, ModelResult, compare

__all__ = ["MigrationReport", "ModelResult", "compare"]
