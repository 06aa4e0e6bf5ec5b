# %% [markdown]
# # 7 · Where this is going: TorchScript is deprecated, `torch.export` is next
#
# An honest last chapter. **TorchScript — `torch.jit.trace` and `torch.jit.script` — is deprecated upstream.** In
# torch 2.13 every call to `torch.jit.trace` emits a `DeprecationWarning` ("Please switch to `torch.compile` or
# `torch.export`"); you rarely see it, because Python hides deprecation warnings raised inside libraries. The
# explorer lists it in its Warnings tab, in a collapsed "deprecation notice" group that does not count against the
# trace.

# %%
import logging
import warnings

import torch

import jupyter_tracejit as tj

%load_ext jupyter_tracejit
_ = torch.manual_seed(0)
logging.getLogger("torch.fx.experimental.symbolic_shapes").setLevel(logging.ERROR)  # keep export's solver log quiet


def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch.jit.trace(branchy, (torch.ones(3),))
for w in caught:
    print(f"{w.category.__name__}: {str(w.message)[:70]}")

# %% [markdown]
# (Twice each: once for the trace and once for the check's re-trace.) In the explorer, the deprecation notice sits
# in the **Warnings** tab beside the real problem (`to_bool`):

# %%
%trace branchy(torch.ones(3))
sorted({w.category for w in _trace.warnings})

# %% [markdown]
# ## What it means for you today
#
# A trace still saves and loads:

# %%
import tempfile
from pathlib import Path

with tempfile.TemporaryDirectory() as scratch:
    path = str(Path(scratch) / "branchy.pt")
    torch.jit.save(_trace.traced, path)
    loaded = torch.jit.load(path)
print(type(loaded).__name__, loaded(torch.ones(3)))

# %% [markdown]
# - Traced and scripted models keep working in torch 2.13, and `torch.jit.load` still loads saved ones. Existing
#   deployments (LibTorch C++, mobile, older serving stacks) are not broken by the warning.
# - New features land in `torch.export` (whole-graph capture for deployment, AOTInductor, ExecuTorch) and
#   `torch.compile` (just-in-time speed-ups, falls back to Python where it must). Plan new work there.
# - Until you move, check your traces: everything in notebooks 1–6 stays true as long as you use them.
#
# ## The same ideas on `torch.export`
#
# `torch.export.export(module, args)` also captures a graph by running your code on example inputs — so the
# questions of this course carry over. What changes is how it answers them: where `torch.jit.trace` silently
# records one path, `export` **refuses or guards**.
#
# The docs' loop, exported: the loop is unrolled for 3 rows exactly like the trace…

# %%
def loop_in_traced_fn(x):
    result = x[0]
    for i in range(x.size(0)):
        result = result * x[i]
    return result


class Loop(torch.nn.Module):
    def forward(self, x):
        return loop_in_traced_fn(x)


exported = torch.export.export(Loop(), (torch.rand(3, 4),))
print(exported.graph_module.code)

# %% [markdown]
# …but the exported program carries a **guard** on the size it specialized, so another size fails loudly instead of
# computing the wrong thing:

# %%
try:
    exported.module()(torch.rand(4, 4))
except Exception as e:
    print(type(e).__name__, "—", str(e).splitlines()[0])

# %% [markdown]
# Ask for a dynamic first dimension and `export` tells you up front that your code cannot have one — the same fact
# the explorer's check and probe found in notebook 2, as an error with a suggested fix:

# %%
rows = torch.export.Dim("rows")
try:
    torch.export.export(Loop(), (torch.rand(3, 4),), dynamic_shapes={"x": {0: rows}})
except Exception as e:
    print(type(e).__name__, "—", "\n".join(str(e).splitlines()[:3]))

# %% [markdown]
# A data-dependent branch is an error too (`GuardOnDataDependentSymNode`), not a `TracerWarning` in a log. On the
# way out, torch prints the partial graph it had captured when it stopped: it ends in `aten.item`, the point where
# the tensor `x.sum() > 0` had to become a Python `bool`. The fix is the export counterpart of
# `script_if_tracing`: `torch.cond`, a branch recorded as a graph operator with both sides as subgraphs.

# %%
class Branchy(torch.nn.Module):
    def forward(self, x):
        return branchy(x)


try:
    torch.export.export(Branchy(), (torch.ones(3),))
except Exception as e:
    print(type(e).__name__)


class BranchWithCond(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x * 2, lambda x: x - 1, (x,))


exported_cond = torch.export.export(BranchWithCond(), (torch.ones(3),))
print(exported_cond.module()(-2 * torch.ones(3)), "== eager", branchy(-2 * torch.ones(3)))
print(exported_cond.graph_module.code)

# %% [markdown]
# Reading an exported graph uses the same skills as notebook 1: it is an SSA graph of `aten` operators (FX format:
# one assignment per node, `torch.ops.aten.mul.Tensor(...)`), parameters and buffers are explicit inputs listed
# in `exported.graph_signature`, and `torch.cond` / `torch.ops.higher_order` nodes play the role of `prim::If`.
# jupyter-tracejit reads exported programs too (`tj.export`, preview): notebook 8 migrates a model from
# `jit.trace` to `torch.export` with it.
#
# ## Exercise
#
# Export `scale_by_rows` below with a **dynamic** first dimension. It fails as written; fix the one line that
# specializes the size (hint: notebook 3, warning 4) and show that the exported program runs on 5 rows.

# %%
class ScaleByRows(torch.nn.Module):
    def forward(self, x):
        return x.sum(0) / len(x)

# %% [solution]
class ScaleByRowsFixed(torch.nn.Module):
    def forward(self, x):
        return x.sum(0) / x.size(0)  # a size, not a Python int: export keeps it symbolic


try:
    torch.export.export(ScaleByRows(), (torch.rand(3, 4),), dynamic_shapes={"x": {0: rows}})
    print("exported??")
except Exception as e:
    print("as written:", type(e).__name__)
fixed = torch.export.export(ScaleByRowsFixed(), (torch.rand(3, 4),), dynamic_shapes={"x": {0: rows}})
x5 = torch.rand(5, 4)
torch.testing.assert_close(fixed.module()(x5), x5.mean(0))
print("fixed: runs on 5 rows")

# %% [markdown]
# ## What to remember
#
# - TorchScript is deprecated (torch 2.13 warns on every trace) but works; new deployment work belongs to
#   `torch.export` and `torch.compile`.
# - The ideas carry over: a captured graph is a recording of one run on example inputs; shapes and Python values
#   get specialized; data-dependent control flow needs a graph-level construct (`script_if_tracing` ↔ `torch.cond`).
# - The difference: `export` guards and raises where `jit.trace` silently recorded — which is exactly what this
#   course taught you to check for by hand.
