"""The launch flags that change memory, and the vLLM-version behaviour that interprets them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from recommender.errors import FlagError
from recommender.hardware import Gpu
from recommender.memory.capture_config import CaptureRequest, capture_request
from recommender.memory.spec_decode import SpeculativeConfig, parse_speculative_config
from recommender.units import GiB

KV_CACHE_DTYPES = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2")
# vLLM 0.33 accepts these too (config/cache.py CacheDType), but their packed page layouts are not modelled.
KV_CACHE_DTYPES_NOT_MODELLED = (
    "fp8_inc",
    "fp8_ds_mla",
    "nvfp4_ds_mla",
    "turboquant_k8v4",
    "turboquant_4bit_nc",
    "turboquant_k3v4_nc",
    "turboquant_3bit_nc",
    "octave_k3v4",
    "octave_k3v3",
    "octave_k3v3_compact",
    "ultraquant_4bit",
    "int4_per_token_head",
    "int8_per_token_head",
    "fp8_per_token_head",
    "nvfp4",
    "nvfp4_4over6",
)
MODEL_DTYPES = ("auto", "half", "float16", "bfloat16", "float", "float32")
DEFAULT_VERSION = "0.33.0"


@dataclass(frozen=True, slots=True, order=True)
class VllmVersion:
    """A vLLM release as (major, minor, patch), with the behaviour switches the memory model needs."""

    major: int
    minor: int
    patch: int = 0

    @classmethod
    def parse(cls, text: str) -> VllmVersion:
        """'0.33', 'v0.10.1.1', '0.19.0' -> VllmVersion."""
        m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[.+\-].*)?", text.strip())
        if not m:
            raise FlagError(f"--vllm-version {text!r} is not a version like 0.33.0")
        v = cls(int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
        if v < cls(0, 4) or v > cls(0, 33, 99):
            raise FlagError(f"--vllm-version {text}: supported versions are 0.4 to 0.33 (V1 engine from 0.8)")
        return v

    @classmethod
    def from_tag(cls, text: str) -> VllmVersion | None:
        """The release an image tag or annotation names (`v0.33.0`, `0.33.0-cu130`); None for `latest`, `nightly`, a
        digest-like tag or a release outside the modelled range."""
        if not re.fullmatch(r"v?\d+\.\d+(\.\d+)?.*", text):
            return None
        try:
            return cls.parse(text)
        except FlagError:
            return None

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    @property
    def v0_engine(self) -> bool:
        """Before 0.8 the V0 engine sized the cache: blocks x block_size tokens, no KV-cache groups."""
        return self < VllmVersion(0, 8)

    @property
    def default_gpu_memory_utilization(self) -> float:
        """0.92 from 0.21, when CUDA-graph memory profiling became the default and the utilization was raised to keep
        the KV cache it left (0.33 config/cache.py). The logs: vLLM 0.19.0 with no --gpu-memory-utilization says
        "increase --gpu-memory-utilization from 0.9000 to 0.9201" (round-2 field record G039); 0.22.1, 0.23.0 and
        0.27.1 without the flag print "The current --gpu-memory-utilization=0.9200" or "Desired GPU memory
        utilization is (0.92, ...)" (G012, G014, G042). 0.9 before."""
        return 0.92 if self >= VllmVersion(0, 21) else 0.9

    @property
    def cudagraph_memory_before_kv(self) -> bool:
        """VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to 1 'since v0.21.0'."""
        return self >= VllmVersion(0, 21)

    @property
    def capacity_tokens_from_concurrency(self) -> bool:
        """ "GPU KV cache size: N tokens" is int(max_concurrency * max_model_len) (kv_cache_utils.py
        get_kv_cache_capacity) from 0.20.1; up to 0.20.0 it was num_blocks // groups * min block size, which
        differs for hybrid models (vllm-project/vllm#40691, a 0.19.0 log; fixed by #38364/#40694). Seen in the
        logs: G008 (0.19.2rc1, gemma-4-E4B) prints a block multiple; field4 J047 (0.20.0, gemma-4-31B AWQ on an
        A100, "~55k tokens" where 0.21.0 printed "~525k" from the same ~50 GB) is the old formula's 54,864
        (concurrency: 589,101); field5 K009 (0.20.1, Qwen3.6-27B at TP 2) 619,479 against 603,370 by
        concurrency and 164,800 by the old formula; H006 (0.20.2, gemma-4-26B-A4B) 984,297 = 30.04x * 32,768."""
        return self >= VllmVersion(0, 20, 1)

    @property
    def hybrid_prefix_caching_by_default(self) -> bool:
        """Prefix caching is on by default for hybrid (Mamba / linear-attention) models from 0.28.0 (vllm#50991,
        merged 2026-08-04; vllm-project/vllm-metal#645: "0.28.0 turns prefix caching on by default for hybrid
        models"); before, `default_prefix_caching = is_prefix_caching_supported and not is_hybrid`."""
        return self >= VllmVersion(0, 28)

    @property
    def mamba_align_with_prefix_caching(self) -> bool:
        """With prefix caching on, a hybrid model's Mamba state uses mamba_cache_mode "align" (two state blocks a
        request: MambaSpec.max_memory_usage_bytes) from vllm#30877 (merged 2026-01-23), the default mode once
        prefix caching is on ("Mamba cache mode is set to 'align' ... by default when prefix caching is enabled",
        a log of 2026-03-17 on discuss.vllm.ai). Taken from 0.17; 0.15-0.16 and the "all" mode of earlier
        Mamba2 prefix caching (vllm#25752) are not modelled (one state block)."""
        return self >= VllmVersion(0, 17)

    @property
    def sliding_window_counts_in_flight_batches(self) -> bool:
        """Newer releases reserve max_concurrent_batches x max_num_batched_tokens beyond the window
        (VllmConfig.max_in_flight_tokens in SlidingWindowSpec.max_admission_blocks_per_request from 0.26.0; the
        kv_cache_interface.py of 0.23.0, 0.24.0 and 0.25.0 reserve max_num_batched_tokens)."""
        return self >= VllmVersion(0, 26)

    @property
    def dsv4_slot_packing(self) -> bool:
        """DeepSeek-V4's KV cache packed as up to 0.26: padded sliding pages, a block of one slot per page size,
        concurrency in pages of the first group (memory/kv_dsv4.py; kv_cache_utils.py of 0.23.0-0.26.0, changed
        in 0.27.0)."""
        return self < VllmVersion(0, 27)

    @property
    def dsv4_tuple_blocks(self) -> bool:
        """0.22's DeepSeek-V4 block: the most layers of one page size in any group times one page of each full-MLA
        size (kv_cache_utils.py of 0.22.0 _get_kv_cache_config_packed; 0.23.0 one slot per page size)."""
        return self < VllmVersion(0, 23)


