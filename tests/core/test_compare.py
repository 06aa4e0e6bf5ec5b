"""compare_tensors is torch's trace-check rule: its verdict and message are torch.testing.assert_close's on both
sides promoted to (complex) double with rtol given and the dtypes' default atol; promote=False is torch's rule for
tensor constants (assert_close in the tensors' own dtype). Its statistics and summary describe the mismatch, and a
passing comparison never pays for assert_close."""

from __future__ import annotations

import math

import pytest
import torch
from torch.testing._comparison import default_tolerances

from jupyter_tracejit.core.compare import TensorComparison, compare_tensors, summary

nan, inf = math.nan, math.inf


def torch_check(
    actual: torch.Tensor, expected: torch.Tensor, rtol: float | None, atol: float | None = None
) -> tuple[bool, str]:
    """What torch.jit._trace._check_trace's compare_outputs decides: its own call to assert_close."""
    default_rtol, default_atol = default_tolerances(actual, expected)
    wide = torch.cdouble if actual.is_complex() or expected.is_complex() else torch.double
    try:
        torch.testing.assert_close(
            actual.to(wide),
            expected.to(wide),
            rtol=default_rtol if rtol is None else rtol,
            atol=default_atol if atol is None else atol,
            equal_nan=True,
        )
    except AssertionError as e:
        return False, str(e)
    return True, ""


def t(values: list, dtype: torch.dtype) -> torch.Tensor:
    return torch.tensor(values, dtype=dtype)


CASES = [
    # (actual, expected, rtol, atol)
    pytest.param(t([1.0, 2.0], torch.float32), t([1.0, 2.0], torch.float32), None, None, id="float32-equal"),
    pytest.param(t([1.0, 2.0], torch.float32), t([1.0, 2.000001], torch.float32), None, None, id="float32-close"),
    pytest.param(t([1.0, 2.0], torch.float32), t([1.0, 2.1], torch.float32), None, None, id="float32-apart"),
    pytest.param(t([1.0, 2.0], torch.float32), t([1.0, 2.1], torch.float32), 0.1, None, id="float32-rtol-0.1"),
    pytest.param(t([1.0], torch.float16), t([1.001], torch.float16), None, None, id="float16-within-default"),
    pytest.param(t([1.0], torch.float16), t([1.002], torch.float16), None, None, id="float16-beyond-default"),
    pytest.param(t([1.0], torch.bfloat16), t([1.0078125], torch.bfloat16), None, None, id="bfloat16-one-ulp"),
    pytest.param(t([1, 2, 3], torch.int64), t([1, 2, 3], torch.int64), None, None, id="int64-equal"),
    pytest.param(t([1, 2, 3], torch.int64), t([1, 2, 4], torch.int64), None, None, id="int64-apart"),
    pytest.param(t([1, 2, 3], torch.int64), t([1, 2, 4], torch.int64), 0.5, None, id="int64-rtol-0.5"),
    pytest.param(t([True, False], torch.bool), t([True, False], torch.bool), None, None, id="bool-equal"),
    pytest.param(t([True, False], torch.bool), t([True, True], torch.bool), None, None, id="bool-apart"),
    pytest.param(t([1 + 1j], torch.complex64), t([1 + 1j], torch.complex64), None, None, id="complex64-equal"),
    pytest.param(t([1 + 1j], torch.complex64), t([1 + 2j], torch.complex64), None, None, id="complex64-imag-apart"),
    pytest.param(t([1 + 1j], torch.complex64), t([2 + 1j], torch.complex64), None, None, id="complex64-real-apart"),
    pytest.param(t([nan, 1.0], torch.float32), t([nan, 1.0], torch.float32), None, None, id="nan-equals-nan"),
    pytest.param(t([nan], torch.float32), t([1.0], torch.float32), None, None, id="nan-vs-number"),
    pytest.param(t([inf, -inf], torch.float32), t([inf, -inf], torch.float32), None, None, id="inf-equal"),
    pytest.param(t([inf], torch.float32), t([-inf], torch.float32), None, None, id="inf-vs-minus-inf"),
    pytest.param(t([inf], torch.float32), t([3e38], torch.float32), None, None, id="inf-vs-large"),
    pytest.param(torch.zeros(0), torch.zeros(0), None, None, id="empty"),
    pytest.param(torch.zeros(0, 3), torch.zeros(0, 3), None, None, id="empty-2d"),
    pytest.param(torch.tensor(1.0), torch.tensor(1.5), None, None, id="0-dim-apart"),
    pytest.param(t([1.5], torch.float64), t([1.0], torch.float64), 0.5, 0.0, id="rtol-edge-inside"),
    pytest.param(t([1.5000001], torch.float64), t([1.0], torch.float64), 0.5, 0.0, id="rtol-edge-outside"),
    pytest.param(t([1.25], torch.float64), t([1.0], torch.float64), 0.0, 0.25, id="atol-edge-inside"),
    pytest.param(t([1.2500001], torch.float64), t([1.0], torch.float64), 0.0, 0.25, id="atol-edge-outside"),
    pytest.param(t([1.0, 2.0], torch.float32), t([1.0, 2.0], torch.float64), None, None, id="float32-vs-float64"),
    pytest.param(t([2**53 + 1], torch.int64), t([2**53], torch.int64), None, None, id="int64-beyond-double"),
]


