"""The option types of every command: typed, bounded values (recommender/values.py) as click parameter types.

A bad value stops at the edge: click reports the type's failure as a usage error, which `recommender.cli`
prints as one line (exit 2). Numbers are finite and bounded (`--kv-cache-memory-bytes 2**63`, `--free-memory-gib
nan`, `--gpus-per-node 0` are refused, not computed); token counts take vLLM's human-readable form.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from recommender import values

if TYPE_CHECKING:
    _ParamType = click.ParamType[Any]
else:  # click < 8.3: ParamType is not generic
    _ParamType = click.ParamType


class Value(_ParamType):
    """A click type that parses with one of recommender.values' parsers."""

    def __init__(self, parser: values.Parser) -> None:
        self.parser = parser
        self.name = parser.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return self.parser.parse(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


# One click type per kind of value (recommender/values.py names what each holds).
PARALLEL = Value(values.PARALLEL)
GPUS_PER_NODE = Value(values.GPUS_PER_NODE)
NODES = Value(values.NODES)
REQUESTS = Value(values.REQUESTS)
REPLICAS = Value(values.REPLICAS)
PORT = Value(values.PORT)
PROMPTS = Value(values.PROMPTS)
STORAGE_GIB = Value(values.STORAGE_GIB)
BLOCK_SIZE = Value(values.BLOCK_SIZE)
SEED = Value(values.SEED)
GPU_GIB = Value(values.GPU_GIB)
FREE_GIB = Value(values.FREE_GIB)
OFFLOAD_GIB = Value(values.OFFLOAD_GIB)
UTILIZATION = Value(values.UTILIZATION)
MILLISECONDS = Value(values.MILLISECONDS)
RATE = Value(values.RATE)
PRICE = Value(values.PRICE)
BURSTINESS = Value(values.BURSTINESS)
TOKENS = Value(values.TOKENS)
MAX_MODEL_LEN = Value(values.MAX_MODEL_LEN)
BATCHED_TOKENS = Value(values.BATCHED_TOKENS)
KV_BYTES = Value(values.KV_BYTES)


class NamedPath(click.Path):
    """click.Path that refuses an empty name: `-o "$OUT"` or `check "$DIR"` with the variable unset read as `.`, the
    working directory (files written into it, a whole repository checked in place of one folder)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("an empty name (an unset shell variable?): give a file or folder", param, ctx)
        return super().convert(value, param, ctx)


def path(*, dir_okay: bool = True) -> NamedPath:
    """The path type of every file or folder option: a `pathlib.Path`, never from an empty name."""
    return NamedPath(dir_okay=dir_okay, path_type=Path)
