"""Byte units as vLLM prints them: GiB = 2**30 bytes, rounded to 2 decimals (`format_gib`)."""

from __future__ import annotations

GiB = 1 << 30
MiB = 1 << 20


def gib(n_bytes: float) -> float:
    """Bytes to GiB, unrounded."""
    return n_bytes / GiB


def format_gib(n_bytes: float) -> float:
    """vLLM's `format_gib`: round(bytes / 2**30, 2)."""
    return round(n_bytes / GiB, 2)


def cdiv(a: int, b: int) -> int:
    """Ceiling division for non-negative integers."""
    return -(-a // b)


def parse_human_int(text: str) -> int:
    """Parse vLLM's human-readable integers ('32k' = 32,000, '32K' = 32,768).

    vLLM's `human_readable_int` (utils/argparse_utils.py): lowercase k/m/g/t are decimal (1e3..1e12),
    uppercase K/M/G/T are binary (2**10..2**40). A plain integer passes through.

    >>> parse_human_int("32k"), parse_human_int("32K"), parse_human_int("4096")
    (32000, 32768, 4096)
    """
    s = text.strip()
    if not s:
        raise ValueError("empty value")
    decimal = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
    binary = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    suffix = s[-1]
    if suffix in decimal or suffix in binary:
        number = float(s[:-1])
        factor = decimal.get(suffix) or binary[suffix]
        value = number * factor
        if value != int(value):
            raise ValueError(f"{text!r} is not a whole number")
        return int(value)
    return int(s)
