# %% [markdown]
# # 9 · Graph breaks and recompilations under `torch.compile`
#
# Most people today neither trace nor export: they call `torch.compile(model)` and wonder why it is not faster.
# Its two silent failure modes are
#
# - **graph breaks**: TorchDynamo meets a line it cannot put in a graph, runs it in Python, and starts a new graph
#   after it. Between graphs the model runs eagerly, and the compiler cannot fuse across a break;
# - **recompilations**: a call whose inputs fail the *guards* of the graphs compiled before (a new size, a new
#   Python value) compiles again; after `recompile_limit` (8) compilations torch silently runs the function eagerly.
#
# `tj.compile(model, args, kwargs, calls=[...])` runs the model under `torch.compile` the way your code would, then
# with each input set of `calls` in order, and records what dynamo did: its graphs, every break **at your line**
# with torch's explanation, hints and registry code (`GB0059`), every recompilation with the guard that failed in
# your inputs' terms. `%compile` does the same from a notebook line, and `tracejit compile` from a shell (exit 1 on
# a break or a recompilation: a CI gate). The back end is `eager` by default: dynamo's graphs and breaks are the
# same as inductor's, without its compile time or a C++ compiler. The BERT below is built from a small config with
# random weights; nothing is downloaded.

# %%
import os

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for the hub: configs only, random weights

import torch
import torch.nn as nn
from transformers import BertConfig, BertModel

import jupyter_tracejit as tj

%load_ext jupyter_tracejit
_ = torch.manual_seed(0)
config = BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)


def at(run, file, line):
    """A location as the explorer writes it: `cell [3], line 4` in a notebook, the file's name elsewhere."""
    return f"{run.file_names.get(file, os.path.basename(file))}, line {line}"


def batch(length, pad=0):
    """Two sequences of token ids and their attention mask, the second padded at its end."""
    ids = torch.randint(0, 1000, (2, length))
    mask = torch.ones(2, length, dtype=torch.long)
    if pad:
        mask[1, -pad:] = 0
    return ids, mask


ids, mask = batch(16, pad=4)

# %% [markdown]
# ## 1 · Three breaks people really write
#
# A sentence classifier on top of BERT, as found in many training scripts: it averages the hidden states over the
# real tokens when the batch is padded (a branch on the mask's *values*), and it logs how many tokens it pooled
# (`.item()` and `print`). Each line is harmless in eager mode. Under `torch.compile` each one breaks the graph:

# %%
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = BertModel(config)
        self.head = nn.Linear(64, 2)

    def forward(self, input_ids, attention_mask):
        hidden = self.bert(input_ids, attention_mask=attention_mask).last_hidden_state
        if attention_mask.min() == 0:  # padded: average the real tokens only
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1)
        else:
            pooled = hidden.mean(1)
        tokens = int(attention_mask.sum().item())
        print(f"pooled {tokens} tokens")
        return self.head(pooled)


model = Classifier().eval()
%compile -o breaks model(ids, attention_mask=mask)

# %% [markdown]
# The explorer opens on the **Graph breaks** tab: the graphs dynamo compiled for the call in the order they ran,
# with the break each one ends at between them, then a stepper through the breaks. Each step shows your line,
# torch's break type with its registry code (a link to torch's page on it), its explanation and hints, and the
# graph that ends at the break beside the graph that resumes after it, the op on each side marked. The graph menu
# lists every graph (`forward`, `forward#1`, ...). The same, as data:

# %%
for gb in breaks.compile.graph_breaks:
    print(f"{gb.gb_code} {at(breaks, gb.file, gb.line)}: {gb.code.split('#')[0].strip()}")
    print(f"    {gb.gb_type}: {gb.explanation[:90]}")
print(len(breaks.compile.regions), "graphs;", breaks.summary())

# %% [markdown]
# What each one means, and the usual fix (the run's findings say the same, `break_fix`):
#
# - **Data-dependent branching** (`if attention_mask.min() == 0`): the graph cannot hold a Python `if` on a value
#   it only knows at run time. Here both sides compute the same thing when nothing is padded, so the fix is to drop
#   the branch and always take the masked mean. (In general: compute both and pick with `torch.where`, or
#   `torch.cond`.)
# - **`Tensor.item()`** (`GB0124`): a Python number out of a tensor ends the graph, unless
#   `torch._dynamo.config.capture_scalar_outputs = True` keeps it as a symbol. Here the number only feeds a log line.
# - **`print`** (`GB0059`): dynamo cannot trace `print`. Log outside the model, or only when not compiling:
#   `torch.compiler.is_compiling()` is `True` while dynamo traces, so the block is left out of the graph.

# %%
print([(f.kind, f.title) for f in breaks.findings if f.kind == "break_fix"])


class Fixed(Classifier):
    def forward(self, input_ids, attention_mask):
        hidden = self.bert(input_ids, attention_mask=attention_mask).last_hidden_state
        weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(1) / weights.sum(1)  # right with or without padding: no branch
        if not torch.compiler.is_compiling():  # logged when run eagerly; dynamo leaves the block out
            print(f"pooled {int(attention_mask.sum())} tokens")
        return self.head(pooled)


