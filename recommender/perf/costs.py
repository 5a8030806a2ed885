"""Per-GPU cost coefficients of one engine configuration, from the memory model's own facts (pure).

Weights per GPU come from memory/weights.py (every tensor, sharded by TP/EP, split by PP, as loaded), KV bytes per
token and the block pool from the startup `Explanation`, the architecture from the ModelSpec. Nothing here is
fitted: the fitted efficiencies and overheads (`PerfParams`) only scale these into seconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

from recommender.errors import InputError
from recommender.hardware import Gpu
from recommender.memory.budget import Explanation
from recommender.memory.engine import VllmVersion
from recommender.memory.kv_cache import INDEXER_QUANT_BLOCK, kv_dtype_bytes, layer_kv
from recommender.memory.weights import DTYPE_BYTES, Parallel, pp_layer_ranges, stage_tensors, tensor_bytes
from recommender.model.spec import ModelSpec, QuantSpec
from recommender.model.tensor import Tensor
from recommender.perf.norm_collectives import qk_norm_collectives
from recommender.perf.params import PerfParams
from recommender.units import cdiv

_WEIGHT_ONLY = ("gptq", "awq", "bitsandbytes", "mxfp4")
_PCIE_GBPS = {"gen3": 16.0, "gen4": 32.0, "gen5": 64.0, "gen6": 128.0}  # x16, one direction


class PerfUnavailableError(InputError):
    """The performance model lacks a figure it needs (e.g. the GPU profile has no TFLOPS)."""


@dataclass(frozen=True, slots=True)
class KvPool:
    """The KV-cache block pool one engine schedules against (from the startup prediction)."""

    num_blocks: int
    block_size: int
    full_groups: int  # KV-cache groups whose blocks grow with the whole context (full attention, MLA)
    window_groups: int  # groups of sliding-window / chunked layers
    window_blocks: int  # blocks a window group needs at most per request
    state_groups: int  # Mamba / linear-attention groups: one state block per request
    # tokens a block holds in the full-attention / window groups when vLLM scaled them up to unify page sizes
    # (kv_cache_planning.py unify_kv_cache_spec_page_size); 0: `block_size`
    full_block_size: int = 0
    window_block_size: int = 0

    @property
    def full_bs(self) -> int:
        return self.full_block_size or self.block_size

    @property
    def window_bs(self) -> int:
        return self.window_block_size or self.block_size


@dataclass(frozen=True, slots=True)
class EngineFacts:
    """What one engine moves and computes per GPU (its slowest pipeline stage): physics only, nothing fitted."""

    tp: int
    pp: int
    dp: int
    layers: int
    moe_layers: int
    dense_bytes: float  # weights read every step: attention, dense MLP, shared experts, router, mixers, norms
    lm_head_bytes: float  # read when the step samples
    expert_bytes: float  # every routed-expert weight held by this GPU
    num_experts: int
    top_k: int
    dense_flops: float  # per token
    expert_flops: float  # per token (top_k experts, this GPU's share)
    lm_head_flops: float  # per sampled token
    kv_full: float  # KV bytes per context token over full-attention / MLA layers
    kv_window: float  # the same over sliding-window / chunked layers
    window: int  # their window (tokens)
    state_bytes: float  # recurrent state read and written per sequence and step (Mamba, DeltaNet)
    attn_flops_full: float  # per (query, key) pair over full layers
    attn_flops_window: float  # per pair over window layers
    attn_flops_prefill: float  # per pair of a prefill chunk over full layers (MLA prefills unabsorbed)
    allreduces: int  # per step (two per layer with TP > 1)
    allreduce_bytes: float  # per token and all-reduce
    moe_exchanges: int  # per step: gather + scatter per MoE layer with data parallelism
    exchange_bytes: float  # per local token and exchange (the DP group's copies of its hidden state)
    expert_ranks: int  # GPUs the experts are spread over as whole experts (expert parallelism), else 1
    peak_dense: float  # datasheet flop/s of the linear layers in their compute kind
    peak_expert: float  # the same for the routed experts
    peak_attention: float  # 16-bit flop/s
    dense_weight_only: bool  # the linear layers dequantize (W4A16, W8A16): dequant efficiency applies
    expert_weight_only: bool
    fp8_experts: bool  # the routed experts run the W8A8 FP8 fused-MoE kernels
    triton_attention: bool  # vLLM's Triton attention backend (triton_attention_backend)
    hbm_bandwidth: float  # datasheet bytes/s
    link_one_way: float  # datasheet bytes/s of the intra-node link, one direction
    nvlink: bool
    pool: KvPool
    max_num_seqs: int
    max_num_batched_tokens: int
    max_model_len: int
    enforce_eager: bool = False  # no CUDA graphs: every kernel of every layer launched each step
    trtllm_moe: bool = False  # the routed experts run FlashInfer's TRT-LLM MoE kernels (trtllm_moe_path)
    v0_prefill_first: bool = False  # the V0 engine without chunked prefill: prefill-only steps first (replay.py)
    frontend_latency: bool = True  # the release's front end adds request_latency_ms to every TTFT (V1 from 0.10)
    output_overlapped: bool = False  # V1 before 0.10: per-sequence output work beside the engine core (step.py)
    norm_collectives: int = 0  # latency-bound all-reduces per step from norms over TP-sharded heads (norm_collectives)


@dataclass(frozen=True, slots=True)
class EngineCosts:
    """An engine's facts turned into rates by the fitted efficiencies (flat: the step time reads it often)."""

    tp: int
    pp: int
    dp: int
    layers: int
    dense_bytes: float
    lm_head_bytes: float
    expert_bytes: float
    num_experts: int
    top_k: int
    dense_flops: float
    expert_flops: float
    lm_head_flops: float
    kv_full: float
    kv_window: float
    window: int
    state_bytes: float
    attn_flops_full: float
    attn_flops_window: float
    attn_flops_prefill: float
    allreduces: int
    allreduce_bytes: float
    moe_exchanges: int
    exchange_bytes: float
    expert_ranks: int
    bandwidth: float  # achieved bytes/s
    dense_compute: float  # achieved flop/s of the linear layers
    expert_bandwidth: float
    expert_compute: float
    attention_compute: float
    link_bandwidth: float  # achieved bytes/s of the all-reduce
    link_latency: float  # seconds per all-reduce
    layer_overhead: float  # GPU seconds per step that do not shrink with the batch (kernel latencies, all layers)
    eager_launch: float  # CPU seconds per step launching every layer's kernels without CUDA graphs (0 with graphs)
    step_overhead: float  # CPU seconds per step: scheduler, input preparation, launch
    seq_overhead: float  # CPU seconds per scheduled sequence and step
    async_scheduling: bool  # the CPU part overlaps the GPU part (vLLM --async-scheduling)
    request_overhead: float  # seconds per request at the API server, one request at a time
    request_latency: float  # seconds every request waits before the engine sees it, in parallel
    pool: KvPool
    max_num_seqs: int
    max_num_batched_tokens: int
    max_model_len: int
    v0_prefill_first: bool = False
    output_overlapped: bool = False
    norm_collectives: int = 0


