"""The Python loops of a source file, read with ``ast`` from what ``linecache`` holds: which loop holds a line.

The diff asks it whether two divergences sit in one loop; the findings name the loop a check ran another number
of times.
"""

from __future__ import annotations

import ast
import functools
import linecache


@functools.lru_cache(maxsize=64)
def _loops_of(text: str) -> tuple[tuple[int, int], ...]:
    """``(first line, last line)`` of every ``for`` / ``while`` statement of a source text, innermost last."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ()
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
    return tuple(sorted((n.lineno, n.end_lineno or n.lineno) for n in loops))


def loops_in(file: str) -> tuple[tuple[int, int], ...]:
    """``(first line, last line)`` of every loop of ``file`` (as linecache has it; none when it has no source)."""
    text = "".join(linecache.getlines(file))
    return _loops_of(text) if text else ()


def enclosing_loop(file: str, line: int, spans: tuple[tuple[int, int], ...] | None = None) -> tuple[int, int] | None:
    """The innermost ``for`` / ``while`` loop of ``file`` that holds ``line`` (its header included), or None;
    ``spans`` are ``loops_in(file)`` when the caller has them."""
    holding = [s for s in (loops_in(file) if spans is None else spans) if s[0] <= line <= s[1]]
    return max(holding, key=lambda s: s[0]) if holding else None


__all__ = ["enclosing_loop", "loops_in"]
