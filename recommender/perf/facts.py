"""What one engine configuration moves and computes per GPU, from the memory model's own facts (pure).

Weights per GPU come from memory/weights.py (every tensor, sharded by TP/EP, split by PP, as loaded), KV bytes per
token and the block pool from the startup `Explanation`, the architecture from the ModelSpec. Nothing here is
fitted: costs.py turns these facts into rates with the fitted `PerfParams`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from recommender.hardware import Gpu
from recommender.memory.budget import Explanation
from recommender.memory.engine import VllmVersion
from recommender.memory.kv_cache import INDEXER_QUANT_BLOCK, kv_dtype_bytes, layer_kv
from recommender.memory.weights import DTYPE_BYTES, Parallel, pp_layer_ranges, stage_tensors, tensor_bytes
from recommender.model.spec import ModelSpec, QuantSpec
from recommender.model.tensor import Tensor
from recommender.perf.kernels import (
    PerfUnavailableError,
    compute_kind,
    link_one_way,
    peak_flops,
    triton_attention_backend,
    trtllm_moe_path,
)
from recommender.perf.norm_collectives import qk_norm_collectives
from recommender.units import cdiv


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
