"""What a vLLM server log says about one startup (pure: text in, frozen records out; no file access).

Operators paste startup logs into issues and keep them in repositories; `explain --log FILE` reads one so that
the prediction can be put beside what vLLM printed. The lines read are vLLM's own, from 0.4 to 0.33:

- the release: "vLLM API server version X", "Initializing a V1 LLM engine (vX) with config: ..." (an, for V0);
- the arguments: "non-default args: {...}" (0.9+), "args: Namespace(...)" (before), and the values the engine
  resolved on its config line (`max_seq_len=`, `tensor_parallel_size=`, `kv_cache_dtype=`, ...), "Using max model
  len N", "Chunked prefill is enabled with max_num_batched_tokens=N", V0's "gpu_memory_utilization (0.90)";
- the GPU: a fused-MoE config path's `device_name=NVIDIA_H100_80GB_HBM3`, `collect_env`'s "GPU 0: NVIDIA ...",
  an nvidia-smi table row; the device total of V0's "total_gpu_memory (79.11GiB)", V1's "Free memory on device
  (free/total GiB)" and PyTorch's "has a total capacity of X GiB";
- the figures: weights ("Loading model weights took X GB", "Model loading took X GiB"), "Available KV cache
  memory", V0's "the rest of the memory reserved for KV Cache is", "GPU KV cache size: N tokens", "# GPU blocks",
  "Maximum concurrency for L tokens per request: Xx", the CUDA-graph memory (0.21+'s "Estimated CUDA graph memory",
  the term its budget holds, else "Graph capturing finished in S secs, took X GiB"), and the
  first fatal error line.

Everything in a log is untrusted text: values are matched by narrow patterns, never evaluated.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

from recommender.gpu_clues import GpuClue, read_gpu_clues

# the serve options a log's arguments give, by the name vLLM's argument namespace uses, with the option's flag
ENGINE_OPTIONS = {
    "tensor_parallel_size": "--tensor-parallel-size",
    "pipeline_parallel_size": "--pipeline-parallel-size",
    "data_parallel_size": "--data-parallel-size",
    "max_model_len": "--max-model-len",
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "quantization": "--quantization",
    "kv_cache_dtype": "--kv-cache-dtype",
    "dtype": "--dtype",
    "max_num_seqs": "--max-num-seqs",
    "max_num_batched_tokens": "--max-num-batched-tokens",
    "block_size": "--block-size",
    "cpu_offload_gb": "--cpu-offload-gb",
    "kv_cache_memory_bytes": "--kv-cache-memory-bytes",
    "speculative_config": "--speculative-config",  # the logged dict, as JSON (_speculative_config)
    "speculative_model": "--speculative-model",  # before 0.8.3
    "num_speculative_tokens": "--num-speculative-tokens",
}
SWITCHES = {"enforce_eager": "--enforce-eager", "enable_expert_parallel": "--enable-expert-parallel"}
# on the engine's config line: the values it resolved (the same names, but max_seq_len for max_model_len); the
# quantization and dtype there are what vLLM read from the checkpoint, not options, so they are not taken
_CONFIG_LINE_NAMES = {
    "max_seq_len": "max_model_len",
    "tensor_parallel_size": "tensor_parallel_size",
    "pipeline_parallel_size": "pipeline_parallel_size",
    "data_parallel_size": "data_parallel_size",
    "kv_cache_dtype": "kv_cache_dtype",
    "enforce_eager": "enforce_eager",
}

_NUMBER = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
_DICT_ITEM = re.compile(rf"'(\w+)':\s*('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|{_NUMBER}|True|False|None)")
_KEYWORD_ITEM = re.compile(r"(?<![\w.])(\w+)=('(?:[^'\\]|\\.)*'|[^,()\s]+)")
_VERSION = (
    re.compile(r"vLLM API server version v?(\d+\.\d+[\w.+-]*)"),
    re.compile(r"Initializing an? (?:V[01] )?LLM engine \(v?(\d+\.\d+[\w.+-]*)\)"),
    re.compile(r"vLLM Version: v?(\d+\.\d+[\w.+-]*)"),
    re.compile(r"vllm/vllm-openai:v?(\d+\.\d+\.\d+[\w.+]*)"),  # the image of a pasted `docker run`
)
_ENGINE_LINE = re.compile(r"Initializing an? (V[01] )?LLM engine[^\n]*?with config: ([^\n]*)")
_NON_DEFAULT = re.compile(r"non-default args: \{([^\n]*)")
_NAMESPACE = re.compile(r"args: Namespace\(([^\n]*)\)")
_DEVICE_NAMES = (
    re.compile(r"device_name=([A-Za-z0-9_\-]+)"),
    re.compile(r"\bGPU \d+: ((?:NVIDIA|Tesla|Quadro|AMD|Radeon)\b[^\n(|]*?)\s*(?:\(UUID|\||$)", re.M),
    re.compile(r"\|\s+\d+\s+((?:NVIDIA|Tesla|Quadro)\b[^|\n]*?)\s+(?:On|Off)\s+\|"),
)
_TOTALS = (
    re.compile(r"total_gpu_memory \((\d+(?:\.\d+)?) ?GiB\)"),
    re.compile(r"total_gpu_memory=(\d+(?:\.\d+)?) ?GiB"),
    re.compile(r"Free memory on device \(\d+(?:\.\d+)?/(\d+(?:\.\d+)?) GiB\)"),
    re.compile(r"has a total capacity of (\d+(?:\.\d+)?) GiB"),
)
_WEIGHTS = (
    re.compile(r"Loading model weights took (\d+(?:\.\d+)?) ?GB"),
    re.compile(r"Model loading took (\d+(?:\.\d+)?) ?GiB"),
    re.compile(r"model weights take (\d+(?:\.\d+)?) ?GiB"),
)
_AVAILABLE_KV = (
    re.compile(r"Available KV cache memory: (\d+(?:\.\d+)?) GiB"),
    re.compile(r"the rest of the memory reserved for KV Cache is (\d+(?:\.\d+)?) ?GiB"),
    re.compile(r"\bkv_cache_size=(\d+(?:\.\d+)?) ?GiB"),  # 0.6.4's "Memory profiling results: ..."
)
_KV_TOKENS = re.compile(r"GPU KV cache size: ([\d,]+) tokens")
_BLOCKS = re.compile(r"# (?:GPU|cuda|CUDA) blocks: (\d+)")
_CONCURRENCY = re.compile(r"Maximum concurrency for ([\d,]+) tokens per request: (\d+(?:\.\d+)?)x")
_GRAPHS = (
    re.compile(r"Estimated CUDA graph memory: (\d+(?:\.\d+)?) GiB"),  # 0.21+: the term the budget holds
    re.compile(r"Graph capturing finished in \d+(?:\.\d+)? secs?, took (\d+(?:\.\d+)?) GiB"),
)
_UTILIZATION_V0 = re.compile(r"gpu_memory_utilization(?: \(|=)(\d(?:\.\d+)?)")
_MAX_MODEL_LEN = re.compile(r"Using max model len (\d+)")
_CHUNKED = re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=(\d+)")
_FATAL_MARKS = (
    "No available memory for the cache blocks",
    "is larger than the maximum number of tokens that can be stored in KV cache",
    "CUDA out of memory",
    "OutOfMemoryError",
    "HIP out of memory",
    "ValueError: ",
    "RuntimeError: ",
    "AssertionError: ",
)
_LOG_PREFIX = re.compile(r"^(?:\(\w+ pid=\d+\)\s*)?(?:ERROR|WARNING|INFO)\s+\S+\s+\S+\s+\[[^\]]*\]\s*")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_STARTED = re.compile(
    r"Application startup complete|Uvicorn running on|Started server process|Starting vLLM API server"
)
MAX_ERROR_CHARS = 300


@dataclass(frozen=True, slots=True)
class LoggedFigures:
    """The memory figures a startup log printed (None: not in the log)."""

    weights_gib: float | None = None
    available_kv_gib: float | None = None
    kv_cache_tokens: int | None = None
    num_gpu_blocks: int | None = None
    max_concurrency: float | None = None
    concurrency_tokens: int | None = None  # the "tokens per request" of the concurrency line
    cudagraph_gib: float | None = None


@dataclass(frozen=True, slots=True)
class LoggedStartup:
    """One startup as its log shows it."""

    version: str | None
    engine: str | None  # "V0" / "V1" when the engine line says so
    model: str | None
    options: tuple[tuple[str, str], ...]  # (vLLM argument name, value as logged), explicit before resolved
    device_names: tuple[str, ...]
    total_gib: float | None
    figures: LoggedFigures
    error: str | None  # the first fatal error line
    started: bool  # the server reached its startup-complete line
    gpu_clues: tuple[GpuClue, ...] = ()  # what else the log says about the card (recommender.gpu_clues)

    def option(self, name: str) -> str | None:
        return next((v for n, v in self.options if n == name), None)

    @property
    def failed(self) -> bool:
        return self.error is not None and not self.started


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    return raw


def _first(patterns: tuple[re.Pattern[str], ...], text: str) -> str | None:
    for p in patterns:
        if m := p.search(text):
            return m.group(1)
    return None


def _items(pattern: re.Pattern[str], body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in pattern.finditer(body):
        value = _unquote(m.group(2))
        if value != "None":
            out.setdefault(m.group(1), value)
    return out


_SPECULATIVE = re.compile(r"'speculative_config': (\{[^{}]*\})")


def _speculative_config(args: str) -> dict[str, str]:
    """The non-default args' speculative_config dict (a Python literal of strings and numbers) as JSON."""
    m = _SPECULATIVE.search(args)
    if not m:
        return {}
    try:
        value = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return {}
    return {"speculative_config": json.dumps(value)} if isinstance(value, dict) else {}


