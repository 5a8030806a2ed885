"""What can go wrong at vLLM's startup, as values: a kind to branch on, vLLM's own text to print, and the
numbers a fix needs (pure).

Decisions (the planner's rejections, check's failures and fixes) are keyed on `IssueKind`, never on the text:
the messages are vLLM 0.33's wording (tests compare them with vLLM's) and may change with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from recommender.units import format_gib

CONSERVING_MEMORY_URL = "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"


class IssueKind(StrEnum):
    """Every startup error and the warnings code branches on. The value is the stable name in JSON output."""

    # Errors: vLLM refuses to start (or crashes during startup).
    BF16_UNSUPPORTED = "bf16-unsupported"  # config/model.py: compute capability < 8.0
    GPU_TOO_OLD = "gpu-below-compute-capability-floor"  # a CUDA GPU older than vLLM's documented floor
    TP_HEADS = "tp-does-not-divide-heads"  # count = attention heads, parallel = TP
    TP_VOCAB = "tp-does-not-divide-vocab"  # count = padded vocabulary, parallel = TP
    TP_KV_HEADS = "tp-does-not-divide-kv-heads"  # count = KV heads, parallel = TP
    PP_LAYERS = "pp-above-layers"  # count = layers, parallel = PP
    MAX_LEN_ABOVE_MODEL = "max-model-len-above-model"  # max_len = the model's limit, requested = the flag
    BATCHED_BELOW_MAX_LEN = "batched-tokens-below-max-model-len"  # without chunked prefill; requested = the budget
    BATCHED_BELOW_SEQS = "batched-tokens-below-max-num-seqs"  # count = max_num_seqs, requested = the token budget
    FREE_BELOW_BUDGET = "free-memory-below-budget"  # needed = requested budget, available = free memory
    WEIGHTS_DO_NOT_FIT = "weights-do-not-fit"  # needed = weights on one GPU, available = free memory
    NO_CACHE_MEMORY = "no-cache-memory"  # needed = one block, available = KV memory (<= 0)
    KV_TOO_SMALL = "kv-too-small-for-max-model-len"  # needed/available KV bytes, max_len = vLLM's estimate
    AUTO_FIT_IMPOSSIBLE = "auto-fit-impossible"  # available = KV memory less one block
    REMOVED_FLAG = "removed-flag"  # flag, version = the release that removed it
    ARCHITECTURE_REMOVED = "architecture-removed"  # version = the last release that served the architecture
    ARCHITECTURE_NOT_IN_RELEASE = "architecture-not-in-release"  # version = the first release that has it
    QUANTIZATION_UNKNOWN = "quantization-unknown"  # flag = the checkpoint's method the release does not know
    QUANTIZATION_CAPABILITY = "quantization-below-capability"  # flag = the method, count = its minimum capability
    KV_DTYPE_UNSUPPORTED = "kv-cache-dtype-unsupported"  # flag = the --kv-cache-dtype the attention cannot store
    BLOCK_SIZE_UNSUPPORTED = "block-size-unsupported"  # requested = the --block-size no attention backend takes
    KV_ALLOCATION_OOM = "kv-cache-allocation-oom"  # needed = the fixed KV cache, available = free beside the weights
    WARMUP_OOM = "warmup-out-of-memory"  # needed = allocations after the KV cache, available = room for them
    MAMBA_BLOCKS = "max-num-seqs-above-mamba-blocks"  # count = max_num_seqs, requested = the pool's blocks
    # Mamba cache "align" mode (prefix caching on a hybrid): count = the aligned attention block, requested = the budget
    MAMBA_ALIGN_BLOCK = "mamba-align-block-above-batched-tokens"
    # no KV cache (encoder-only attention, memory/no_kv.py): needed = the warm-up's peak, available = free memory,
    # requested = max_num_batched_tokens
    NO_KV_WARMUP_OOM = "no-kv-warmup-out-of-memory"
    # Warnings: vLLM starts, with a caveat.
    WARMUP_HEADROOM = "warmup-headroom"  # needed = post-allocation warm-ups, available = room for them (too close)
    NO_KV_WARMUP_MARGIN = "no-kv-warmup-margin"  # at risk: as NO_KV_WARMUP_OOM, inside the ~1 GiB uncertainty
    NO_KV_CACHE = "no-kv-cache"  # encoder-only attention: no KV cache, concurrency bounded by the scheduler limits
    NO_KV_CHUNKED_PREFILL = "no-kv-chunked-prefill"  # --enable-chunked-prefill on a model that does not support it
    MAMBA_BLOCKS_MARGIN = "mamba-blocks-margin"  # at risk: count = max_num_seqs, requested = the predicted blocks
    UNIFIED_MEMORY_HEADROOM = "unified-memory-headroom"  # at risk: needed = the budget, available = what it leaves
    DSV4_RELEASE_MARGIN = "dsv4-release-margin"  # at risk: needed = one request's KV, available = the KV memory
    VGPU_HELD_MARGIN = "vgpu-held-margin"  # at risk: needed = one request's KV, available = the KV memory
    WHOLE_DEVICE_MARGIN = "whole-device-margin"  # at risk: needed = post-KV allocations, available = freed peak
    NCCL_GRAPH_MARGIN = "nccl-graph-margin"  # at risk: needed = post-KV allocations, available = room for them
    NCCL_GRAPHS_UNCOUNTED = "nccl-graphs-uncounted"  # count = all-reduces captured, available = the post-KV margin
    AUTO_FIT_REDUCED = "auto-fit-reduced"  # max_len = the fitted length, requested = the model's limit
    KV_HEADS_REPLICATED = "kv-heads-replicated"  # count = KV heads, parallel = TP
    FP8_KV_FROM_CHECKPOINT = "fp8-kv-from-checkpoint"
    FP8_KV_WITHOUT_TENSOR_CORES = "fp8-kv-without-tensor-cores"
    ENCODER_NOT_COUNTED = "encoder-not-counted"
    PADDING_LAYERS = "padding-layers"  # count = padding layers
    V0_ENGINE = "v0-engine"
    APPROXIMATE_MODEL = "approximate-model"  # the architecture is estimated (ModelSpec.approximate says why)
    ARCHITECTURE_RELEASE_UNCERTAIN = "architecture-release-uncertain"  # version = a release known to have it
    SPECULATIVE_DRAFTER = "speculative-drafter"  # needed = the drafter's weights on one GPU (memory/spec_decode.py)
    LORA_SLOTS = "lora-slots"  # needed = the --enable-lora A/B buffers on one GPU (memory/lora.py), in the weights
    GPU_MEMORY_IS_A_SETTING = (
        "gpu-memory-is-a-setting"  # an integrated GPU's total set by BIOS / GTT; available = assumed
    )

    @property
    def fatal(self) -> bool:
        """True for the kinds vLLM does not start with."""
        return self not in _WARNING_KINDS

    @property
    def at_risk(self) -> bool:
        """A warning that the model cannot call the startup either way: the margin it predicts is inside its stated
        uncertainty for that class (a plan with one is "at risk", not a fit)."""
        return self in _AT_RISK_KINDS


_WARNING_KINDS = frozenset(
    {
        IssueKind.WARMUP_HEADROOM,
        IssueKind.NO_KV_WARMUP_MARGIN,
        IssueKind.NO_KV_CACHE,
        IssueKind.NO_KV_CHUNKED_PREFILL,
        IssueKind.MAMBA_BLOCKS_MARGIN,
        IssueKind.UNIFIED_MEMORY_HEADROOM,
        IssueKind.DSV4_RELEASE_MARGIN,
        IssueKind.VGPU_HELD_MARGIN,
        IssueKind.WHOLE_DEVICE_MARGIN,
        IssueKind.NCCL_GRAPH_MARGIN,
        IssueKind.NCCL_GRAPHS_UNCOUNTED,
        IssueKind.AUTO_FIT_REDUCED,
        IssueKind.KV_HEADS_REPLICATED,
        IssueKind.FP8_KV_FROM_CHECKPOINT,
        IssueKind.FP8_KV_WITHOUT_TENSOR_CORES,
        IssueKind.ENCODER_NOT_COUNTED,
        IssueKind.PADDING_LAYERS,
        IssueKind.V0_ENGINE,
        IssueKind.APPROXIMATE_MODEL,
        IssueKind.ARCHITECTURE_RELEASE_UNCERTAIN,
        IssueKind.SPECULATIVE_DRAFTER,
        IssueKind.LORA_SLOTS,
        IssueKind.GPU_MEMORY_IS_A_SETTING,
    }
)
_AT_RISK_KINDS = frozenset(
    {
        IssueKind.NO_KV_WARMUP_MARGIN,
        IssueKind.MAMBA_BLOCKS_MARGIN,
        IssueKind.UNIFIED_MEMORY_HEADROOM,
        IssueKind.DSV4_RELEASE_MARGIN,
        IssueKind.VGPU_HELD_MARGIN,
        IssueKind.WHOLE_DEVICE_MARGIN,
        IssueKind.NCCL_GRAPH_MARGIN,
    }
)


@dataclass(frozen=True, slots=True)
class StartupIssue:
    """One startup error or warning. Which numeric fields are set depends on the kind (see `IssueKind`)."""

    kind: IssueKind
    message: str
    needed_bytes: int | None = None
    available_bytes: int | None = None
    max_len: int | None = None
    requested: int | None = None
    count: int | None = None
    parallel: int | None = None
    flag: str | None = None
    version: str | None = None

    @property
    def fatal(self) -> bool:
        """vLLM does not start."""
        return self.kind.fatal


# --- vLLM 0.33's messages, verbatim (source locations in each docstring) ---------------------------------------


def bf16_unsupported(gpu_name: str, compute_capability: str) -> StartupIssue:
    """platforms/cuda.py:651 check_if_supports_dtype."""
    return StartupIssue(
        IssueKind.BF16_UNSUPPORTED,
        f"Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {gpu_name} GPU "
        f"has compute capability {compute_capability}. You can use float16 instead by explicitly setting "
        "the `dtype` flag in CLI, for example: --dtype=half.",
    )


def block_size_unsupported(block_size: int, kernel_block: int) -> StartupIssue:
    """platforms/cuda.py get_attn_backend_cls, when every backend's validate_configuration says "block_size not
    supported" (v1/attention/backend.py supports_block_size); vLLM's message also prints the whole selector config
    and each backend by name, shortened here."""
    return StartupIssue(
        IssueKind.BLOCK_SIZE_UNSUPPORTED,
        f"No valid attention backend found for cuda with block_size={block_size}. Reasons: every backend: "
        f"[block_size not supported] (each takes a multiple of {kernel_block} tokens).",
        requested=block_size,
    )


def gpu_too_old(gpu_name: str, compute_capability: str, floor: tuple[int, int]) -> StartupIssue:
    """Our wording (vLLM 0.33 has no message of its own): the first CUDA kernel fails with CUDA's text."""
    return StartupIssue(
        IssueKind.GPU_TOO_OLD,
        f"The {gpu_name} has compute capability {compute_capability}; vLLM supports compute capability "
        f"{floor[0]}.{floor[1]} or higher: its prebuilt kernels have no code for this GPU (CUDA error: no kernel "
        "image is available for execution on the device).",
    )


