"""``load_exported``: a saved exported program (``torch.export.save``, ``.pt2``) in, an export run out, nothing
captured and nothing of the model run.

The file's layout is read first (:func:`~.layout.inspect_file`), then, unless the file is trusted, its zip
directory, configs, pickles and shape expressions (:func:`~.guard.admit`): an opaque or custom object, a pickle
naming more than tensors, compiled code or a shape expression that is more than arithmetic is refused before torch
sees the file. Then ``torch.export.load`` reads it inside :func:`~.guard.guarded_loaders`: every unpickling entry
point it could reach refuses, its ``torch.load`` calls read tensors only, its ``sympy.sympify`` calls take plain
expressions only. The run is what :class:`~..export.session.ExportSession`
builds from a live ``ExportedProgram``, by the same code (:func:`~..export.graph.graph_from_exported_program`,
:func:`~..export.report.report_of`, :func:`~..export.findings.export_findings`): the signature, the range constraints
and symbols, the runtime asserts. What lived only in the exporting process is not in the file: the guards' user
lines and the symbols' sources (``x.size()[1]``) are read back from the placeholders' symbolic shapes instead.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from typing import Any

import torch

from ..archive.guard import DEFAULT_MAX_SIZE, TRUSTED_HINT, admit, guarded_loaders, refused_load
from ..archive.layout import ArchiveLayout, file_run, load_error, load_failure
from ..capture import stamp
from ..errors import TraceError, error_from_exception
from ..graph import Graph
from ..inputs import tensor_type_str
from ..run import Target, TraceRun
from ..torch_logs import captured_torch_logs
from .findings import export_findings
from .graph import argument_names, graph_from_exported_program
from .records import ExportReport
from .report import report_of

#: ``run.backend`` of a loaded exported program: the export's own (the same run, read back)
BACKEND = "export"

#: the exception line of a traceback torch logged (``torch.export.load`` logs what its loader raised, then raises a
#: message of its own that says less)
_EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?(?P<type>\w+(?:Error|Exception)): (?P<message>.+)$", re.MULTILINE)


def load_exported(
    path: str,
    layout: ArchiveLayout,
    *,
    map_location: Any = "cpu",
    trusted: bool = False,
    max_size: int = DEFAULT_MAX_SIZE,
) -> TraceRun:
    """Read the exported program at ``path`` (whose layout :func:`~.layout.inspect_file` read) into an export run;
    never raises for the file: what is wrong with it is ``run.error`` (phase ``load``). Unless ``trusted``, nothing
    in the file runs (see the module's docstring); ``max_size``: the largest total unpacked size read."""
    started = time.perf_counter()
    run = file_run(path, map_location, BACKEND, kind="module")
    try:
        scan = admit(path, layout, trusted=trusted, max_size=max_size)
        if isinstance(scan, TraceError):
            run.error = scan
        else:
            _load(run, path, map_location, trusted)
    except Exception as e:  # our own bug: record it, never take the kernel down
        run.error = error_from_exception(e, phase="internal")
    return stamp(run, started)


@contextlib.contextmanager
def _guarded(trusted: bool, map_location: Any) -> Iterator[list[str]]:
    if trusted:
        yield []
        return
    with guarded_loaders(map_location) as refused:
        yield refused


def _load(run: TraceRun, path: str, map_location: Any, trusted: bool) -> None:
    t0 = time.perf_counter()
    with captured_torch_logs() as logs, _guarded(trusted, map_location) as refused:
        try:
            ep = torch.export.load(path)
        except Exception as e:
            ep, failure = None, e
    run.timings["load"] = time.perf_counter() - t0
    if refused:
        run.error = refused_load(path, refused, "torch.export.load")
        run.records = ExportReport(log=logs.text)
        return
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
            "untrusted_pickle",
            f"{path} holds pickled objects beyond tensors; they were not unpickled (that would run code from the "
            "file).",
            TRUSTED_HINT,
        )
    return load_failure(path, exc, loader="torch.export.load")


__all__ = ["BACKEND", "load_exported", "placeholder_sources"]
