"""Small rules of English the messages share (torch-free)."""

from __future__ import annotations


def with_article(noun: str) -> str:
    """``an int``, ``a list``; ``None`` stays as it is."""
    return noun if noun == "None" else ("an " if noun[:1].lower() in "aeiou" else "a ") + noun
