# %% [markdown]
# # 3 · Tracer warnings, one by one
#
# When your code does something the tracer cannot record faithfully, torch emits a `TracerWarning` — into a log
# that is easy to miss (and hidden entirely for code in modules whose name starts with `torch`). Each warning means
# *a value was frozen into the graph*: right for the example input, possibly wrong for others. This notebook
# triggers each kind, shows what it did to the graph, and fixes it.
#
# In the explorer, the **Warnings** tab lists each warning once with how often it fired, its source line, and the
# nodes it froze; clicking it selects those nodes in the graph.

# %%
import torch

import jupyter_tracejit as tj

%load_ext jupyter_tracejit
_ = torch.manual_seed(0)
x = torch.rand(3, 4)
x_other = 10 * torch.rand(5, 4)  # other values, other size: a check input that exposes frozen values

# %% [markdown]
# ## 1. Converting a tensor to a Python value (`to_bool`, `to_int`, `to_float`, `to_number`)
#
# `bool(t)` (an `if` on a tensor), `int(t)`, `float(t)` and `t.item()` hand a tensor's value to Python. The tracer
# cannot follow a value into Python, so whatever Python computes from it becomes a constant. Here `int()` decides
# how many rows to sum: the slice end is frozen at the example's value.

# %%
def sum_up_to_peak(x):
    n = int(x[:, 0].argmax())
    return x[: n + 1].sum()


%trace -o int_run sum_up_to_peak(x)

# %%
for w in int_run.user_warnings:
    print(w.category, "at line", w.line, "fired", w.count, "times:", w.message.splitlines()[0][:80], "…")
print(int_run.traced.code)

# %% [markdown]
# The warning fired twice (the trace and the check's re-trace), and `.code` shows the slice end as a number. The
# fix keeps the computation in tensors: a mask built from tensor comparisons is recorded, whatever the values.

# %%
def sum_up_to_peak_fixed(x):
    rows = torch.ones_like(x[:, 0]).cumsum(0) - 1  # 0, 1, 2, ... as a tensor that follows x's size
    return (x * (rows <= x[:, 0].argmax()).unsqueeze(1)).sum()


fixed = tj.trace(sum_up_to_peak_fixed, (x,), check_inputs=[(x_other,)])
print(fixed.summary())
torch.testing.assert_close(fixed.traced(x_other), sum_up_to_peak(x_other))

# %% [markdown]
# ## 2. `torch.tensor(...)` inside the traced code (`tensor_const`)
#
# `torch.tensor(data)` copies Python data into a new tensor; the tracer records the *result* as a constant. With
# constant data that is exactly right (torch's message says you may ignore it). The badge stays amber anyway:
# the warning is still there, and the explorer also notes that the constant was moved to `cpu` by a recorded
# `aten::to` — a device baked into the graph (notebook 5).

# %%
def add_offsets(x):
    return x + torch.tensor([0.5, 1.0, 2.0, 4.0])


%trace -o const_run add_offsets(x)

# %% [markdown]
# With data that came from a tensor it is a frozen value. Two warnings now sit on one line: `.item()` took the
# peak to Python (`to_number`) and `torch.tensor` froze it (`tensor_const`). The check input has other values, so
# the check fails; the **Check** tab names the divergence: the two traces hold different tensor constants.

# %%
def normalize(x):
    peak = torch.tensor(x.abs().max().item())
    return x / peak


%trace --check-inputs [(x_other,)] -o norm_run normalize(x)

# %%
case, root = norm_run.check.first
print(sorted({w.category for w in norm_run.user_warnings}))
print(root.reason)

# %% [markdown]
# The fix: never leave tensor-land. `x / x.abs().max()` is recorded as tensor operators, whatever the values.
#
# ## 3. Iterating over a tensor (`iterate`)
#
# `for row in x` splits `x` into its rows (`aten::unbind`) and unpacks **exactly as many as the example had**
# (`prim::ListUnpack` with three outputs); the loop body is unrolled, one `aten::mul` per row. Click the warning to
# see the nodes it froze.

# %%
def double_rows(x):
    return torch.stack([row * 2 for row in x])


%trace -o iter_run double_rows(x)

