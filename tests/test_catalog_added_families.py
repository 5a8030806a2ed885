"""Catalog entries of families the architecture table gained for issue 11 (Apertus, dots.llm1): each counted by hand
from its vLLM model file and config.json, and checked against the publisher's stated size."""

from __future__ import annotations

from recommender.model.families import family_for
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