def tp_heads(heads: int, tp: int) -> StartupIssue:
    """config/model.py:1559 verify_with_parallel_config."""
    return StartupIssue(
        IssueKind.TP_HEADS,
        f"Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp}).",
        count=heads,
        parallel=tp,
    )


def tp_vocab(padded_vocab: int, tp: int) -> StartupIssue:
    """VocabParallelEmbedding splits the padded vocabulary over TP ranks (distributed/utils.py divide())."""
    return StartupIssue(IssueKind.TP_VOCAB, f"{padded_vocab} is not divisible by {tp}", count=padded_vocab, parallel=tp)


def tp_kv_heads(kv_heads: int, tp: int) -> StartupIssue:
    """QKVParallelLinear: TP above the KV heads must be a multiple of them (distributed/utils.py divide())."""
    return StartupIssue(IssueKind.TP_KV_HEADS, f"{tp} is not divisible by {kv_heads}", count=kv_heads, parallel=tp)


def pp_layers(layers: int, pp: int) -> StartupIssue:
    """Every pipeline stage needs a layer (distributed/utils.py:198 get_pp_indices); this tool's wording."""
    return StartupIssue(
        IssueKind.PP_LAYERS,
        f"pipeline parallel size ({pp}) exceeds the number of layers ({layers})",
        count=layers,
        parallel=pp,
    )


