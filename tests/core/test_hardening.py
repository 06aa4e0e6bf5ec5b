"""A guest in the user's process: the core leaves the model as it found it, never raises, names the real cause of
bad inputs, and does not let torch's interpreter take the process down on long graphs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.torchscript.deep_stack import DEEP_GRAPH_NODES, run_with_stack, stack_for


def trained_batchnorm() -> nn.Module:
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).eval()
    with torch.no_grad():
        model[1].running_mean.fill_(0.5)
        model[1].running_var.fill_(2.0)
        model[1].num_batches_tracked.fill_(100)
    return model


@pytest.mark.parametrize(
    "options",
    [
        {"module_mode": "train"},
        {"module_mode": "train", "check_trace": False},
        {"module_mode": "train", "check_inputs": [(torch.rand(3, 3, 8, 8),)], "probe": True},
        {"module_mode": "train", "check_inputs": [(torch.rand(3, 5),)]},  # the check raises
    ],
    ids=["check", "no-check", "probe", "failing"],
)
def test_tracing_in_train_mode_leaves_trained_statistics_as_they_were(options):
    model = trained_batchnorm()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x = torch.rand(2, 3, 8, 8)
    expected = model(x)
    run = tj.trace(model, (x,), **options)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert not model.training and torch.equal(model(x), expected)
    # what changed is still reported
    runs = next(f for f in run.findings if f.kind == "python_runs")
    assert "running_mean" in runs.message and "put the buffers back" in runs.message


class HostileAttributes:
    def __getattr__(self, name):
        raise RuntimeError(f"no attribute {name} for you")

    def __call__(self, x):
        return x * 2


def test_a_callable_whose_getattr_raises_is_a_recorded_error_not_an_exception():
    run = tj.trace(HostileAttributes(), (torch.rand(2),))
    assert not run.ok and run.error.phase == "arguments" and run.error.type == "RuntimeError"
    assert "inspecting what to trace raised RuntimeError" in run.error.message and run.error.hint
    run = tj.trace_module(nn.Linear(2, 2), HostileAttributes())  # not a dict: refused by the plan, not raised
    assert run.error is not None


@pytest.mark.parametrize(
    ("inputs", "kind"),
    [(([torch.rand(2), 3],), "List"), (({"a": torch.rand(2), "b": 3},), "Dictionary")],
)
def test_a_list_or_dict_input_mixing_tensors_and_numbers_names_that_cause(inputs, kind):
    fn = lambda xs: xs[0] if isinstance(xs, list) else xs["a"]  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError) as torchs:
            torch.jit.trace(fn, inputs)
    run = tj.trace(fn, inputs)
    assert run.error.tag == "input_type"
    # torch's whole message first (code that matches on torch's words still matches), then ours
    torch_message = str(torchs.value).split("\nException raised from", 1)[0].strip()
    assert torch_message.startswith("Tracer cannot infer type of")
    assert run.error.message.startswith(torch_message + "\n")
    assert f"{kind} inputs to traced functions must have consistent" in run.error.message
    assert run.error.message.endswith("with mixed types is in the example inputs)")
    assert "pass only tensors" in run.error.hint


def test_probe_dims_of_the_wrong_shape_are_an_argument_error_and_nothing_is_traced():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1

    run = tj.trace(f, (torch.rand(2, 3),), probe=True, probe_dims=[1])
    assert run.error.type == "ArgumentError" and "probe_dims must be" in run.error.message
    assert calls == []


def test_a_big_graph_runs_on_a_thread_with_a_stack_sized_for_it():
    seen = []
    with torch.no_grad():
        run_with_stack(DEEP_GRAPH_NODES + 1, lambda: seen.append(torch.is_grad_enabled()))
    assert seen == [False]  # grad mode is per thread: carried over
    with pytest.raises(KeyError, match="lost"):
        run_with_stack(DEEP_GRAPH_NODES + 1, lambda: {}["lost"])
    assert stack_for(100) == 64 * 1024 * 1024 and stack_for(10**9) == 1024 * 1024 * 1024


@pytest.mark.slow
def test_a_25000_op_chain_is_checked_without_crashing_the_process():
    """torch's interpreter recursion segfaults near 10,000 ops on the default stack (torch.jit.trace's own check
    does); in a notebook that would kill the kernel. Run in a child process so a crash fails the test only."""
    code = textwrap.dedent(
        """
        import torch, warnings, jupyter_tracejit as tj
        warnings.simplefilter("ignore")
        def chain(x):
            for _ in range(25000):
                x = x + 1
            return x
        run = tj.trace(chain, (torch.rand(2),))
        print(run.ok, len(run.graph))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "75000"]


class OddlyNamed(nn.Module):
    """Module names torch accepts that hold the characters its scope strings use as separators."""

    def __init__(self) -> None:
        super().__init__()
        self.add_module("a/b", nn.Sequential(nn.Linear(2, 2)))
        self.add_module("c(d)", nn.ReLU())
        self.add_module("e)(", nn.Sequential(nn.Tanh()))

    def forward(self, x):
        x = getattr(self, "a/b")(x)
        return getattr(self, "e)(")(getattr(self, "c(d)")(x))


def test_module_names_with_slashes_and_parentheses_keep_their_nodes_and_types():
    run = tj.trace(OddlyNamed(), (torch.rand(2),))
    graph = run.graphs["forward"]
    assert [(n.kind, n.scope) for n in graph.nodes if n.kind.startswith("aten::")] == [
        ("aten::linear", "a/b.0"),
        ("aten::relu", "c(d)"),
        ("aten::tanh", "e)(.0"),
    ]
    assert {p: s.type for p, s in graph.scopes.items()} == {
        "": "OddlyNamed",
        "a/b": "Sequential",
        "a/b.0": "Linear",
        "c(d)": "ReLU",
        "e)(": "Sequential",
        "e)(.0": "Tanh",
    }
    graph.lint()
    assert tj.TraceRun.from_json(run.to_json()).graphs["forward"].scopes.keys() == graph.scopes.keys()
