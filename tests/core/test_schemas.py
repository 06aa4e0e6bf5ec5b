"""Argument names from torch's op schemas and the module's parameter types: what the inspector shows beside a
node's inputs (core/schemas.py)."""

from __future__ import annotations

import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.graph_text import signature
from jupyter_tracejit.core.inputs import parameter_types
from jupyter_tracejit.core.torchscript.schemas import argument_names


def test_arguments_are_named_by_the_overload_the_node_calls() -> None:
    def f(x, y):
        a = torch.nn.functional.scaled_dot_product_attention(x, x, x)
        return a + y, a + 2, torch.div(x, y, rounding_mode="floor")

    run = tj.trace(f, (torch.rand(1, 2, 3, 4), torch.rand(1, 2, 3, 4)), check_trace=False)
    g = run.graph
    names = {signature(g, n): run.argument_names.get(signature(g, n)) for n in g.nodes if n.kind.startswith("aten::")}
    sdpa = next(v for k, v in names.items() if k.startswith("aten::scaled_dot_product_attention("))
    assert sdpa[:6] == ["query", "key", "value", "attn_mask", "dropout_p", "is_causal"]
    # div with a rounding mode is the Tensor_mode overload (div.Tensor has no third argument)
    assert names["aten::add(Tensor,Tensor,int)"] == ["self", "other", "alpha"]
    assert names["aten::div(Tensor,Tensor,str)"] == ["self", "other", "rounding_mode"]
    # every op of the graph is named, and the table round-trips through the JSON
    assert all(v is not None for v in names.values()), names
    assert tj.TraceRun.from_json(run.to_json()).argument_names == run.argument_names


def test_prim_ops_and_unknown_kinds_are_not_named() -> None:
    run = tj.trace(lambda x: x.view(-1), (torch.rand(2, 3),), check_trace=False)
    assert all(k.startswith("aten::") for k in run.argument_names)
    assert argument_names([]) == {}


def test_parameters_and_buffers_with_their_types() -> None:
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).eval()
    run = tj.trace(model, (torch.rand(2, 4),))
    assert run.parameters["0.weight"] == "Float(3, 4)"
    assert run.parameters["1.running_var"] == "Float(3)"
    assert run.parameters["1.num_batches_tracked"] == "Long()"
    assert parameter_types(None) == {}
    # a function has no parameters
    assert tj.trace(lambda x: x * 2, (torch.rand(2),)).parameters == {}


def test_a_hostile_module_keeps_what_was_listed() -> None:
    class Hostile(nn.Linear):
        def named_buffers(self, *args, **kwargs):
            raise RuntimeError("no")

    assert parameter_types(Hostile(2, 2)) == {"weight": "Float(2, 2)", "bias": "Float(2)"}
