"""The torch.export back end's row in the registry (:mod:`..registry`): ``torch.export.export`` captures, and the
exported programs (``torch.export.save``, ``.pt2``) it reads back. Torch-free."""

from __future__ import annotations

from ..backend_row import Backend, SavedFile
from ..command import CommandWords

MAGIC_DOC = """Export a call with torch.export and show the explorer; the run is stored in ``_export``.

%export [options] CALL
    CALL is a call expression evaluated in your namespace; it is exported, not just run:

        %export model(x)                                # tj.export(model, (x,))
        %export model(x, mask=m)                        # tj.export(model, (x,), {"mask": m})
        %export f(x, y)                                 # a function: tj.export wraps it in a module
        %export --dynamic "x:0=batch[2,64]" model(x)    # dim 0 of x is Dim("batch", min=2, max=64)
        %export --dynamic x:0=batch --dynamic mask:0=batch model(x, mask=m)   # one symbol for both
        %export --dynamic x:1 model(x)                  # dim 1 of x is Dim.AUTO: export names it
        %export --dynamic "x:1=8*seq[1,16]" model(x)    # dim 1 of x is 8 * Dim("seq", min=1, max=16)
        %export --auto-dynamic --check-inputs [(x2,)] model(x)   # the dims that differ become Dim.AUTO
        %export --strict --eval -o run model(x)         # strict (TorchDynamo), eval mode, store in run
        %export --draft always --compare-trace model(x) # draft_export's report too; beside a trace

    --dynamic names an argument of forward (NAME:DIM, NAME:DIM=SYMBOL, NAME:DIM=SYMBOL[MIN,MAX]) as
    `tracejit export --dynamic` does. * / ** unpacking is not allowed; a bound method other than forward
    cannot be exported (torch.export exports forward). Option values end at the first blank outside
    brackets, so --check-inputs [(x2,), (x3,)] needs no quotes.

%%export [options]
    The cell body is code whose last line is the call to export. Everything before it runs in your namespace
    (definitions stay there), then the last line is exported as CALL:

        %%export --dynamic x:0
        class Net(torch.nn.Module):
            def forward(self, x):
                return x.relu() * 2
        Net()(torch.randn(4, 3))

The run (a TraceRun with backend "export") is stored in _export (or the -o NAME variable) and the explorer
in _export_explorer; when the explorer re-exports, _export follows the run on screen
(_export_explorer.run). A failure inside the model (a data-dependent branch...) is recorded in the run
(_export.ok, _export.error) and shown by the explorer; a mistake in the magic's own arguments prints one
line and changes nothing.
"""

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
    api=(".export.request:export", ".export.request:compare"),
    options=".export.options:EXPORT_TABLE",
    records="export",
    records_type=".export.records:ExportReport",
    records_schema="ExportReport",
    options_schema="RecordedExportOptions",
    tabs=("guards", "traceVsExport"),
    actions=(
        ("draft", ".export.request:draft_run"),
        ("dims", ".export.dim_specs:editor_state"),
        ("with_dims", ".export.dim_specs:dims_changes"),
    ),
    files=(
        SavedFile(
            layout="export",
            label="saved torch.export",
            what="an exported program (torch.export.save)",
            noun="export",
            file_type="torch-export-archive",
            file_type_label="torch.export archive",
            extensions=(".pt2",),
            loader=".export.saved:load_exported",
        ),
    ),
    command=CommandWords(
        help="export FILE.py:NAME with torch.export and report",
        description="Export NAME from FILE.py with torch.export (a function, an nn.Module instance, or an nn.Module "
        "subclass instantiated with no arguments) and report what it recorded: guards, specialised sizes, the check "
        "of the exported program against the Python code. EXPR is Python evaluated in the file's namespace with "
        "torch available. Exit status: 0 ok, 1 problems (a failed export or check), 2 usage error.",
        target_help="the file and the attribute to export",
        inputs_help="example inputs: a tuple, a single tensor, or a dict of keywords",
        fail_on_warnings_help="exit 1 also on findings (a specialised size...), not only on a failed export or check",
        doing="exporting",
        magic_doc=MAGIC_DOC,
        magic_epilog='Examples: %export model(x) | %export --dynamic "x:0=batch[2,64]" model(x) | '
        "%export --auto-dynamic --check-inputs [(x2,)] -o run model(x) | %export --strict --eval model(x, mask=m)",
        examples={
            "-o": "%export -o run model(x)",
            "--dynamic": "%export --dynamic x:0=batch[2,64] model(x)",
            "--auto-dynamic": "%export --auto-dynamic --check-inputs [(x2,)] model(x)",
            "--check-inputs": "%export --check-inputs [(x2,), (x3,)] model(x)",
            "--draft": "%export --draft always model(x)",
            "--eval": "%export --eval model(x)",
        },
        option_example="%export --strict model(x)",
        inputs_rule="torch.export takes a tuple of positional inputs and a dict of keyword inputs",
        mixed_inputs=True,
        capture=".export.command:capture",
    ),
)