def _explicit_arguments(text: str) -> dict[str, str]:
    """The arguments the user gave: 'non-default args' (0.9+) or the argument Namespace (before; it lists the
    defaults too, which vLLM would take all the same)."""
    if m := _NON_DEFAULT.search(text):
        args = m.group(1)  # the speculative_config dict's own keys are not top-level arguments
        return _items(_DICT_ITEM, _SPECULATIVE.sub("None", args)) | _speculative_config(args)
    if m := _NAMESPACE.search(text):
        return _items(_KEYWORD_ITEM, m.group(1))
    return {}


def _resolved_arguments(text: str) -> dict[str, str]:
    """What the engine resolved: its config line's values, the max model len and chunked-prefill batch it chose,
    and V0's utilization as its memory-profiling line prints it."""
    out: dict[str, str] = {}
    if m := _ENGINE_LINE.search(text):
        items = _items(_KEYWORD_ITEM, m.group(2))
        out.update({ours: items[logged] for logged, ours in _CONFIG_LINE_NAMES.items() if logged in items})
    for name, pattern in (
        ("max_model_len", _MAX_MODEL_LEN),
        ("max_num_batched_tokens", _CHUNKED),
        ("gpu_memory_utilization", _UTILIZATION_V0),
    ):
        if (m := pattern.search(text)) and name not in out:
            out[name] = m.group(1)
    return out