def compute_kind(quant: QuantSpec | None, gpu: Gpu) -> str:
    """How the linear layers compute: 'bf16', 'fp8' (W8A8 on sm >= 89), 'int8', 'fp4', or 'w-only' (dequant).
    NVFP4 without FP4 tensor cores runs Marlin W4A16, bf16 activations ("Weight-only FP4 compression will be used
    leveraging the Marlin kernel", model_executor/kernels/linear/nvfp4/marlin.py in vLLM 0.33), not FP8."""
    if quant is None:
        return "bf16"
    method = quant.method
    if method in _WEIGHT_ONLY or "A16" in quant.label:
        return "w-only"
    if method == "fp8":
        return "fp8" if gpu.fp8 else "w-only"
    if method == "int8":
        return "int8"
    if method == "nvfp4":
        return "fp4" if gpu.fp4 else "w-only"
    if method == "modelopt-mixed":  # FP8 and NVFP4 layers: the FP8 ones compute in FP8 where the card has it
        return "fp4" if gpu.fp4 else ("fp8" if gpu.fp8 else "w-only")
    return "bf16"


_SIXTEEN_BIT = {"bfloat16": "bf16", "float16": "fp16"}


def peak_flops(gpu: Gpu, kind: str, dtype: str) -> float:
    """Dense tensor-core peak in flop/s (datasheet figures of profiles/gpus) for a compute kind: FP8, INT8 and FP4
    at their own rates; 'bf16' and 'w-only' (dequantized to the activations) at the rate of `dtype`, the dtype the
    model runs in (float16 on T4/V100). BF16 and FP16 with FP32 accumulate share one tensor-core rate on every card
    that has both (tests/test_gpus.py), so either stands in for the other. A missing figure is a one-line error."""
    if kind in ("fp8", "int8", "fp4"):
        rates = {kind: getattr(gpu, f"{kind}_tflops")}
    elif dtype in _SIXTEEN_BIT:
        own = _SIXTEEN_BIT[dtype]
        other = "fp16" if own == "bf16" else "bf16"
        rates = {own: getattr(gpu, f"{own}_tflops"), other: getattr(gpu, f"{other}_tflops")}
    else:
        raise PerfUnavailableError(
            f"the performance model has no {dtype} tensor rate: it covers 16-bit, FP8, INT8 and FP4 compute "
            "(use --dtype auto, bfloat16 or float16)"
        )
    tflops = next((v for v in rates.values() if v), None)
    if tflops is None:
        wanted = next(iter(rates))
        raise PerfUnavailableError(
            f"{gpu.name} has no dense {wanted.upper()} tensor rate in its profile (dense_tflops.{wanted}): "
            "the performance model cannot estimate compute time on it"
        )
    return float(tflops) * 1e12


