"""Shape expressions read without evaluating them: an exported program writes its symbolic sizes as sympy strings,
and ``sympy.sympify`` evaluates Python, so only plain arithmetic on symbols is allowed (:func:`expression_problem`).
Torch-free; part of the guard (:mod:`.guard`)."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from typing import Any

#: the longest shape expression read (torch writes a few hundred characters at most)
MAX_EXPRESSION = 10_000


# -- shape expressions (sympy strings), read without evaluating them ------------------------------------------------
#: the functions torch's exported programs write in shape expressions (``sympy.srepr`` of its symbolic shapes):
#: sympy's arithmetic, relations and logic, and torch's own (torch.utils._sympy.functions)
_EXPRESSION_CALLS = frozenset(
    {
        *("Symbol", "Integer", "Float", "Rational", "Add", "Mul", "Pow", "Mod", "Max", "Min", "Abs"),
        *("floor", "ceiling", "sqrt", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "Equality", "Unequality"),
        *("StrictLessThan", "StrictGreaterThan", "LessThan", "GreaterThan", "And", "Or", "Not", "Xor"),
        *("Piecewise", "ExprCondPair", "ITE", "Tuple", "BooleanTrue", "BooleanFalse", "Half", "One", "Zero"),
        *("NegativeOne", "Infinity", "NegativeInfinity", "NaN", "ComplexInfinity"),
        *("FloorDiv", "ModularIndexing", "Where", "PythonMod", "CleanDiv", "CeilToInt", "FloorToInt", "CeilDiv"),
        *("LShift", "RShift", "PowByNatural", "FloatPow", "FloatTrueDiv", "IntTrueDiv", "TruncToFloat"),
        *("IsNonOverlappingAndDenseIndicator", "TruncToInt", "RoundToInt", "RoundDecimal", "ToFloat", "Identity"),
    }
)
_GENERATED_CALL = re.compile(r"(?:OpaqueUnaryFn|BitwiseFn)_\w+")
_POWERS = frozenset({"Pow", "PowByNatural", "FloatPow"})
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_NUMBER_TEXT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_OPERATORS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
    ast.LShift,
    ast.RShift,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.Invert,
    ast.And,
    ast.Or,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
)
_STRUCTURE = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Tuple, ast.Load, ast.keyword)


@functools.lru_cache(maxsize=4096)  # a program repeats its expressions: 1,202 checks for 12-layer BERT, most alike
def expression_problem(text: str) -> str | None:
    """Why ``sympy.sympify(text)`` could run code or exhaust the machine, or ``None`` for a plain expression:
    names, numbers, arithmetic, comparisons and calls of the functions torch writes (``Symbol('s77',
    positive=True, integer=True)``, ``FloorDiv(s0, 2)``), no attribute, subscript, lambda or other call, no power
    of a power or with a constant exponent over 64. ``sympify`` evaluates its string as Python."""
    if len(text) > MAX_EXPRESSION:
        return f"it is {len(text)} characters long"
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "it is not an expression"
    texts: set[int] = set()  # the string constants passed where a name or a number is written (Symbol('s0'))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func.id if isinstance(node.func, ast.Name) else None
            if func is None or not (func in _EXPRESSION_CALLS or _GENERATED_CALL.fullmatch(func)):
                return f"it calls {ast.unparse(node.func)}"
            for i, arg in enumerate(node.args):
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    symbol = func == "Symbol" and _NAME.fullmatch(arg.value)
                    number = func in ("Float", "Integer", "Rational") and _NUMBER_TEXT.fullmatch(arg.value)
                    if i != 0 or not (symbol or number):
                        return f"it passes the text {arg.value[:40]!r} to {func}"
                    texts.add(id(arg))
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg is None or not (
                    isinstance(value, ast.Constant) and isinstance(value.value, (bool, int))
                ):
                    return f"it passes {ast.unparse(keyword)} to {func}"
            if func in _POWERS and len(node.args) == 2 and _power_problem(node.args[0], node.args[1]):
                return f"it raises to a power too large to compute ({ast.unparse(node)[:60]})"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            if _power_problem(node.left, node.right):
                return f"it raises to a power too large to compute ({ast.unparse(node)[:60]})"
        elif isinstance(node, ast.Name):
            if not _NAME.fullmatch(node.id):
                return f"it names {node.id}"
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or node.value is None:
                continue
            if isinstance(node.value, int) and abs(node.value) >= 2**64:
                return "it holds an integer of more than 64 bits"
            if isinstance(node.value, str) and id(node) not in texts:
                return f"it holds the text {node.value[:40]!r}"
            if not isinstance(node.value, (int, float, str)):
                return f"it holds {type(node.value).__name__} {node.value!r}"[:80]
        elif not isinstance(node, (*_STRUCTURE, *_OPERATORS, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)):
            return f"it holds {type(node).__name__.lower()} syntax ({ast.unparse(node)[:60]})"
    return None


def _power_problem(base: ast.AST, exponent: ast.AST) -> bool:
    """A power sympy could take long to compute: a constant exponent over 64 (or its number in ``Integer(..)``), or
    a power of a power."""
    if isinstance(exponent, ast.Call) and isinstance(exponent.func, ast.Name) and exponent.func.id == "Integer":
        exponent = exponent.args[0] if exponent.args else exponent
    if isinstance(exponent, ast.UnaryOp):
        exponent = exponent.operand
    if isinstance(exponent, ast.Constant) and isinstance(exponent.value, (int, float)) and abs(exponent.value) > 64:
        return True
    return any(
        (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow))
        or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _POWERS)
        for n in ast.walk(base)
    )


def _expressions(value: Any) -> Iterator[str]:
    """Every ``expr_str`` of a program's JSON (its symbolic ints, floats and bools)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if key == "expr_str" and isinstance(child, str):
                    yield child
                elif isinstance(child, (dict, list)):
                    stack.append(child)
        elif isinstance(item, list):
            stack.extend(child for child in item if isinstance(child, (dict, list)))