def max_len_above_model(requested: int, limit: int, limit_key: str) -> StartupIssue:
    """config/model.py:2664 _get_and_verify_max_len."""
    return StartupIssue(
        IssueKind.MAX_LEN_ABOVE_MODEL,
        f"User-specified max_model_len ({requested}) is greater than the derived max_model_len "
        f"({limit_key}={limit} or model_max_length=None in model's config.json). To allow "
        "overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN "
        "must be used with extreme caution. If the model uses relative position encoding (RoPE), positions "
        "exceeding derived_max_model_len lead to nan. If the model uses absolute position encoding, positions "
        "exceeding derived_max_model_len will cause a CUDA array out-of-bounds error.",
        max_len=limit,
        requested=requested,
    )


def batched_below_max_len(batched: int, max_len: int) -> StartupIssue:
    """config/scheduler.py:318 verify_max_model_len (V0: SchedulerConfig._verify_args, the same text)."""
    return StartupIssue(
        IssueKind.BATCHED_BELOW_MAX_LEN,
        f"max_num_batched_tokens ({batched}) is smaller than max_model_len ({max_len}). This effectively limits the "
        "maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please increase "
        "max_num_batched_tokens or decrease max_model_len.",
        max_len=max_len,
        requested=batched,
    )


def batched_below_seqs(batched: int, seqs: int) -> StartupIssue:
    """config/scheduler.py:331 (V0 0.6: SchedulerConfig._verify_args, the same text)."""
    return StartupIssue(
        IssueKind.BATCHED_BELOW_SEQS,
        f"max_num_batched_tokens ({batched}) must be greater than or equal to max_num_seqs ({seqs}).",
        count=seqs,
        requested=batched,
    )


