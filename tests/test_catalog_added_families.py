"""Catalog entries of families the architecture table gained for issue 11 (Apertus, dots.llm1, LFM2): each counted by hand
from its vLLM model file and config.json, and checked against the publisher's stated size."""

from __future__ import annotations

from recommender.memory.kv_cache import layer_kv
from recommender.model.families import family_for
from recommender.model.family_keys import lfm2_keys
from recommender.sources.resolve import resolve_model

from .catalog_support import reconstructed


def test_apertus_8b_by_hand() -> None:
    """Apertus-8B-2509 (reconstructed: mlx-swift-lm's Apertus defaults for this checkpoint, heise's review, the card's
    context). vllm apertus.py: 32 layers of q, o 4096^2 and k, v 4096 x 1024 (8 KV heads of 128), q_norm and k_norm over
    the head (2 x 128), a non-gated MLP up_proj + down_proj 2 x 4096 x 21504, two RMSNorms; untied 131,072 x 4096
    embedding and lm_head, final norm: 8,053,338,112 (the card's "8B"). A gated MLP would count 3 x 4096 x 21504."""
    h, kv, ffn, vocab = 4096, 1024, 21504, 131072
    layer = 2 * h * h + 2 * h * kv + 2 * 128 + 2 * h * ffn + 2 * h
    total = 32 * layer + 2 * vocab * h + h
    assert total == 8_053_338_112
    spec = resolve_model("swiss-ai/Apertus-8B-2509")
    assert spec.params is not None and spec.params.total == total
    assert spec.params.mlp == 32 * 2 * h * ffn and spec.params.lm_head == vocab * h
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 128, 65536)
    # the only approximation left is the reconstructed config, not the architecture
    assert len(spec.approximate) == 1 and reconstructed("swiss-ai/Apertus-8B-2509")


def test_dots_llm1_by_hand() -> None:
    """dots.llm1.base (its config.json): vllm dots1.py, 62 layers of q, k, v, o 4096^2 (32 KV heads of 128) with
    per-head q/k norms (2 x 128) and two RMSNorms; layer 0 a dense gated MLP 3 x 4096 x 10944; layers 1-61 (
    first_k_dense_replace 1, moe_layer_freq 1) 128 experts of 3 x 4096 x 1408, 2 shared as one MLP of 2 x 1408 and a
    4096 x 128 gate (no e_score_correction_bias: the config has no topk_method "noaux_tc"); untied 152,064 x 4096
    embedding and lm_head, final norm: 142,774,373,888 (the card's "142B total")."""
    h, vocab, moe = 4096, 152064, 1408
    attn = 4 * h * h + 2 * 128 + 2 * h
    moe_layer = 128 * 3 * h * moe + 3 * h * 2 * moe + h * 128
    total = 62 * attn + 3 * h * 10944 + 61 * moe_layer + 2 * vocab * h + h
    assert total == 142_774_373_888
    spec = resolve_model("rednote-hilab/dots.llm1.base")
    assert spec.params is not None and spec.params.total == total and spec.approximate == ()
    assert spec.params.experts == 61 * 128 * 3 * h * moe and spec.params.shared_experts == 61 * 3 * h * 2 * moe
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (32, 128, 32768)


def test_added_families_are_not_approximate_by_name() -> None:
    """The table reads apertus and dots1 with their own rules; an unknown model_type still gets the marked fallback."""
    assert family_for("ApertusForCausalLM", "apertus").gated_mlp is False
    assert family_for("ApertusForCausalLM", "apertus").approximate == ""
    assert family_for("Dots1ForCausalLM", "dots1").qk_norm is True
    assert family_for("FooForCausalLM", "foo").approximate != ""


def test_lfm2_350m_by_hand() -> None:
    """LFM2-350M (a web runtime's copy of its config.json): vllm lfm2.py, 16 layers of 1024 each with a gated MLP
    w1/w3/w2 of 4608 (Lfm2MLP: int(2 x 6656 / 3) = 4437, x 1.0, rounded up to 256) and two RMSNorms; 10 ShortConv
    layers (short_conv.py: in_proj 3 x 1024 x 1024, a depthwise conv 1024 x 3, out_proj 1024^2, no bias) and 6 GQA
    layers (q, o 1024^2, k, v 1024 x 512, q/k norms 2 x 64); tied 65,536 x 1024 embedding, final norm: 354,483,968
    (the docs' "350M")."""
    h, ff = 1024, 4608
    assert 256 * -(-int(2 * 6656 / 3) // 256) == ff
    conv = 3 * h * h + h * 3 + h * h
    attn = 2 * h * h + 2 * h * 512 + 2 * 64
    total = 16 * (3 * h * ff + 2 * h) + 10 * conv + 6 * attn + 65536 * h + h
    assert total == 354_483_968
    spec = resolve_model("LiquidAI/LFM2-350M")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert spec.params.mixer == 10 * conv and spec.approximate == ()
    assert spec.layer_kinds.count("mamba") == 10 and spec.layer_kinds[2] == "full"
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 64, 128000)


