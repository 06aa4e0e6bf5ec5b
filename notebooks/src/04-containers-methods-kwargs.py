# %% [markdown]
# # 4 · Containers and `strict`, several methods, keyword inputs
#
# A traced graph takes tensors (and tuples, lists and dicts of tensors) and returns them. This notebook covers
# what torch accepts at the edges of a trace: container outputs and the `strict` option, tracing methods other than
# `forward` with `trace_module`, and example inputs passed by keyword.

# %%
import collections

import torch
import torch.nn as nn

import jupyter_tracejit as tj

%load_ext jupyter_tracejit
_ = torch.manual_seed(0)
x = torch.rand(2, 4)

# %% [markdown]
# ## Container outputs and `strict`
#
# A tuple output is always fine: its length is part of the function's type. A **list** or a **dict** could change
# its length or keys from one input to the next, which a trace cannot represent. With the default `strict=True`:
#
# - a list output is traced, with a `TracerWarning` ("Encountering a list at the output of the tracer…");
# - a dict output is an **error**; the explorer shows it with torch's message and a hint.

# %%
def as_list(x):
    return [x * 2, x + 1]


def as_dict(x):
    return {"double": x * 2, "plus": x + 1}


list_run = tj.trace(as_list, (x,))
print(list_run.summary(), [w.category for w in list_run.user_warnings])

# %%
%trace -o dict_run as_dict(x)

# %%
print(dict_run.error.hint)

# %% [markdown]
# `strict=False` (`%trace --non-strict`) accepts the dict: its **keys are frozen** into the trace, which is right as
# long as the function always returns the same keys. A `NamedTuple` output needs no option at all — but note that
# the traced function returns a plain `tuple`: the field names are not part of the graph.

# %%
%trace --non-strict -o nonstrict_run as_dict(x)

# %%
Pair = collections.namedtuple("Pair", "double plus")


def as_namedtuple(x):
    return Pair(x * 2, x + 1)


nt_run = tj.trace(as_namedtuple, (x,))
print(nonstrict_run.summary())
print(nt_run.summary(), "→ the traced function returns a", type(nt_run.traced(x)).__name__)

# %% [markdown]
# Container **inputs** need nothing special: a dict of tensors as an example input becomes a `Dict[str, Tensor]`
# argument of the graph.

# %%
def attend(batch):
    return batch["query"] * batch["key"]


print(tj.trace(attend, ({"query": x, "key": x},)).traced.code)

# %% [markdown]
# ## Several methods: `trace_module`
#
# `torch.jit.trace(module, …)` traces `forward`. Passing a bound method instead fails in torch 2.13 with
# "trace doesn't support compiling individual module's functions" (PyTorch's FAQ, written for older versions,
# describes a "Cannot insert a Tensor that requires grad as a constant" error for the same mistake):

# %%
class Codec(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 2)
        self.dec = nn.Linear(2, 4)

    def encode(self, x):
        return torch.tanh(self.enc(x))

    def decode(self, z):
        return self.dec(z)

    def forward(self, x):
        return self.decode(self.encode(x))


codec = Codec()
try:
    torch.jit.trace(codec.encode, (x,))
except AttributeError as e:
    print("torch:", e)

# %% [markdown]
# `torch.jit.trace_module(module, {"method": example_inputs, ...})` traces each named method into one
# `ScriptModule`. `tj.trace_module` does the same; the explorer gets a *traced method* selector in the graph's
# toolbar. `%trace
# codec.encode(x)` also works: the magic sees a module's method and calls `trace_module` for you.

# %%
codec_run = tj.trace_module(codec, {"forward": (x,), "encode": (x,), "decode": (torch.rand(2, 2),)})
print(list(codec_run.graphs), codec_run.summary())
codec_run

# %%
%trace -o encode_run codec.encode(x)
print(encode_run.traced.encode.code)

# %% [markdown]
# ## Keyword example inputs
#
# Models are often called with keywords (`model(input_ids=ids, attention_mask=mask)`). `%trace model(x=..., mask=...)`
# passes them as `example_kwarg_inputs`; the graph's inputs are named after the parameters. Parameters left at
# their default are **not inputs**: Python evaluated them while tracing, so they are frozen — here `mask is not None`
# was decided once, and `scale=1.0` became a constant.

# %%
class Masked(nn.Module):
    def forward(self, x, mask=None, scale=1.0):
        if mask is not None:
            x = x * mask
        return x * scale


masked = Masked()
%trace -o kw_run masked(x=x, mask=torch.ones(2, 4))
print(kw_run.traced.code)

# %% [markdown]
# The traced module now **requires** `mask` and ignores any `scale` you pass — another case of "records only what
# ran". Trace each calling convention you need separately (or script the optional logic).
#
# ## Exercise
#
# `Splitter` returns a dict whose keys depend on a constructor flag. Trace it with `%trace` and read the error in
# the explorer; then make it traceable **twice**: once with `strict=False`, and once by changing the output type so
# that the default `strict=True` works.

# %%
class Splitter(nn.Module):
    def __init__(self, with_residual=True):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.with_residual = with_residual

    def forward(self, x):
        out = {"main": self.proj(x)}
        if self.with_residual:
            out["residual"] = x
        return out


splitter = Splitter()
%trace -o split_run splitter(x)

# %% [solution]
%trace --non-strict -o split_nonstrict splitter(x)

SplitOut = collections.namedtuple("SplitOut", "main residual")


class NamedSplitter(Splitter):
    def forward(self, x):
        out = super().forward(x)
        return SplitOut(out["main"], out["residual"])


split_named = tj.trace(NamedSplitter(), (x,))
print(split_run.ok, split_nonstrict.ok, split_named.ok)

# %% [markdown]
# ## What to remember
#
# - Tuple and `NamedTuple` outputs just work (a `NamedTuple` comes back as a plain tuple); a list output warns; a dict output needs `strict=False`, which
#   freezes its keys. Container inputs are fine.
# - Only `forward` goes through `torch.jit.trace`; use `trace_module(module, {"method": inputs})` for other
#   methods (the explorer shows one graph per method).
# - Keyword example inputs become named graph inputs; parameters left at their defaults are frozen.
