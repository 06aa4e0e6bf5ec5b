"""Example inputs: described in TorchScript's spelling (the graph's own), packed as torch packs them (make_tuple),
and cloned as torch's check clones them (detached, requires_grad kept)."""

from __future__ import annotations

import pytest
import torch

from jupyter_tracejit.core.inputs import clone_inputs, describe_inputs, describe_value, make_tuple, tensor_type_str


def torchscript_dtype(t: torch.Tensor) -> str:
    """How a traced graph spells the dtype of a value holding ``t`` (``Value.dtype``)."""
    return torch._C.TensorType.create_from_tensor(t).scalarType()


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (torch.rand(4, 3), "Float(4, 3)"),
        (torch.zeros(2, 5, dtype=torch.bool), "Bool(2, 5)"),
        (torch.tensor(3), "Long()"),
        (torch.zeros(0, 2, dtype=torch.float16), "Half(0, 2)"),
        (torch.empty(2, device="meta"), "Float(2, device=meta)"),
        (torch.empty(1, 3, dtype=torch.int8, device="meta"), "Char(1, 3, device=meta)"),
        ((torch.rand(2),), "(Float(2),)"),
        ((torch.rand(2), torch.rand(3)), "(Float(2), Float(3))"),
        ((), "()"),
        ([torch.rand(2), 3], "[Float(2), 3]"),
        ({"a": torch.rand(2), 1: (torch.rand(1),)}, "{'a': Float(2), 1: (Float(1),)}"),
        ([({"x": [torch.rand(1)]},)], "[({'x': [Float(1)]},)]"),
        (None, "None"),
        (True, "True"),
        (2.5, "2.5"),
        (1j, "1j"),
        ("abc", "'abc'"),
        ("a" * 40, "str"),
        ("a" * 38, "'" + "a" * 38 + "'"),
        (10**50, "int"),
        (object(), "object"),
        (torch.nn.Linear(2, 2), "Linear"),
    ],
)
def test_describe_value(value: object, text: str) -> None:
    assert describe_value(value) == text


@pytest.mark.parametrize(
    "dtype",
    [
        torch.float32,
        torch.float64,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
        torch.complex64,
        torch.complex128,
    ],
    ids=str,
)
def test_tensor_types_are_spelled_as_the_graph_spells_them(dtype: torch.dtype) -> None:
    t = torch.zeros(2, 3, dtype=dtype)
    assert tensor_type_str(t) == f"{torchscript_dtype(t)}(2, 3)"


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize(
    "dtype",
    [torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn, torch.float8_e5m2, torch.complex32],
    ids=str,
)
def test_rarer_dtypes_are_spelled_as_the_graph_spells_them(dtype: torch.dtype) -> None:
    t = torch.zeros(2, dtype=dtype)
    assert tensor_type_str(t) == f"{torchscript_dtype(t)}(2)"


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")
@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8, torch.qint32], ids=str)
def test_quantized_dtypes_are_spelled_as_the_graph_spells_them(dtype: torch.dtype) -> None:
    t = torch.quantize_per_tensor(torch.rand(2), 0.5, 0, dtype)
    assert tensor_type_str(t) == f"{torchscript_dtype(t)}(2)"


def test_describe_inputs_positional_keyword_and_single() -> None:
    x, mask = torch.rand(4, 3), torch.ones(2, 5, dtype=torch.bool)
    assert describe_inputs((x, mask)) == ["Float(4, 3)", "Bool(2, 5)"]
    assert describe_inputs([x]) == ["Float(4, 3)"]
    assert describe_inputs({"x": x, "mask": mask}) == ["x=Float(4, 3)", "mask=Bool(2, 5)"]
    assert describe_inputs(x) == ["Float(4, 3)"]
    assert describe_inputs(((x, x),)) == ["(Float(4, 3), Float(4, 3))"]
    assert describe_inputs({"forward": (x,)}) == ["forward=(Float(4, 3),)"]
    assert describe_inputs(()) == []


def test_make_tuple_packs_like_torch() -> None:
    x = torch.rand(2)
    assert make_tuple(x) == (x,) and make_tuple(x)[0] is x
    d = {"x": x}
    assert make_tuple(d) == (d,) and make_tuple(d)[0] is d
    t = (x, x)
    assert make_tuple(t) is t
    assert make_tuple([x, 1]) == (x, 1)
    assert make_tuple(v for v in (1, 2)) == (1, 2)
    with pytest.raises(TypeError):
        make_tuple(3)
    # torch's own make_tuple agrees where it is defined
    for given in (x, d, t, [x, 1]):
        ours, torchs = make_tuple(given), torch.jit._trace.make_tuple(given)
        assert len(ours) == len(torchs) and all(a is b for a, b in zip(ours, torchs, strict=True))


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")  # torch reads derived.grad
def test_clone_inputs_detaches_and_keeps_requires_grad() -> None:
    leaf = torch.rand(3, requires_grad=True)
    derived = leaf * 2  # not a leaf: has a grad_fn
    plain = torch.rand(2)
    cloned = clone_inputs((leaf, derived, plain))
    assert isinstance(cloned, tuple) and len(cloned) == 3
    for original, copy in zip((leaf, derived, plain), cloned[:3], strict=True):
        assert copy is not original
        assert copy.data_ptr() != original.data_ptr()
        assert torch.equal(copy.detach(), original.detach())
        assert copy.requires_grad == original.requires_grad
        assert copy.grad_fn is None and copy.is_leaf
    cloned[2].add_(1)
    assert not torch.equal(cloned[2], plain)  # the user's tensor is untouched


def test_clone_inputs_of_nested_containers() -> None:
    x = torch.rand(2, requires_grad=True)
    cloned = clone_inputs(((x, [x]), {"k": x}))
    (pair, lst), mapping = cloned
    assert isinstance(pair, torch.Tensor) and pair is not x and pair.requires_grad
    assert lst[0] is not x and lst[0].requires_grad
    assert mapping["k"] is not x and mapping["k"].is_leaf
