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


def test_deepseek_v2_5_is_deepseek_v2_236b() -> None:
    """DeepSeek-V2.5 (reconstructed, and said so): DeepSeek-V2's 236B layout, the bundled Coder-V2-Instruct's count;
    the V2.5-1210 re-save's shown keys agree with it."""
    v25, coder = resolve_model("deepseek-ai/DeepSeek-V2.5"), resolve_model("deepseek-ai/DeepSeek-Coder-V2-Instruct")
    assert v25.params is not None and v25.params == coder.params and v25.params.total == 235_741_434_880
    shown = {
        "hidden_size": 5120,
        "intermediate_size": 12288,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "n_routed_experts": 160,
        "n_shared_experts": 2,
        "moe_intermediate_size": 1536,
        "num_experts_per_tok": 6,
        "num_hidden_layers": 60,
        "num_attention_heads": 128,
        "max_position_embeddings": 163840,
    }
    entry = load_model("deepseek-ai/DeepSeek-V2.5")
    assert entry is not None and all(entry.config[k] == v for k, v in shown.items())


def test_medgemma_27b_text_it_by_hand() -> None:
    """MedGemma 27B text-it: Gemma 3 27B without the vision tower. 62 layers of 5376: q and o 5376 x 4096, k and v
    5376 x 2048, gated MLP 3 x 5376 x 21504, four RMSNorms and q/k norms of 128; the 262,208-row embedding tied to
    the head, final norm: 27,009,346,304 parameters; 52 sliding (window 1024) and 10 global layers."""
    h, layers, vocab = 5376, 62, 262208
    layer = 2 * h * 4096 + 2 * h * 2048 + 3 * h * 21504 + 4 * h + 2 * 128
    total = layers * layer + vocab * h + h
    assert total == 27_009_346_304
    spec = resolve_model("google/medgemma-27b-text-it")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert spec.vision is None and spec.layer_kinds.count("sliding") == 52 and spec.sliding_window == 1024
    gemma = resolve_model("google/gemma-3-27b-it")  # the same language model beside a SigLIP tower
    assert gemma.vision is not None and gemma.params is not None
    assert (gemma.params.attention, gemma.params.mlp, gemma.params.embedding) == (
        spec.params.attention,
        spec.params.mlp,
        spec.params.embedding,
    )


def test_phi_3_medium_128k_has_the_4k_shapes_and_a_131k_context() -> None:
    """Phi-3-medium-128k-instruct (reconstructed, and said so): the 4k sibling's 13,960,238,080 parameters (40
    layers of 5120: q/o 5120^2, k/v 5120 x 1280, gated MLP 3 x 5120 x 17920; untied 32,064-row embedding and head)
    with full attention over 131,072 positions."""
    h, layers, vocab = 5120, 40, 32064
    total = layers * (2 * h * h + 2 * h * 1280 + 3 * h * 17920 + 2 * h) + 2 * vocab * h + h
    assert total == 13_960_238_080
    spec = resolve_model("microsoft/Phi-3-medium-128k-instruct")
    assert spec.params is not None and spec.params.total == total and spec.max_model_len == 131072
    assert spec.sliding_window is None and set(spec.layer_kinds) == {"full"}


def test_casperhansen_mixtral_awq_is_thebloke_s_layout() -> None:
    """casperhansen/mixtral-instruct-awq: the same quant_config.json (AWQ 4-bit g128, router kept) over the same
    Mixtral-8x7B-Instruct config as TheBloke's AWQ, so the same weights: its three shards (9.97 + 9.98 + 4.7 GB)."""
    ours, bloke = (
        resolve_model("casperhansen/mixtral-instruct-awq"),
        resolve_model("TheBloke/Mixtral-8x7B-Instruct-v0.1-AWQ"),
    )
    assert ours.quant is not None and (ours.quant.method, ours.quant.bits, ours.quant.group_size) == ("awq", 4, 128)
    assert ours.params == bloke.params and ours.quant == bloke.quant
    e = explain(ours, H100, EngineFlags(max_model_len=8192), V033)
    assert 24.6e9 < e.stage.weights < 24.7e9


def test_glm_4_5_air_fp8_is_fp8_of_glm_4_5_air() -> None:
    """GLM-4.5-Air-FP8 (reconstructed, and said so): GLM-4.5-Air's 106,852,251,264 parameters, the Linear layers in
    FP8 with 16-bit embedding, lm_head and router: at TP=2 each GPU loads a bit over half the 16-bit checkpoint."""
    fp8, air = resolve_model("zai-org/GLM-4.5-Air-FP8"), resolve_model("zai-org/GLM-4.5-Air")
    assert fp8.params is not None and fp8.params == air.params and fp8.params.total == 106_852_251_264
    assert fp8.quant is not None and fp8.quant.bits == 8 and not fp8.quant.lm_head_quantized
    assert any(reason.startswith("config.json reconstructed: ") for reason in fp8.approximate)
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=2)
    w8, w16 = explain(fp8, H100, flags, V033).stage.weights, explain(air, H100, flags, V033).stage.weights
    assert 0.5 < w8 / w16 < 0.53


def test_internlm2_chat_7b_first_revision_reads_as_internlm2() -> None:
    """internlm2-chat-7b's publisher page (855 bytes, no final newline) says model_type "internlm" with
    InternLM2ForCausalLM: vLLM runs the architecture (internlm2.py), so it is read as InternLM2, exactly, with
    internlm2_5-7b-chat's widths: 32 x (4096 x 6144 wqkv + 4096^2 wo + 3 x 4096 x 14336 + 2 x 4096) + 2 x 92544 x 4096
    + 4096 = 7,737,708,544 parameters; dynamic rope factor 1.0 keeps 32,768 positions."""
    h, vocab = 4096, 92544
    total = 32 * (h * (h + 2 * 1024) + h * h + 3 * h * 14336 + 2 * h) + 2 * vocab * h + h
    assert total == 7_737_708_544
    spec = resolve_model("internlm/internlm2-chat-7b")
    assert spec.params is not None and spec.params.total == total and not spec.approximate
    assert spec.family == "InternLM2" and spec.max_model_len == 32768
    assert _indent2_bytes("internlm/internlm2-chat-7b") - 1 == 855


def test_phi_4_reasoning_is_phi_4_with_a_32k_context() -> None:
    """Phi-4-reasoning (reconstructed, and said so): phi-4's 14,659,507,200 parameters (40 layers of 5120: q/o 5120^2,
    k/v 5120 x 1280, gated MLP 3 x 5120 x 17920; untied 100,352-row embedding and head), 32,768 positions (its card)."""
    h, vocab = 5120, 100352
    total = 40 * (2 * h * h + 2 * h * 1280 + 3 * h * 17920 + 2 * h) + 2 * vocab * h + h
    assert total == 14_659_507_200
    spec, phi4 = resolve_model("microsoft/Phi-4-reasoning"), resolve_model("microsoft/phi-4")
    assert spec.params is not None and spec.params == phi4.params and spec.params.total == total
    assert (spec.max_model_len, phi4.max_model_len) == (32768, 16384)
    assert any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate)