@pytest.mark.parametrize(("actual", "expected", "rtol", "atol"), CASES)
def test_verdict_and_message_are_torchs_check(actual, expected, rtol, atol) -> None:
    ok, message = torch_check(actual, expected, rtol, atol)
    c = compare_tensors(actual, expected, rtol=rtol, atol=atol)
    assert c.ok is ok
    assert c.torch_message == message
    default_rtol, default_atol = default_tolerances(actual, expected)
    assert c.rtol == (default_rtol if rtol is None else rtol)
    assert c.atol == (default_atol if atol is None else atol)
    assert (c.mismatched == 0) is ok


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        pytest.param(t([2**53 + 1], torch.int64), t([2**53], torch.int64), id="int64-beyond-double"),
        pytest.param(t([1.0], torch.float16), t([1.002], torch.float16), id="float16"),
        pytest.param(t([nan, 2.0], torch.float32), t([nan, 2.0], torch.float32), id="nan"),
        pytest.param(t([True], torch.bool), t([False], torch.bool), id="bool"),
        pytest.param(t([1, 2], torch.int32), t([1, 2], torch.int32), id="int32-equal"),
    ],
)
def test_promote_false_is_torchs_rule_for_tensor_constants(actual, expected) -> None:
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True)
        ok = True
    except AssertionError:
        ok = False
    assert compare_tensors(actual, expected, promote=False).ok is ok


def test_promote_false_with_two_dtypes_is_torchs_dtype_mismatch() -> None:
    a, e = t([1.0, 2.0], torch.float32), t([1.0, 2.0], torch.float64)
    with pytest.raises(AssertionError) as raised:
        torch.testing.assert_close(a, e, equal_nan=True)
    c = compare_tensors(a, e, promote=False)
    assert not c.ok and c.torch_message == str(raised.value)


def test_promotion_to_double_is_what_tells_int64_beyond_2_53_apart() -> None:
    a, e = t([2**53 + 1], torch.int64), t([2**53], torch.int64)
    assert compare_tensors(a, e).ok  # torch's output check compares a.double() and e.double(): equal
    assert not compare_tensors(a, e, promote=False).ok  # its tensor-constant check compares the int64s


def test_a_shape_mismatch_is_structural() -> None:
    a, e = torch.zeros(3), torch.zeros(2)
    c = compare_tensors(a, e)
    assert not c.ok
    assert c.structural == "shape (2,) expected, (3,) found"
    assert c.max_abs is None and c.max_rel is None and c.mismatched == 0
    with pytest.raises(AssertionError) as raised:
        torch.testing.assert_close(a, e)
    assert c.torch_message == str(raised.value)
    assert summary(c) == "shape (2,) expected, (3,) found"


