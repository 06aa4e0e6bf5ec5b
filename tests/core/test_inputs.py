"""core/inputs.py: how example inputs are packed, cloned and described (one spelling everywhere)."""

from __future__ import annotations

import pytest
import torch

from jupyter_tracejit.core.inputs import clone_inputs, describe_inputs, describe_value, make_tuple, tensor_type_str


@pytest.mark.parametrize(
    ("tensor", "text"),
    [
        (torch.zeros(4, 3), "Float(4, 3)"),
        (torch.zeros(2, dtype=torch.int64), "Long(2)"),
        (torch.zeros((), dtype=torch.bool), "Bool()"),
        (torch.zeros(1, dtype=torch.bfloat16), "BFloat16(1)"),
        (torch.zeros(2, dtype=torch.complex64), "ComplexFloat(2)"),
        (torch.empty(2, 5, device="meta"), "Float(2, 5, device=meta)"),
        (torch.zeros(1, dtype=torch.float8_e4m3fn), "float8_e4m3fn(1)"),
    ],
)
def test_tensors_read_like_torchscript_value_types(tensor, text):
    assert tensor_type_str(tensor) == text == describe_value(tensor)


def test_nested_values_and_keyword_inputs():
    x = torch.zeros(2)
    assert describe_value((x,)) == "(Float(2),)"
    assert describe_value([x, 3, None]) == "[Float(2), 3, None]"
    assert describe_value({"a": (x, x)}) == "{'a': (Float(2), Float(2))}"
    assert describe_value("s" * 50) == "str" and describe_value(2.5) == "2.5"
    assert describe_value(object()) == "object"
    assert describe_inputs((x, {"k": x})) == ["Float(2)", "{'k': Float(2)}"]
    assert describe_inputs({"ids": torch.zeros(1, 4, dtype=torch.long)}) == ["ids=Long(1, 4)"]
    assert describe_inputs(x) == ["Float(2)"]


def test_make_tuple_packs_like_torch():
    x = torch.zeros(1)
    assert make_tuple(x) == (x,)
    d = {"a": x}
    assert make_tuple(d) == (d,)
    assert make_tuple((x, x)) == (x, x)
    assert make_tuple([x]) == (x,)
    with pytest.raises(TypeError):
        make_tuple(3)


def test_clone_inputs_detaches_and_keeps_requires_grad():
    x = torch.rand(2, requires_grad=True)
    y = x * 2
    (cx, cy) = clone_inputs((x, y))
    assert cx is not x and torch.equal(cx, x) and cx.requires_grad and cx.grad_fn is None
    assert cy.grad_fn is None and torch.equal(cy, y)
