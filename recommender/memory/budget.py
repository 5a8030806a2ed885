"""Put the terms together exactly as vLLM's startup does, and say whether it starts.

`explain(model, gpu, flags, version)` mirrors Worker.init_device (request_memory), load_model,
determine_available_memory, get_kv_cache_configs (min over workers), update_kv_cache_capacity and
_check_enough_kv_cache_memory. Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from recommender.errors import FlagError
from recommender.hardware import Gpu
from recommender.memory import overheads
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.kv_cache import KvLayout, build_layout, kv_dtype_bytes
from recommender.memory.weights import DTYPE_BYTES, Parallel, pp_layer_ranges, weight_bytes_per_gpu
from recommender.model.quant import online_quant
from recommender.model.spec import ModelSpec, QuantSpec
from recommender.model.tensors import padded_vocab
from recommender.units import GiB, MiB, format_gib

CONSERVING_MEMORY_URL = "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"
REDUNDANCY_BUFFER = 150 * MiB  # gpu_worker.py redundancy_buffer_memory


@dataclass(frozen=True, slots=True)
class StageBudget:
    """The per-GPU budget of one pipeline stage (every TP rank of a stage is alike)."""

    stage: int
    layers: int
    weights: int
    activation_peak: int
    non_torch: int
    cudagraph: int
    available_kv: int
    layout: KvLayout
    num_blocks: int


@dataclass(frozen=True, slots=True)
class Explanation:
    """What vLLM would compute and print at startup for one model x GPU x flags."""

    model: str
    gpu: str
    vllm_version: str
    gpu_total_bytes: int
    free_bytes: int
    utilization: float
    requested_bytes: int
    weight_dtype: str
    quantization: str
    kv_cache_dtype: str
    tp: int
    pp: int
    dp: int
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    stage: StageBudget | None
    stages: tuple[StageBudget, ...]
    num_gpu_blocks: int
    kv_cache_tokens: int
    max_concurrency: float
    blocks_per_request: int
    fits: bool
    in_flight_tokens: int = 0
    prefix_caching: bool = False
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def concurrency_for(self, length: int) -> float:
        """Requests of `length` tokens the predicted KV pool holds (vLLM's max-concurrency formula)."""
        if self.stage is None or not self.stage.layout.groups:
            return 0.0
        bpr = self.stage.layout.blocks_per_request(length, self.in_flight_tokens, prefix_caching=self.prefix_caching)
        return self.num_gpu_blocks / bpr if bpr else 0.0

    def longest_len(self, need: int, limit: int | None = None) -> int:
        """The largest max_model_len (<= limit) at which one request fits and `need` requests are held; 0 if none."""
        lo, hi = 0, self.max_model_len if limit is None else limit
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.fits_one_request(mid) and self.concurrency_for(mid) >= need:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def fits_one_request(self, length: int) -> bool:
        """vLLM's admission check for one request of `length` tokens (the null block excluded)."""
        if self.stage is None or not self.stage.layout.bytes_per_block:
            return False
        layout = self.stage.layout
        need = layout.bytes_per_block * layout.blocks_per_request(
            length, self.in_flight_tokens, prefix_caching=self.prefix_caching
        )
        return 0 < self.stage.available_kv and need <= self.stage.available_kv - layout.bytes_per_block

    @property
    def block_size(self) -> int:
        """Block size after backend / hybrid alignment."""
        return self.stage.layout.block_size if self.stage else 16

    @property
    def kv_bytes_per_token(self) -> int:
        """KV bytes per token on one GPU, over its attention layers."""
        return self.stage.layout.bytes_per_token if self.stage else 0

    @property
    def gpus(self) -> int:
        """GPUs this engine (all its replicas) occupies."""
        return self.tp * self.pp * self.dp


def batch_defaults(gpu: Gpu, version: VllmVersion) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) for the OpenAI API server (engine/arg_utils.py:get_batch_defaults)."""
    if not version.gpu_dependent_batch_defaults:
        return 256, 2048
    total_gib = gpu.total_bytes / GiB
    if total_gib >= 160:
        return 1024, 16384
    # GB10 (DGX Spark, cc 12.1) has the memory but not the compute of a large GPU: vLLM keeps it on the small tier.
    if total_gib >= 70 and "A100" not in gpu.name.upper() and gpu.compute_capability != "12.1":
        return 1024, 8192
    return 256, 2048


def _resolve_dtype(model: ModelSpec, flags: EngineFlags, gpu: Gpu) -> tuple[str, list[str]]:
    errors: list[str] = []
    d = {"half": "float16", "float": "float32"}.get(flags.dtype, flags.dtype)
    if d == "auto":
        d = model.dtype
        if d == "float32":
            d = "bfloat16" if gpu.supports_bf16 else "float16"
        if d == "bfloat16" and not gpu.supports_bf16:
            d = "float16"
    elif d == "bfloat16" and not gpu.supports_bf16:
        errors.append(
            f"Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {gpu.name} GPU "
            f"has compute capability {gpu.compute_capability}. You can use float16 instead by explicitly setting "
            "the `dtype` flag in CLI, for example: --dtype=half."
        )
    return d, errors


_QUANT_ALIASES = {
    "awq_marlin": "awq",
    "gptq_marlin": "gptq",
    "auto_awq": "awq",
    "auto_gptq": "gptq",
    "modelopt": "fp8",
    "modelopt_fp4": "nvfp4",
    "fbgemm_fp8": "fp8",
}


def resolve_quant(model: ModelSpec, quantization: str | None) -> QuantSpec | None:
    """The checkpoint's quantization, or the online method asked for on a 16-bit checkpoint."""
    if model.quant is not None:
        if quantization and quantization not in ("compressed-tensors", "modelopt", "mxfp4", "modelopt_fp4"):
            wanted = _QUANT_ALIASES.get(quantization, quantization)
            if wanted != model.quant.method and not (wanted == "fp8" and model.quant.method == "fp8"):
                raise FlagError(
                    f"Quantization method specified in the model config ({model.quant.method}) does not match the "
                    f"quantization method specified in the `quantization` argument ({quantization})."
                )
        return model.quant
    if quantization:
        return online_quant(_QUANT_ALIASES.get(quantization, quantization))
    return None