def link_one_way(gpu: Gpu) -> float:
    """Datasheet bytes/s of the GPU's intra-node link in one direction (NVLink figures are both directions)."""
    text = gpu.interconnect.lower()
    m = re.search(r"(\d+(?:\.\d+)?)\s*gb/s", text)
    if gpu.nvlink:
        return (float(m.group(1)) / 2 if m else 150.0) * 1e9
    gen = re.search(r"pcie\s*(gen\s*\d)(?:\s*x(\d+))?", text)
    lanes = int(gen.group(2)) if gen and gen.group(2) else 16  # "PCIe Gen4 x8" (A2, RTX 4060 Ti): half the x16 rate
    return _PCIE_GBPS.get(gen.group(1).replace(" ", "") if gen else "gen4", 32.0) * lanes / 16 * 1e9


def _shard_factor(t: Tensor, tp: int, ranks: int) -> float:
    """Fraction of a tensor's elements one rank holds (for FLOPs; bytes come from memory/weights.py)."""
    if t.shard in ("column", "row", "head", "vocab"):
        return 1 / tp
    if t.shard == "kv":
        return max(1, t.heads // tp) / max(t.heads, 1)
    if t.shard.startswith("expert"):
        return 1 / ranks
    return 1.0


TOKEN_EMBEDDING = "model.embed_tokens"  # the table a tied lm_head reuses (ParallelLMHead.tie_weights)


def _weights(model: ModelSpec, e: Explanation, quant: QuantSpec | None, ep: bool) -> dict[str, float]:
    """Bytes and parameters per GPU by role: the layers of the stage with the most layers, the lm_head of the last
    stage (the tied token embedding when there is no separate head; otherwise the embedding is a gather, not a
    stream). The other embedding tables are gathers too, one row per token: positions (GPT-2, OPT), token types
    (BERT) and Gemma 3n / 4's per-layer inputs (gemma4.py get_per_layer_inputs looks up embed_tokens_per_layer; the
    lm_head ties to embed_tokens alone)."""
    return dict(_weights_cached(model, Parallel(tp=e.tp, pp=e.pp, dp=e.dp, expert_parallel=ep), quant, e.weight_dtype))


@lru_cache(maxsize=256)
def _weights_cached(
    model: ModelSpec, par: Parallel, quant: QuantSpec | None, weight_dtype: str
) -> tuple[tuple[str, float], ...]:
    ranges = pp_layer_ranges(model.num_layers, par.pp)
    stage = max(range(par.pp), key=lambda k: (len(ranges[k]), k))
    dtype_bytes = DTYPE_BYTES[weight_dtype]
    out = dict.fromkeys(("dense_b", "dense_p", "expert_b", "expert_p", "head_b", "head_p"), 0.0)
    head_group = "embedding" if model.tie_word_embeddings else "lm_head"
    tensors = [t for t in stage_tensors(model, par, stage) if t.layer is not None and t.group != "vision"]
    tensors += [
        t
        for t in stage_tensors(model, par, par.pp - 1)
        if t.layer is None and t.group == head_group and (head_group == "lm_head" or t.module == TOKEN_EMBEDDING)
    ]
    for t in tensors:
        role = "head" if t.layer is None else "expert" if t.group == "experts" else "dense"
        out[f"{role}_b"] += tensor_bytes(model, t, par, dtype_bytes, quant)
        out[f"{role}_p"] += t.numel * _shard_factor(t, par.tp, par.tp * par.dp)
    return tuple(out.items())


def _attention(model: ModelSpec, e: Explanation, layers: range, fp8_ratio: float) -> dict[str, float]:
    """KV bytes per context token, FLOPs per (query, key) pair and state bytes, over the stage's layers.

    Sparse MLA (DeepSeek-V3.2, GLM-5) attends to the `index_topk` keys its indexer picks: the latent part is costed
    as a window of topk tokens. The indexer itself scores every context token: its K cache is read whole and its
    logits cost n_heads x head_dim x 2 FLOPs per pair on every TP rank (replicated, "no tensor parallel, just
    replicated" in deepseek_v2.py Indexer) at the FP8 rate (`fp8_ratio`: 16-bit peak / FP8 peak).

    Dense MLA decodes absorbed (MQA over the 576-wide latent, 512-wide values) but prefills unabsorbed: vLLM's
    forward_mha up-projects the latent and runs MHA with q.k over qk_nope + qk_rope (192) and p.v over v_head_dim
    (128) per head ("Compute Friendly Approach", model_executor/layers/attention/mla_attention.py), so a prefill
    pair costs 320 / 1088 of a decode pair."""
    dtype_bytes = DTYPE_BYTES[e.weight_dtype]
    kv_bytes = kv_dtype_bytes(e.kv_cache_dtype, dtype_bytes)
    out = dict.fromkeys(("kv_full", "kv_window", "state", "fl_full", "fl_window", "fl_prefill"), 0.0)
    heads = max(1, model.num_heads // e.tp)
    indexer = model.mla.indexer if model.mla is not None else None
    for i in layers:
        spec = layer_kv(model, _kv_source(model, i), tp=e.tp, block_size=16, kv_bytes=kv_bytes, model_bytes=dtype_bytes)
        if spec is None:
            continue
        if spec.kind == "mamba":
            out["state"] += 2 * spec.page_bytes  # read and written every step
            continue
        mla = model.mla
        if spec.kind == "mla" and mla is not None:
            width = 2 * mla.kv_lora_rank + mla.qk_rope_head_dim  # absorbed: q.k over 576, p.v over 512
            prefill_width = mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim
        else:
            width = prefill_width = model.head_dim + model.v_head_dim
        flops = 2.0 * heads * width
        key = "window" if spec.kind in ("sliding", "chunked") else "full"
        if indexer is not None and i in indexer.layers:
            index_bytes = indexer.head_dim + indexer.head_dim // INDEXER_QUANT_BLOCK * 4
            out["kv_full"] += index_bytes
            out["fl_full"] += 2.0 * indexer.n_heads * indexer.head_dim * fp8_ratio
            out["fl_prefill"] += 2.0 * indexer.n_heads * indexer.head_dim * fp8_ratio
            out["kv_window"] += spec.bytes_per_token - index_bytes
            out["fl_window"] += flops
            continue
        out[f"kv_{key}"] += spec.bytes_per_token
        out[f"fl_{key}"] += flops
        if key == "full":
            out["fl_prefill"] += 2.0 * heads * prefill_width
    return out


def _kv_source(model: ModelSpec, i: int) -> int:
    """The layer whose KV cache layer i attends over: itself, or for a KV-sharing layer (Gemma 3n / 4 E models'
    last num_kv_shared_layers) the last non-shared layer of the same attention type (gemma4.py Gemma4Attention
    kv_sharing_target_layer_name). A sharing layer stores nothing but reads its target's cache every step."""
    first = model.kv_shared_from
    if first is None or i < first or model.encoder_only:
        return i
    kind = model.layer_kinds[i]
    return next((j for j in range(first - 1, -1, -1) if model.layer_kinds[j] == kind), i)


def _pool(e: Explanation) -> KvPool:
    layout = e.stage.layout if e.stage is not None else None
    if layout is None or not layout.groups:
        return KvPool(e.num_gpu_blocks, e.block_size, 0, 0, 0, 0)
    full = [g for g in layout.groups if g.kind in ("full", "mla")]
    window = [g for g in layout.groups if g.kind in ("sliding", "chunked")]
    state = sum(1 for g in layout.groups if g.kind == "mamba")
    bs = layout.block_size
    full_bs = (full[0].block_size or bs) if full else bs
    window_bs = (window[0].block_size or bs) if window else bs
    w = window[0].window or e.max_model_len if window else 0
    cap = cdiv(min(w - 1 + e.in_flight_tokens, e.max_model_len), window_bs) + 1 if window else 0
    return KvPool(e.num_gpu_blocks, bs, len(full), len(window), cap, state, full_bs, window_bs)


TRTLLM_MOE_FROM = VllmVersion(0, 15)
_TRTLLM_MOE_METHODS = (None, "fp8", "nvfp4", "mxfp4", "modelopt-mixed")


def trtllm_moe_path(model: ModelSpec, gpu: Gpu, quant: QuantSpec | None, version: VllmVersion) -> bool:
    """Whether vLLM runs the routed experts on FlashInfer's TRT-LLM MoE kernels (one fused routing + grouped-GEMM
    + finalize launch sequence) rather than the Triton fused-MoE kernels the fit's vLLM 0.10-0.11 rows ran.

    vLLM 0.33's MoE oracles put FLASHINFER_TRTLLM first for 16-bit, FP8, NVFP4 and MXFP4 experts on CUDA
    (model_executor/layers/fused_moe/oracle/unquantized.py, fp8.py, nvfp4.py, mxfp4.py) and those kernels run on the
    sm100 family only (datacenter Blackwell: B200, B300, GB200; not sm120 GeForce / RTX PRO); Hopper moves them to
    the back (unquantized) or prefers Triton for block FP8 with TP. The priority oracle arrived with vLLM 0.15.0
    (vllm-project/vllm#32414, "[MoE Refactor] Oracle Select FP8+NVFP4 Kernels In Priority", the v0.15.0 regression
    named in #33417). Weight-only INT4/INT8 experts (GPTQ, AWQ, compressed-tensors WNA16) run Marlin, not these."""
    cc = gpu.cc_major_minor
    if not model.is_moe or cc is None or cc[0] != 10 or gpu.vendor.lower() != "nvidia":
        return False
    method = quant.method if quant is not None else None
    return version >= TRTLLM_MOE_FROM and method in _TRTLLM_MOE_METHODS


def _compute_facts(model: ModelSpec, gpu: Gpu, e: Explanation, quant: QuantSpec | None) -> dict[str, Any]:
    """Peaks and kernel kinds: the dtype each part computes in and the attention backend vLLM picks."""
    kind = compute_kind(quant, gpu)
    dense_kind = "bf16" if quant is not None and quant.method == "mxfp4" else kind
    return {
        "peak_dense": peak_flops(gpu, dense_kind, e.weight_dtype),
        "peak_expert": peak_flops(gpu, kind, e.weight_dtype),
        "peak_attention": peak_flops(gpu, "bf16", e.weight_dtype),
        "dense_weight_only": dense_kind == "w-only",
        "expert_weight_only": kind == "w-only",
        "fp8_experts": kind == "fp8" and model.is_moe,
        "trtllm_moe": trtllm_moe_path(model, gpu, quant, VllmVersion.parse(e.vllm_version)),
        "triton_attention": triton_attention_backend(model, gpu),
    }


def triton_attention_backend(model: ModelSpec, gpu: Gpu) -> bool:
    """Whether vLLM serves this model's attention with its Triton backend on this GPU rather than FlashAttention.

    On NVIDIA GPUs below compute capability 9.0 only FlashAttention 2 exists, and it serves neither attention sinks
    ("sink not supported on compute capability < 9.0", v1/attention/backends/flash_attn.py in vLLM 0.33) nor
    layers of different head sizes in one model: Gemma 4 (256-wide sliding, 512-wide global heads) gets FA4 where
    FA4 is built and `TRITON_ATTN` for every layer elsewhere ("FA4 not available, forcing TRITON_ATTN backend",
    Gemma4Config in model_executor/models/config.py); FA4 needs sm 9.0 or newer."""
    cc = gpu.cc_major_minor
    if gpu.vendor.lower() != "nvidia" or cc is None or cc >= (9, 0):
        return False
    return model.attention_sinks != "none" or len(set(model.layer_head_dim)) > 1


def engine_facts(
    model: ModelSpec,
    gpu: Gpu,
    e: Explanation,
    *,
    quant: QuantSpec | None,
    expert_parallel: bool = False,
    enforce_eager: bool = False,
) -> EngineFacts:
    """The facts of one configuration whose startup `explain` predicted `e`."""
    if not gpu.bandwidth_gbps:
        raise PerfUnavailableError(
            f"{gpu.name} has no memory-bandwidth figure (bandwidth_gbps): the performance model needs a catalogued "
            "GPU (--gpu, see `vllm-plan gpus`)"
        )
    w = _weights(model, e, quant, expert_parallel)
    layers = max(pp_layer_ranges(model.num_layers, e.pp), key=len)
    compute = _compute_facts(model, gpu, e, quant)
    fp8_peak = float(gpu.fp8_tflops or 0) * 1e12
    att = _attention(model, e, layers, compute["peak_attention"] / fp8_peak if fp8_peak else 1.0)
    moe = model.moe if model.is_moe else None
    moe_layers = sum(1 for i in layers if model.mlp_kinds[i] == "moe")
    return EngineFacts(
        tp=e.tp,
        pp=e.pp,
        dp=e.dp,
        layers=len(layers),
        moe_layers=moe_layers if moe else 0,
        dense_bytes=w["dense_b"],
        lm_head_bytes=w["head_b"],
        expert_bytes=w["expert_b"],
        num_experts=moe.num_experts if moe else 0,
        top_k=moe.top_k if moe else 0,
        dense_flops=2 * w["dense_p"],
        expert_flops=2 * w["expert_p"] * (moe.top_k / moe.num_experts if moe else 0.0),
        lm_head_flops=2 * w["head_p"],
        kv_full=att["kv_full"],
        kv_window=att["kv_window"],
        window=_window(model),
        state_bytes=att["state"],
        attn_flops_full=att["fl_full"],
        attn_flops_window=att["fl_window"],
        attn_flops_prefill=att["fl_prefill"],
        **_comm_facts(model, e, moe_layers if moe else 0),
        expert_ranks=e.tp * e.dp if moe and expert_parallel else 1,
        **compute,
        hbm_bandwidth=gpu.bandwidth_gbps * 1e9,
        link_one_way=link_one_way(gpu),
        nvlink=gpu.nvlink,
        pool=_pool(e),
        max_num_seqs=e.max_num_seqs,
        max_num_batched_tokens=e.max_num_batched_tokens,
        max_model_len=e.max_model_len,
        enforce_eager=enforce_eager,
        norm_collectives=qk_norm_collectives(model, e.tp, len(layers), VllmVersion.parse(e.vllm_version)),
    )


def _window(model: ModelSpec) -> int:
    """Tokens a window layer reads: the sliding window or attention chunk, or sparse MLA's index_topk."""
    indexer = model.mla.indexer if model.mla is not None else None
    return model.sliding_window or model.attention_chunk_size or (indexer.topk if indexer else 0)


def _comm_facts(model: ModelSpec, e: Explanation, moe_layers: int) -> dict[str, Any]:
    """Two all-reduces per layer with TP (attention, MLP). Expert parallelism inside the TP group needs nothing
    more: every rank holds every token after attention and the MoE output is all-reduced as with TP. With data
    parallelism the MoE layer gathers every DP rank's tokens and scatters the results back (vLLM's
    allgather_reducescatter all2all backend): two exchanges of the DP group's tokens per MoE layer."""
    layers = max(pp_layer_ranges(model.num_layers, e.pp), key=len)
    return {
        "allreduces": 2 * len(layers) if e.tp > 1 else 0,
        "allreduce_bytes": model.hidden_size * 2 * 2 * (e.tp - 1) / e.tp,
        "moe_exchanges": 2 * moe_layers if e.dp > 1 else 0,
        "exchange_bytes": model.hidden_size * 2 * e.dp * (e.dp - 1) / e.dp,
    }


# NCCL's ring all-reduce passes 2 (n - 1) hops; over PCIe each adds its latency. vLLM's custom all-reduce (one shot
# between two GPUs) is off on more than two PCIe-only GPUs ("Custom allreduce is disabled because it's not supported
# on more than two PCIe-only GPUs", distributed/device_communicators/custom_all_reduce.py in vLLM 0.33) and on
# boards without peer-to-peer access ("platform lacks GPU P2P capability": GeForce RTX 4090s under NVIDIA's driver),
# so those all-reduces are NCCL's. 1.83 us a hop: 8 x RTX 4090 all-reduce 8 bytes in 42 us (NVIDIA/nccl#1530)
# against the two-GPU pcie_allreduce_latency_us (20 us): (42 - 20) / (14 - 2) hops.
PCIE_RING_HOP_US = 1.83


def pcie_allreduce_latency_us(params: PerfParams, tp: int) -> float:
    """Fixed cost of one all-reduce over PCIe among `tp` GPUs: the two-GPU latency plus the ring's extra hops."""
    return params.pcie_allreduce_latency_us + PCIE_RING_HOP_US * 2 * max(0, tp - 2)


# The W8A8 FP8 fused-MoE kernels' share of the 16-bit kernels' roofline, measured per card where one release served
# one MoE checkpoint in both BF16 and FP8 on it; other cards keep params.fp8_moe_efficiency (0.55, from H200 and B200
# runs, where FP8 experts decode barely faster than BF16). GB10 (sm_121): vLLM 0.26.0 runs block-FP8 experts on the
# Triton fused-MoE kernels there (model_executor/layers/fused_moe/oracle/fp8.py in 0.33: FLASHINFER_TRTLLM takes only
# the sm_100 family, FLASHINFER_CUTLASS block FP8 only sm_90, VLLM_CUTLASS only per-tensor/per-channel scales), the
# kernel Hopper also runs; at 273 GB/s its scale and quantization work hides under the weight stream.
# djangodevreng/dgx-spark-benchmarks (commit 435255228956326a55b5d21de3d69c1f5aee046d,
# results/qwen-3.6/qwen-3.6-35b-a3b/{bf16,fp8}/03-long-output.md, llama-benchy 256 in / 4,096 out, vLLM 0.26.0):
# Qwen3.6-35B-A3B decodes 30.35 / 14.26 / 9.97 tok/s a request in BF16 and 51.93 / 24.24 / 17.89 in FP8 at 1 / 5 /
# 10 in flight, FP8 taking 0.58 / 0.59 / 0.56 of BF16's time; with this model's BF16 step at 5 and 10 sequences
# that ratio needs an FP8 efficiency of 0.97 / 1.00 (at 1 sequence the fixed parts dominate: 1.49). Not from the
# eighth blind set's rows of the same repository (tests 08 and 10).
FP8_MOE_EFFICIENCY_MEASURED: dict[str, float] = {"gb10": 1.0}


def fp8_moe_efficiency(params: PerfParams, gpu: Gpu) -> float:
    """The FP8 fused-MoE efficiency on this card: measured where a same-release BF16/FP8 pair exists, else fitted."""
    return FP8_MOE_EFFICIENCY_MEASURED.get(gpu.key, params.fp8_moe_efficiency)


def triton_moe_path(f: EngineFacts, gpu: Gpu) -> bool:
    """Whether the routed experts run vLLM's Triton fused-MoE kernels (model_executor/layers/fused_moe/fused_moe.py,
    fused_experts): NVIDIA GPUs with 16-bit or W8A8 FP8 experts off the TRT-LLM path. Weight-only experts (GPTQ, AWQ,
    MXFP4 or FP8 without FP8 tensor cores) run Marlin's MoE kernels, AMD GPUs ROCm's: no kernel benchmark here."""
    return f.num_experts > 0 and gpu.vendor.lower() == "nvidia" and not f.trtllm_moe and not f.expert_weight_only


def _moe_layer_overhead_us(f: EngineFacts, gpu: Gpu, params: PerfParams, family_overhead: float) -> float:
    """The fixed cost of one MoE layer a step: measured per kernel where a benchmark prices it, else fitted."""
    if f.trtllm_moe:
        return params.trtllm_moe_layer_overhead_us
    if triton_moe_path(f, gpu):
        return params.triton_moe_layer_overhead_us
    return params.moe_layer_overhead_us * family_overhead


_SHARED = tuple(f.name for f in fields(EngineFacts) if f.name in {g.name for g in fields(EngineCosts)})


def engine_costs(f: EngineFacts, gpu: Gpu, params: PerfParams, *, async_scheduling: bool = False) -> EngineCosts:
    """Rates from facts: datasheet figures times the fitted efficiencies of this GPU's family (cheap)."""
    eff = params.efficiency_for(gpu)
    bw = f.hbm_bandwidth * params.bandwidth_fraction(gpu)  # capped by the card's measured streaming rate
    sustained = eff.compute * params.sustained.fraction(gpu)  # of the datasheet peak, before the kernels' own
    comp = params.compute_efficiency * sustained
    dequant = params.dequant_efficiency
    dense = f.peak_dense * comp * (dequant if f.dense_weight_only else 1.0)
    moe = params.moe_efficiency * (fp8_moe_efficiency(params, gpu) if f.fp8_experts else 1.0)
    expert = f.peak_expert * comp * (dequant if f.expert_weight_only else 1.0) * moe
    # FlashInfer's TRT-LLM MoE kernels (trtllm_moe_path): their own streaming rate and fixed cost, measured on
    # Blackwell (params.py), in place of the Triton figures the fit set's rows imply
    expert_bw = f.hbm_bandwidth * params.trtllm_moe_bandwidth_efficiency if f.trtllm_moe else bw * moe
    moe_fixed = _moe_layer_overhead_us(f, gpu, params, eff.overhead)
    attention = params.triton_attention_efficiency if f.triton_attention else params.attention_efficiency
    latency = params.allreduce_latency_us if f.nvlink else pcie_allreduce_latency_us(params, f.tp)
    link = params.link_efficiency if f.nvlink else params.pcie_link_efficiency
    over = eff.overhead
    eager = f.layers * params.eager_layer_overhead_us if f.enforce_eager else 0.0
    return EngineCosts(
        **{name: getattr(f, name) for name in _SHARED},
        bandwidth=bw,
        dense_compute=dense,
        expert_bandwidth=expert_bw,
        expert_compute=expert,
        attention_compute=f.peak_attention * attention * sustained,
        link_bandwidth=f.link_one_way * link,
        link_latency=latency * 1e-6,
        layer_overhead=(f.layers * params.layer_overhead_us * over + f.moe_layers * moe_fixed) * 1e-6,
        eager_launch=eager * 1e-6,  # a CPU cost: not scaled by the GPU family
        step_overhead=params.step_overhead_ms * 1e-3 * over,
        seq_overhead=params.seq_overhead_us * 1e-6 * over,
        async_scheduling=async_scheduling,
        request_overhead=params.request_overhead_ms * 1e-3,
        request_latency=params.request_latency_ms * 1e-3 if f.frontend_latency else 0.0,
    )
