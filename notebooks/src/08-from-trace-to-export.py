# %% [markdown]
# # 8 · Moving a model from `jit.trace` to `torch.export`
#
# Notebook 7 showed `torch.export` refusing and guarding where `torch.jit.trace` records silently. This one is the
# migration itself: take a model you trace today, export it, read what export recorded, and fix what it refuses.
#
# jupyter-tracejit reads exported programs too. `tj.export(model, args, dynamic_shapes=...)` takes
# `torch.export.export`'s arguments and returns a run like `tj.trace` does: it never raises, `run.traced` is the
# `ExportedProgram`, and the run shows in the same explorer. Like notebook 6, the BERT below is built from a small
# config with random weights; nothing is downloaded.

# %%
import collections
import logging
import os

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for the hub: configs only, random weights

import torch
import torch.nn as nn
from torch.export import Dim
from transformers import BertConfig, BertModel

import jupyter_tracejit as tj

%load_ext jupyter_tracejit
_ = torch.manual_seed(0)
logging.getLogger("torch.fx.experimental.symbolic_shapes").setLevel(logging.ERROR)  # keep export's solver log quiet


def at(run, file, line):
    """A location as the explorer writes it: `cell [3], line 4` in a notebook."""
    if not file:
        return "(no source line)"
    return f"{run.file_names.get(file, os.path.basename(file))}, line {line}"


small_bert = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, return_dict=False)
bert = BertModel(BertConfig(**small_bert)).eval()
input_ids = torch.randint(0, 1000, (2, 16))

# %% [markdown]
# ## 1 · BERT: from the trace you have to an export
#
# The trace, as notebook 6 made it (a tuple output, checked at another length):

# %%
bert_trace = tj.trace(bert, (input_ids,), check_inputs=[(torch.randint(0, 1000, (2, 24)),)])
print(bert_trace.summary())

# %% [markdown]
# A trace has no notion of a dynamic size: it records one run and you check other lengths by hand. Export asks you
# to say which dims may vary and over what range: here the sequence length, from 2 to 64 tokens.

# %%
seq = Dim("seq", min=2, max=64)
bert_export = tj.export(bert, (input_ids,), dynamic_shapes={"input_ids": {1: seq}})
bert_export

# %% [markdown]
# The explorer's header names the back end (**torch.export**). Where the sequence length flows, shapes are
# symbolic (`(2, s70, 32)`); hovering a symbolic size in the inspector shows its range, and the **Guards** tab lists
# the symbols and every assumption export made about them. The same, from Python:

# %%
for s in bert_export.export.symbols:
    print(f"{s.name}: {s.kind}, {s.min}..{s.max}, from {s.sources}")
symbolic = collections.Counter(v.shape for v in bert_export.graph.values if v.shape and s.name in v.shape)
print("most frequent symbolic shapes:", [shape for shape, _ in symbolic.most_common(3)])
print("guards:", bert_export.export.guards)
kinds = collections.Counter(entry.kind for entry in bert_export.export.inputs)
print("program inputs:", dict(kinds))

# %% [markdown]
# One symbol, from `input_ids.size()[1]`, and no guard: nothing in BERT's code assumed anything about the length.
# The parameters are inputs of the program (`graph_signature`), not constants inside the graph as in a trace.
#
# **The export check.** With `jit.trace` you pick the check inputs. `tj.export` also runs the exported program
# (`ep.module()`) against your Python code at each declared range's minimum, middle and maximum:

# %%
for case in bert_export.check.cases:
    print(f"{case.label:40} {case.inputs}  outputs agree: {all(o.ok for o in case.outputs)}")

# %% [markdown]
# **Trace versus export.** `tj.compare(trace_run, export_run)` matches the two graphs op by op within each module
# scope and explains, line by line, what has no counterpart (`tj.export(..., compare_trace=True)` does both in one
# call):

# %%
comparison = tj.compare(bert_trace, bert_export).comparison
print(comparison.summary())
for d in comparison.lines:
    print(f"{d.reason:16} {at(bert_export, d.file, d.line):24} trace {len(d.trace_nodes)}, export "
          f"{len(d.export_nodes)}  {d.code.strip()[:50]}")

# %% [markdown]
# Every trace op that export could have recorded has its counterpart. What differs:
#
# - `shape_arithmetic`: the trace computes sizes with ops (`aten::size`, `prim::NumToTensor`, `aten::Int`): that is
#   how a trace follows a length it only knows as a number. Export keeps the length as the symbol `s70` and needs
#   none of them, except the `sym_size` that reads it from the input (the line of the `tj.export` call).
# - `no_op`: `contiguous()` of a tensor that already is, and the like, which export leaves out.
# - `only_export` in `modeling_bert.py`: the attention mask. transformers asks whether it is being exported and
#   then always builds the mask (`arange`, `unsqueeze`, `expand`); under `jit.trace`, with no mask given, it skips
#   it. A library may take another path for each capture: the comparison shows where.