def mamba_align_block(block_size: int, batched: int) -> StartupIssue:
    """config/vllm.py (VllmConfig.__post_init__, "Mamba cache align-mode constraints"): with mamba_cache_mode "align"
    the attention block, grown to the Mamba page, must fit one scheduler step."""
    return StartupIssue(
        IssueKind.MAMBA_ALIGN_BLOCK,
        f"In Mamba cache align mode, block_size ({block_size}) must be <= max_num_batched_tokens ({batched}).",
        count=block_size,
        requested=batched,
    )


def free_below_budget(free: int, total: int, utilization: float, requested: int) -> StartupIssue:
    """v1/worker/utils.py:763 request_memory."""
    return StartupIssue(
        IssueKind.FREE_BELOW_BUDGET,
        f"Free memory on device cuda:0 ({format_gib(free)}/{format_gib(total)} GiB) on startup is less "
        f"than desired GPU memory utilization ({utilization}, {format_gib(requested)} GiB). Decrease GPU memory "
        "utilization or reduce GPU memory used by other processes.",
        needed_bytes=requested,
        available_bytes=free,
    )


def weights_do_not_fit(weights: int, free: int) -> StartupIssue:
    """v1/worker/gpu_model_runner.py:5079 load_model (torch.OutOfMemoryError while loading)."""
    return StartupIssue(
        IssueKind.WEIGHTS_DO_NOT_FIT,
        "Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory "
        "for weights, increasing --tensor-parallel-size, or using --quantization. See "
        f"{CONSERVING_MEMORY_URL} for more details.",
        needed_bytes=weights,
        available_bytes=free,
    )