# From 0.8 the V1 engine is the default, but up to 0.9 vLLM's V1 oracle (engine/arg_utils.py
# _is_v1_supported_oracle) falls back to V0 on GPUs below compute capability 8.0 ("Compute Capability < 8.0 is not
# supported by the V1 Engine") and for encoder-decoder models such as mllama. The logs say so: gemma-3-27b-it on
# T4s with vLLM 0.8.2 prints "Initializing a V0 LLM engine" (field record F046).
V1_OLDER_GPUS_FROM = VllmVersion(0, 10)
V1_MIN_COMPUTE_CAPABILITY = (8, 0)
ENCODER_DECODER_ARCHITECTURES = ("MllamaForConditionalGeneration",)
# BERT-style encoders marked SupportsV0Only until 0.10.1 (bert.py, roberta.py of v0.9.2 / v0.10.0; memory/no_kv.py)
V0_ONLY_ENCODERS = frozenset(
    {
        "BertModel",
        "RobertaModel",
        "XLMRobertaModel",
        "BertForSequenceClassification",
        "RobertaForSequenceClassification",
        "XLMRobertaForSequenceClassification",
    }
)


V0_REMOVED_IN = VllmVersion(0, 11)  # VLLM_USE_V1=0 is ignored from here (V1 only)
V1_ENCODERS_FROM = VllmVersion(0, 10, 1)  # V0_ONLY_ENCODERS run on V1 from here
V1_OPT_IN_FROM = VllmVersion(0, 7)