def _parallel_checks(model: ModelSpec, tp: int, pp: int) -> tuple[list[str], list[str]]:
    """vLLM's divisibility checks for tensor / pipeline parallelism, with its messages."""
    errors: list[str] = []
    warnings: list[str] = []
    if model.num_heads % tp:
        errors.append(
            f"Total number of attention heads ({model.num_heads}) must be divisible by tensor parallel size ({tp})."
        )
    if tp > 1 and padded_vocab(model.vocab_size) % tp:
        errors.append(f"{padded_vocab(model.vocab_size)} is not divisible by {tp}")
    if pp > model.num_layers:
        errors.append(f"pipeline parallel size ({pp}) exceeds the number of layers ({model.num_layers})")
    if model.mla is None and 0 < model.num_kv_heads < tp:
        if tp % model.num_kv_heads:
            errors.append(f"{tp} is not divisible by {model.num_kv_heads}")
        else:
            warnings.append(
                f"TP={tp} exceeds the {model.num_kv_heads} KV heads: each KV head is replicated on "
                f"{tp // model.num_kv_heads} GPUs, so KV memory per token does not shrink further"
            )
    return errors, warnings


def _max_len_error(model: ModelSpec, length: int) -> str:
    return (
        f"User-specified max_model_len ({length}) is greater than the derived max_model_len "
        f"({model.max_len_key}={model.max_model_len} or model_max_length=None in model's config.json). To allow "
        "overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN "
        "must be used with extreme caution. If the model uses relative position encoding (RoPE), positions "
        "exceeding derived_max_model_len lead to nan. If the model uses absolute position encoding, positions "
        "exceeding derived_max_model_len will cause a CUDA array out-of-bounds error."
    )


