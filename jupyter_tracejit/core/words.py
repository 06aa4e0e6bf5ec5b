"""Small rules of English the messages share (torch-free)."""

from __future__ import annotations


def with_article(noun: str) -> str:
    """``an int``, ``a list``; ``None`` stays as it is."""
    return noun if noun == "None" else ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 input set``, ``3 input sets``; ``words`` where the plural is not the word + s (``mismatches``)."""
    return f"{n} {word if n == 1 else (words or word + 's')}"
