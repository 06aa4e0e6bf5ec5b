"""The ``torch.compile`` back end's row in the registry (:mod:`..registry`): TorchDynamo's graphs, graph breaks and
recompilations of a model run under ``torch.compile``; its ``tracejit compile`` command and ``%compile`` magic. It
reads no saved files. Torch-free."""

from __future__ import annotations

from ..backend_row import Backend
from ..command import CommandWords

MAGIC_DOC = """Run a call under torch.compile and show the explorer; the run is stored in ``_compile``.

%compile [options] CALL
    CALL is a call expression evaluated in your namespace; the model is compiled and called with it, then
    with each input set of --calls in order, as your own code would call torch.compile(model):

        %compile model(x)                                 # tj.compile(model, (x,))
        %compile model(ids, attention_mask=mask)          # positional and keyword inputs together
        %compile --calls [(x5,), (x7,)] model(x)          # two more calls: recompilations show
        %compile --calls [dict(input_ids=ids2)] model(input_ids=ids)   # a dict: a call's keyword inputs
        %compile --dynamic --calls [(x5,)] model(x)       # dynamic=True: every size dynamic from the start
        %compile --no-dynamic --calls [(x5,)] model(x)    # dynamic=False: every new size compiles again
        %compile --fullgraph model(x)                     # the first graph break is an error at its line
        %compile --backend inductor -o run model(x)       # inductor's compile time per graph; store in run

    The graphs are dynamo's (backend eager by default: the same graphs and breaks as inductor, without a C++
    compiler). * / ** unpacking is not allowed. Option values end at the first blank outside brackets, so
    --calls [(x2,), (x3,)] needs no quotes. A model you compiled yourself (torch.compile(model)) is compiled
    afresh from its original: your compiled model and its caches are left as they were.

%%compile [options]
    The cell body is code whose last line is the call to compile. Everything before it runs in your namespace
    (definitions stay there), then the last line is compiled as CALL:

        %%compile --calls [(torch.randn(5, 3),)]
        class Net(torch.nn.Module):
            def forward(self, x):
                print("called")               # a graph break
                return x.relu() * 2
        Net()(torch.randn(4, 3))

The run (a TraceRun with backend "compile") is stored in _compile (or the -o NAME variable) and the explorer
in _compile_explorer; when the explorer compiles again, _compile follows the run on screen
(_compile_explorer.run). Graph breaks and recompilations are in the run (_compile.compile.graph_breaks,
_compile.compile.recompilations) and in the explorer's "Graph breaks" and "Recompilations" tabs; a mistake in
the magic's own arguments prints one line and changes nothing.
"""

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
    check_off="check=False",
    api=(".compile.request:compile",),
    options=".compile.options:COMPILE_TABLE",
    records="compile",
    records_type=".compile.records:CompileReport",
    records_schema="CompileReport",
    options_schema="RecordedCompileOptions",
    tabs=("graphBreaks", "recompilations"),
    command=CommandWords(
        help="run FILE.py:NAME under torch.compile and report its graph breaks and recompilations",
        description="Run NAME from FILE.py under torch.compile (a function, an nn.Module instance, or an nn.Module "
        "subclass instantiated with no arguments), called with --inputs and then with each input set of --calls, "
        "and report what dynamo did: its graphs, every graph break at your line with torch's explanation and "
        "hints, every recompilation with the guard that failed, the check of every call against the eager model. "
        "EXPR is Python evaluated in the file's namespace with torch available. Exit status: 0 one graph per "
        "function and no recompilation, 1 graph breaks, recompilations or a failed compile or check, 2 usage error "
        "(a CI gate for 'this model compiles to one graph').",
        target_help="the file and the attribute to compile",
        inputs_help="the first call's inputs: a tuple, a single tensor, or a dict of keyword inputs",
        fail_on_warnings_help="exit 1 also on findings that are not graph breaks or recompilations (a graph that "
        "is too small, a Python side effect)",
        doing="compiling",
        magic_doc=MAGIC_DOC,
        magic_epilog="Examples: %compile model(x) | %compile --calls [(x5,), (x7,)] model(x) | "
        "%compile --fullgraph model(x) | %compile --dynamic --backend aot_eager -o run model(x, mask=m)",
        examples={
            "-o": "%compile -o run model(x)",
            "--calls": "%compile --calls [(x2,), (x3,)] model(x)",
            "--backend": "%compile --backend aot_eager model(x)",
            "--dynamic": "%compile --dynamic --calls [(x2,)] model(x)",
            "--fullgraph": "%compile --fullgraph model(x)",
            "--eval": "%compile --eval model(x)",
            "kwargs": "%compile model(x, attention_mask=m)",
        },
        option_example="%compile --fullgraph model(x)",
        inputs_rule="torch.compile calls the model with positional and keyword inputs",
        mixed_inputs=True,
        capture=".compile.command:capture",
    ),
)