def test_lfm2_conv_state_is_the_last_taps() -> None:
    """vLLM's short_conv_state_shape (mamba_utils.py): (conv_kernel - 1, conv_dim / tp) in the model dtype, per
    request: LFM2-350M's 2 x 1024 bf16 = 4,096 bytes at TP 1, 2,048 at TP 2; an attention layer keeps its K and V
    (8 heads x 64 x 2 x 2 bytes = 2,048 bytes a token)."""
    spec = resolve_model("LiquidAI/LFM2-350M")
    conv = layer_kv(spec, 0, tp=1, block_size=16, kv_bytes=2, model_bytes=2)
    assert conv is not None and (conv.kind, conv.page_bytes, conv.bytes_per_token) == ("mamba", 4096, 0)
    conv2 = layer_kv(spec, 0, tp=2, block_size=16, kv_bytes=2, model_bytes=2)
    assert conv2 is not None and conv2.page_bytes == 2048
    attn = layer_kv(spec, 2, tp=1, block_size=16, kv_bytes=2, model_bytes=2)
    assert attn is not None and (attn.kind, attn.bytes_per_token) == ("full", 2048)


def test_lfm2_mlp_width_follows_lfm2mlp() -> None:
    """Lfm2MLP's rule on other widths: LFM2-1.2B's block_ff_dim 12288 -> int(8192.0) = 8192 (already a multiple of
    256); with block_auto_adjust_ff_dim false the width is taken as written (LFM2-2.6B's 10752)."""
    assert (
        lfm2_keys({"block_ff_dim": 12288, "block_auto_adjust_ff_dim": True, "block_multiple_of": 256}).keys[
            "intermediate_size"
        ]
        == 8192
    )
    assert lfm2_keys({"block_ff_dim": 10752, "block_auto_adjust_ff_dim": False}).keys["intermediate_size"] == 10752
    assert lfm2_keys({"layer_types": ["conv", "full_attention"]}).keys["layer_types"] == ["mamba", "full_attention"]


def test_lfm2_700m_by_hand() -> None:
    """LFM2-700M (the publisher's config.json, refs/pr/8), which names its attention layers in full_attn_idxs and has no
    layer_types (Lfm2Config builds them): 16 layers of 1536 with a gated MLP of 6912 (int(2 x 10240 / 3) = 6826, up
    to 256) and two norms; 10 ShortConv layers (3 x 1536^2 + 1536 x 3 + 1536^2) and 6 GQA layers at 2, 5, 8, 10, 12, 14
    (q, o 1536^2, k, v 1536 x 512, q/k norms 2 x 64); tied 65,536 x 1536 embedding, final norm: 742,489,344 ("700M")."""
    h, ff = 1536, 6912
    conv = 3 * h * h + h * 3 + h * h
    attn = 2 * h * h + 2 * h * 512 + 2 * 64
    total = 16 * (3 * h * ff + 2 * h) + 10 * conv + 6 * attn + 65536 * h + h
    assert total == 742_489_344
    spec = resolve_model("LiquidAI/LFM2-700M")
    assert spec.params is not None and spec.params.total == total and spec.approximate == ()
    assert [i for i, k in enumerate(spec.layer_kinds) if k == "full"] == [2, 5, 8, 10, 12, 14]


def test_lfm2_1_2b_by_hand() -> None:
    """LFM2-1.2B (reconstructed: a full fine-tune's config.json, its widths checked against a GGUF of the release):
    16 layers of 2048 with a gated MLP of 8192 (int(2 x 12288 / 3), already a multiple of 256, the GGUF's
    feed_forward_length) and two norms; 10 ShortConv layers (3 x 2048^2 + 2048 x 3 + 2048^2) and 6 GQA layers (q, o
    2048^2, k, v 2048 x 512, q/k norms 2 x 64); tied 65,536 x 2048 embedding, final norm: 1,170,340,608 ("1.2B")."""
    h, ff = 2048, 8192
    conv = 3 * h * h + h * 3 + h * h
    attn = 2 * h * h + 2 * h * 512 + 2 * 64
    total = 16 * (3 * h * ff + 2 * h) + 10 * conv + 6 * attn + 65536 * h + h
    assert total == 1_170_340_608
    spec = resolve_model("LiquidAI/LFM2-1.2B")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert len(spec.approximate) == 1 and reconstructed("LiquidAI/LFM2-1.2B")
