# %% [markdown]
# # 2 · Control flow and shapes: when one recording is not enough
#
# A trace records the path your code took **for the example input**. When that path depends on the *values* or
# the *shape* of a tensor, the recording is right for the example and wrong for other inputs — usually without an
# error. This notebook shows the two classic cases, how to catch them (`check_inputs`, the divergence stepper, the
# generalization probe) and how to fix them with scripting.

# %%
import torch

import jupyter_tracejit as tj

%load_ext jupyter_tracejit
_ = torch.manual_seed(0)

# %% [markdown]
# ## A data-dependent branch
#
# `if x.sum() > 0` turns a tensor into a Python `bool`. The tracer cannot record a Python `if`: it records the
# branch that ran and warns (`TracerWarning: Converting a tensor to a Python boolean...`). The explorer's badge is
# amber; open the **Warnings** tab and click the `to_bool` warning: it selects the nodes recorded at that line.

# %%
def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


%trace branchy(torch.ones(3))

# %% [markdown]
# The trace multiplies, always. On an input that should take the other branch it silently computes the wrong
# thing:

# %%
traced_branchy = _trace.traced
negative = -2 * torch.ones(3)
print("eager :", branchy(negative))
print("traced:", traced_branchy(negative))

# %% [markdown]
# ## Catching it: `check_inputs`
#
# By default torch checks a trace by tracing the *same* inputs again, which cannot find this. `check_inputs`
# gives it other inputs: torch re-traces on each and compares the graphs and the outputs. Here the check input
# takes the other branch, so the check **fails** (red badge). The **Check** tab shows the trace and the check
# trace side by side and steps through the places where they differ (the *divergences*).

# %%
%trace --check-inputs [(negative,)] -o branch_run branchy(torch.ones(3))

# %%
case, root = branch_run.check.first
print(root.reason)

# %% [markdown]
# ## A loop over a dimension
#
# This is the example of PyTorch's own documentation. `range(x.size(0))` is a Python `int` while tracing, so the
# loop is **unrolled**: three multiplications for a 3-row input, whatever the size of later inputs. torch gives no
# warning at all. With a check input of another size, torch's check fails:

# %%
def loop_in_traced_fn(x):
    result = x[0]
    for i in range(x.size(0)):
        result = result * x[i]
    return result


inputs = (torch.rand(3, 4, 5),)
check_inputs = [(torch.rand(4, 5, 6),), (torch.rand(2, 3, 4),)]
try:
    torch.jit.trace(loop_in_traced_fn, inputs, check_inputs=check_inputs)
except torch.jit.TracingCheckError as e:
    message = str(e)
    print(f"torch's error: {len(message.splitlines())} lines; its first diverging operator:")
    print(message[message.index("First diverging operator"):].splitlines()[:6])

# %% [markdown]
# torch's "first diverging operator" is a **false lead**: it compares the printed graphs line by line, and the
# first pair of lines that differs here differs only by a value's debug name (`%result` vs `%result.5`). The
# explorer matches the two graphs by structure instead and names what really changed: an extra `aten::select`
# (and its multiplication) for the fourth row. Step through the divergences in the **Check** tab with its ‹ ›
# buttons; each one highlights the node in both graphs.

# %%
loop_run = tj.trace(loop_in_traced_fn, inputs, check_inputs=[(torch.rand(4, 5, 6),)])
case, root = loop_run.check.first
print(root.reason)
loop_run

# %% [markdown]
# ## Without check inputs: the generalization probe
#
# Writing check inputs that take every path is work. `probe=True` (`%trace --probe`) derives inputs for you —
# other sizes along each dimension, other values — runs both the trace and your Python code on them and reports
# where they disagree. It finds the unrolled loop from the example input alone:

# %%
%trace --probe -o probe_run loop_in_traced_fn(torch.rand(3, 4, 5))

# %%
[(c.name, c.status) for c in probe_run.probe.cases]

# %% [markdown]
# The probe also catches what no warning and no check names: indexing a Python list with a tensor freezes the
# index (the tensor is converted with `__index__`, silently).

# %%
scales = [10.0, 20.0, 30.0]


def pick(x):
    return x * scales[x.argmax()]


pick_run = tj.trace(pick, (torch.tensor([1.0, 5.0, 2.0]),), probe=True)
print("tracer warnings:", len(pick_run.user_warnings), "| check:", "passed" if pick_run.check.ok else "failed")
print([(c.name, c.status) for c in pick_run.probe.cases])

# %% [markdown]
# ## The fix: script what depends on data
#
# `torch.jit.script` compiles the Python source instead of recording a run, so loops and branches stay loops and
# branches (`prim::Loop`, `prim::If` in the graph):

# %%
scripted_loop = torch.jit.script(loop_in_traced_fn)
for (example,) in [inputs, *check_inputs]:
    torch.testing.assert_close(scripted_loop(example), loop_in_traced_fn(example))
print(scripted_loop.code)

# %% [markdown]
# You rarely want to script a whole model. `@torch.jit.script_if_tracing` scripts one function **only when it is
# called while tracing**: eager code stays plain Python, and the trace of the surrounding model calls the
# compiled function. The explorer shows its graph with the `prim::Loop` inside, and the check that failed above
# now passes at every size.

# %%
@torch.jit.script_if_tracing
def running_product(x):
    result = x[0]
    for i in range(x.size(0)):
        result = result * x[i]
    return result


def model_step(x):
    return running_product(torch.relu(x)) + 1


%trace --check-inputs [(torch.rand(4, 5, 6),), (torch.rand(2, 3, 4),)] -o mixed_run model_step(torch.rand(3, 4, 5))

# %%
print(mixed_run.summary())
sorted({n.kind for n in mixed_run.graph if n.kind.startswith("prim::") and n.blocks})

# %% [markdown]
# PyTorch's documentation calls this *mixing tracing and scripting*, and shows the other direction too (a scripted
# function calling a traced module): trace the large feed-forward parts, script the small parts with control
# flow.
#
# ## Exercise
#
# `branchy` above is wrong on negative inputs. Rewrite it so that a trace is right for both signs, **without
# scripting**: express the branch as a tensor operation. Trace your version with the negative input as a check
# input and confirm the badge is green and `run.ok` is `True`.
#
# (Solution in the collapsed cell below.)

# %% [solution]
def branch_free(x):
    # torch.where evaluates both sides and picks per element: the choice is now a recorded tensor operation
    return torch.where(x.sum() > 0, x * 2, x - 1)


%trace --check-inputs [(negative,)] -o fixed_run branch_free(torch.ones(3))
print(fixed_run.ok, fixed_run.user_warnings)
print(fixed_run.traced(negative), branchy(negative))

# %% [markdown]
# ## What to remember
#
# - Branches on tensor **values** freeze into the branch that ran (a `to_bool` warning); loops over tensor
#   **sizes** unroll, with no warning at all.
# - torch's check only re-traces the example unless you pass `check_inputs`; choose inputs that take other paths
#   (other signs, other sizes). Its "first diverging operator" is often a false lead; the explorer's structural
#   diff names the real change and steps through every divergence.
# - `probe=True` tries derived inputs for you and compares the trace with your Python code.
# - Fix data-dependent code with tensor operations (`torch.where`), or script it: `torch.jit.script`, or
#   `@torch.jit.script_if_tracing` for one function inside a traced model.