def no_cache_memory(block_bytes: int, available: int) -> StartupIssue:
    """v1/core/kv_cache_planning.py:58 _check_enough_kv_cache_memory."""
    return StartupIssue(
        IssueKind.NO_CACHE_MEMORY,
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
        "the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). "
        f"See {CONSERVING_MEMORY_URL} for more details.",
        needed_bytes=block_bytes,
        available_bytes=available,
    )


def kv_too_small(max_len: int, needed: int, available: int, estimate: int) -> StartupIssue:
    """v1/core/kv_cache_planning.py:78 _check_enough_kv_cache_memory (the estimate: a binary search)."""
    hint = f" Based on the available memory, the estimated maximum model length is {estimate}." if estimate > 0 else ""
    return StartupIssue(
        IssueKind.KV_TOO_SMALL,
        f"To serve at least one request with the model's max seq len ({max_len}), "
        f"({format_gib(needed)} GiB KV cache is needed, which is larger than the available KV cache "
        f"memory ({format_gib(available)} GiB).{hint} Try increasing `gpu_memory_utilization` (which also controls "
        "CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. See "
        f"{CONSERVING_MEMORY_URL} for more details.",
        needed_bytes=needed,
        available_bytes=available,
        max_len=estimate,
        requested=max_len,
    )


def auto_fit_impossible(available: int) -> StartupIssue:
    """v1/core/kv_cache_planning.py:1382 (max_model_len -1: auto-fit)."""
    return StartupIssue(
        IssueKind.AUTO_FIT_IMPOSSIBLE,
        "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a "
        "single token. Try increasing `gpu_memory_utilization`.",
        available_bytes=available,
    )


def auto_fit_reduced(limit: int, fitted: int, available: int) -> StartupIssue:
    """v1/core/kv_cache_planning.py:1405, the auto-fit log line."""
    return StartupIssue(
        IssueKind.AUTO_FIT_REDUCED,
        f"Auto-fit max_model_len: reduced from {limit} to {fitted} to fit in "
        f"available KV cache memory ({format_gib(available)} GiB GPU)",
        available_bytes=available,
        max_len=fitted,
        requested=limit,
    )


def padding_layers(pad: int, layers_of_kind: int) -> StartupIssue:
    """v1/core/kv_cache_planning.py:538: hybrid groups padded to one size."""
    return StartupIssue(
        IssueKind.PADDING_LAYERS,
        f"Add {pad} padding layers, may waste at most {pad / layers_of_kind * 100:.2f}% KV cache memory",
        count=pad,
    )


def gpu_memory_is_a_setting(name: str, total: int) -> StartupIssue:
    """An integrated GPU whose device total is the machine's BIOS carve-out plus GTT limit (hardware.Gpu
    .total_is_a_setting): the catalog's one reading stands in for the machine's."""
    return StartupIssue(
        IssueKind.GPU_MEMORY_IS_A_SETTING,
        f"{name}'s memory is what the machine's BIOS carve-out and GTT limit give it, not a property of the chip: "
        f"{format_gib(total):.2f} GiB assumed (the catalog's reading); write the share with the name ('{name} 96GB') "
        "or pass --gpu-memory-gib",
        available_bytes=total,
    )


