"""``load_archive``: a saved TorchScript archive in, a :class:`~..run.TraceRun` (backend ``trace`` from a ``file``) out.

Nothing of the model runs: the file's layout is read first (:mod:`.layout`: a pickle is refused unopened), then,
unless the file is trusted, its zip directory, pickles and code (:mod:`.guard`: a pickle naming anything beyond
tensors and the archive's own TorchScript classes is refused). ``torch.jit.load`` then reads the archive
(TorchScript's own unpickler, which builds TorchScript types only, never ``torch.load``) inside
:func:`~.guard.guarded_loaders`, with the example inputs a trace stored restored onto the graphs' input types
(``_restore_shapes``: types only, no call). An archive whose TorchScript code runs at load (a ``__setstate__``) is
loaded in a bounded process of its own (:mod:`.sandbox`) unless trusted; the run says what ran. A damaged
``code/*.debug_pkl`` loads without the source ranges, with a finding that says so. Every method of the root
module is extracted as a live trace's graph is (inlined, canonical), with module paths from the inlined call
stacks and each node's original line from the archive's debug source ranges (:mod:`.source`); findings are read
from the graphs alone (:mod:`.findings`). Only the load runs anything: torch's unpickler and, in a bounded
process unless trusted, the archive's ``__setstate__`` methods.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import time
import warnings
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import torch

from ...archive.guard import DEFAULT_MAX_SIZE, Scan, admit, guarded_loaders, refused_load
from ...archive.layout import ArchiveLayout, file_run, inspect_file, load_error, load_failure, open_regular
from ...capture import stamp
from ...errors import TraceError, error_from_exception
from ...inputs import parameter_types
from ...run import Target, TraceRun
from ..canonical import canonical_inlined
from ..extract import extract_graph
from ..schemas import argument_names
from ..session import method_code
from . import sandbox
from .findings import damaged_debug_info, graph_findings, no_debug_info
from .source import archive_source_reader

#: ``run.backend`` of a loaded archive: what captured the graphs it holds (torch.jit.trace or torch.jit.script)
BACKEND = "trace"


def load_archive(
    path: str | os.PathLike[str],
    *,
    map_location: Any = "cpu",
    layout: ArchiveLayout | TraceError | None = None,
    trusted: bool = False,
    max_size: int = DEFAULT_MAX_SIZE,
) -> TraceRun:
    """Read a TorchScript archive (``torch.jit.save``) into a run, never running the model and never raising for
    the file: what is wrong with it is ``run.error`` (phase ``load``, a tag and a hint per case). ``layout``: what
    :func:`~.layout.inspect_file` said of the file, when the caller read it already (``tj.load`` does: a zip
    directory of many weights is worth reading once). Unless ``trusted``, a pickle naming more than tensors is
    refused, and code the archive runs at load (``__setstate__``) runs in a bounded process of its own;
    ``max_size``: the largest total unpacked size read (bytes, from the zip directory)."""
    started = time.perf_counter()
    path_text = os.fspath(path)
    run = file_run(path_text, map_location, BACKEND)
    try:
        if layout is None:
            layout = inspect_file(path_text)
        if isinstance(layout, TraceError):
            run.error = layout
        elif layout.kind == "export":
            run.error = load_error(
                path_text,
                "export_archive",
                f"{path_text} is a torch.export archive (.pt2), not a TorchScript archive.",
                "Open it with tj.load (or tracejit view), which reads both kinds; load_archive reads TorchScript "
                "archives only.",
            )
        else:
            scan = admit(path_text, layout, trusted=trusted, max_size=max_size)
            if isinstance(scan, TraceError):
                run.error = scan
            elif scan.runs_at_load and not sandbox.in_bounded_process():
                return sandbox.load_bounded(
                    path_text,
                    map_location=map_location,
                    methods=scan.runs_at_load,
                    unpacked=sum(i.file_size for i in layout.infos),
                    max_size=max_size,
                )
            else:
                _load(run, path_text, layout, map_location, None if trusted else scan)
    except Exception as e:  # our own bug: record it, never take the kernel down
        run.error = error_from_exception(e, phase="internal")
    return stamp(run, started)


#: torch's notice on every ``torch.jit.load`` (a DeprecationWarning in 2.13, hidden by the default filters; a
#: FutureWarning from 2.14, printed to stderr): about the call we make to read the file, not about the user's code
_LOAD_DEPRECATED = r"`torch\.jit\.load` is deprecated"


def _torch_load(path: str | io.BytesIO, layout: ArchiveLayout, map_location: Any) -> Any:
    """``torch.jit.load`` with the stored example inputs' shapes restored where a trace stored them (torch only
    sets the graphs' input types from them), or without where that fails; torch's deprecation notice for the call
    is not passed on (the user's warning filters are put back as they were)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_LOAD_DEPRECATED)
        if layout.has_traced_inputs:
            try:
                return torch.jit.load(path, map_location=map_location, _restore_shapes=True)
            except Exception:
                if isinstance(path, io.BytesIO):
                    path.seek(0)
        return torch.jit.load(path, map_location=map_location)


def without_debug_info(path: str, layout: ArchiveLayout) -> io.BytesIO:
    """The archive at ``path`` in memory, less its ``code/*.debug_pkl`` members (for a damaged one: torch reads them
    lazily, and raises on the first node whose source range it is asked for)."""
    buffer = io.BytesIO()
    with open_regular(path) as f, zipfile.ZipFile(f) as source, zipfile.ZipFile(buffer, "w") as stripped:
        for info in source.infolist():
            if not info.filename.endswith(".debug_pkl"):
                stripped.writestr(info.filename, source.read(info), compress_type=zipfile.ZIP_STORED)
    buffer.seek(0)
    return buffer


@contextlib.contextmanager
def _guarded(scan: Scan | None, map_location: Any) -> Iterator[list[str]]:
    """:func:`~.guard.guarded_loaders` for an untrusted file (``scan`` is what the pre-scan found), nothing for a
    trusted one."""
    if scan is None:
        yield []
        return
    with guarded_loaders(map_location) as refused:
        yield refused


def _load(run: TraceRun, path: str, layout: ArchiveLayout, map_location: Any, scan: Scan | None) -> None:
    """Load and read the archive into ``run`` (``scan``: what the pre-scan found; ``None`` for a trusted file)."""
    t0 = time.perf_counter()
    damaged: list[str] = []
    refused: list[str] = []
    try:
        with _guarded(scan, map_location) as refused:
            module = _torch_load(path, layout, map_location)
    except Exception as e:
        run.timings["load"] = time.perf_counter() - t0
        run.error = refused_load(path, refused, "torch.jit.load") if refused else load_failure(path, e)
        return
    run.timings["load"] = time.perf_counter() - t0
    if refused:
        run.error = refused_load(path, refused, "torch.jit.load")
        return
    t0 = time.perf_counter()
    try:
        _read_module(run, module, path)
    except RuntimeError as e:
        if damaged or not layout.has_debug_info:
            raise
        # a damaged code/*.debug_pkl: torch raises on the first source range read from it
        damaged = [f"code/*.debug_pkl ({str(e).splitlines()[0]})"]
        run.graphs.clear()
        run.inputs.clear()
        with _guarded(scan, map_location):
            module = _torch_load(without_debug_info(path, layout), layout, map_location)
        _read_module(run, module, path)
    run.traced = module
    run.timings["extract"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tensors = [*module.parameters(), *module.buffers()]
    devices = {str(t.device) for t in tensors}
    for graph in run.graphs.values():
        run.findings += graph_findings(graph, devices)
    first = next(iter(run.graphs), "forward")
    if damaged:
        run.findings.append(damaged_debug_info(damaged, first))
    elif not layout.has_debug_info:
        run.findings.append(no_debug_info(first))
    if scan is not None and scan.runs_at_load:
        run.findings.append(sandbox.code_at_load(scan.runs_at_load))
    run.argument_names = argument_names(run.graphs.values())
    run.parameters = parameter_types(module)
    run.timings["findings"] = time.perf_counter() - t0


def _read_module(run: TraceRun, module: Any, path: str) -> None:
    """Each method's graph of the loaded ``module`` into ``run``, with the module tree's paths and types."""
    root = str(getattr(module, "original_name", "") or type(module).__name__)
    run.target = Target(name=root, kind="script", type=root, file=path)
    types = {name: str(getattr(m, "original_name", type(m).__name__)) for name, m in module.named_modules()}
    resolve = module_paths(types)
    for name in method_names(module):
        ts_method = module._c._get_method(name)
        graph = extract_graph(
            canonical_inlined(ts_method.graph),
            method=name,
            code=functools.partial(method_code, ts_method, module),
            root_type=root,
            parse_source=archive_source_reader(),
            hierarchy_scopes=True,
        ).graph
        for node in graph.nodes:
            node.scope = resolve(node.scope)
        graph = graph.with_scope_types(types)
        run.graphs[name] = graph
        run.inputs[name] = [graph.values[v].shape_str() for v in graph.inputs[1:]]  # the first is the module


def module_paths(types: dict[str, str]) -> Callable[[str], str]:
    """A module path from an inlined call stack (``encoder.0.attention``) -> the module's own (``encoder.layer.0.
    attention``): torch's module hierarchy leaves out the containers a module was reached through (an
    ``nn.ModuleList``'s name), the module tree does not. A level that fits no module is kept as it is."""
    children: dict[str, list[str]] = {}
    for path in types:
        if path:
            children.setdefault(path.rsplit(".", 1)[0] if "." in path else "", []).append(path)

    @functools.cache
    def resolve(path: str) -> str:
        if not path or path in types:
            return path
        current = ""
        for part in path.split("."):
            direct = f"{current}.{part}" if current else part
            if direct in types:
                current = direct
                continue
            through = [f"{c}.{part}" for c in children.get(current, []) if f"{c}.{part}" in types]
            current = through[0] if through else direct
        return current

    return resolve


def method_names(module: Any) -> list[str]:
    """The root module's methods with graphs, ``forward`` first (``__getstate__`` and the like left out)."""
    names = [n for n in module._c._method_names() if not n.startswith("__")]
    return sorted(names, key=lambda n: n != "forward")
