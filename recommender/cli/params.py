"""The option types of every command: typed, bounded values (recommender/values.py) as click parameter types.

A bad value stops at the edge: click reports the type's failure as a usage error, which `recommender.cli`
prints as one line (exit 2). Numbers are finite and bounded (`--kv-cache-memory-bytes 2**63`, `--free-memory-gib
nan`, `--gpus-per-node 0` are refused, not computed); token counts take vLLM's human-readable form.
"""

from __future__ import annotations

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
