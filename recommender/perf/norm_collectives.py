"""Collectives a norm adds under tensor parallelism (pure): MiniMax-M2's QK RMSNorm over all heads.

MiniMax-M2 normalizes each token's whole query and key (all heads at once, `qk_norm_type: per_layer`), but tensor
parallelism shards the heads, so each rank holds part of the vector: vLLM's `MiniMaxText01RMSNormTP` computes the
local mean of squares and all-reduces it across the TP group before scaling (vllm/model_executor/models/minimax_m2.py,
MiniMaxM2Attention.forward; layers/mamba/linear_attn.py, MiniMaxText01RMSNormTP). The payload is two floats a token,
so each such all-reduce costs the collective's latency, not bandwidth. Until vllm-project/vllm#31493 ("Optimize QKNorm
for MiniMax-M2/M2.1", opened 2025-12-29, after v0.13.0's tag; in v0.14.0) q_norm and k_norm ran one after the other,
two all-reduces a layer; from then `forward_qk` reduces both variances in one. The fused all-reduce + RMSNorm kernel
of vllm-project/vllm#37045 (2026-03) keeps that one collective. A per-layer benchmark of these calls (MiniMax-M2.5,
TP8, decode): three all-reduces a layer, the QK-variance one 12-51 us though it carries 32 bytes at 4 tokens.
"""

from __future__ import annotations

from recommender.memory.engine import VllmVersion
from recommender.model.spec import ModelSpec

QK_NORM_TP_TYPES = frozenset({"minimax_m2"})
QK_NORM_FUSED_FROM = VllmVersion(0, 14)


def qk_norm_collectives(model: ModelSpec, tp: int, layers: int, version: VllmVersion) -> int:
    """Latency-bound all-reduces per step that the QK norm of `layers` decoder layers adds with `tp` ranks."""
    if tp <= 1 or not model.qk_norm_over_heads or model.model_type not in QK_NORM_TP_TYPES:
        return 0
    return layers * (1 if version >= QK_NORM_FUSED_FROM else 2)
