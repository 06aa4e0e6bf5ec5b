"""The TorchScript back end's row in the registry (:mod:`..registry`): ``torch.jit.trace`` captures, and the
TorchScript archives (``torch.jit.save``, ``.pt``) it reads back. Torch-free."""

from __future__ import annotations

from ..backend_row import Backend, SavedFile
from ..command import CommandWords
from ..options import Flag

MAGIC_DOC = """Trace a call with torch.jit.trace and show the trace explorer; the run is stored in ``_trace``.

%trace [options] CALL
    CALL is a call expression evaluated in your namespace; it is traced, not just run:

        %trace model(x)                          # tj.trace(model, (x,))
        %trace f(x, y)                           # tj.trace(f, (x, y))
        %trace model(input_ids=ids, mask=m)      # keyword inputs: example_kwarg_inputs={...}
        %trace --method encode model.encode(x)   # tj.trace_module(model, {"encode": (x,)})
        %trace model.encode(x)                   # the same: a bound nn.Module method other than
                                                 # forward is traced with trace_module
        %trace --eval --probe -o run model(x)    # eval mode for this trace only, probe, store in run
        %trace --check-inputs [(x2,), (x3,)] --tol 1e-4 model(x)
        %trace --quiet model(x)                  # store the run, print one line

    Positional and keyword arguments cannot be mixed, and * / ** unpacking is not allowed: torch.jit.trace
    takes example inputs either as a tuple or as keyword inputs. Option values end at the first blank outside
    brackets, so --check-inputs [(x2,), (x3,)] needs no quotes.

%%trace [options]
    The cell body is code whose last line is the call to trace. Everything before it runs in your namespace
    (definitions stay there), then the last line is traced as CALL. Edit the function, re-run the cell:

        %%trace --eval
        def f(x):
            return x * 2 if x.sum() > 0 else x
        f(torch.randn(3))

The run (a TraceRun) is stored in _trace (or the -o NAME variable) and the explorer in _trace_explorer;
when the explorer re-traces, _trace follows the run on screen (_trace_explorer.run). Display it again with
`_trace` or tj.explore(_trace). A failure inside the traced code is recorded in the run (_trace.ok,
_trace.error) and shown by the explorer; a mistake in the magic's own arguments prints one line and changes
nothing.
"""

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
    check_off="check_trace=False",
    api=(".torchscript.request:trace", ".torchscript.request:trace_module"),
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
            loader=".torchscript.saved.load:load_archive",
        ),
    ),
    command=CommandWords(
        help="trace FILE.py:NAME and report",
        description="Trace NAME from FILE.py (a function, an nn.Module instance, or an nn.Module subclass "
        "instantiated with no arguments). EXPR is Python evaluated in the file's namespace with torch available.",
        target_help="the file and the attribute to trace",
        inputs_help="example inputs: a tuple, a single tensor, or a dict of keyword inputs",
        fail_on_warnings_help="exit 1 also on tracer warnings, findings or a failed probe, not only on a failed "
        "trace or check",
        doing="tracing",
        magic_doc=MAGIC_DOC,
        magic_epilog="Examples: %trace model(x) | %trace --no-check -o run f(x, y) | "
        "%trace --method encode model.encode(x) | %trace --static model(x)",
        examples={
            "--method": "%trace --method encode model.encode(x)",
            "--tol": "%trace --tol 1e-4 model(x)",
            "--check-inputs": "%trace --check-inputs [(x2,), (x3,)] model(x)",
            "--target-device": "%trace --target-device cuda model(x)",
            "--eval": "%trace --eval model(x)",
            "--train": "%trace --eval model(x)",
            "kwargs": "%trace model(input_ids=ids, mask=m)",
            "check_inputs_kw": "%trace --check-inputs [dict(x=x2), dict(x=x3)] model(x=x)",
            "-o": "%trace -o run model(x)",
        },
        option_example="%trace --no-check model(x)",
        inputs_rule="torch.jit.trace takes a tuple of inputs or a dict of keyword inputs",
        mixed_inputs=False,
        magic_arguments=(
            Flag(
                "method",
                "--method",
                "trace this module method with trace_module, e.g. --method encode model.encode(x); inferred when "
                "CALL calls a bound nn.Module method other than forward",
                metavar="NAME",
            ),
        ),
        capture=".torchscript.command:capture",
    ),
)
