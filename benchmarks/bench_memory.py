"""What explorers keep alive: kernel memory (RSS) over many re-traces and many ``%%trace`` runs.

Prints figures; asserts nothing. Two measurements, each side by side in one process:

[1] 100 live re-traces of a mid-size model in one explorer (history_limit 10): RSS after 10 and after 100
    re-traces. Bounded means the history lets go of the ScriptModules it drops.
[2] A ``%%trace`` cell that builds a 96 MB model, re-run 30 times: RSS growth per re-run, once with the magic's
    bookkeeping (a re-run closes the explorer its previous run showed) and once with it switched off (every
    explorer stays alive, as before the fix).

Usage: .venv/bin/python benchmarks/bench_memory.py [--quick]
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import platform
import sys
import warnings

import torch
from torch import nn

MB = 1024 * 1024


def rss_mb() -> float:
    """Resident memory after a full collection and giving freed heap back to the OS (what the kernel holds)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def mid_size_model() -> nn.Module:
    layer = nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True)
    return nn.TransformerEncoder(layer, 6, enable_nested_tensor=False).eval()


def bench_retraces(n: int) -> None:
    from jupyter_tracejit.widgets import explore

    model, x = mid_size_model(), torch.randn(2, 16, 256)
    params = sum(p.numel() * p.element_size() for p in model.parameters()) / MB

    def now(delay: float, fn):
        fn()

        class Done:
            def cancel(self) -> None:
                pass

        return Done()

    ex = explore(model, (x,), scheduler=now, debounce=0.0, settle=0.0)
    start = rss_mb()
    marks: dict[int, float] = {}
    for i in range(1, n + 1):
        ex.options = {"no_grad": i % 2 == 1, "check_tolerance": 1e-5 * (1 + i % 3)}
        if i in (10, n):
            marks[i] = rss_mb()
    assert len(ex.history) == ex.history_limit, len(ex.history)
    print(f"[1] {n} re-traces of a 6-layer TransformerEncoder ({params:.1f} MB of parameters), history_limit 10")
    print(f"    RSS at start {start:8.1f} MB")
    for i, v in marks.items():
        print(f"    after {i:3d}    {v:8.1f} MB  (+{v - start:.1f})")
    print(f"    growth from 10 to {n} re-traces: {marks[n] - marks[10]:+.1f} MB  (bounded: ~0)")
    ex.close()


CELL = """
class Big(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(*[nn.Linear(1024, 1024) for _ in range(24)])  # 24 x 4 MB = 96 MB
    def forward(self, x):
        return self.layers(x)
big = Big()
big(torch.randn(2, 1024))
"""


def bench_cell_reruns(n: int) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    from jupyter_tracejit import magic, magic_output

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    ip = InteractiveShell.instance(config=config)
    ip.run_line_magic("load_ext", "jupyter_tracejit")
    ip.user_ns.update(torch=torch, nn=nn)
    magic_output._display = lambda *args, **kwargs: None  # no front end: nothing to show

    def reruns(keep_live: bool) -> tuple[float, float]:
        original = magic.CaptureMagic._keep_live
        if not keep_live:
            magic.CaptureMagic._keep_live = lambda self, explorer: None  # type: ignore[method-assign]
        magic._cell_id = lambda shell: "the-cell"  # type: ignore[assignment]  # JupyterLab's cellId of one cell
        try:
            ip.run_cell_magic("trace", "--no-check", CELL)
            first = rss_mb()
            for _ in range(n - 1):
                ip.run_cell_magic("trace", "--no-check", CELL)
            return first, rss_mb()
        finally:
            magic.CaptureMagic._keep_live = original  # type: ignore[method-assign]
            import ipywidgets

            ipywidgets.Widget.close_all()
            ip.user_ns.pop("_trace", None)
            ip.user_ns.pop("_trace_explorer", None)
            ip.user_ns.pop("big", None)
            rss_mb()

    print(f"[2] a %%trace cell building a 96 MB model, run {n} times")
    old_first, old_last = reruns(keep_live=False)
    new_first, new_last = reruns(keep_live=True)
    per_old = (old_last - old_first) / (n - 1)
    per_new = (new_last - new_first) / (n - 1)
    print(f"    every explorer kept (before):  {old_first:8.1f} -> {old_last:8.1f} MB  ({per_old:+.1f} MB per re-run)")
    print(f"    re-run closes the previous:    {new_first:8.1f} -> {new_last:8.1f} MB  ({per_new:+.1f} MB per re-run)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="30 re-traces and 10 cell runs instead of 100 and 30")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    print(f"{platform.platform()}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, torch {torch.__version__}")
    bench_retraces(30 if args.quick else 100)
    bench_cell_reruns(10 if args.quick else 30)


if __name__ == "__main__":
    main()
