"""The figures table the core benchmarks (bench_core.py's groups) and bench_browser.py print: a row a figure, its
measured value, its target and PASS / MISS (``-`` for information only), each row's detail lines under it."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def print_rows(rows: Sequence[Any], measured: str = "measured") -> None:
    """Print ``rows`` (each with ``name``, ``measured``, ``target``, ``status`` and ``details``: lines, as a list or
    one string), ``measured`` heading the measured column."""
    w_name = max([len("figure")] + [len(r.name) for r in rows])
    w_meas = max([len(measured)] + [len(r.measured) for r in rows])
    w_tgt = max([len("target")] + [len(r.target) for r in rows])
    print(f"  {'figure':<{w_name}}  {measured:>{w_meas}}  {'target':<{w_tgt}}  status")
    print(f"  {'-' * w_name}  {'-' * w_meas}  {'-' * w_tgt}  ------")
    for r in rows:
        print(f"  {r.name:<{w_name}}  {r.measured:>{w_meas}}  {r.target:<{w_tgt}}  {r.status}")
        for line in r.details.splitlines() if isinstance(r.details, str) else r.details:
            print(f"  {'':<{w_name}}    {line}")
    sys.stdout.flush()