def runs_v0_engine(version: VllmVersion, gpu: Gpu, architecture: str, use_v1: bool | None = None) -> bool:
    """Whether this release runs the V0 engine for this GPU and model: `use_v1` is VLLM_USE_V1 when set (0 chose V0
    until V0 was removed; 1 chose V1 where it existed), else vLLM's default engine choice."""
    if use_v1 is False and version < V0_REMOVED_IN:
        return True
    if use_v1 is True and version >= V1_OPT_IN_FROM:
        return False
    if version.v0_engine or (architecture in V0_ONLY_ENCODERS and version < V1_ENCODERS_FROM):
        return True
    if version >= V1_OLDER_GPUS_FROM:
        return False
    cc = gpu.cc_major_minor
    return (cc is not None and cc < V1_MIN_COMPUTE_CAPABILITY) or architecture in ENCODER_DECODER_ARCHITECTURES


# The V1 engine's API-server defaults by release (engine/arg_utils.py get_batch_defaults and its predecessor
# _set_default_args_v1, as vLLM's pull requests changed them): V1 became the default in 0.8.0 with 8192 batched
# tokens on H100/H200 by device name (#12369) and 1024 sequences everywhere; 0.8.4 kept 1024 sequences only on
# H100/H200 (#16158, "many people have run into OOM"); 0.8.5 chose by device memory, >= 70 GiB (#17073); 0.9.0 left
# the A100 on the small tier (#17885). The >= 160 GiB tier ("for GPUs like B200/B300 with >= 160GB memory", 16384
# batched tokens for the API server) came in 0.28.0: the 0.25.0 and 0.27.0 wheels' get_batch_defaults start at the
# >= 70 GiB tier (arg_utils.py lines 2426 and 2544), the 0.29.0 wheel's at `device_memory >= 160 * GiB_bytes` (line
# 2698), and a committed study note reads it at tag v0.28.0, lines 2582-2591, its prior top tier at v0.27.0 lines
# 2544-2549 (code index id 69027517413).
# Calibration record C066 (Qwen3-235B-A22B-FP8 on H100s, vLLM 0.9.2) shows the 1024-request sampler warm-up.
BY_NAME_FROM, SEQS_BY_NAME_FROM, BY_MEMORY_FROM = VllmVersion(0, 8), VllmVersion(0, 8, 4), VllmVersion(0, 8, 5)
A100_SMALL_FROM, LARGEST_TIER_FROM = VllmVersion(0, 9), VllmVersion(0, 28)


# The offline LLM class (`LLM(...)`, `vllm bench latency|throughput`) gets the same sequences and more batched tokens in
# every tier get_batch_defaults has (engine/arg_utils.py, 0.8.5 ... 0.27: {LLM_CLASS: 16384, OPENAI_API_SERVER: 8192}
# for >= 70 GiB, {LLM_CLASS: 8192, OPENAI_API_SERVER: 2048} below; _set_default_args_v1 of 0.8.0 had the same pairs by
# device name). The >= 160 GiB tier's LLM-class figure is not read: the API server's is kept there.
LLM_CLASS_TOKENS = {2048: 8192, 8192: 16384}


# An engine built from EngineArgs / AsyncEngineArgs directly (AsyncLLMEngine.from_engine_args, UsageContext.
# ENGINE_CONTEXT) has no entry in get_batch_defaults' tables, so SchedulerConfig's own class defaults hold
# (config/scheduler.py DEFAULT_MAX_NUM_SEQS = 128, DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048). field18 Z010: AsyncEngineArgs
# on a 96 GB RTX PRO 6000 (the API server's tier there is 8,192) asserted against max_num_batched_tokens (2048).
ENGINE_CONTEXT_DEFAULTS = (128, 2048)


