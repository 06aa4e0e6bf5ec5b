"""A guard on one size, evaluated at every size of a range: does it hold for all of them (torch's solver only failed
to prove it), for a narrower range, or for multiples only?

The guard is a sympy expression of torch's shape environment (``Eq(Mod(2*s27, 8), 0)``); torch's own Python printer
writes it as Python (``((2*s27) % 8) == 0``), which is compiled once into a function of the size, after checking that
it holds nothing but arithmetic, comparisons and ``min`` / ``max`` / ``abs`` calls on that one name. A size where
the guard cannot even be computed (a division by zero) is a size where it does not hold.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from typing import Any

#: ranges up to this many sizes are evaluated size by size; a wider one is not judged
MAX_SIZES = 200_000

_ALLOWED = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.Call,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)
_CALLS = {"max": max, "min": min, "abs": abs}


def guard_function(expr: Any, symbol: str) -> Callable[[int], bool] | None:
    """``expr`` (over ``symbol`` only) as a function of that size; None when it cannot be written as one."""
    try:
        from torch.utils._sympy.printers import PythonPrinter

        text = PythonPrinter().doprint(expr)
        tree = ast.parse(text, mode="eval")
    except Exception:  # an expression torch's printer does not write as Python
        return None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            return None
        if isinstance(node, ast.Name) and node.id not in (symbol, *_CALLS):
            return None
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _CALLS):
            return None
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, bool)):
            return None
    code = compile(tree, "<guard>", "eval")
    names = {"__builtins__": {}, **_CALLS}

    def holds(size: int) -> bool:
        try:
            return bool(eval(code, names, {symbol: size}))
        except (ArithmeticError, ValueError, TypeError):
            return False

    return holds


def sizes_where(exprs: list[Any], symbol: str, low: int, high: int) -> list[int] | None:
    """The sizes of ``[low, high]`` where every guard of ``exprs`` holds; None when one cannot be evaluated or the
    range has more than :data:`MAX_SIZES` sizes."""
    if high < low or high - low + 1 > MAX_SIZES:
        return None
    functions = [guard_function(e, symbol) for e in exprs]
    if any(f is None for f in functions):
        return None
    return [n for n in range(low, high + 1) if all(f(n) for f in functions if f is not None)]


def shape_of(sizes: list[int], low: int, high: int) -> tuple[str, int, int, int]:
    """What the sizes where a guard holds look like within ``[low, high]``: ``("all", low, high, 1)``, ``("none",
    ...)``, ``("range", a, b, 1)`` for one run of consecutive sizes, ``("multiple", a, b, k)`` for every k-th size
    from a to b, ``("scattered", a, b, 1)`` otherwise."""
    if not sizes:
        return "none", low, high, 1
    if len(sizes) == high - low + 1:
        return "all", low, high, 1
    first, last = sizes[0], sizes[-1]
    if len(sizes) == last - first + 1:
        return "range", first, last, 1
    step = sizes[1] - sizes[0]
    if all(b - a == step for a, b in itertools.pairwise(sizes)):
        return "multiple", first, last, step
    return "scattered", first, last, 1


__all__ = ["MAX_SIZES", "guard_function", "shape_of", "sizes_where"]
