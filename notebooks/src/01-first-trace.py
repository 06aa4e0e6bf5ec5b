# %% [markdown]
# # 1 · A first trace: what `torch.jit.trace` records
#
# `torch.jit.trace(model, example_inputs)` **runs your code once** on the example inputs and records every tensor
# operation it sees into a TorchScript graph. It does not read your Python source: what it keeps is a *recording*
# of one execution. This notebook traces a small module, reads the recorded graph three ways (the explorer,
# `.graph`, `.code`) and shows what "records only what ran" means.
#
# Each notebook of this course is saved with its outputs, so you can read it without running anything; run it top
# to bottom (Run ▸ Run All Cells) to get live explorers you can click and re-trace.

# %%
import torch
import torch.nn as nn

import jupyter_tracejit as tj

%load_ext jupyter_tracejit
_ = torch.manual_seed(0)

# %% [markdown]
# ## A small module
#
# Two linear layers with an activation in between, and a Python attribute that scales the result.

# %%
class TinyNet(nn.Module):
    def __init__(self, scale=2.0):
        super().__init__()
        self.encoder = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.head = nn.Linear(8, 2)
        self.scale = scale  # a plain Python float, not a tensor

    def forward(self, x):
        h = self.act(self.encoder(x))
        return self.head(h) * self.scale


model = TinyNet()
x = torch.rand(3, 4)

# %% [markdown]
# `%trace model(x)` traces the call exactly like `torch.jit.trace(model, (x,))` and shows the **explorer**. The
# graph groups nodes by module (`encoder`, `act`, `head`); click a node to see its inputs, outputs, shapes and the
# source line that created it in the inspector on the right. The green badge says nothing looks wrong, and that
# torch's own check (a second trace compared with the first) passed. The run is kept in `_trace`.

# %%
%trace model(x)

# %%
run = _trace
print(run.summary())
run.graph.kinds()

# %% [markdown]
# ## Reading the SSA graph
#
# `run.traced` is what `torch.jit.trace` returned, a `ScriptModule`. Its `.graph` is TorchScript's intermediate
# representation in *static single assignment* form: every value (`%x.1`, `%12`) is assigned exactly once, by one
# node, and each line reads
#
# ```
# %output : Type(shape) = namespace::op[attributes](%inputs) # where it came from
# ```
#
# - `aten::` nodes are tensor operators (ATen is PyTorch's C++ operator library);
# - `prim::Constant` holds a value frozen into the graph — here the Python float `self.scale` became the constant
#   tensor `{2}`;
# - `prim::GetAttr` reads a submodule or a parameter (`encoder`, then its `weight`);
# - `prim::CallMethod` calls a submodule's own graph: `.graph` keeps modules apart, the explorer shows them
#   inlined and grouped by scope.

# %%
traced = run.traced
print(traced.graph)

# %% [markdown]
# `.code` prints the same graph as Python-like code — handy to read, but it is *generated from the graph*, not
# your source. Compare it with `forward` above: the attribute `self.scale` is gone, replaced by the constant
# `CONSTANTS.c0`. The `# /tmp/ipykernel_…py:11:0` comments in `.graph` are the notebook cell's file and line; the
# explorer names them `cell [2], line 11` (the cell that defined `TinyNet`).

# %%
print(traced.code)

# %% [markdown]
# The explorer's inspector links each node back to the line of `forward` that recorded it. In Python, `run.graph`
# is the same graph as data: nodes with their kind, module scope and source line.

# %%
[(n.kind, n.scope, n.source.line) for n in run.graph if n.kind.startswith("aten::")]

# %% [markdown]
# ## Tracing records only what ran
#
# The tracer sees tensor operations. Everything else your Python code does — reading a flag, appending to a
# list, printing — happens while tracing and leaves no trace in the graph.

# %%
seen_shapes = []


def activate(x, kind="relu"):
    seen_shapes.append(tuple(x.shape))  # a Python side effect
    if kind == "relu":  # a Python value, decided while tracing
        return torch.relu(x)
    return torch.tanh(x)


%trace -o act_run activate(x)

# %%
print(act_run.traced.code)
print("Python ran", act_run.python_runs, "times while tracing; seen_shapes =", seen_shapes)

# %% [markdown]
# The graph holds `relu` only: `kind == "relu"` was decided once, and the `tanh` branch does not exist in the
# trace. The list grew **three** times: torch ran the Python function once to trace it, and its check (on by
# default) traced it again and ran it eagerly to compare outputs. The two traced runs appended
# `(tensor(3), tensor(4))`: while tracing, sizes are values the tracer records, not plain ints. Calling the traced function runs the graph only,
# so the side effect never happens again:

# %%
traced_activate = act_run.traced
traced_activate(torch.rand(5, 4))
print(len(seen_shapes), "entries — the traced function did not append")

# %% [markdown]
# Note that the trace gave **no warning**: branching on a *Python* value is allowed (the value is part of how you
# call the model). Branching on a *tensor's* value is where tracing goes wrong; that is notebook 2.
#
# ## Exercise
#
# Trace `nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))` on a `(2, 4)` input with `%trace`.
# 1. How many `aten::linear` nodes does the graph have, and which module scope does each belong to?
# 2. Print the traced module's `.code`. Where did the layers go?
#
# (The solution is in the collapsed cell below: click the `…` bar to expand it.)

# %% [solution]
seq = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
%trace -o seq_run seq(torch.rand(2, 4))
print([(n.kind, n.scope) for n in seq_run.graph if n.kind == "aten::linear"])
# .code of a module calls each submodule's own forward; print a submodule's code to see its operators
print(seq_run.traced.code)
print(getattr(seq_run.traced, "0").code)

# %% [markdown]
# ## What to remember
#
# - A trace is a **recording of one run** on the example inputs: tensor operations only.
# - `.graph` is the SSA graph (values assigned once, `aten::` operators, `prim::Constant` values);
#   `.code` is the same graph printed as code, not your source. The explorer draws it grouped by module and links
#   every node to its source line.
# - Python values (flags, attributes, numbers) are frozen into the graph as constants; Python side effects run
#   while tracing (1 + 2 times with the check on) and never in the traced model.
