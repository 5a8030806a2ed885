"""Typed, bounded values read from users: whole numbers, finite reals, vLLM's token counts, choices (pure).

One parser per kind of value, shared by the command-line options (recommender/cli/params.py) and the project
file and environment (recommender/project.py), so `--concurrency 60.7`, `VLLM_PLAN_CONCURRENCY=60.7` and
`concurrency: 60.7` are refused alike. A parser takes what was given (text from the command line or the
environment; a YAML scalar from a file) and returns the value or raises `ValueError` with the reason in a few
words. Nothing is coerced: a YAML `true` is not a count, 60.7 is not a whole number, 0.10 is not a version.
Bounds are wide enough for any real deployment and small enough that the work they cause stays bounded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from recommender.documents.plan import (
    MAX_COUNT,
    MAX_GIB,
    MAX_GPUS_PER_NODE,
    MAX_MS,
    MAX_NODES,
    MAX_PARALLEL,
    MAX_RATE,
    MAX_REPLICAS,
    MAX_REQUESTS,
    MAX_TOKENS,
)
from recommender.perf.load import MAX_PROMPTS
from recommender.units import parse_human_int

MAX_TEXT = 4096  # a model id, GPU name or version
MAX_STORAGE_GIB = 1 << 20  # the model-cache volume
MAX_PRICE = 1e9  # $ per GPU-hour


def shown(value: object) -> str:
    """A value as an error quotes it: repr-escaped (no control characters or line breaks), and short."""
    text = repr(value) if isinstance(value, str) else repr(str(value)) if not isinstance(value, bool) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e18 else f"{x:g}"


def _in_bounds(number: float, low: float, high: float, above: bool = False) -> None:
    if above and not number > low:
        raise ValueError(f"must be {'positive' if low == 0 else f'above {_number(low)}'}, got {_number(number)}")
    if number < low:
        raise ValueError(f"must be {'at least ' + _number(low) if low else 'zero or more'}, got {_number(number)}")
    if number > high:
        raise ValueError(f"must be at most {_number(high)}, got {_number(number)}")


@dataclass(frozen=True, slots=True)
class Count:
    """A whole number in [low, high]: an int, or text int() reads (no 1e3, no 1.5, no true)."""

    low: int
    high: int
    name: str = "integer"

    def parse(self, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError(f"{shown(value)} is not a whole number")
        try:
            number = value if isinstance(value, int) else int(value.strip())
        except ValueError:
            raise ValueError(f"{shown(value)} is not a whole number") from None
        _in_bounds(number, self.low, self.high)
        return number


@dataclass(frozen=True, slots=True)
class Real:
    """A finite number in [low, high] (above=True: greater than low), from a number or text float() reads."""

    low: float
    high: float
    above: bool = False
    name: str = "number"

    def parse(self, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(f"{shown(value)} is not a number")
        try:
            number = float(value.strip() if isinstance(value, str) else value)
        except (ValueError, OverflowError):
            raise ValueError(f"{shown(value)} is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"{shown(value)} is not a finite number")
        _in_bounds(number, self.low, self.high, self.above)
        return number


@dataclass(frozen=True, slots=True)
class Tokens:
    """vLLM's human-readable int (`32k` = 32,000, `32K` = 32,768) in [low, high]; auto=True also takes -1 and
    `auto` (vLLM's --max-model-len auto-fit), returned as -1."""

    low: int
    high: int
    auto: bool = False
    name: str = "tokens"

    def parse(self, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError(f"{shown(value)} is not a whole number of tokens")
        if isinstance(value, int):
            number = value
        else:
            text = value.strip()
            if self.auto and text.lower() in ("-1", "auto"):
                return -1
            try:
                number = parse_human_int(text)
            except ValueError:
                raise ValueError(f"{shown(value)} is not a whole number (32k = 32,000, 32K = 32,768)") from None
        if self.auto and number == -1:
            return -1
        _in_bounds(number, self.low, self.high)
        return number


@dataclass(frozen=True, slots=True)
class Choice:
    """One of a fixed set of words, exactly."""

    choices: Sequence[str]
    name: str = "choice"

    def parse(self, value: object) -> str:
        if not isinstance(value, str) or value not in self.choices:
            raise ValueError(f"{shown(value)}: choose from {', '.join(self.choices)}")
        return value


@dataclass(frozen=True, slots=True)
class Text:
    """A short single-line string (a model id, a GPU name, a version); a number is not text (quote it)."""

    name: str = "text"

    def parse(self, value: object) -> str:
        if isinstance(value, int | float):  # YAML reads `vllm_version: 0.10` as the number 0.1
            raise ValueError(f"{shown(value)} is a number, not text (quote it in YAML)")
        if not isinstance(value, str):
            raise ValueError(f"{shown(value)} is not text")
        text = value.strip()
        if not text:
            raise ValueError("is empty")
        if len(text) > MAX_TEXT or not text.isprintable():
            raise ValueError(f"{shown(value)} is not a name (control characters, line breaks or too long)")
        return text


Parser = Count | Real | Tokens | Choice | Text


# The values the commands and the project file take, by what they hold.
PARALLEL = Count(1, MAX_PARALLEL)  # -tp, -pp, -dp
GPUS_PER_NODE = Count(1, MAX_GPUS_PER_NODE)
NODES = Count(1, MAX_NODES)
REQUESTS = Count(1, MAX_REQUESTS)  # concurrency, --max-num-seqs, --max-concurrency
REPLICAS = Count(1, MAX_REPLICAS)
PORT = Count(1, 65535)
PROMPTS = Count(1, MAX_PROMPTS)
STORAGE_GIB = Count(1, MAX_STORAGE_GIB)
BLOCK_SIZE = Count(1, 1 << 20)
SEED = Count(-(2**63), 2**63 - 1)
GPU_GIB = Real(0, MAX_GIB, above=True)  # a card's total memory
FREE_GIB = Real(0, MAX_GIB)  # free memory at startup (0: none)
OFFLOAD_GIB = Real(0, MAX_GIB)  # --cpu-offload-gb
UTILIZATION = Real(0, 1, above=True)  # --gpu-memory-utilization: vLLM's (0, 1]
MILLISECONDS = Real(0, MAX_MS, above=True)
# requests/s: below one request every 10,000 s a replay's clock (float seconds) spans more than it can resolve
# to the millisecond (`--request-rate 1e-300` predicted TTFT 0.0 ms and 196,609 tok/s per user)
MIN_RATE = 1e-4
RATE = Real(MIN_RATE, MAX_RATE)
PRICE = Real(0, MAX_PRICE, above=True)  # $ per GPU-hour
BURSTINESS = Real(0, 1e6, above=True)
TOKENS = Tokens(1, MAX_TOKENS)  # --context, --min-context, --input-len, --output-len (recommend and perf)
MAX_MODEL_LEN = Tokens(1, MAX_TOKENS, auto=True)
BATCHED_TOKENS = Tokens(1, MAX_TOKENS)  # --max-num-batched-tokens
KV_BYTES = Tokens(1, MAX_COUNT)  # --kv-cache-memory-bytes
TEXT = Text()
