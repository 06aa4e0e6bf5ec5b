"""Benchmarks of the jupyter-tracejit core against plain ``torch.jit.trace``.

Run ``python benchmarks/bench_core.py [--quick] [--json out.json]``. Every figure is a ratio or a size
measured side by side in this one run (repetitions interleaved, median of N) and *printed* with its
target and PASS/MISS; nothing is asserted, so a slow or busy machine never fails a build.

1. overhead of ``tj.trace`` (+ ``json.dumps(run.to_json())``) over ``torch.jit.trace`` with the same options
   (``bench_overhead.py``);
2. our structural check diff against torch's text diagnostic (``graph_diagnostic_info`` of ``_check_trace``)
   (``bench_diff.py``);
3. JSON bytes per graph node of a run (``bench_overhead.py``, on the runs of 1);
4. dense graphs and fixed costs (``bench_dense.py``): a 12,000-op chain with the check off, a check that fails
   on every op (both against ``torch.jit.trace``), ``extract_graph`` per node, and the fixed cost of a trivial
   trace and of a misuse error.

Each group's script runs alone with the same options; they share ``timing.py`` (figures, interleaved timing,
the runner and summary) and ``core_models.py``. See ``benchmarks/README.md`` for what each figure means.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_dense import dense_section
from bench_diff import diff_section
from bench_overhead import json_section, overhead_section
from timing import main

# the order of the figures: [3] measures the runs of [1], after [2]
SECTIONS = [
    ("overhead", overhead_section),
    ("diff", diff_section),
    ("overhead", json_section),
    ("dense", dense_section),
]

if __name__ == "__main__":
    sys.exit(main(__doc__, SECTIONS))