def removed_flag(flag: str, removed_in: str, target: str) -> StartupIssue:
    """vLLM's argument parser refuses a flag the release no longer has."""
    return StartupIssue(
        IssueKind.REMOVED_FLAG,
        f"{flag} was removed in vLLM {removed_in} (target {target}): vLLM will refuse to start",
        flag=flag,
        version=removed_in,
    )


def architecture_removed(architecture: str, served_until: str) -> StartupIssue:
    """registry.py ModelRegistry: an architecture in _PREVIOUSLY_SUPPORTED_MODELS (vLLM's own text)."""
    return StartupIssue(
        IssueKind.ARCHITECTURE_REMOVED,
        f"Model architecture {architecture} was supported in vLLM until v{served_until}, and is not supported "
        "anymore. Please use an older version of vLLM if you want to use this model architecture.",
        version=served_until,
    )


# vllm/model_executor/layers/quantization/__init__.py QUANTIZATION_METHODS in 0.33 (bitsandbytes is gone)
QUANTIZATION_METHODS_0_33 = (
    "awq", "auto_awq", "fp8", "fbgemm_fp8", "fp_quant", "modelopt", "modelopt_fp4", "modelopt_mxfp8",
    "modelopt_mixed", "auto_gptq", "gptq", "gptq_marlin", "awq_marlin", "humming", "compressed-tensors",
    "experts_int8", "quark", "moe_wna16", "torchao", "inc", "mxfp4", "gpt_oss_mxfp4", "deepseek_v4_fp8", "online",
    "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "int8_per_channel_weight_only", "nvfp4_per_token",
    "mxfp8",
)  # fmt: skip


def quantization_unknown(method: str) -> StartupIssue:
    """config/model.py:1466 _verify_quantization: a checkpoint's quant_method the release does not register."""
    return StartupIssue(
        IssueKind.QUANTIZATION_UNKNOWN,
        f"Unknown quantization method: {method}. Must be one of {list(QUANTIZATION_METHODS_0_33)}.",
        flag=method,
    )


def quant_capability(method: str, minimum: int, current: int) -> StartupIssue:
    """config/vllm.py:930 _get_quantization_config: the method's get_min_capability() above the GPU's."""
    return StartupIssue(
        IssueKind.QUANTIZATION_CAPABILITY,
        f"The quantization method {method} is not supported for the current GPU. Minimum capability: {minimum}. "
        f"Current capability: {current}.",
        flag=method,
        count=minimum,
    )


def quant_scheme_capability(minimum: int, current: int) -> StartupIssue:
    """compressed_tensors.py:410 _check_scheme_supported: a layer's scheme needs a newer GPU."""
    return StartupIssue(
        IssueKind.QUANTIZATION_CAPABILITY,
        f"Quantization scheme is not supported for the current GPU. Min capability: {minimum}. "
        f"Current capability: {current}.",
        flag="compressed-tensors",
        count=minimum,
    )


def dsv4_kv_dtype(kv_cache_dtype: str) -> StartupIssue:
    """models/deepseek_v4/attention.py _resolve_dsv4_kv_cache_dtype: the fp8_ds_mla layout of the default backends
    (FlashMLA, FlashInfer on SM12x, ROCm aiter) stores fp8 only."""
    return StartupIssue(
        IssueKind.KV_DTYPE_UNSUPPORTED,
        f"DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got {kv_cache_dtype}. Please set "
        "`--kv-cache-dtype fp8` or select a backend that supports bfloat16 KV cache.",
        flag=kv_cache_dtype,
    )


