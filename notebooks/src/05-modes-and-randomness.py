# %% [markdown]
# # 5 · Modes, randomness and devices
#
# A module behaves differently in `train()` and `eval()` mode, random operators give other values on every run,
# and tensors created inside `forward` land on a device. A trace freezes all three. This notebook shows how each
# one shows up in torch's check and in the explorer, and how to trace so that the recording is the one you want.

# %%
import torch
import torch.nn as nn

import jupyter_tracejit as tj

%load_ext jupyter_tracejit
_ = torch.manual_seed(0)
x = torch.rand(8, 4)

# %% [markdown]
# ## Dropout and batch norm in train mode
#
# A freshly built model is in **train** mode. Dropout then zeroes random elements, so the traced graph and the
# eager run torch compares it with disagree: the check fails with an *output mismatch* (and no divergence: both
# graphs are the same). torch's own "Trace had nondeterministic nodes" warning only scans the top level of the
# graph, so for a dropout inside a submodule it says nothing; the explorer's findings name it, and also the batch
# norm traced in training mode (batch statistics instead of running statistics).

# %%
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.BatchNorm1d(4))

    def forward(self, x):
        return self.body(x)


model = Net()
%trace -o train_run model(x)

# %%
print([w.category for w in train_run.user_warnings])
for finding in train_run.findings:
    print(finding.severity, "|", finding.title)

# %% [markdown]
# Tracing runs your module several times (here 3 Python runs, and torch's check runs the traced graph too). In
# train mode every run **updates the batch norm's running statistics**: plain `torch.jit.trace` leaves them
# changed. jupyter-tracejit puts parameters and buffers back as they were:

# %%
import warnings

plain = Net()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    try:
        torch.jit.trace(plain, (x,))
    except torch.jit.TracingCheckError:
        pass
print("after torch.jit.trace, num_batches_tracked =", plain.body[2].num_batches_tracked.item())
print("after %trace,          num_batches_tracked =", model.body[2].num_batches_tracked.item())

# %% [markdown]
# The fix for inference is to trace in eval mode: `model.eval()` before tracing, or the explorer's mode control
# (`--eval` in `%trace`), which switches mode for this trace only and restores it afterwards. The check passes, and
# the graph changed: dropout is now recorded with `train=False` (it passes values through) and the batch norm's
# `num_batches_tracked += 1` (an `aten::add_`) is gone.

# %%
%trace --eval -o eval_run model(x)
print(eval_run.summary(), "| model still in train mode:", model.training)
print(train_run.graph.kinds())
print(eval_run.graph.kinds())

# %% [markdown]
# ## Nondeterministic nodes and `check_tolerance`
#
# Random operators called directly in the traced function (`torch.rand`, `randn_like`, functional dropout) are
# flagged by torch itself ("Trace had nondeterministic nodes"), and the output comparison fails.
#
# `check_tolerance` is the tolerance of that comparison (default `1e-5`). It is meant for **numerical noise** —
# the same computation done in another order — not for randomness. When the random part is small enough, a looser
# tolerance makes the output comparison pass, but the nondeterministic node is still there and still reported:

# %%
def jitter(x):
    return x + 1e-4 * torch.randn_like(x)


strict_run = tj.trace(jitter, (x,))
loose_run = tj.trace(jitter, (x,), check_tolerance=1e-2)
print(strict_run.summary())
print(loose_run.summary(), "| badge:", loose_run.verdict.label, loose_run.verdict.reasons)

# %% [markdown]
# ## The eval-mode `TransformerEncoder` check failure
#
# Here eval mode is what *breaks* the check. An `nn.TransformerEncoder` in eval mode has a fused fast path
# (`aten::_transformer_encoder_layer_fwd`) that it takes only when gradients are off. torch traces with gradients
# on (the normal path), then re-traces for the check under `torch.no_grad()` — where the fast path kicks in. The two
# graphs differ and the check fails, although nothing is wrong with your model. torch's message points at some
# node; the explorer's finding says what happened.

