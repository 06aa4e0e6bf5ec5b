"""Comparing a tensor with the tensor it should equal: one rule for the check and the probe.

The rule is torch's trace check: both sides in double (complex double for complex), ``rtol`` given,
``atol`` torch's default for the original dtypes, NaNs equal (``torch.testing.assert_close``'s rule, which is
``torch.isclose``'s). The verdict comes from ``torch.isclose``; ``assert_close`` runs only on a mismatch, to
give torch's own wording, so a passing comparison does not pay its first-use import (about 0.6 s).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.testing._comparison import default_tolerances

from .check import OutputComparison


@dataclass
class TensorComparison:
    """``actual`` compared with ``expected``."""

    ok: bool
    #: greatest absolute / relative difference over the finite elements; None when shapes differ
    max_abs: float | None = None
    max_rel: float | None = None
    #: elements outside the tolerance, of how many
    mismatched: int = 0
    numel: int = 0
    #: where the first mismatch is, and the two values there
    first_index: tuple[int, ...] = ()
    first_expected: object = None
    first_actual: object = None
    #: torch's own description of the mismatch (``assert_close``'s message); "" when ok
    torch_message: str = ""
    #: the shapes or dtypes do not match (nothing element-wise was compared)
    structural: str = ""
    #: the tolerances applied
    rtol: float = 0.0
    atol: float = 0.0


def _dense(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    if t.is_quantized:
        t = t.dequantize()
    if t.is_mkldnn or t.layout != torch.strided:
        t = t.to_dense()
    return t


def compare_tensors(
    actual: torch.Tensor,
    expected: torch.Tensor,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    promote: bool = True,
) -> TensorComparison:
    """Compare ``actual`` with ``expected`` under torch's check rule (see the module docstring).

    ``rtol`` / ``atol`` default to torch's for the dtypes. ``promote=False`` compares in the tensors' own dtype,
    as torch compares the tensor constants of two traces.
    """
    default_rtol, default_atol_ = default_tolerances(actual, expected)
    rtol = float(default_rtol) if rtol is None else rtol
    atol = float(default_atol_) if atol is None else atol
    a, e = _dense(actual), _dense(expected)
    if tuple(a.shape) != tuple(e.shape):
        return TensorComparison(
            False,
            structural=f"shape {tuple(e.shape)} expected, {tuple(a.shape)} found",
            torch_message=f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.",
            rtol=rtol,
            atol=atol,
        )
    if a.is_meta and e.is_meta:  # no values: torch's check compares their metadata only, and the shapes agree
        return TensorComparison(True, 0.0, 0.0, 0, a.numel(), rtol=rtol, atol=atol)
    if a.is_meta != e.is_meta:
        return _structural(a, e, "device", f"device {e.device} expected, {a.device} found", rtol, atol)
    if not promote and a.dtype != e.dtype:  # torch compares tensor constants in their own dtypes
        return _structural(a, e, "dtype", f"dtype {e.dtype} expected, {a.dtype} found", rtol, atol)
    if a.dtype == e.dtype and a.device == e.device and torch.equal(a, e):
        # the common case, bit for bit equal: one op where it is (no copy to the host, one synchronisation on a
        # device), instead of the ~10 of the rule below (0.5 ms each on a tiny CPU tensor, a copy of every output
        # from a GPU); NaNs are never equal here and take the rule below, which counts them equal
        return TensorComparison(True, 0.0, 0.0, 0, a.numel(), rtol=rtol, atol=atol)
    if promote:
        wide = torch.cdouble if a.is_complex() or e.is_complex() else torch.double
        a64, e64 = a.to("cpu", wide), e.to("cpu", wide)
    else:
        a64, e64 = a.cpu(), e.cpu()
    close = torch.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    exact = a64.dtype if a64.is_floating_point() or a64.is_complex() else torch.double
    diff = (a64.to(exact) - e64.to(exact)).abs()
    finite = torch.isfinite(diff)
    max_abs = float(diff[finite].max()) if bool(finite.any()) else 0.0
    rel = diff / e64.to(exact).abs()
    rel_finite = torch.isfinite(rel)
    max_rel = float(rel[rel_finite].max()) if bool(rel_finite.any()) else 0.0
    numel = close.numel()
    bad = ~close
    mismatched = int(bad.sum())
    if mismatched == 0:
        return TensorComparison(True, max_abs, max_rel, 0, numel, rtol=rtol, atol=atol)
    flat = int(bad.reshape(-1).nonzero()[0])
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), e.shape)) if e.dim() else ()
    try:
        torch.testing.assert_close(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
        torch_message = ""
    except AssertionError as err:
        torch_message = str(err)
    return TensorComparison(
        False,
        max_abs,
        max_rel,
        mismatched,
        numel,
        index,
        e.reshape(-1)[flat].item(),
        a.reshape(-1)[flat].item(),
        torch_message,
        rtol=rtol,
        atol=atol,
    )


def _structural(
    a: torch.Tensor, e: torch.Tensor, attribute: str, says: str, rtol: float, atol: float
) -> TensorComparison:
    """A mismatch of metadata (nothing element-wise compared), in torch's words where it has them."""
    try:
        torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True)
        torch_message = f"The values for attribute '{attribute}' do not match."
    except AssertionError as err:
        torch_message = str(err)
    return TensorComparison(False, structural=says, torch_message=torch_message, rtol=rtol, atol=atol)


def summary(c: TensorComparison, *, expected: str = "expected", actual: str = "actual") -> str:
    """One line: ``3 of 4 elements differ, max abs diff 2; first at [1]: expected 1.0 vs actual -1.0``."""
    if c.ok:
        return ""
    if c.structural:
        return c.structural
    where = f" at {list(c.first_index)}" if c.first_index else ""
    return (
        f"{c.mismatched} of {c.numel} elements differ, max abs diff {c.max_abs:.4g}; "
        f"first{where}: {expected} {c.first_expected!r} vs {actual} {c.first_actual!r}"
    )


def _compare_nested(orig: torch.Tensor, ref: torch.Tensor, tolerance: float) -> TensorComparison:
    """Nested tensors are compared component by component, as torch does; the first mismatch decides."""
    if getattr(orig, "is_nested", False) != getattr(ref, "is_nested", False):
        return TensorComparison(False, structural="one output is a nested tensor, the other is not")
    last = TensorComparison(True)
    for t_o, t_r in zip(orig.unbind(), ref.unbind(), strict=False):
        last = compare_tensors(t_o, t_r, rtol=tolerance)
        if not last.ok:
            return last
    return last


def compare_outputs(
    original: list[torch.Tensor], reference: list[torch.Tensor], against: str, tolerance: float
) -> list[OutputComparison]:
    """torch's ``compare_outputs``: each pair compared in double with ``rtol=tolerance`` (see :mod:`.compare`)."""
    results = []
    for i, (orig, ref) in enumerate(zip(original, reference, strict=False)):
        if getattr(orig, "is_nested", False) or getattr(ref, "is_nested", False):
            c = _compare_nested(orig, ref, tolerance)
        else:
            c = compare_tensors(orig, ref, rtol=tolerance)
        results.append(
            OutputComparison(
                index=i,
                against=against,
                ok=c.ok,
                max_abs=c.max_abs,
                max_rel=c.max_rel,
                atol=c.atol,
                rtol=tolerance,
                shape=list(orig.shape),
                message=c.torch_message,
            )
        )
    return results


__all__ = [
    "TensorComparison",
    "compare_outputs",
    "compare_tensors",
    "summary",
]
