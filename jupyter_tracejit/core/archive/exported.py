"""``load_exported``: a saved exported program (``torch.export.save``, ``.pt2``) in, an export run out, nothing
captured and nothing of the model run.

The file's layout is read first (:func:`~.layout.inspect_file`), then ``torch.export.load`` reads it. torch's loader
unpickles some members with ``torch.load(weights_only=False)`` (pickled weights, and as a fallback for the example
inputs); here every ``torch.load`` it makes is held to ``weights_only=True`` (:func:`weights_only_loads`), so a
member that is more than tensors is refused rather than run. The run is what :class:`~..export.session.ExportSession`
builds from a live ``ExportedProgram``, by the same code (:func:`~..export.graph.graph_from_exported_program`,
:func:`~..export.report.report_of`, :func:`~..export.report.export_findings`): the signature, the range constraints
and symbols, the runtime asserts. What lived only in the exporting process is not in the file: the guards' user
lines and the symbols' sources (``x.size()[1]``) are read back from the placeholders' symbolic shapes instead.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import time
from collections.abc import Iterator
from typing import Any

import torch

from ..capture import CAPTURE_LOCK, stamp
from ..errors import TraceError, error_from_exception
from ..export.graph import argument_names, graph_from_exported_program
from ..export.records import ExportReport
from ..export.report import export_findings, report_of
from ..export.session import captured_torch_logs
from ..graph import Graph
from ..inputs import tensor_type_str
from ..run import Target, TraceRun
from .layout import ArchiveLayout, load_error
from .load import archive_options, load_failure

#: ``run.backend`` of a loaded exported program: the export's own (the same run, read back)
BACKEND = "export"

#: the exception line of a traceback torch logged (``torch.export.load`` logs what its loader raised, then raises a
#: message of its own that says less)
_EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?(?P<type>\w+(?:Error|Exception)): (?P<message>.+)$", re.MULTILINE)


@contextlib.contextmanager
def weights_only_loads(map_location: Any) -> Iterator[None]:
    """Every ``torch.load`` made in the block unpickles tensors only (``weights_only=True``, whatever its caller
    asked), onto ``map_location`` unless the caller named one. Under :data:`~..capture.CAPTURE_LOCK`: ``torch.load``
    is swapped for the block."""
    real = torch.load

    @functools.wraps(real)
    def tensors_only(f: Any, map_location_: Any = None, *args: Any, **kwargs: Any) -> Any:
        kwargs["weights_only"] = True
        kwargs.pop("pickle_module", None)  # a pickle module and weights_only=True exclude each other
        return real(f, map_location_ if map_location_ is not None else map_location, *args, **kwargs)

    with CAPTURE_LOCK:
        torch.load = tensors_only  # type: ignore[assignment]
        try:
            yield
        finally:
            torch.load = real


def load_exported(path: str, layout: ArchiveLayout, *, map_location: Any = "cpu") -> TraceRun:
    """Read the exported program at ``path`` (whose layout :func:`~.layout.inspect_file` read) into an export run;
    never raises for the file: what is wrong with it is ``run.error`` (phase ``load``)."""
    started = time.perf_counter()
    run = TraceRun(
        target=Target(name=os.path.basename(path), kind="module", file=path),
        options=archive_options(path, map_location),
        backend=BACKEND,
        source="file",
    )
    try:
        _load(run, path, map_location)
    except Exception as e:  # our own bug: record it, never take the kernel down
        run.error = error_from_exception(e, phase="internal")
    return stamp(run, started)


def _load(run: TraceRun, path: str, map_location: Any) -> None:
    t0 = time.perf_counter()
    with captured_torch_logs() as logs, weights_only_loads(map_location):
        try:
            ep = torch.export.load(path)
        except Exception as e:
            ep, failure = None, e
    run.timings["load"] = time.perf_counter() - t0
    if ep is None:
        run.error = _export_load_failure(path, failure, logs.text)
        run.records = ExportReport(log=logs.text)
        return
    run.traced = ep
    t0 = time.perf_counter()
    graph = run.graphs["forward"] = graph_from_exported_program(ep)
    run.timings["graph"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    run.records = report = report_of(ep, graph=graph, log=logs.text)
    sources = placeholder_sources(graph)
    for symbol in report.symbols:
        if not symbol.sources:
            symbol.sources = sources.get(symbol.name, [])
    run.findings.extend(export_findings(report, graph))
    run.timings["report"] = time.perf_counter() - t0
    user = {e.name for e in report.inputs if e.kind == "user_input"}
    run.inputs["forward"] = [graph.values[v].shape_str() for v in graph.inputs if graph.values[v].name in user]
    name = _module_name(ep)
    if name:
        run.target = Target(name=name, kind="module", type=name, file=path)
    run.argument_names = argument_names(graph)
    run.parameters = {
        str(k): tensor_type_str(t) for k, t in {**ep.state_dict, **ep.constants}.items() if isinstance(t, torch.Tensor)
    }


def placeholder_sources(graph: Graph) -> dict[str, list[str]]:
    """``s27 -> ["x.size()[1]"]``: where each symbol of the graph's inputs' shapes sits, as export writes a source
    (the loaded program has no shape environment sources: they lived in the exporting process)."""
    found: dict[str, list[str]] = {}
    for vid in graph.inputs:
        value = graph.values[vid]
        for dim, size in enumerate(value.shape or ()):
            if isinstance(size, str) and re.fullmatch(r"[a-z]+\d+", size):
                found.setdefault(size, []).append(f"{value.name}.size()[{dim}]")
    return found


def _module_name(ep: Any) -> str:
    """The exported module's class name, where torch kept it: the root entry (path ``""``) of an op's
    ``nn_module_stack`` (torch marks ops of no module with a placeholder entry, skipped)."""
    for node in ep.graph.nodes:
        for path, qualified in (node.meta.get("nn_module_stack") or {}).values():
            text = getattr(qualified, "__name__", None) or str(qualified)
            if path == "" and "_empty_nn_module_stack" not in text:
                return text.rsplit(".", 1)[-1].strip("'>")
    return ""


def _export_load_failure(path: str, exc: BaseException, log: str) -> TraceError:
    """:func:`~.load.load_failure` for ``torch.export.load``, with the message of what its loader raised first
    (torch logs it, then tries an older format and raises "We ran into an error when deserializing")."""
    logged = list(_EXCEPTION_LINE.finditer(log))
    if logged and "ran into an error when deserializing" in str(exc):
        first = logged[-1]
        exc = RuntimeError(f"{first.group('type')}: {first.group('message')}")
    if "Weights only load failed" in str(exc) or "weights_only" in str(exc):
        return load_error(
            path,
            "pickle",
            f"{path} holds pickled objects beyond tensors; they were not unpickled (that would run code from the "
            "file).",
            "Export and save the program again with tensors only, or load it yourself with torch.export.load if "
            "you trust where it comes from.",
        )
    return load_failure(path, exc, loader="torch.export.load")


__all__ = ["BACKEND", "load_exported", "placeholder_sources", "weights_only_loads"]