# %%
kinds_only_in_export = collections.Counter(
    bert_export.graph.nodes[i].kind for d in comparison.lines if d.reason == "only_export" for i in d.export_nodes
)
print(dict(kinds_only_in_export))

# %% [markdown]
# ## 2 · What export refuses, and the fixes
#
# Three pitfalls, each in a module of a few lines (the code of notebooks 2 and 3, now under export), and
# `dynamic_shapes="auto"`, which finds the quietest of them.
#
# ### A branch on a tensor's value
#
# `jit.trace` records the side the example took and warns (`to_bool`). Export refuses, at your line, and says how
# to fix it:

# %%
class Branchy(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


branch_run = tj.export(Branchy(), (torch.ones(3),))
branch_run

# %%
print(branch_run.error.tag, "at", at(branch_run, branch_run.error.file, branch_run.error.line),
      repr(branch_run.error.code))
print(branch_run.error.hint)

# %% [markdown]
# `torch.cond` records the branch as one operator with both sides as subgraphs, so the exported program takes the
# right side for every input. `jit.trace` cannot record it (the trace of the fixed model fails), which is one reason
# to migrate such models rather than keep tracing them:

# %%
class BranchWithCond(nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x * 2, lambda x: x - 1, (x,))


cond_run = tj.export(BranchWithCond(), (torch.ones(3),))
print(cond_run.summary())
print([n.kind for n in cond_run.graph.nodes if "cond" in n.kind])
negative = -2 * torch.ones(3)
print(cond_run.traced.module()(negative), "== eager", Branchy()(negative))
print("jit.trace:", tj.trace(BranchWithCond(), (torch.ones(3),)).error.message.splitlines()[0])

# %% [markdown]
# ### A loop over a dimension
#
# The docs' loop of notebook 2. Declared dynamic with a `Dim`, export refuses: the loop needs the number of rows as
# a Python int, so export would have to fix it to 3 (a *specialisation*), which contradicts `rows`. torch's error
# names only the dim; the run's error sits at the loop's line (read from torch's shape environment as soon as it
# refuses), its hint saying which size became which constant and the fixes that apply there, best first, each also
# in `run.export.advice` with the `dynamic_shapes` it means.

# %%
class RowLoop(nn.Module):
    def forward(self, x):
        result = x[0]
        for i in range(x.size(0)):
            result = result * x[i]
        return result


rows = Dim("rows", min=2, max=16)
loop_run = tj.export(RowLoop(), (torch.rand(3, 4),), dynamic_shapes={"x": {0: rows}})
print(loop_run.error.tag, "—", loop_run.error.message.splitlines()[0])
print("at", at(loop_run, loop_run.error.file, loop_run.error.line), repr(loop_run.error.code))
print(loop_run.error.hint)
for advice in loop_run.export.advice:
    for fix in advice.fixes:
        print(f"{fix.kind:8}", fix.dynamic_shapes or fix.text[:60])

# %% [markdown]
# `Dim.AUTO` (let export decide) is the trap: export accepts it **silently**, fixing the dim to 3, exactly as
# the trace did. The explorer turns amber with a `dim_specialized` finding at the loop's line:

# %%
auto_loop = tj.export(RowLoop(), (torch.rand(3, 4),), dynamic_shapes={"x": {0: Dim.AUTO}})
auto_loop

# %%
print([(f.kind, f.title) for f in auto_loop.findings])
print("symbols:", [(s.name, s.min, s.max) for s in auto_loop.export.symbols])

# %% [markdown]
# `dynamic_shapes="auto"` with check inputs is the shortest way to the truth: the dims that differ between the
# example and the check inputs are made dynamic (`Dim.AUTO`), and the export check runs the program on the check
# inputs. 5 rows fail the guard, loudly:

# %%
checked_loop = tj.export(RowLoop(), (torch.rand(3, 4),), dynamic_shapes="auto", check_inputs=[(torch.rand(5, 4),)])
print(checked_loop.summary())
case = checked_loop.check.cases[0]
print(case.label, case.inputs, "->", case.exception.message.splitlines()[0])

# %% [markdown]
# Notebook 2 scripted the loop (`torch.jit.script`); export does not read TorchScript. Say it with a tensor
# operation instead: `x[0] * x.prod(0)` is the loop's product without a Python loop. It exports with `rows` and
# passes the check at 2, 9 and 16 rows:

# %%
class RowProduct(nn.Module):
    def forward(self, x):
        return x[0] * x.prod(0)


product_run = tj.export(RowProduct(), (torch.rand(3, 4),), dynamic_shapes={"x": {0: rows}})
print(product_run.summary())
print([case.label for case in product_run.check.cases])
x7 = torch.rand(7, 4)
torch.testing.assert_close(product_run.traced.module()(x7), RowLoop()(x7))
print("same as the loop on 7 rows")

# %% [markdown]
# ### A size read from a tensor: `.item()`
#
# A trace turns `n.item()` into a constant (notebook 3). Export keeps it as an *unbacked* symbol (`u0`): a size it
# cannot know. Branching on it is a data-dependent branch again, refused at the line:

# %%
class MeanOfFirst(nn.Module):
    def forward(self, x, n):
        k = n.item()
        if k == 0:
            return x.new_zeros(x.size(1))
        return x[:k].mean(0)


x, n = torch.rand(8, 4), torch.tensor(3)
first_run = tj.export(MeanOfFirst(), (x, n))
print(first_run.error.tag, "at", at(first_run, first_run.error.file, first_run.error.line), repr(first_run.error.code))

# %% [markdown]
# `torch._check` tells export what you know about the value. Here: at least one row, at most all of them. The `if`
# is then decided (`k == 0` is impossible), the symbol gets a range, and the program checks it at run time (runtime
# asserts, listed with their line), so a value outside the range fails loudly instead of computing something else.
# If `k == 0` can really happen, keep the branch with `torch.cond` instead.

# %%
class MeanOfFirstChecked(nn.Module):
    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 1)
        torch._check(k <= x.size(0))
        if k == 0:
            return x.new_zeros(x.size(1))
        return x[:k].mean(0)