def explain(
    model: ModelSpec,
    gpu: Gpu,
    flags: EngineFlags,
    version: VllmVersion,
    *,
    free_bytes: int | None = None,
) -> Explanation:
    """Predict vLLM's startup figures and verdict for one configuration (per GPU, worst pipeline stage)."""
    flags.validate()
    errors: list[str] = []
    warnings: list[str] = []
    tp, pp, dp = flags.tensor_parallel_size, flags.pipeline_parallel_size, flags.data_parallel_size
    dtype, dtype_errors = _resolve_dtype(model, flags, gpu)
    errors += dtype_errors
    dtype_bytes = DTYPE_BYTES[dtype]
    quant = resolve_quant(model, flags.quantization)
    kv_dtype = flags.kv_cache_dtype
    if kv_dtype == "auto" and quant is not None and quant.kv_cache_fp8:
        kv_dtype = "fp8"
        warnings.append("the checkpoint declares an FP8 KV-cache scheme, so vLLM uses fp8 for --kv-cache-dtype auto")
    kv_bytes = kv_dtype_bytes(kv_dtype, dtype_bytes)
    if model.multimodal and model.vision is None:
        warnings.append("the config does not size the vision/audio encoder: its weights and profiling are not counted")
    elif model.multimodal:
        warnings.append("the vision encoder's own profiling pass (encoder cache budget) is not counted")
    if kv_dtype.startswith("fp8") and not gpu.fp8 and model.mla is None:
        warnings.append(f"{gpu.name} has no FP8 tensor cores; an fp8 KV cache still halves memory but may be slow")

    parallel_errors, parallel_warnings = _parallel_checks(model, tp, pp)
    errors += parallel_errors
    warnings += parallel_warnings
    pp = min(pp, model.num_layers)

    max_len = flags.max_model_len if flags.max_model_len is not None else model.max_model_len
    auto_fit = max_len == -1
    if auto_fit:
        max_len = model.max_model_len
    elif max_len > model.max_model_len:
        errors.append(_max_len_error(model, max_len))

    seqs_default, tokens_default = batch_defaults(gpu, version)
    max_tokens = flags.max_num_batched_tokens or tokens_default
    max_seqs = flags.max_num_seqs or seqs_default
    if flags.max_num_batched_tokens is None:
        max_tokens = min(max_tokens, max_seqs * max_len)
    if flags.max_num_seqs is None:
        max_seqs = min(max_seqs, max_tokens)

    util = flags.gpu_memory_utilization or version.default_gpu_memory_utilization
    total = gpu.total_bytes
    free = total if free_bytes is None else free_bytes
    requested = math.ceil(total * util)
    if free < requested:
        errors.append(
            f"Free memory on device cuda:0 ({format_gib(free)}/{format_gib(total)} GiB) on startup is less "
            f"than desired GPU memory utilization ({util}, {format_gib(requested)} GiB). Decrease GPU memory "
            "utilization or reduce GPU memory used by other processes."
        )

    par = Parallel(tp=tp, pp=pp, dp=dp, expert_parallel=flags.enable_expert_parallel)
    ranges = pp_layer_ranges(model.num_layers, pp)
    in_flight = max_tokens * ((pp + 1) if version.sliding_window_counts_in_flight_batches else 1)
    prefix_caching = bool(flags.enable_prefix_caching) and not model.is_hybrid
    stages: list[StageBudget] = []
    for k, layers in enumerate(ranges):
        w = weight_bytes_per_gpu(
            model, par, dtype_bytes=dtype_bytes, quant=quant, stage=k, cpu_offload_bytes=int(flags.cpu_offload_gb * GiB)
        )
        last = k == pp - 1
        act = overheads.activation_peak_bytes(
            model,
            max_num_batched_tokens=max_tokens,
            max_num_seqs=max_seqs,
            tp=tp,
            last_stage=last,
            version=(version.major, version.minor),
        )
        nt = overheads.non_torch_bytes(tp=tp, nvlink=gpu.nvlink, version=(version.major, version.minor))
        cg = overheads.cudagraph_bytes(model, layers_on_gpu=len(layers), enforce_eager=flags.enforce_eager)
        cg_applied = cg if version.cudagraph_memory_before_kv else 0
        if flags.kv_cache_memory_bytes is not None:
            avail = flags.kv_cache_memory_bytes
        else:
            avail = requested - (w + act + nt + cg_applied)
        layout = build_layout(
            model, layers, tp=tp, block_size=flags.block_size, kv_bytes=kv_bytes, model_bytes=dtype_bytes
        )
        blocks = max(0, avail) // layout.bytes_per_block if layout.bytes_per_block else 0
        stages.append(StageBudget(k, len(layers), w, act, nt, cg, avail, layout, blocks))
        if w > free:
            errors.append(
                "Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory "
                "for weights, increasing --tensor-parallel-size, or using --quantization. See "
                f"{CONSERVING_MEMORY_URL} for more details."
            )
    worst = min(stages, key=lambda st: (st.num_blocks, st.available_kv))
    layout = worst.layout
    num_blocks = worst.num_blocks
    bpr = layout.blocks_per_request(max_len, in_flight, prefix_caching=prefix_caching) if layout.groups else 0

    if layout.bytes_per_block and not any("Failed to load" in e for e in errors):
        if worst.available_kv <= 0:
            errors.append(
                "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
                "the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). "
                f"See {CONSERVING_MEMORY_URL} for more details."
            )
        else:
            check = worst.available_kv - layout.bytes_per_block
            needed = layout.bytes_per_block * bpr
            if auto_fit:
                fitted = _largest_fitting_len(layout, check, max_len, in_flight, prefix_caching)
                if fitted <= 0:
                    errors.append(
                        "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a "
                        "single token. Try increasing `gpu_memory_utilization`."
                    )
                else:
                    if fitted < max_len:
                        warnings.append(
                            f"Auto-fit max_model_len: reduced from {max_len} to {fitted} to fit in "
                            f"available KV cache memory ({format_gib(check)} GiB GPU)"
                        )
                    max_len = fitted
                    bpr = layout.blocks_per_request(max_len, in_flight, prefix_caching=prefix_caching)
            elif needed > check:
                est = _largest_fitting_len(layout, check, max_len, in_flight, prefix_caching)
                hint = (
                    f" Based on the available memory, the estimated maximum model length is {est}." if est > 0 else ""
                )
                errors.append(
                    f"To serve at least one request with the model's max seq len ({max_len}), "
                    f"({format_gib(needed)} GiB KV cache is needed, which is larger than the available KV cache "
                    f"memory ({format_gib(check)} GiB).{hint} Try increasing `gpu_memory_utilization` (which also controls CPU "
                    "memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. See "
                    f"{CONSERVING_MEMORY_URL} for more details."
                )

    for _kind, pad, n in layout.padding_by_kind:  # kv_cache_planning.py's warning
        warnings.append(f"Add {pad} padding layers, may waste at most {pad / n * 100:.2f}% KV cache memory")
    concurrency = num_blocks / bpr if bpr else 0.0
    if version.v0_engine:
        # V0 (worker.py): "# GPU blocks: N"; "Maximum concurrency ... = num_gpu_blocks * block_size / max_model_len".
        tokens = num_blocks * layout.block_size
        concurrency = tokens / max_len if max_len else 0.0
        warnings.append(f"vLLM {version} runs the V0 engine: figures follow its simpler block accounting")
    elif version.one_line_capacity_log or not layout.groups:
        tokens = int(concurrency * max_len)
    else:
        tokens = num_blocks // len(layout.groups) * layout.block_size
    headroom = total - requested + REDUNDANCY_BUFFER
    post_alloc = (0 if version.cudagraph_memory_before_kv else worst.cudagraph) + int(
        overheads.sampler_bytes_per_logit((version.major, version.minor)) * min(max_seqs, max_tokens) * model.vocab_size
    )
    if post_alloc > headroom and flags.kv_cache_memory_bytes is None:
        warnings.append(
            f"--gpu-memory-utilization {util} leaves {format_gib(headroom):.2f} GiB outside the budget, less than the "
            f"~{format_gib(post_alloc):.2f} GiB the sampler warm-up (and CUDA graphs) allocate after the KV cache: "
            "startup may run out of memory"
        )
    return Explanation(
        model=model.name,
        gpu=gpu.name,
        vllm_version=str(version),
        gpu_total_bytes=total,
        free_bytes=free,
        utilization=util,
        requested_bytes=requested if flags.kv_cache_memory_bytes is None else flags.kv_cache_memory_bytes,
        weight_dtype=dtype,
        quantization=quant.label if quant else "none",
        kv_cache_dtype=kv_dtype,
        tp=tp,
        pp=pp,
        dp=dp,
        max_model_len=max_len,
        max_num_seqs=max_seqs,
        max_num_batched_tokens=max_tokens,
        stage=worst,
        stages=tuple(stages),
        num_gpu_blocks=num_blocks,
        kv_cache_tokens=tokens,
        max_concurrency=concurrency,
        blocks_per_request=bpr,
        fits=not errors,
        in_flight_tokens=in_flight,
        prefix_caching=prefix_caching,
        errors=tuple(errors),
        warnings=tuple(warnings),
    )


def _largest_fitting_len(layout: KvLayout, check: int, upper: int, in_flight: int, prefix_caching: bool) -> int:
    """vLLM's estimate: the largest max_model_len whose one request fits in `check` bytes (binary search)."""
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        need = layout.bytes_per_block * layout.blocks_per_request(mid, in_flight, prefix_caching=prefix_caching)
        if need <= check:
            lo = mid
        else:
            hi = mid - 1
    return lo
