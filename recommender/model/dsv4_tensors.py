"""DeepSeek-V4's attention, hyper-connection and hash-routing tensors as vLLM 0.33 allocates them (pure).

vllm/models/deepseek_v4/attention.py DeepseekV4Attention: fused_wqa_wkv (replicated: disable_tp), q_norm, kv_norm,
wq_b (column), the grouped output LoRA wo_a (column, o_groups x o_lora_rank rows) and wo_b (row), attn_sink (one
per head); a compressed layer's DeepseekCompressor (compressor.py: fused_wkv_wgate 2 x coff x head_dim rows and ape,
never quantized, replicated; a norm); a C4 layer's DeepseekV4Indexer (wq_b quantized and weights_proj not, both
replicated, and its own compressor of head 128). nvidia/model.py DeepseekV4DecoderLayer: hc_attn_fn / hc_ffn_fn
((2 + hc_mult) x hc_mult rows of hc_mult x hidden) with their bases and scales; the first num_hash_layers MoE gates
hold a [vocab, top_k] token-to-expert table; the model's hc_head_fn / base / scale. The hyper-connection and ape
parameters are float32 in vLLM and counted here at the model dtype (0.07 GiB low for V4-Flash, all replicas).
"""

from __future__ import annotations

from recommender.model.spec import CompressedAttentionSpec, ModelSpec
from recommender.model.tensor import Tensor


def _spec(s: ModelSpec) -> CompressedAttentionSpec:
    assert s.compressed_attention is not None
    return s.compressed_attention


def _compressor(p: str, i: int, h: int, ratio: int, head_dim: int) -> list[Tensor]:
    coff = 2 if ratio == 4 else 1
    return [
        Tensor(f"{p}.fused_wkv_wgate", "attention", 2 * coff * head_dim, h, "replicated", i, linear=False),
        Tensor(f"{p}.ape", "attention", ratio, coff * head_dim, "replicated", i, linear=False),
        Tensor(f"{p}.norm", "norms", head_dim, 1, "replicated", i, linear=False),
    ]


def attention_tensors(s: ModelSpec, i: int) -> list[Tensor]:
    """One decoder layer's attention (its compressor and indexer included)."""
    c, h, heads = _spec(s), s.hidden_size, s.num_heads
    p, ratio = f"model.layers.{i}.attn", c.ratios[i]
    out = [
        Tensor(f"{p}.fused_wqa_wkv", "attention", c.q_lora_rank + c.head_dim, h, "replicated", i),
        Tensor(f"{p}.q_norm", "norms", c.q_lora_rank, 1, "replicated", i, linear=False),
        Tensor(f"{p}.kv_norm", "norms", c.head_dim, 1, "replicated", i, linear=False),
        Tensor(f"{p}.wq_b", "attention", heads * c.head_dim, c.q_lora_rank, "column", i),
        Tensor(f"{p}.wo_a", "attention", c.o_groups * c.o_lora_rank, heads * c.head_dim // c.o_groups, "column", i),
        Tensor(f"{p}.wo_b", "attention", h, c.o_groups * c.o_lora_rank, "row", i),
        Tensor(f"{p}.attn_sink", "attention", heads, 1, "head", i, linear=False, heads=heads),
    ]
    if ratio > 1:
        out += _compressor(f"{p}.compressor", i, h, ratio, c.head_dim)
    if ratio == 4:
        q = f"{p}.indexer"
        out += [
            Tensor(f"{q}.wq_b", "attention", c.index_n_heads * c.index_head_dim, c.q_lora_rank, "replicated", i),
            Tensor(f"{q}.weights_proj", "attention", c.index_n_heads, h, "replicated", i, linear=False),
            *_compressor(f"{q}.compressor", i, h, 4, c.index_head_dim),
        ]
    return out


def layer_extra_tensors(s: ModelSpec, i: int) -> list[Tensor]:
    """A decoder layer's hyper-connection mixers and, on the hash layers, the gate's token-to-expert table."""
    c, h, p = _spec(s), s.hidden_size, f"model.layers.{i}"
    mix = (2 + c.hc_mult) * c.hc_mult
    out = []
    if c.hc_mult:
        out += [
            Tensor(f"{p}.hc_fn", "norms", 2 * mix, c.hc_mult * h, "replicated", i, linear=False),
            Tensor(f"{p}.hc_base_scale", "norms", 2 * (mix + 3), 1, "replicated", i, linear=False),
        ]
    if i < c.hash_layers and s.moe is not None:
        out.append(Tensor(f"{p}.ffn.gate.tid2eid", "router", s.vocab_size, s.moe.top_k, "replicated", i, linear=False))
    return out


def head_tensors(s: ModelSpec) -> list[Tensor]:
    """The model's hc_head_fn, hc_head_base and hc_head_scale."""
    c, h = _spec(s), s.hidden_size
    if not c.hc_mult:
        return []
    return [Tensor("model.hc_head", "norms", c.hc_mult, c.hc_mult * h + 2, "replicated", None, linear=False)]