checked_run = tj.export(MeanOfFirstChecked(), (x, n), check_inputs=[(x, torch.tensor(8))])
print(checked_run.summary())
print("symbols:", [(s.name, s.kind, s.min, s.max) for s in checked_run.export.symbols])
for g in checked_run.export.guards_of("runtime_assert"):
    print("runtime assert", g.expr, "at", at(checked_run, g.file, g.line))
print([f.kind for f in checked_run.findings])
try:
    checked_run.traced.module()(x, torch.tensor(0))
except RuntimeError as e:
    print("n = 0:", str(e).splitlines()[0])

# %% [markdown]
# ## 3 · The draft report
#
# torch's `draft_export` goes on past each problem and reports them all, with their lines, and the explorer shows
# the draft's graph. It costs 2-10x the export, so a refused export does not wait for it: the run says a draft is
# offered and what it adds (`run.export.draft_offer`), and `run.draft()` (or the explorer's draft request) runs it
# and joins it to the run. `draft="on_failure"` runs it at once, `draft="always"` on an accepted export too,
# `draft="never"` does not offer it.

# %%
print(branch_run.export.draft_offer.status, "—", branch_run.export.draft_offer.adds[0][:60])
branch_run.draft()
for failure in branch_run.export.draft:
    print(failure.failure_type, failure.expr, "at", at(branch_run, failure.file, failure.line))
print("draft graph:", len(branch_run.graph), "nodes")
print("draft of an accepted export:", tj.export(BranchWithCond(), (torch.ones(3),), draft="always").export.draft)

# %% [markdown]
# ## Exercise
#
# `Normalise` traces today (with a `to_bool` warning). Export it with a dynamic batch dim from 2 to 32; fix what
# export refuses so it exports cleanly and passes the export check, then compare the trace and the export.

# %%
class Normalise(nn.Module):
    def forward(self, x):
        peak = x.abs().max()
        if peak > 0:
            x = x / peak
        return x.flatten()


print(tj.trace(Normalise(), (torch.rand(4, 3),)).summary())

# %% [solution]
class NormaliseFixed(nn.Module):
    def forward(self, x):
        peak = x.abs().max()
        return torch.where(peak > 0, x / peak, x).flatten()  # both sides computed: no branch to record


batch = Dim("batch", min=2, max=32)
refused = tj.export(Normalise(), (torch.rand(4, 3),), dynamic_shapes={"x": {0: batch}})
print("as written:", refused.error.tag)
fixed = tj.export(NormaliseFixed(), (torch.rand(4, 3),), dynamic_shapes={"x": {0: batch}})
print(fixed.summary())
print(tj.compare(tj.trace(NormaliseFixed(), (torch.rand(4, 3),)), fixed).comparison.summary())

# %% [markdown]
# ## What to remember
#
# - `tj.export` is `torch.export.export` that never raises: the program, its symbols and guards, findings and an
#   export check at each range's minimum, middle and maximum, in the explorer you know.
# - Declare dynamic dims with `Dim(name, min=, max=)`: a specialisation is then an error at its line. `Dim.AUTO`
#   specialises silently: look for `dim_specialized`, or use `dynamic_shapes="auto"` with check inputs.
# - Data-dependent code: `torch.cond` for a branch, `torch.where` to compute both sides, `torch._check` to tell
#   export what a value read with `.item()` can be.
# - `tj.compare(trace, export)` says how the two graphs correspond: shape arithmetic that only the trace needs, and
#   the places where a library takes another path when exported.
