"""Popular ids that exited 4 offline (issue #11), session 10: entries checked against their sources by hand."""

from __future__ import annotations

import json
from dataclasses import replace

from recommender.catalog import load_gpus, load_model
from recommender.hardware import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.kv_cache import layer_kv
from recommender.sources.resolve import resolve_model

V033 = VllmVersion.parse("0.33.0")
H100 = resolve_gpu("h100", load_gpus())


def _indent2_bytes(model_id: str) -> int:
    """The size of a config.json as transformers writes it (indent 2, final newline)."""
    entry = load_model(model_id)
    assert entry is not None, model_id
    return len(json.dumps(entry.config, indent=2)) + 1


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
    assert _indent2_bytes("openbmb/MiniCPM3-4B") == 2044


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


def test_sfr_embedding_mistral_is_the_e5_mistral_backbone() -> None:
    """SFR-Embedding-Mistral (MistralModel, fine-tuned from e5-mistral-7b-instruct): Mistral-7B's widths without an
    LM head, 7,241,732,096 - 32000 x 4096 = 7,110,660,096 parameters; its release's three shards (4.94 + 5 + 4.28 GB)
    are 2 bytes a parameter. The re-save's page prints 664 bytes."""
    sfr, e5 = resolve_model("Salesforce/SFR-Embedding-Mistral"), resolve_model("intfloat/e5-mistral-7b-instruct")
    assert sfr.params is not None and sfr.params.total == 7_241_732_096 - 32000 * 4096 == 7_110_660_096
    assert sfr.params == e5.params and sfr.pooling
    assert 14.2e9 < 2 * sfr.params.total < 14.3e9
    assert _indent2_bytes("Salesforce/SFR-Embedding-Mistral") == 664


def test_nvidia_llama_3_3_70b_fp8_is_modelopt_fp8_of_llama_3_3() -> None:
    """nvidia/Llama-3.3-70B-Instruct-FP8 (reconstructed, and said so): Llama-3.3-70B-Instruct's 70,553,706,496
    parameters under ModelOpt FP8 with lm_head kept in 16 bits and an FP8 KV cache, so 80 x 8 x 128 x 2 bytes of
    KV a token under --kv-cache-dtype auto."""
    fp8, base = resolve_model("nvidia/Llama-3.3-70B-Instruct-FP8"), resolve_model("meta-llama/Llama-3.3-70B-Instruct")
    assert fp8.params is not None and fp8.params == base.params and fp8.params.total == 70_553_706_496
    assert fp8.quant is not None and fp8.quant.kv_cache_fp8 and not fp8.quant.lm_head_quantized
    assert any(reason.startswith("config.json reconstructed: ") for reason in fp8.approximate)
    e = explain(fp8, H100, EngineFlags(max_model_len=8192, tensor_parallel_size=2), V033)
    assert e.kv_cache_dtype.startswith("fp8") and e.quantization != "none"


def test_llama_guard_3_8b_is_llama_3_1_8b_instruct() -> None:
    """Llama Guard 3 8B: every key the GPTQ re-save shows equals Llama-3.1-8B-Instruct's, the rest is taken from it
    (reconstructed, and said so): 8,030,261,248 parameters, Meta's published Llama 3.1 8B figure."""
    guard, base = load_model("meta-llama/Llama-Guard-3-8B"), load_model("meta-llama/Llama-3.1-8B-Instruct")
    assert guard is not None and base is not None
    shown = (
        "hidden_size",
        "intermediate_size",
        "max_position_embeddings",
        "num_attention_heads",
        "num_hidden_layers",
        "num_key_value_heads",
        "eos_token_id",
        "mlp_bias",
        "attention_bias",
    )
    assert all(guard.config[k] == base.config[k] for k in shown)
    spec = resolve_model("meta-llama/Llama-Guard-3-8B")
    assert spec.params is not None and spec.params.total == 8_030_261_248
    assert any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate)
