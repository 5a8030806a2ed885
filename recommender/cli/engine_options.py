"""vLLM's own serve flags that shape memory and speed, as options of `explain`, `perf` and `calibrate` (the same
names as `vllm serve`), and the EngineFlags they make."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

import click

from recommender.cli import params
from recommender.errors import FlagError
from recommender.memory.engine import KV_CACHE_DTYPES, MODEL_DTYPES, EngineFlags

F = TypeVar("F", bound=Callable[..., Any])

ENGINE_FIELDS = frozenset(f.name for f in fields(EngineFlags))


def engine_flag_options(func: F) -> F:
    """-tp/-pp/-dp, expert parallelism, quantization, dtypes, the memory budget, lengths, batch limits, block size
    and eager mode."""
    options = [
        click.option("-tp", "--tensor-parallel-size", type=params.PARALLEL),
        click.option("-pp", "--pipeline-parallel-size", type=params.PARALLEL),
        click.option("-dp", "--data-parallel-size", type=params.PARALLEL),
        click.option("--enable-expert-parallel", is_flag=True, default=None),
        click.option("-q", "--quantization"),
        click.option("--dtype", type=click.Choice(MODEL_DTYPES)),
        click.option("--kv-cache-dtype", help=f"KV-cache dtype: {', '.join(KV_CACHE_DTYPES)}."),
        click.option("--gpu-memory-utilization", type=params.UTILIZATION),
        click.option("--kv-cache-memory-bytes", type=params.KV_BYTES, help="Fixed KV budget (1G = 2**30, 1g = 10**9)."),
        click.option(
            "--max-model-len",
            type=params.MAX_MODEL_LEN,
            help="Context length (32k = 32,000, 32K = 32,768; -1 or auto: auto-fit).",
        ),
        click.option("--max-num-seqs", type=params.REQUESTS),
        click.option("--max-num-batched-tokens", type=params.BATCHED_TOKENS),
        click.option(
            "--enable-chunked-prefill/--no-enable-chunked-prefill",
            default=None,
            help="vLLM's chunked prefill (default: the release's; off on the V0 engine up to a 32K context).",
        ),
        click.option("--block-size", type=params.BLOCK_SIZE),
        click.option("--enforce-eager", is_flag=True, default=None),
        click.option("--enable-lora", is_flag=True, default=None, help="Count vLLM's LoRA adapter slots."),
        click.option("--max-loras", type=params.REQUESTS, help="LoRA adapter slots on the GPU (vLLM's default 1)."),
        click.option("--max-lora-rank", type=params.REQUESTS, help="Largest LoRA rank served (vLLM's default 16)."),
        click.option(
            "--speculative-config",
            help='Speculative decoding, as vLLM takes it: \'{"method": "mtp", "num_speculative_tokens": 3}\'.',
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def engine_flags(values: dict[str, Any]) -> EngineFlags:
    """EngineFlags from the serve-flag values given (None = vLLM's default); a flag it does not model is refused."""
    given = {name: raw for name, raw in values.items() if raw is not None}
    unknown = set(given) - ENGINE_FIELDS
    if unknown:
        raise FlagError(f"unsupported flags: {', '.join(sorted(unknown))}")
    return EngineFlags(**given)