def _model(explicit: dict[str, str], text: str) -> str | None:
    for key in ("model", "model_tag"):
        if explicit.get(key):
            return explicit[key]
    if m := _ENGINE_LINE.search(text):
        return _items(_KEYWORD_ITEM, m.group(2)).get("model")
    return None


def _device_names(text: str, clues: tuple[GpuClue, ...]) -> tuple[str, ...]:
    """The device names the log prints: its own lines', then those of vLLM's and PyTorch's capability messages."""
    names: list[str] = []
    for i, pattern in enumerate(_DEVICE_NAMES):
        for m in pattern.finditer(text):
            name = m.group(1).replace("_", " ").strip() if i == 0 else m.group(1).strip()
            if name and name not in names:
                names.append(name)
    names += [c.device_name for c in clues if c.device_name and c.device_name not in names]
    return tuple(names)


def _float(patterns: tuple[re.Pattern[str], ...], text: str) -> float | None:
    found = _first(patterns, text)
    return float(found) if found is not None else None


def _count(raw: str) -> int:
    return int(raw.replace(",", ""))


def _figures(text: str) -> LoggedFigures:
    tokens = _KV_TOKENS.search(text)
    blocks = _BLOCKS.search(text)
    concurrency = _CONCURRENCY.search(text)
    return LoggedFigures(
        weights_gib=_float(_WEIGHTS, text),
        available_kv_gib=_float(_AVAILABLE_KV, text),
        kv_cache_tokens=_count(tokens.group(1)) if tokens else None,
        num_gpu_blocks=int(blocks.group(1)) if blocks else None,
        max_concurrency=float(concurrency.group(2)) if concurrency else None,
        concurrency_tokens=_count(concurrency.group(1)) if concurrency else None,
        cudagraph_gib=_float(_GRAPHS, text),
    )


def _error(text: str) -> str | None:
    """The first line naming a fatal error (line by line: a log may hold lines of megabytes)."""
    for line in text.splitlines():
        if any(mark in line for mark in _FATAL_MARKS):
            return _LOG_PREFIX.sub("", line.strip())[:MAX_ERROR_CHARS]
    return None


def engine_starts(text: str) -> int:
    """How many distinct engine configurations the log starts (one log, one startup: more is refused)."""
    return len({m.group(2) for m in _ENGINE_LINE.finditer(text)})


def read_startup_log(text: str) -> LoggedStartup:
    """The startup a vLLM log shows. Explicit arguments come before the values the engine resolved, so a
    caller taking the first value of each option gets what the user asked for."""
    text = _ANSI.sub("", text)
    explicit = _explicit_arguments(text)
    resolved = _resolved_arguments(text)
    names = (*ENGINE_OPTIONS, *SWITCHES)
    options = [(n, explicit[n]) for n in names if n in explicit]
    options += [(n, resolved[n]) for n in names if n in resolved and n not in explicit]
    engine = _ENGINE_LINE.search(text)
    total = _first(_TOTALS, text)
    clues = read_gpu_clues(text)
    return LoggedStartup(
        version=_first(_VERSION, text),
        engine=engine.group(1).strip() if engine and engine.group(1) else ("V0" if engine else None),
        model=_model(explicit, text),
        options=tuple(options),
        device_names=_device_names(text, clues),
        total_gib=float(total) if total is not None else None,
        figures=_figures(text),
        error=_error(text),
        started=bool(_STARTED.search(text)),
        gpu_clues=clues,
    )