# %%
encoder = nn.TransformerEncoder(
    nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True),
    num_layers=2,
    enable_nested_tensor=False,
).eval()
tokens = torch.rand(2, 5, 32)
%trace -o encoder_run encoder(tokens)

# %%
case, root = encoder_run.check.first
print(root.reason)
print([f.title for f in encoder_run.findings if f.severity == "error"])

# %% [markdown]
# The fix: trace the way you will run it. For inference that is under `torch.no_grad()` (`--no-grad`), so the
# trace and the check both take the fast path — a much smaller graph — and the check passes.

# %%
%trace --no-grad -o encoder_nograd encoder(tokens)
print(len(encoder_run.graph), "nodes with grad →", len(encoder_nograd.graph), "under no_grad;", encoder_nograd.summary())

# %% [markdown]
# ## Devices baked into the graph
#
# A tensor created inside `forward` (`torch.ones(n, 1)`, `torch.arange(n)`, `torch.tensor(...)`) is created on a
# device, and the trace records that device **as a constant** — even when you wrote `device=x.device`: the tracer
# sees the value `cpu` (or `cuda:0`), not the expression. A model traced on a GPU then creates those tensors on
# `cuda:0` forever, which fails on a CPU-only machine or silently uses GPU 0. The explorer lists each device
# constant under **Portability** in the Warnings tab, with its fix. Traced and served on one device it is only a
# note (the badge stays green); it turns the badge amber when it can matter: inputs or parameters on another
# device than the baked one, or a target device you declare (`--target-device cuda`, `target_device="cuda"`, or
# the options bar's "target device") that differs. `cuda` and `cuda:0` count as the same device.

# %%
def weight_rows(x):
    weights = torch.ones(x.size(0), 1, device=x.device)
    return x * weights


%trace -o device_run weight_rows(x)
print(device_run.traced.code)

# %%
%trace --target-device cuda -o served_on_gpu weight_rows(x)
print(device_run.verdict.level, "where it was traced;", served_on_gpu.verdict.level, "for a GPU target")

# %% [markdown]
# The fixes, from PyTorch's FAQ and practice: create new tensors **from the input** (`torch.ones_like`,
# `x.new_ones` …) so they follow it; and trace on the device you will run on (move the model there *before*
# tracing and saving: `model.cpu()` then trace, rather than tracing on GPU and casting the `ScriptModule`).
#
# ## Exercise
#
# 1. Rewrite `weight_rows` so that no device is baked in, and check it with the explorer (no `device_constant`
#    finding; green badge).
# 2. `Classifier` below fails torch's check. Find out why in the explorer, then trace it so that the check
#    passes without changing the class.

# %%
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2))
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.features(x)).softmax(-1)


classifier = Classifier()
%trace -o classifier_run classifier(x)

# %% [solution]
def weight_rows_fixed(x):
    weights = torch.ones_like(x[:, :1])  # same device and dtype as x, recorded as aten::ones_like
    return x * weights


%trace -o weights_fixed weight_rows_fixed(x)
print([f.kind for f in weights_fixed.findings], weights_fixed.verdict.label)

# 2: the dropout inside `features` makes the outputs random in train mode (a finding names it); trace in eval mode
%trace --eval -o classifier_eval classifier(x)
print(classifier_run.ok, "→", classifier_eval.ok)

# %% [markdown]
# ## What to remember
#
# - Trace in the mode you deploy: `model.eval()` (or `--eval`) for inference. Train-mode dropout fails the check;
#   train-mode batch norm records batch statistics and, with plain `torch.jit.trace`, updates the running stats on
#   every run.
# - torch's nondeterminism warning only looks at the top level; the explorer's findings look everywhere.
#   `check_tolerance` is for numerical noise, not for randomness.
# - An eval-mode `TransformerEncoder` fails the default check because of its no-grad fast path: trace under
#   `torch.no_grad()`.
# - Tensors created in `forward` carry a device constant: create them from the input (`*_like`, `x.new_*`) and
#   trace on the device you run on.
