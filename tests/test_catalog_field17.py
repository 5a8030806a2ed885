"""Catalog entries round 17 needed (benchmarks/data/calibration/FIELD17-FINDINGS.md): cyankiwi's Qwen3.8-27B
AWQ-BF16-INT4 (reconstructed: the AWQ-INT4 entry with the Gated DeltaNet blocks kept in bf16, as the 256 quantized
modules read from its tensors imply) and TheBloke/Mistral-7B-v0.1-AWQ (its config.json and quant_config.json)."""

from __future__ import annotations

from benchmarks.fidelity import FIELD17, compare, load_records
from recommender.sources.resolve import resolve_model

COMPARED = {c.record["id"]: c for c in (compare(r) for r in load_records(*FIELD17)) if c is not None}


def test_bf16_int4_keeps_the_deltanet_blocks_in_bf16() -> None:
    bf16_int4 = resolve_model("cyankiwi/Qwen3.8-27B-AWQ-BF16-INT4")
    int4 = resolve_model("cyankiwi/Qwen3.8-27B-AWQ-INT4")
    assert bf16_int4.quant is not None and int4.quant is not None
    assert (bf16_int4.quant.bits, bf16_int4.quant.group_size, bf16_int4.quant.has_zero_points) == (4, 32, True)
    assert "re:.*linear_attn.*" in bf16_int4.quant.keep_unquantized
    assert "re:.*linear_attn.*" not in int4.quant.keep_unquantized
    # 256 quantized modules over 64 layers: the 3 MLP projections of every layer and q/k/v/o of the 16 full-attention
    # layers (full_attention_interval 4)
    assert bf16_int4.num_layers * 3 + (bf16_int4.num_layers // 4) * 4 == 256


def test_bf16_int4_weights_and_kv_at_tp2() -> None:
    """Y008 and Y010 (2 x RTX 3090, TP 2, vLLM 0.29.0): 12.9 GiB of weights a card, KV 8.91 GiB; within 3 %."""
    for rid in ("Y008", "Y010"):
        c = COMPARED[rid]
        assert abs(c.weights_gib / 12.9 - 1) < 0.03, (rid, c.weights_gib)
        assert abs(c.kv_gib / 8.91 - 1) < 0.03, (rid, c.kv_gib)
    # the INT4 build on one card loads more than the bf16-DeltaNet build's per-card half, less than twice it
    assert COMPARED["Y008"].weights_gib < COMPARED["Y009"].weights_gib < 2 * COMPARED["Y008"].weights_gib


def test_mistral_7b_v0_1_awq() -> None:
    spec = resolve_model("TheBloke/Mistral-7B-v0.1-AWQ")
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("awq", 4, 128)
    assert (spec.num_layers, spec.hidden_size, spec.vocab_size) == (32, 4096, 32000)
    c = COMPARED["Y017"]  # L4, vLLM 0.14.1, 0.88, 4,096 tokens: 3.96 GiB loaded, 15.07 GiB of KV
    assert abs(c.weights_gib / 3.96 - 1) < 0.03 and abs(c.kv_gib / 15.07 - 1) < 0.02
