"""Which settings of a parsed `vllm serve` command the memory model reads, and how vLLM converts their values
(pure): the EngineFlags fields with their argparse types, the multimodal-tower and runner settings, --task, the
speculative decoder's shorthand flags folded into --speculative-config, the CUDA-graph capture lists. The command
line itself is read by serve_args.py."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from recommender.errors import FlagError
from recommender.quoting import quoted
from recommender.units import parse_human_int

if TYPE_CHECKING:  # serve_args.py imports this module
    from recommender.serve_args import GivenFlag

# EngineFlags field -> how vLLM converts the value (the argparse `type` of that EngineArgs field)
ENGINE_FIELDS: dict[str, str] = {
    "tensor_parallel_size": "int",
    "pipeline_parallel_size": "int",
    "data_parallel_size": "int",
    "enable_expert_parallel": "bool",
    "quantization": "str",
    "dtype": "str",
    "kv_cache_dtype": "str",
    "gpu_memory_utilization": "float",
    "kv_cache_memory_bytes": "human_readable_int",
    "max_model_len": "human_readable_int_or_auto",
    "max_num_seqs": "int",
    "max_num_batched_tokens": "human_readable_int",
    "block_size": "int",
    "enforce_eager": "bool",
    "enable_prefix_caching": "bool",
    "enable_chunked_prefill": "bool",
    "cpu_offload_gb": "float",
    "enable_lora": "bool",
    "max_loras": "int",
    "max_lora_rank": "int",
    "max_cudagraph_capture_size": "int",
    "compilation_config": "str",
    "optimization_level": "str",
}
# the capture-size lists (nargs '+'): --cudagraph-capture-sizes from 0.11.1; --cuda-graph-sizes (0.9.0 to 0.12), whose
# one value is the largest size (the default list up to it) and whose several values are the list (memory/
# capture_config.py)
CAPTURE_LIST_FIELDS = ("cudagraph_capture_sizes", "cuda_graph_sizes")
# Engine values that decide whether the multimodal towers are loaded and profiled (EngineFlags.towers_skipped);
# --limit-mm-per-prompt is kept as written, EngineFlags reads it as vLLM does.
TOWER_FIELDS: dict[str, str] = {
    "language_model_only": "bool",
    "limit_mm_per_prompt": "str",
    "mm_encoder_tp_mode": "str",
}
# The runner vLLM builds the model for (--runner pooling / --convert embed: no LM head, model/pooling.py).
RUNNER_FIELDS: dict[str, str] = {"runner": "str", "convert": "str"}
# --task (0.6.4 to 0.12; deprecated from 0.10.1, which maps it onto --runner / --convert: config/model.py of v0.10.1
# `_task_to_convert`): the pooling tasks load the model for the pooling runner, as --runner pooling --convert does
TASK_TO_RUNNER: dict[str, tuple[str, str]] = {
    "embed": ("pooling", "embed"),
    "embedding": ("pooling", "embed"),
    "reward": ("pooling", "embed"),
    "classify": ("pooling", "classify"),
    "score": ("pooling", "classify"),
    "generate": ("generate", "none"),
}
# The speculative decoder: --speculative-config as written, and the flags vLLM folds into it (engine/arg_utils.py
# create_speculative_config: --spec-method / --spec-model / --spec-tokens in 0.33, exclusive with the JSON's own key;
# --speculative-model / --num-speculative-tokens / --speculative-draft-tensor-parallel-size before 0.8.3)
SPECULATIVE_KEYS: dict[str, str] = {
    "spec_method": "method",
    "spec_model": "model",
    "spec_tokens": "num_speculative_tokens",
    "speculative_model": "model",
    "num_speculative_tokens": "num_speculative_tokens",
    "speculative_draft_tensor_parallel_size": "draft_tensor_parallel_size",
}
# every argparse destination whose value becomes an EngineFlags value (the memory model reads it): a value not known
# here (a variable set elsewhere) leaves the engine unknown, however its text would parse
ENGINE_READ_DESTS: frozenset[str] = frozenset(
    {
        *ENGINE_FIELDS,
        *TOWER_FIELDS,
        *RUNNER_FIELDS,
        *SPECULATIVE_KEYS,
        *CAPTURE_LIST_FIELDS,
        "speculative_config",
        "task",
    }
)


def convert(flag: str, kind: str, raw: str) -> Any:
    """Convert one flag value the way vLLM's argparse would, with vLLM's one-line error otherwise."""
    try:
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind in ("hint", "human_readable_int"):
            return parse_human_int(raw)
        if kind in ("len", "human_readable_int_or_auto"):
            return -1 if raw.strip().lower() in ("-1", "auto") else parse_human_int(raw)
    except ValueError:
        name = {"hint": "human_readable_int", "len": "human_readable_int_or_auto"}.get(kind, kind)
        raise FlagError(f"argument {flag}: invalid {name} value: {quoted(raw)}") from None
    return raw


def _speculative_value(given: Sequence[GivenFlag], errors: list[str]) -> str | None:
    """--speculative-config with the shorthand flags folded in, as one JSON object (None: no drafter asked for)."""
    written = next((str(g.value) for g in reversed(given) if g.spec.dest == "speculative_config"), None)
    parts: dict[str, Any] = {}
    shorthand: set[str] = set()  # the keys 0.33's --spec-* flags set (exclusive with the JSON's own)
    for g in given:
        key = SPECULATIVE_KEYS.get(g.spec.dest)
        if key is not None:
            value = str(g.value)
            parts[key] = int(value) if key != "method" and key != "model" and value.isdigit() else value
            shorthand |= {key} if g.spec.dest.startswith("spec_") else set()
    if not parts:
        return written
    try:
        data = json.loads(written) if written and written.strip() not in ("null", "None") else {}
    except ValueError:
        return written  # EngineFlags.validate reports the malformed JSON
    if not isinstance(data, dict):
        return written
    for flag, key in (
        ("--spec-method", "method"),
        ("--spec-model", "model"),
        ("--spec-tokens", "num_speculative_tokens"),
    ):
        if key in data and key in shorthand:
            errors.append(f"{flag} and --speculative-config['{key}'] are mutually exclusive")
    return json.dumps({**data, **parts})


def engine_values(given: Sequence[GivenFlag], errors: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    speculative = _speculative_value(given, errors)
    if speculative is not None:
        values["speculative_config"] = speculative
    for g in given:  # in order: the last occurrence wins, as in argparse
        if g.spec.dest in CAPTURE_LIST_FIELDS:
            _capture_list(g, values, errors)
            continue
        if g.spec.dest == "task" and str(g.value) in TASK_TO_RUNNER:
            values["runner"], values["convert"] = TASK_TO_RUNNER[str(g.value)]
            continue
        kind = ENGINE_FIELDS.get(g.spec.dest) or TOWER_FIELDS.get(g.spec.dest) or RUNNER_FIELDS.get(g.spec.dest)
        if kind is None:
            continue
        if kind == "bool":
            values[g.spec.dest] = bool(g.value)
            continue
        try:
            values[g.spec.dest] = convert(g.spec.label(), kind, str(g.value))
        except FlagError as exc:
            errors.append(str(exc))
    return values


def _capture_list(g: GivenFlag, values: dict[str, Any], errors: list[str]) -> None:
    """--cudagraph-capture-sizes 1 2 4 / --cuda-graph-sizes N (the largest size) or several (the list)."""
    words = [w for v in (g.value if isinstance(g.value, tuple) else (str(g.value),)) for w in str(v).split()]
    try:
        sizes = tuple(int(w) for w in words)
    except ValueError:
        bad = next(w for w in words if not w.lstrip("-").isdigit())
        errors.append(f"argument {g.spec.label()}: invalid int value: {quoted(bad)}")
        return
    if g.spec.dest == "cuda_graph_sizes" and len(sizes) == 1:
        values["max_cudagraph_capture_size"] = sizes[0]
        values.pop("cudagraph_capture_sizes", None)
    elif sizes:
        values["cudagraph_capture_sizes"] = sizes
