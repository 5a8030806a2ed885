"""Input written into a one-line message, shortened (pure): a hostile 10 MB flag value, model id or file name is
named by its start and its length, never echoed whole."""

from __future__ import annotations

MAX_SHOWN = 80  # characters of a value a message shows; a model id (at most 96 + 1 + 96, the hub's rule) rarely more


def clipped(text: str, limit: int = MAX_SHOWN) -> str:
    """`text` as it is when short, else its first `limit` characters, an ellipsis and how long it is."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def quoted(value: object, limit: int = MAX_SHOWN) -> str:
    """`repr(value)` as a message quotes it (`'abc'`), shortened as `clipped` shortens: `'abc...' (N characters)`."""
    if not isinstance(value, str):
        return clipped(repr(value), limit)
    if len(value) <= limit:
        return repr(value)
    return f"{repr(value[:limit])[:-1]}...{repr(value)[-1]} ({len(value):,} characters)"
