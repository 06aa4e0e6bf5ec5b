"""The torch.export back end's row in the registry (:mod:`..registry`): ``torch.export.export`` captures, and the
exported programs (``torch.export.save``, ``.pt2``) it reads back. Torch-free."""

from __future__ import annotations

from ..backend_row import Backend, SavedFile

BACKEND = Backend(
    name="export",
    package="export",
    label="torch.export",
    captured_by="torch.export.export",
    noun="export",
    verb="export",
    past="exported",
    failure="Export failed",
    check_name="the export check",
    api=("export", "compare"),
    api_module=".export.request",
    options=".export.options:EXPORT_TABLE",
    records="export",
    records_type=".export.records:ExportReport",
    records_schema="ExportReport",
    options_schema="RecordedExportOptions",
    tabs=("guards", "traceVsExport"),
    files=(
        SavedFile(
            layout="export",
            label="saved torch.export",
            what="an exported program (torch.export.save)",
            noun="export",
            file_type="torch-export-archive",
            file_type_label="torch.export archive",
            extensions=(".pt2",),
            loader=".archive.exported:load_exported",
        ),
    ),
    magic="magic_export:register_export_magics",
    command="cli:add_export_command",
)
