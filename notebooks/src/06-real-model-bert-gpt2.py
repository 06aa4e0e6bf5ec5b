# %% [markdown]
# # 6 · A real model end to end: BERT and GPT-2
#
# Everything so far on a real model: Hugging Face `transformers` BERT and GPT-2. The models are built **from
# configs with random weights** — nothing is downloaded (we set `HF_HUB_OFFLINE=1`), and the weights do not
# matter to what the tracer records. To keep this notebook fast we use small configs (2 layers, hidden size 64);
# the full-size models behave the same, with more nodes (BERT-base: 926 nodes, and the `to_bool` warning below
# fires once per layer per trace, 24 times with the check). Install the extra with
# `pip install "jupyter-tracejit[tutorials]"`.

# %%
import os

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for the hub: configs only, random weights

import torch
import torch.nn as nn
from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel

import jupyter_tracejit as tj

%load_ext jupyter_tracejit
_ = torch.manual_seed(0)
small_bert = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
input_ids = torch.randint(0, 1000, (2, 16))
longer_ids = torch.randint(0, 1000, (2, 24))  # another sequence length, for the check

# %% [markdown]
# ## BERT: the first trace fails
#
# `BertModel` returns a `ModelOutput` — a dict subclass. With the default `strict=True` the tracer refuses a dict
# at the output. The explorer shows the error with a hint, and the warnings raised before it failed.

# %%
bert = BertModel(BertConfig(**small_bert)).eval()
%trace -o bert_failed bert(input_ids)

# %%
print(bert_failed.error.hint)

# %% [markdown]
# Two fixes, both from the hint: `strict=False` (the output dict's keys are frozen — they never change for BERT),
# or ask the model for a tuple with `BertConfig(return_dict=False)`. We take the second and check the trace at
# another sequence length straight away.

# %%
bert = BertModel(BertConfig(return_dict=False, **small_bert)).eval()
%trace --check-inputs [(longer_ids,)] -o bert_run bert(input_ids)

# %% [markdown]
# The check passes at length 24, and the trace gives the eager result there. The badge is amber: open the
# **Warnings** tab. The warning comes from transformers' own code, not yours:
#
# - `to_bool` at `sdpa_attention.py`: `is_causal = q_length > 1 and …` — during tracing `q_length` is a tensor,
#   and `and` asks for its truth value. For BERT it does not matter (BERT is not causal, so the result is `False`
#   whatever the length); keep it in mind for GPT-2 below. The advice says so: the line is in an installed
#   package, so the fix is to check with the sizes you need, not to rewrite it.
#
# Below it, in the collapsed "deprecation notice" group: torch's notice that `torch.jit.trace` is deprecated, and
# transformers' notice that `is_gradient_checkpointing` is (torch reads every attribute of a module it traces,
# properties included). Neither is about the trace, and neither is counted.

# %%
for w in bert_run.warnings:
    if w.is_user_problem:
        print(f"{w.category:10} {os.path.basename(w.file)}:{w.line} ×{w.count}  {w.code.strip()[:70]}")
last_hidden, pooled = bert_run.traced(longer_ids)
torch.testing.assert_close(last_hidden, bert(longer_ids)[0])
print(bert_run.summary())

# %% [markdown]
# ## GPT-2: an output the tracer cannot type
#
# `GPT2LMHeadModel` returns a `CausalLMOutputWithCrossAttentions` dataclass. That is not a dict, so `strict=False`
# does not help: the tracer cannot infer its type at all. (`GPT2Config(return_dict=False)` fails *inside*
# transformers in version 5.23.)

# %%
gpt2 = GPT2LMHeadModel(GPT2Config(n_embd=64, n_layer=2, n_head=4)).eval()
%trace -o gpt2_failed gpt2(input_ids)

# %% [markdown]
# The fix is a small wrapper that returns what you need — the logits tensor:

# %%
class LogitsOnly(nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids):
        return self.lm(input_ids).logits


lm = LogitsOnly(gpt2)
%trace --check-inputs [(longer_ids,)] -o gpt2_run lm(input_ids)

# %% [markdown]
# It traces, and the check at length 24 passes. Two things in the explorer deserve a look:
#
# 1. A **device baked into the graph** (under Portability in the Warnings tab): GPT-2 makes its position ids
#    with `torch.arange(seq_len, device=inputs_embeds.device)`; the tracer records `cpu`. Traced on a GPU, this
#    model would create its position ids on `cuda:0` forever. Here it is traced and run on the CPU, so it is a
#    note and not what makes the badge amber; `--target-device cuda` would make it a warning. Trace on the device
#    you will run on (notebook 5).
# 2. The `to_bool` warnings in the attention and mask code. For GPT-2 `is_causal` *does* depend on the length:
#    it is `True` for `q_length > 1`. The trace froze it.

# %%
print([f.title for f in gpt2_run.findings if f.kind == "device_constant"])
print(sorted({(os.path.basename(w.file), w.line) for w in gpt2_run.warnings_of("to_bool")}))

# %% [markdown]
# ## Finding the frozen decision
#
# Give the check an input that takes the other side: a single token (what a generation loop feeds the model after
# the prompt). torch's check now fails. The divergence stepper goes straight to the one node that differs — the
# `is_causal` argument of `aten::scaled_dot_product_attention`, frozen to `1`:

# %%
one_token = torch.randint(0, 1000, (2, 1))
%trace --check-inputs [(one_token,)] -o gpt2_one lm(input_ids)

# %%
case, root = gpt2_one.check.first
print(root.reason)
print("outputs agree anyway:", all(o.ok for o in case.outputs))

# %% [markdown]
# Here the outputs still agree — with one query and one key, causal or not is the same — so it is a frozen decision
# that happens to be harmless *for this call*; with a key/value cache (several keys, one query) it would not be.
# This is what the explorer is for: torch prints one line of a graph diff; here you see the node, its source line in
# transformers, and the warning that froze it.
#
# ## Exercise
#
# Trace BERT the *other* way: keep the default config (`return_dict=True`) and use `strict=False`. Check it at
# length 24 and compare the number of nodes with `bert_run`. What does the traced module return?

# %% [solution]
bert_dict = BertModel(BertConfig(**small_bert)).eval()
%trace --non-strict --check-inputs [(longer_ids,)] -o bert_nonstrict bert_dict(input_ids)
out = bert_nonstrict.traced(longer_ids)
print(bert_nonstrict.ok, len(bert_nonstrict.graph), "nodes vs", len(bert_run.graph), "| returns", type(out).__name__, sorted(out))

# %% [markdown]
# ## What to remember
#
# - Real models fail first at the **output**: a dict (`ModelOutput`) needs `strict=False` or `return_dict=False`;
#   a dataclass needs a wrapper that returns tensors.
# - Library code raises tracer warnings too. Read them: most are harmless for your model (BERT's `is_causal`), some
#   freeze a real decision (GPT-2's `is_causal` by length) — a check input on the other side shows which.
# - Always check at another sequence length (and at length 1 for decoders), and look for devices baked in.
