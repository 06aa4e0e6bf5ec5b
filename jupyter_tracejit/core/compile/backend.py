"""The ``torch.compile`` back end's row in the registry (:mod:`..registry`): TorchDynamo's graphs, graph breaks and
recompilations of a model run under ``torch.compile``. It reads no saved files. Torch-free."""

from __future__ import annotations

from ..backend_row import Backend

BACKEND = Backend(
    name="compile",
    package="compile",
    label="torch.compile",
    captured_by="torch.compile",
    noun="compiled run",
    verb="compile",
    past="compiled",
    failure="Compiling failed",
    check_name="the compile check",
    api=("compile",),
    api_module=".compile.request",
    options=".compile.options:COMPILE_TABLE",
    records="compile",
    records_type=".compile.records:CompileReport",
    records_schema="CompileReport",
    options_schema="RecordedCompileOptions",
)