def batch_defaults(
    gpu: Gpu, version: VllmVersion, *, llm_class: bool = False, engine_context: bool = False
) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) for the OpenAI API server (engine/arg_utils.py:get_batch_defaults), for
    the offline LLM class (`llm_class`, LLM_CLASS_TOKENS), or for an engine built from EngineArgs (`engine_context`,
    ENGINE_CONTEXT_DEFAULTS)."""
    if engine_context and version >= BY_NAME_FROM:
        return ENGINE_CONTEXT_DEFAULTS
    seqs, tokens = _api_batch_defaults(gpu, version)
    if llm_class and version >= BY_NAME_FROM:
        return seqs, LLM_CLASS_TOKENS.get(tokens, tokens)
    return seqs, tokens


def _api_batch_defaults(gpu: Gpu, version: VllmVersion) -> tuple[int, int]:
    if version < BY_NAME_FROM:
        return 256, 2048
    if version < BY_MEMORY_FROM:
        hopper = any(n in gpu.name.upper() for n in ("H100", "H200"))
        seqs = 1024 if hopper or version < SEQS_BY_NAME_FROM else 256
        return seqs, 8192 if hopper else 2048
    total_gib = gpu.total_bytes / GiB
    if total_gib >= 160 and version >= LARGEST_TIER_FROM:
        return 1024, 16384
    a100_small = "A100" in gpu.name.upper() and version >= A100_SMALL_FROM
    # GB10 (DGX Spark, cc 12.1) has the memory but not the compute of a large GPU: vLLM keeps it on the small tier.
    if total_gib >= 70 and not a100_small and gpu.compute_capability != "12.1":
        return 1024, 8192
    return 256, 2048


@dataclass(frozen=True, slots=True)
class EngineFlags:
    """vLLM launch flags that shape memory. None means 'vLLM's default for this version and GPU'."""

    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    enable_expert_parallel: bool = False
    quantization: str | None = None
    dtype: str = "auto"
    kv_cache_dtype: str = "auto"
    gpu_memory_utilization: float | None = None
    kv_cache_memory_bytes: int | None = None
    max_model_len: int | None = None  # -1: auto-fit
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    block_size: int | None = None
    enforce_eager: bool = False
    enable_prefix_caching: bool | None = None
    # --enable-chunked-prefill / --no-enable-chunked-prefill (None: the release's default). Without it the default
    # --max-num-batched-tokens covers --max-model-len (memory/scheduler.py), and V0 prefills whole prompts first.
    enable_chunked_prefill: bool | None = None
    cpu_offload_gb: float = 0.0
    use_v1: bool | None = None  # the VLLM_USE_V1 environment variable (None: not set)
    # V1 sampled with FlashInfer's top-k/top-p kernel (flashinfer installed, VLLM_USE_FLASHINFER_SAMPLER not 0; opt-in
    # from 0.11.1): fewer fp32 copies of the logits before 0.17. None: not known, the sort path's larger figure.
    flashinfer_sampler: bool | None = None
    language_model_only: bool = False
    limit_mm_per_prompt: str | None = None  # as written: '{"image": 0, "video": 0}' or 'image=0,video=0'
    mm_encoder_tp_mode: str | None = None  # "data": the towers replicated on every TP rank (memory/encoder_profile.py)
    # --speculative-config as written (a JSON object), the older flags folded into it (memory/spec_decode.py)
    speculative_config: str | None = None
    # --runner / --convert as written ("auto": the model's own runner, model/pooling.py); pooling drops the LM head
    runner: str = "auto"
    convert: str = "auto"
    # --enable-lora / --max-loras / --max-lora-rank: the LoRA slots load_model allocates (memory/lora.py)
    enable_lora: bool = False
    max_loras: int = 1
    max_lora_rank: int = 16
    # the CUDA-graph capture settings as written (memory/capture_config.py): --compilation-config (JSON), -O /
    # --optimization-level, --cudagraph-capture-sizes (or several --cuda-graph-sizes), --max-cudagraph-capture-size
    # (or one --cuda-graph-sizes value)
    compilation_config: str | None = None
    optimization_level: str | None = None
    cudagraph_capture_sizes: tuple[int, ...] | None = None
    max_cudagraph_capture_size: int | None = None
    # the engine is the offline LLM class (`LLM(...)`, `vllm bench latency`), not `vllm serve`: its batch defaults
    llm_class: bool = False
    # the engine is built from EngineArgs / AsyncEngineArgs directly (UsageContext.ENGINE_CONTEXT): SchedulerConfig's
    # own defaults (ENGINE_CONTEXT_DEFAULTS)
    engine_context: bool = False

    def capture_request(self) -> CaptureRequest:
        """The capture sizes, maximum and cudagraph_mode the launch asks for (memory/capture_config.py)."""
        return capture_request(
            self.compilation_config,
            self.optimization_level,
            self.cudagraph_capture_sizes,
            self.max_cudagraph_capture_size,
        )

    def pooling_runner(self) -> bool:
        """vLLM's pooling runner asked for: --runner pooling, or --convert embed / classify (config/model.py
        _get_runner_type: a conversion other than none implies the pooling runner)."""
        return self.runner == "pooling" or (self.runner == "auto" and self.convert in ("embed", "classify"))

    def validate(self) -> None:
        """vLLM's own argument checks, with vLLM-like one-line messages."""
        for name in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"):
            value = getattr(self, name)
            if value < 1:
                raise FlagError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
        u = self.gpu_memory_utilization
        if u is not None and not 0 < u <= 1:
            raise FlagError(f"--gpu-memory-utilization must be in (0, 1], got {u}")
        if self.kv_cache_dtype in KV_CACHE_DTYPES_NOT_MODELLED:
            raise FlagError(
                f"--kv-cache-dtype {self.kv_cache_dtype} is a valid vLLM choice whose page layout is not "
                f"modelled here; use one of {', '.join(KV_CACHE_DTYPES)}"
            )
        if self.kv_cache_dtype not in KV_CACHE_DTYPES:
            raise FlagError(f"--kv-cache-dtype {self.kv_cache_dtype!r}: choose from {', '.join(KV_CACHE_DTYPES)}")
        if self.dtype not in MODEL_DTYPES:
            raise FlagError(f"--dtype {self.dtype!r}: choose from {', '.join(MODEL_DTYPES)}")
        if self.max_model_len is not None and self.max_model_len != -1 and self.max_model_len < 1:
            raise FlagError(f"--max-model-len must be positive (or -1 / auto), got {self.max_model_len}")
        positive = ("max_num_seqs", "max_num_batched_tokens", "block_size", "kv_cache_memory_bytes", "max_loras")
        for name in (*positive, "max_lora_rank"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise FlagError(f"--{name.replace('_', '-')} must be positive, got {value}")
        if self.cpu_offload_gb < 0:
            raise FlagError(f"--cpu-offload-gb must not be negative, got {self.cpu_offload_gb}")
        if self.limit_mm_per_prompt is not None:
            mm_limits(self.limit_mm_per_prompt)
        parse_speculative_config(self.speculative_config)
        self.capture_request()

    def speculative(self) -> SpeculativeConfig | None:
        """The drafter --speculative-config asks for (None: no speculative decoding)."""
        return parse_speculative_config(self.speculative_config)

    def modality_limit(self, modality: str) -> int | None:
        """--limit-mm-per-prompt's count for one modality, None when not given (vLLM's default applies)."""
        return mm_limits(self.limit_mm_per_prompt).get(modality) if self.limit_mm_per_prompt else None

    def towers_skipped(self, version: VllmVersion, modalities: tuple[str, ...]) -> bool:
        """Whether vLLM neither loads nor profiles the multimodal towers: --language-model-only, or a limit of 0 for
        every modality a tower serves (models/interfaces.py _mark_tower_model, config/multimodal.py
        get_limit_per_prompt; a modality not given keeps the default 999)."""
        if version < TOWER_SKIP_FROM:
            return False
        if self.language_model_only:
            return True
        limits = mm_limits(self.limit_mm_per_prompt) if self.limit_mm_per_prompt else {}
        return bool(limits) and all(limits.get(m, 999) == 0 for m in modalities)


# _mark_tower_model skips a tower whose modalities are all limited to 0 for every model from vLLM pull request 32757
# (merged 2026-01-21, "enables MM-only and LM-only model for the rest of the models"); #22299 (August 2025) had done it
# for a few models only, which is not modelled (their towers are counted: an over-estimate). The first release after
# the merge is taken as 0.15 (not confirmed against a log).
TOWER_SKIP_FROM = VllmVersion(0, 15)


def mm_limits(text: str) -> dict[str, int]:
    """--limit-mm-per-prompt as vLLM reads it: a JSON object of counts (or {"count": n, ...} options) per modality,
    or the older 'image=0,video=0' form."""
    bad = FlagError(f"--limit-mm-per-prompt {text!r}: expected a JSON object like '{{\"image\": 0}}'")
    try:
        data = json.loads(text)
    except ValueError:
        pairs = [p.split("=", 1) for p in text.split(",") if p.strip()]
        if not pairs or any(len(p) != 2 or not p[1].strip().isdigit() for p in pairs):
            raise bad from None
        return {k.strip(): int(v) for k, v in pairs}
    if not isinstance(data, dict):
        raise bad
    limits: dict[str, int] = {}
    for key, value in data.items():
        count = value.get("count", 999) if isinstance(value, dict) else value
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise bad
        limits[str(key)] = count
    return limits