# %%
print([w.category for w in iter_run.user_warnings])
print(iter_run.graph.kinds())
try:
    iter_run.traced(x_other)
except RuntimeError as e:
    print("the trace on 5 rows:", str(e).strip().splitlines()[-1])

# %% [markdown]
# The trace cannot take a 5-row input at all. The fix is a whole-tensor operation: `x * 2`. When each row really
# needs its own computation, `torch.jit.script_if_tracing` keeps the loop (notebook 2).
#
# ## 4. `len(tensor)` (`len`)
#
# `len(x)` is a Python `int`: the tracer records the number, not the size. `x.size(0)` (or `x.shape[0]`) is
# recorded as `aten::size`, and follows the input.

# %%
def mean_of_rows(x):
    return x.sum(0) / len(x)


%trace --check-inputs [(x_other,)] -o len_run mean_of_rows(x)

# %%
print(len_run.summary())
print(len_run.traced.code)

# %% [markdown]
# ## 5. In-place operations on views
#
# PyTorch's documentation shows a `TracerWarning: There are 2 live references to the data region being
# modified…` for an assignment into a slice. In torch 2.13 the tracer records in-place operators on views
# faithfully — `x[0] = 0` becomes `aten::fill_` on an `aten::select` of `x` — and says nothing. The warning only
# comes with the private `_force_outplace=True` (the explorer's *force outplace* option), which rewrites in-place
# operators into out-of-place ones — and on this function torch 2.13 then fails with an internal assertion.

# %%
def fill_row_zero(x):
    x[0] = 0
    return x


inplace_run = tj.trace(fill_row_zero, (torch.rand(3, 4),))
print(inplace_run.summary())
print(inplace_run.traced.code)
outplace_run = tj.trace(fill_row_zero, (torch.rand(3, 4),), force_outplace=True)
print([w.category for w in outplace_run.user_warnings])
print(outplace_run.summary()[:120])

# %% [markdown]
# What stays true: the graph **mutates its input**, and so did each of the three Python runs while tracing. An
# in-place write into a view is correct as long as everything that reads it is traced; it goes wrong when the
# mutation is meant to be seen by Python code that the trace no longer runs. Prefer building results out of place
# (`torch.cat`, `torch.where`, `index_put` on a clone) in code you mean to trace.
#
# ## Exercise
#
# `scale_rows` below triggers three different warnings. Find them in the explorer's **Warnings** tab, then write
# `scale_rows_fixed` that computes the same thing without any tracer warning and passes a check on `x_other`
# (5 rows, other values).

# %%
def scale_rows(x):
    factors = torch.tensor([float(i + 1) for i in range(len(x))])
    total = x.sum().item()
    return x * factors.unsqueeze(1) / total


%trace -o exercise_run scale_rows(x)

# %% [solution]
def scale_rows_fixed(x):
    factors = torch.ones_like(x[:, 0]).cumsum(0)  # 1, 2, 3, ... follows x's size and device; no torch.tensor
    return x * factors.unsqueeze(1) / x.sum()  # keep the total a tensor: no .item()


%trace --check-inputs [(x_other,)] -o solved_run scale_rows_fixed(x)
print(sorted({w.category for w in exercise_run.user_warnings}), "->", solved_run.user_warnings)
torch.testing.assert_close(solved_run.traced(x_other), scale_rows(x_other))

# %% [markdown]
# ## What to remember
#
# - Every `TracerWarning` means a value was frozen into the graph. Read them: the explorer lists each once with
#   its line, its count and the nodes it froze, and turns the badge amber.
# - `bool()` / `int()` / `float()` / `.item()` / `.tolist()` / `np.asarray()` take values to Python → keep the
#   computation in tensor operators (`torch.where`, masks, `aten::size` via `x.size(i)`).
# - `torch.tensor(data)` is a constant: fine for constant data, wrong for data computed from inputs.
# - `for row in x` and `len(x)` unroll / freeze the size → use whole-tensor operations and `x.size(0)`.
# - In-place writes into views are recorded (torch 2.13); the "live references" warning is only seen with
#   `_force_outplace`. The traced graph still mutates its input.