fixed = Fixed().eval()
fixed.load_state_dict(model.state_dict())
%compile -o one_graph fixed(ids, attention_mask=mask)

# %%
print(one_graph.summary())
print("graphs:", [r.graph for r in one_graph.compile.regions], "breaks:", one_graph.compile.graph_breaks)

# %% [markdown]
# One graph, no break, and the check (every call's outputs against the eager model's) passes. In CI the same gate
# is `tracejit compile model.py:Fixed --inputs "..."`: it exits 0 for one graph per function and no recompilation,
# 1 otherwise, with each break and recompilation printed at its line.
#
# ## 2 · A sequence of lengths that recompiles
#
# Real batches come in many lengths. `calls=` (`--calls` for the magic) calls the compiled model again with each
# input set, as your loop would. With torch's default (`dynamic=None`) the first change of a size compiles once more
# and makes that size dynamic:

# %%
lengths = [batch(n, pad=2) for n in (24, 32, 40)]
calls = [(i, m) for i, m in lengths]
%compile -o recompiled --calls calls fixed(ids, mask)

# %% [markdown]
# The **Recompilations** tab lists each call: its inputs, the graphs it compiled, and each guard that failed, in
# your inputs' terms and at the line that uses the value, with the fix. The first new length failed the guard on
# `input_ids.size()[1]`; after it the length is dynamic and the last two calls reuse the graph:

# %%
for r in recompiled.compile.recompilations:
    print(f"call {r.call}: {r.reason} ({os.path.basename(r.file)}:{r.line})")
print(recompiled.compile.recompilations[0].hint)
print("runs of each graph per call:", [(r.graph, r.runs) for r in recompiled.compile.regions])

# %% [markdown]
# With `dynamic=False` (`--no-dynamic`; some set it hoping for faster code) every new length compiles again, and
# after 8 compilations torch would stop compiling `forward` and run it eagerly without a word (the run's
# `recompile_limit` finding says so when it happens). The fix the hint names: mark the sequence dim dynamic before
# the first call, so the first compilation already holds for every length:

# %%
static = tj.compile(fixed, (ids, mask), calls=calls, dynamic=False)
print("dynamic=False:", [f"call {r.call}: {r.reason}" for r in static.compile.recompilations])

ids_any, mask_any = ids.clone(), mask.clone()
torch._dynamo.mark_dynamic(ids_any, 1)  # dim 1 (the sequence) may be any length
torch._dynamo.mark_dynamic(mask_any, 1)
%compile -o dynamic_dim --calls calls fixed(ids_any, mask_any)

# %%
print(dynamic_dim.summary())
print("recompilations:", dynamic_dim.compile.recompilations)
print("guards on the inputs:", [g.expr for g in dynamic_dim.compile.regions[0].guards][:3])

# %% [markdown]
# One compilation for every length; the guards now say `any` for the marked dim. `dynamic=True` makes every size
# dynamic from the start, which works too but also makes the batch size symbolic, where a constant often compiles to
# faster code.
#
# ## Exercise
#
# `Scorer` scores each token and normalises the scores by their spread; it warns about long inputs. Compile it on a
# 40-token batch: find every break, fix each one so the model compiles to one graph, and check the outputs still
# agree with eager (the run's check).

# %%
import warnings

import numpy as np


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 1)

    def forward(self, hidden):
        if hidden.size(1) > 32:
            warnings.warn("long input: scores are less reliable beyond 32 tokens")
        scores = self.fc(hidden).squeeze(-1)
        spread = float(np.asarray(scores.detach()).std())
        return scores / spread


hidden = torch.randn(2, 40, 64)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    scorer = tj.compile(Scorer(), (hidden,))
print([(gb.gb_type, gb.code) for gb in scorer.compile.graph_breaks])

# %% [solution]
class ScorerFixed(Scorer):
    def forward(self, hidden):
        # warn where the length is known, before the model (or when not compiling); the size is a Python int
        if hidden.size(1) > 32 and not torch.compiler.is_compiling():
            warnings.warn("long input: scores are less reliable beyond 32 tokens")
        scores = self.fc(hidden).squeeze(-1)
        spread = scores.detach().std(correction=0)  # torch, not numpy: the graph holds it (numpy's std: correction=0)
        return scores / spread


solved = tj.compile(ScorerFixed(), (hidden,))
print(solved.summary())

# %% [markdown]
# ## What to remember
#
# - `tj.compile` / `%compile` run a model under `torch.compile` and show its graphs in order, every graph break at
#   your line with torch's explanation, hints and registry code, and every recompilation with the guard that failed
#   in your inputs' terms. `tracejit compile` is the CI gate: exit 1 on a break or a recompilation.
# - The breaks people write: a branch on a tensor's value (`torch.where`, or no branch), `.item()`
#   (`capture_scalar_outputs`, or keep a tensor), `print` / logging / `warnings.warn` (outside the model, or under
#   `not torch.compiler.is_compiling()`), numpy (the torch op instead).
# - `calls=[...]` shows what later inputs recompile. A size that changes compiles once more and becomes dynamic;
#   `dynamic=False` compiles for every size until the recompile limit, then runs eagerly. Mark the dim dynamic
#   before the first call (`torch._dynamo.mark_dynamic(x, dim)`) to compile once.
