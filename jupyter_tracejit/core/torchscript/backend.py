"""The TorchScript back end's row in the registry (:mod:`..registry`): ``torch.jit.trace`` captures, and the
TorchScript archives (``torch.jit.save``, ``.pt``) it reads back. Torch-free."""

from __future__ import annotations

from ..backend_row import Backend, SavedFile

BACKEND = Backend(
    name="trace",
    package="torchscript",
    label="torch.jit.trace",
    captured_by="torch.jit.trace",
    noun="trace",
    verb="trace",
    past="traced",
    failure="Tracing failed",
    check_name="torch's check",
    api=("trace", "trace_module"),
    api_module=".torchscript.request",
    options=".torchscript.options:TRACE_TABLE",
    options_schema="RecordedOptions",
    files=(
        SavedFile(
            layout="torchscript",
            label="saved TorchScript",
            what="a TorchScript archive",
            noun="archive",
            file_type="torchscript-archive",
            file_type_label="TorchScript archive",
            extensions=(".pt",),
            loader=".archive.load:load_archive",
        ),
    ),
    magic="magic:register_trace_magics",
    command="cli:add_trace_command",
)
