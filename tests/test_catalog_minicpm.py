"""Catalog entries of OpenBMB's MiniCPM family (MiniCPM3 and the MiniCPM-V vision models). Entries and aliases are
checked against their sources by hand; each test's docstring names them (and the field set or issue that brought the
model in)."""

from __future__ import annotations

from dataclasses import replace

from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags
from recommender.memory.kv_cache import layer_kv
from recommender.sources.resolve import resolve_model

from .catalog_support import H100, V033, page_bytes


def test_catalog_round_7_minicpm_v_2_6_by_hand() -> None:
    """MiniCPM-V 2.6 is SigLIP-400M + Qwen2-7B ("a total of 8B parameters", its card). Its decoder is Qwen2-7B-Instruct
    (7,615,616,512 parameters, bundled) with the vocabulary cut from 152,064 to 151,666 rows in the embedding and the
    head (2 x 398 x 3584 = 2,852,864 fewer) and, while minicpmv is read approximately as a Llama-style decoder, without
    the q/k/v biases (28 x (3584 + 512 + 512) = 129,024): 7,612,634,624. MiniCPM-Llama3-V 2.5's decoder is
    Meta-Llama-3-8B exactly (8,030,261,248)."""
    v26 = resolve_model("openbmb/MiniCPM-V-2_6")
    assert v26.params is not None and v26.approximate
    assert v26.params.total - v26.params.vision == 7_615_616_512 - 2 * 398 * 3584 - 28 * (3584 + 512 + 512)
    assert resolve_model("Qwen/Qwen2-7B-Instruct").params.total == 7_615_616_512  # type: ignore[union-attr]
    v25 = resolve_model("openbmb/MiniCPM-Llama3-V-2_5")
    assert v25.params is not None
    assert v25.params.total - v25.params.vision == resolve_model("meta-llama/Meta-Llama-3-8B-Instruct").params.total  # type: ignore[union-attr]
    assert 0.4e9 < v26.params.vision < 0.45e9  # SigLIP-400M (27 layers of 1152 x 4304) and the resampler


def test_minicpm3_4b_by_hand() -> None:
    """MiniCPM3-4B (vllm minicpm3.py): 62 layers of 2560; attention q_a 2560 x 768, q_a_layernorm 768, q_b 768 x
    40 x 96, kv_a_proj_with_mqa 2560 x (256 + 32), kv_a_layernorm 256, kv_b 256 x 40 x (64 + 64), o 40 x 64 x 2560;
    gated MLP 3 x 2560 x 6400; two RMSNorms; the 73,448-row embedding tied to the head (MiniCPM3Config's default),
    final norm: 4,073,875,968 parameters, the name's 4B. The ome copy prints 2,044 bytes at indent 2."""
    h, layers, vocab, heads = 2560, 62, 73448, 40
    attention = h * 768 + 768 + 768 * heads * 96 + h * 288 + 256 + 256 * heads * 128 + heads * 64 * h
    layer = attention + 3 * h * 6400 + 2 * h
    total = layers * layer + vocab * h + h
    assert total == 4_073_875_968
    spec = resolve_model("openbmb/MiniCPM3-4B")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert not spec.approximate and spec.mla is not None and spec.mla.v_head_dim == 64
    assert page_bytes("openbmb/MiniCPM3-4B") == 2044


def test_minicpm3_caches_k_and_v_per_head_not_the_latent() -> None:
    """MiniCPM3Attention builds Attention(num_local_heads, qk_head_dim, num_kv_heads=num_local_heads) with V padded to
    qk_head_dim: every layer caches 2 x 40 x 96 values a token (bf16: 15,360 bytes), split across TP ranks, where a
    DeepSeek-style latent would be (256 + 32) x 2 = 576 bytes on every rank."""
    spec = resolve_model("openbmb/MiniCPM3-4B")
    assert spec.mla is not None and spec.mla.per_head_cache == 96
    one = layer_kv(spec, 0, tp=1, block_size=16, kv_bytes=2, model_bytes=2)
    two = layer_kv(spec, 0, tp=2, block_size=16, kv_bytes=2, model_bytes=2)
    assert one is not None and two is not None and one.kind == "full"
    assert (one.bytes_per_token, two.bytes_per_token) == (2 * 40 * 96 * 2, 2 * 20 * 96 * 2)
    latent = layer_kv(
        replace(spec, mla=replace(spec.mla, per_head_cache=0)), 0, tp=1, block_size=16, kv_bytes=2, model_bytes=2
    )
    assert latent is not None and latent.bytes_per_token == (256 + 32) * 2
    e = explain(spec, H100, EngineFlags(max_model_len=32768), V033)
    assert e.kv_cache_tokens == e.num_gpu_blocks * 16
    assert e.stage.available_kv // (62 * 2 * 40 * 96 * 2 * 16) == e.num_gpu_blocks