def test_statistics_of_a_mismatch() -> None:
    expected = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    actual = torch.tensor([[1.0, 2.0, 3.0], [4.0, -5.0, 7.0]])
    c = compare_tensors(actual, expected, rtol=1e-5)
    assert not c.ok
    assert (c.mismatched, c.numel) == (2, 6)
    assert c.first_index == (1, 1)
    assert (c.first_expected, c.first_actual) == (5.0, -5.0)
    assert c.max_abs == 10.0
    assert c.max_rel == 2.0
    assert c.structural == ""


def test_statistics_keep_the_original_dtype_and_skip_non_finite_differences() -> None:
    c = compare_tensors(t([1, 7, 3], torch.int64), t([1, 2, 3], torch.int64))
    assert (c.first_expected, c.first_actual) == (2, 7)
    assert type(c.first_actual) is int
    d = compare_tensors(t([inf, 1.0, 2.0], torch.float32), t([1.0, 1.0, 2.5], torch.float32))
    assert d.mismatched == 2 and d.first_index == (0,)
    assert d.max_abs == 0.5  # the infinite difference is left out of the statistics
    e = compare_tensors(t([1.0, 0.0], torch.float32), t([1.0, 0.0], torch.float32))
    assert e.ok and e.max_abs == 0.0 and e.max_rel == 0.0  # 0/0 is not a relative difference


def test_a_0_dim_mismatch_has_no_index() -> None:
    c = compare_tensors(torch.tensor(2.0), torch.tensor(1.0))
    assert not c.ok and c.first_index == () and c.numel == 1
    assert summary(c) == "1 of 1 elements differ, max abs diff 1; first: expected 1.0 vs actual 2.0"


def test_summary_wording() -> None:
    c = compare_tensors(torch.tensor([1.0, -1.0, 3.0, 4.0]), torch.tensor([1.0, 1.0, 3.5, 4.0]))
    assert summary(c) == "2 of 4 elements differ, max abs diff 2; first at [1]: expected 1.0 vs actual -1.0"
    assert summary(c, expected="python", actual="trace") == (
        "2 of 4 elements differ, max abs diff 2; first at [1]: python 1.0 vs trace -1.0"
    )
    assert summary(compare_tensors(torch.ones(2), torch.ones(2))) == ""


def test_empty_tensors_agree() -> None:
    c = compare_tensors(torch.zeros(0, 4), torch.zeros(0, 4))
    assert c == TensorComparison(True, 0.0, 0.0, 0, 0, rtol=1.3e-6, atol=1e-5)


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")
def test_sparse_and_quantized_tensors_are_compared_densely() -> None:
    dense = torch.tensor([[0.0, 1.0], [2.0, 0.0]])
    assert compare_tensors(dense.to_sparse(), dense).ok
    assert not compare_tensors(dense.to_sparse(), dense + 1).ok
    q = torch.quantize_per_tensor(dense, 0.5, 0, torch.quint8)
    assert compare_tensors(q, dense).ok


def test_meta_tensors_of_other_shapes_are_a_structural_mismatch() -> None:
    c = compare_tensors(torch.empty(3, 2, device="meta"), torch.empty(3, 3, device="meta"))
    assert not c.ok and c.structural == "shape (3, 3) expected, (3, 2) found"


def test_meta_tensors_of_one_shape_agree_as_in_torchs_check() -> None:
    a, b = torch.empty(3, 2, device="meta"), torch.empty(3, 2, device="meta")
    ok, _ = torch_check(a, b, rtol=None)
    assert ok  # torch's check: no data to compare, so equal
    assert compare_tensors(a, b).ok


def test_a_passing_comparison_never_calls_assert_close(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("assert_close must not run for a passing comparison")

    monkeypatch.setattr(torch.testing, "assert_close", refuse)
    for a in (torch.rand(100, 10), torch.tensor([nan, inf]), torch.arange(5), torch.rand(3, dtype=torch.complex64)):
        assert compare_tensors(a, a.clone()).ok
    assert compare_tensors(torch.ones(2), torch.ones(2), promote=False).ok
    with pytest.raises(RuntimeError, match="must not run"):
        compare_tensors(torch.ones(2), torch.zeros(2))  # a mismatch does ask torch for its wording