def kv_allocation_oom(kv_bytes: int, total: int, room: int) -> StartupIssue:
    """v1/worker/utils.py:596 allocate_kv_cache: torch.zeros of the whole KV cache, which a fixed
    --kv-cache-memory-bytes sizes without profiling (v1/worker/gpu_worker.py:656): torch's CUDA OOM message."""
    return StartupIssue(
        IssueKind.KV_ALLOCATION_OOM,
        f"CUDA out of memory. Tried to allocate {kv_bytes / (1 << 30):.2f} GiB. GPU 0 has a total capacity of "
        f"{total / (1 << 30):.2f} GiB of which {max(0, room) / (1 << 30):.2f} GiB is free beside the weights "
        "(--kv-cache-memory-bytes reserves the KV cache without profiling and does not respect "
        "--gpu-memory-utilization)",
        needed_bytes=kv_bytes,
        available_bytes=room,
    )


# --- warnings of this tool (its own wording) ---------------------------------------------------------------------


def kv_heads_replicated(kv_heads: int, tp: int) -> StartupIssue:
    """TP above the KV-head count: heads are replicated, KV memory per token stops shrinking."""
    return StartupIssue(
        IssueKind.KV_HEADS_REPLICATED,
        f"TP={tp} exceeds the {kv_heads} KV heads: each KV head is replicated on "
        f"{tp // kv_heads} GPUs, so KV memory per token does not shrink further",
        count=kv_heads,
        parallel=tp,
    )


def _post_kv_parts(sampler: bool, context: bool) -> str:
    """What is allocated after the KV cache: the sampler warm-up (V1), CUDA graphs, and the CUDA context unless the
    release's profiler counted it inside the budget (0.6.4 and earlier)."""
    parts = ["the sampler warm-up"] * sampler + ["CUDA graphs"] + ["CUDA context"] * context
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


def warmup_oom(rows: int, needed: int, room: int, *, sampler: bool = True, context: bool = True) -> StartupIssue:
    """v1/worker/gpu_model_runner.py _dummy_sampler_run, then the predicted figures (memory/warmup.py). Without a
    sampler warm-up (the V0 engine sampled inside its profiling run) the crash is torch's own out-of-memory error
    while capturing CUDA graphs (worker.py _warm_up_model)."""
    what = _post_kv_parts(sampler, context)
    head = (
        f"CUDA out of memory occurred when warming up sampler with {rows} dummy requests. Please try lowering "
        "`max_num_seqs` or `gpu_memory_utilization` when initializing the engine."
        if sampler
        else "torch.OutOfMemoryError: CUDA out of memory while capturing CUDA graphs after the KV cache was "
        "allocated (--enforce-eager skips the capture)."
    )
    return StartupIssue(
        IssueKind.WARMUP_OOM,
        f"{head} (Predicted: {what} need {format_gib(needed):.2f} GiB after the KV cache is "
        f"allocated, {format_gib(needed - room):.2f} GiB more than the {format_gib(room):.2f} GiB left.)",
        needed_bytes=needed,
        available_bytes=room,
        count=rows,
    )


def warmup_headroom(
    utilization: float, room: int, needed: int, *, sampler: bool = True, context: bool = True
) -> StartupIssue:
    """Post-allocation warm-ups (sampler, CUDA graphs) too close to what is left to call. vLLM checks free memory
    only at its startup snapshot: field record F026 (RTX 3090, 0.17.1) crashed in the sampler warm-up with the flags
    that started in F023, its OOM message showing 1.68 GiB of the card held outside vLLM's process."""
    margin = room - needed
    return StartupIssue(
        IssueKind.WARMUP_HEADROOM,
        f"--gpu-memory-utilization {utilization} leaves ~{format_gib(room):.2f} GiB for the "
        f"~{format_gib(needed):.2f} GiB {_post_kv_parts(sampler, context)} allocate after the KV "
        f"cache, a margin of {format_gib(margin):.2f} GiB, within the model's ~1 GiB uncertainty: startup may run "
        "out of memory (memory other processes hold, such as a desktop's display, comes out of this margin: "
        "--free-memory-gib counts it)",
        needed_bytes=needed,
        available_bytes=room,
    )


def note(kind: IssueKind, message: str) -> StartupIssue:
    """A warning with no numbers attached."""
    return StartupIssue(kind, message)
