"""Byte units as vLLM prints them: GiB = 2**30 bytes, rounded to 2 decimals (`format_gib`)."""

from __future__ import annotations

import math
import re

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


_HUMAN_INT = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_human_int(text: str) -> int:
    """Parse vLLM's human-readable integers ('32k' = 32,000, '32K' = 32,768, '25.6k' = 25,600).

    Exactly vLLM's `human_readable_int` (utils/argparse_utils.py): a number with a lowercase k/m/g/t suffix is
    decimal (1e3..1e12, a fraction truncated as vLLM's int(float(...)) does), with an uppercase K/M/G/T binary
    (2**10..2**40, whole numbers only); anything else is read by int(). Raises ValueError otherwise, also where
    vLLM itself would overflow ('9' * 400 + 'k', 'infk' never matches).

    >>> parse_human_int("32k"), parse_human_int("32K"), parse_human_int("4096"), parse_human_int("25.6k")
    (32000, 32768, 4096, 25600)
    """
    s = text.strip()
    match = _HUMAN_INT.fullmatch(s)
    if match is None:
        return int(s)
    number, suffix = match.groups()
    if suffix in _DECIMAL:
        value = float(number) * _DECIMAL[suffix]
        if not math.isfinite(value):
            raise ValueError(f"{text!r} is too large")
        return int(value)
    try:
        return int(number) * _BINARY[suffix]
    except ValueError:
        raise ValueError(
            f"Decimals are not allowed with binary suffixes like {suffix}. Did you mean to use "
            f"{number}{suffix.lower()} instead?"
        ) from None
