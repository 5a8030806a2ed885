"""Parse a `vllm serve MODEL --flags...` command line into the memory-relevant flags (pure)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from recommender.errors import FlagError
from recommender.memory.engine import EngineFlags
from recommender.units import parse_human_int

# flag -> (field, kind). kind: int | hint (human-readable int) | float | str | bool
FLAGS: dict[str, tuple[str, str]] = {
    "--model": ("model", "str"),
    "--tensor-parallel-size": ("tensor_parallel_size", "int"),
    "-tp": ("tensor_parallel_size", "int"),
    "--pipeline-parallel-size": ("pipeline_parallel_size", "int"),
    "-pp": ("pipeline_parallel_size", "int"),
    "--data-parallel-size": ("data_parallel_size", "int"),
    "-dp": ("data_parallel_size", "int"),
    "--enable-expert-parallel": ("enable_expert_parallel", "bool"),
    "--quantization": ("quantization", "str"),
    "-q": ("quantization", "str"),
    "--dtype": ("dtype", "str"),
    "--kv-cache-dtype": ("kv_cache_dtype", "str"),
    "--gpu-memory-utilization": ("gpu_memory_utilization", "float"),
    "--device-memory-utilization": ("gpu_memory_utilization", "float"),
    "--kv-cache-memory-bytes": ("kv_cache_memory_bytes", "hint"),
    "--kv-cache-memory": ("kv_cache_memory_bytes", "hint"),
    "--max-model-len": ("max_model_len", "len"),
    "--max-num-seqs": ("max_num_seqs", "int"),
    "--max-num-batched-tokens": ("max_num_batched_tokens", "hint"),
    "--block-size": ("block_size", "int"),
    "--enforce-eager": ("enforce_eager", "bool"),
    "--enable-prefix-caching": ("enable_prefix_caching", "bool"),
    "--no-enable-prefix-caching": ("enable_prefix_caching", "false"),
    "--cpu-offload-gb": ("cpu_offload_gb", "float"),
}


@dataclass(frozen=True, slots=True)
class ServeCommand:
    """The memory-relevant part of a vllm serve command; `other` keeps every flag we do not model."""

    values: dict[str, Any] = field(default_factory=dict)
    other: tuple[str, ...] = ()


def convert(flag: str, kind: str, raw: str) -> Any:
    """Convert one flag value the way vLLM's argparse would, with a one-line error otherwise."""
    try:
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind == "hint":
            return parse_human_int(raw)
        if kind == "len":
            return -1 if raw.strip().lower() in ("-1", "auto") else parse_human_int(raw)
    except ValueError:
        raise FlagError(f"argument {flag}: invalid value {raw!r}") from None
    return raw


def parse_serve_argv(argv: Sequence[str] | str) -> ServeCommand:
    """Parse `vllm serve MODEL ...` (a string or an argv list; a leading 'vllm serve' is optional)."""
    args = shlex.split(argv) if isinstance(argv, str) else list(argv)
    if args[:2] == ["vllm", "serve"]:
        args = args[2:]
    elif args[:1] == ["serve"]:
        args = args[1:]
    values: dict[str, Any] = {}
    other: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        if name in FLAGS:
            field_name, kind = FLAGS[name]
            if kind == "bool":
                values[field_name] = True
            elif kind == "false":
                values[field_name] = False
            else:
                if eq:
                    raw = inline
                else:
                    i += 1
                    if i >= len(args):
                        raise FlagError(f"argument {name}: expected one argument")
                    raw = args[i]
                values[field_name] = convert(name, kind, raw)
        elif not arg.startswith("-") and "model" not in values:
            values["model"] = arg
        else:
            other.append(arg)
        i += 1
    return ServeCommand(values, tuple(other))


def build_serve_argv(model: str, flags: EngineFlags, version: str) -> list[str]:
    """`vllm serve MODEL ...` as an argv list: every memory-relevant flag the plan sets, pinned explicitly."""
    del version  # every flag emitted here exists from 0.8 to 0.33; see profiles/ for the per-version table
    argv = ["vllm", "serve", model]
    valued: list[tuple[str, object, bool]] = [
        ("--tensor-parallel-size", flags.tensor_parallel_size, flags.tensor_parallel_size > 1),
        ("--pipeline-parallel-size", flags.pipeline_parallel_size, flags.pipeline_parallel_size > 1),
        ("--data-parallel-size", flags.data_parallel_size, flags.data_parallel_size > 1),
        ("--enable-expert-parallel", None, flags.enable_expert_parallel),
        ("--quantization", flags.quantization, flags.quantization is not None),
        ("--dtype", flags.dtype, flags.dtype != "auto"),
        ("--kv-cache-dtype", flags.kv_cache_dtype, flags.kv_cache_dtype != "auto"),
        ("--kv-cache-memory-bytes", flags.kv_cache_memory_bytes, flags.kv_cache_memory_bytes is not None),
        (
            "--gpu-memory-utilization",
            flags.gpu_memory_utilization,
            flags.kv_cache_memory_bytes is None and flags.gpu_memory_utilization is not None,
        ),
        ("--max-model-len", flags.max_model_len, flags.max_model_len is not None),
        ("--max-num-seqs", flags.max_num_seqs, flags.max_num_seqs is not None),
        ("--max-num-batched-tokens", flags.max_num_batched_tokens, flags.max_num_batched_tokens is not None),
        ("--block-size", flags.block_size, flags.block_size is not None),
        ("--enforce-eager", None, flags.enforce_eager),
        ("--cpu-offload-gb", flags.cpu_offload_gb, bool(flags.cpu_offload_gb)),
    ]
    for flag, value, wanted in valued:
        if wanted:
            argv.extend([flag] if value is None else [flag, str(value)])
    return argv
