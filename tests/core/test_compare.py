"""core/compare.py: one tensor comparison rule for the check and the probe, which agrees with
torch.testing.assert_close (the rule torch's check uses) and only calls it to word a mismatch."""

from __future__ import annotations

import math

import pytest
import torch

from jupyter_tracejit.core import compare
from jupyter_tracejit.core.compare import compare_tensors, summary


def torch_says(actual, expected, rtol, atol) -> bool:
    try:
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
        return True
    except AssertionError:
        return False


PAIRS = [
    (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])),
    (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.00001])),
    (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1])),
    (torch.tensor([math.nan, 1.0]), torch.tensor([math.nan, 1.0])),
    (torch.tensor([math.inf, 1.0]), torch.tensor([math.inf, 1.0])),
    (torch.tensor([math.inf]), torch.tensor([-math.inf])),
    (torch.tensor([1.0], dtype=torch.float16), torch.tensor([1.001], dtype=torch.float16)),
    (torch.tensor([3, 4]), torch.tensor([3, 5])),
    (torch.tensor([True, False]), torch.tensor([True, False])),
    (torch.tensor([1 + 1j], dtype=torch.complex64), torch.tensor([1 + 1.5j], dtype=torch.complex64)),
    (torch.zeros(0, 3), torch.zeros(0, 3)),
]


@pytest.mark.parametrize(("actual", "expected"), PAIRS)
@pytest.mark.parametrize("rtol", [1e-5, 1e-3, 0.0])
def test_the_verdict_is_torchs(actual, expected, rtol):
    c = compare_tensors(actual, expected, rtol=rtol)
    wide = torch.cdouble if actual.is_complex() else torch.double
    assert c.ok == torch_says(actual.to(wide), expected.to(wide), rtol, c.atol)
    assert c.numel == actual.numel()
    assert c.ok or c.torch_message.startswith(("Tensor-likes are not close!", "Tensor-likes are not equal!"))


def test_statistics_of_a_mismatch():
    c = compare_tensors(torch.tensor([[1.0, 5.0], [3.0, 9.0]]), torch.tensor([[1.0, 2.0], [3.0, 4.0]]), rtol=1e-5)
    assert not c.ok and (c.mismatched, c.numel) == (2, 4)
    assert c.first_index == (0, 1) and (c.first_expected, c.first_actual) == (2.0, 5.0)
    assert c.max_abs == 5.0 and c.max_rel == pytest.approx(1.5)
    assert summary(c, expected="eager", actual="trace") == (
        "2 of 4 elements differ, max abs diff 5; first at [0, 1]: eager 2.0 vs trace 5.0"
    )
    assert summary(compare_tensors(torch.ones(1), torch.ones(1), rtol=0)) == ""


def test_shape_mismatch_compares_nothing_element_wise():
    c = compare_tensors(torch.zeros(2), torch.zeros(3), rtol=1e-5)
    assert not c.ok and c.structural == "shape (3,) expected, (2,) found" and c.max_abs is None
    assert summary(c) == c.structural


def test_without_promotion_values_are_compared_in_their_own_dtype():
    a, b = torch.tensor([1.0000001]), torch.tensor([1.0])
    assert compare_tensors(a, b, promote=False).ok  # torch's default tolerances for float32
    assert compare_tensors(a, b, rtol=0.0, atol=0.0).ok is False


def test_a_passing_comparison_never_pays_for_assert_close(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("assert_close must not run for a passing comparison")

    monkeypatch.setattr(compare.torch.testing, "assert_close", refuse)
    assert compare_tensors(torch.ones(3), torch.ones(3), rtol=1e-5).ok
