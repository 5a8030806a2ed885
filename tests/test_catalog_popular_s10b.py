"""Popular ids that exited 4 offline (issue #11), session 10, second list: entries checked against their sources."""

from __future__ import annotations

from recommender.catalog import load_gpus, load_model
from recommender.hardware import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model

V033 = VllmVersion.parse("0.33.0")
H100 = resolve_gpu("h100", load_gpus())


def _reconstructed(model_id: str) -> bool:
    spec = resolve_model(model_id)
    return any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate)


def test_r1_0528_qwen3_8b_by_hand() -> None:
    """DeepSeek-R1-0528-Qwen3-8B (the keys vLLM issue #23141 quotes from its NVFP4 re-quantization): Qwen3-8B's
    36 layers of 4096 (q/o 4096^2, k/v 4096 x 1024, q/k norms of 128, gated MLP 3 x 4096 x 12288, two RMSNorms), an
    untied 151,936-row embedding and head, final norm: 8,190,735,360 parameters; YaRN factor 4 over 32,768 positions
    gives 131,072 where Qwen3-8B has 40,960."""
    h, layers, vocab = 4096, 36, 151936
    layer = 2 * h * h + 2 * h * 1024 + 2 * 128 + 3 * h * 12288 + 2 * h
    total = layers * layer + 2 * vocab * h + h
    assert total == 8_190_735_360
    spec, qwen = resolve_model("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B"), resolve_model("Qwen/Qwen3-8B")
    assert spec.params is not None and spec.params.total == total and spec.params == qwen.params
    assert (spec.max_model_len, qwen.max_model_len) == (131072, 40960) and spec.quant is None
    entry = load_model("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B")
    assert entry is not None and entry.config["rope_scaling"]["factor"] * 32768 == 131072
    assert _reconstructed("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B")


def test_r1_0528_qwen3_8b_loads_what_its_vllm_log_says() -> None:
    """The vLLM 0.8.5 log of this model (TP=4, float16) says 'Model loading took 3.8459 GiB' on each GPU."""
    spec = resolve_model("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B")
    flags = EngineFlags(max_model_len=65536, tensor_parallel_size=4, dtype="float16")
    weights_gib = explain(spec, H100, flags, VllmVersion.parse("0.8.5")).stage.weights / 2**30
    assert abs(weights_gib - 3.8459) < 0.004


def test_mistral_small_3_2_is_3_1_by_hand() -> None:
    """Mistral-Small-3.2 (reconstructed: 3.1's config, whose text values a 3.2 text-only extraction repeats): 40 layers
    of 5120 (q/o 5120 x 4096, k/v 5120 x 1024, gated MLP 3 x 5120 x 32768, two RMSNorms), untied 131,072-row embedding
    and head, final norm: 23,572,403,200 text parameters, plus 3.1's Pixtral tower; 131,072 positions."""
    h, layers, vocab = 5120, 40, 131072
    text = layers * (2 * h * 4096 + 2 * h * 1024 + 3 * h * 32768 + 2 * h) + 2 * vocab * h + h
    assert text == 23_572_403_200
    spec, old = (
        resolve_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506"),
        resolve_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503"),
    )
    assert spec.params is not None and spec.params.total - spec.params.vision == text
    assert spec.params == old.params and spec.vision == old.vision and spec.max_model_len == 131072
    shown = {
        "hidden_size": 5120,
        "intermediate_size": 32768,
        "max_position_embeddings": 131072,
        "num_attention_heads": 32,
        "num_hidden_layers": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "rope_theta": 1e9,
        "vocab_size": 131072,
    }
    entry = load_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506")
    assert entry is not None and all(entry.config["text_config"][k] == v for k, v in shown.items())
    assert _reconstructed("mistralai/Mistral-Small-3.2-24B-Instruct-2506")


def test_deepseek_r1_0528_is_r1_in_block_fp8() -> None:
    """DeepSeek-R1-0528 (reconstructed: R1's config): every value the 0528 weights' published GGUF metadata shows
    equals R1's config, and the checkpoint is block-wise FP8 128 x 128 like R1, so the same 671,026,419,200
    parameters load at about one byte each (lm_head and embedding kept in 16 bits)."""
    entry = load_model("deepseek-ai/DeepSeek-R1-0528")
    assert entry is not None
    shown = {
        "num_hidden_layers": 61,
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "n_routed_experts": 256,
        "moe_intermediate_size": 2048,
        "n_shared_experts": 1,
        "num_experts_per_tok": 8,
        "intermediate_size": 18432,
        "first_k_dense_replace": 3,
        "max_position_embeddings": 163840,
        "vocab_size": 129280,
    }
    assert all(entry.config[k] == v for k, v in shown.items())
    assert entry.config["rope_scaling"]["factor"] == 40
    assert entry.config["rope_scaling"]["original_max_position_embeddings"] == 4096
    spec, r1 = resolve_model("deepseek-ai/DeepSeek-R1-0528"), resolve_model("deepseek-ai/DeepSeek-R1")
    assert spec.params is not None and spec.params == r1.params and spec.params.total == 671_026_419_200
    assert spec.quant is not None and spec.quant.block == (128, 128) and spec.quant == r1.quant
    assert _reconstructed("deepseek-ai/DeepSeek-R1-0528")
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=8)
    assert explain(spec, H100, flags, V033).stage.weights == explain(r1, H100, flags, V033).stage.weights


def test_stablelm_2_1_6b_chat_by_hand() -> None:
    """StableLM 2 1.6B Chat (the publisher's config.json, 728 bytes): 24 layers of 2048 with 32 full KV heads
    (q/k/v/o 2048^2, QKV biases), gated MLP 3 x 2048 x 5632, two LayerNorms with biases; untied 100,352-row
    embedding and head, final LayerNorm: 1,644,515,328 parameters, 6.58 GB in float32 = its two shards
    (4.98 + 1.59 GB). stablelm is outside the architecture table: read as a Llama-style decoder (no biases), said so."""
    h, layers, vocab = 2048, 24, 100352
    qkv_bias, ln_bias = layers * 3 * h, (2 * layers + 1) * h
    total = layers * (4 * h * h + 3 * h * 5632 + 2 * h) + 2 * vocab * h + h + qkv_bias + ln_bias
    assert total == 1_644_515_328
    assert 6.56e9 < 4 * total < 6.59e9
    spec = resolve_model("stabilityai/stablelm-2-1_6b-chat")
    assert spec.params is not None and spec.params.total == total - qkv_bias - ln_bias
    assert spec.max_model_len == 4096 and not _reconstructed("stabilityai/stablelm-2-1_6b-chat")
    assert any("'stablelm' is not in vllm-plan's architecture table" in reason for reason in spec.approximate)
    zephyr = resolve_model("stabilityai/stablelm-2-zephyr-1_6b")  # the other 1.6B tune, bundled
    assert zephyr.params == spec.params


def test_openhermes_2_5_is_mistral_7b_with_two_more_rows() -> None:
    """OpenHermes-2.5-Mistral-7B (reconstructed from four re-saves that agree): Mistral-7B-v0.1's 32 layers of 4096
    (q/o 4096^2, k/v 4096 x 1024, gated MLP 3 x 4096 x 14336) with a 32,002-row untied embedding and head:
    7,241,748,480 parameters, 2 x 2 x 4096 more than Mistral-7B-v0.1's 7,241,732,096; window 4096 over 32,768."""
    h, layers, vocab = 4096, 32, 32002
    total = layers * (2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h) + 2 * vocab * h + h
    assert total == 7_241_748_480
    spec, base = resolve_model("teknium/OpenHermes-2.5-Mistral-7B"), resolve_model("mistralai/Mistral-7B-v0.1")
    assert spec.params is not None and base.params is not None and spec.params.total == total
    assert spec.params.total - base.params.total == 2 * 2 * h
    assert spec.sliding_window == 4096 and spec.max_model_len == 32768
    assert _reconstructed("teknium/OpenHermes-2.5-Mistral-7B")


def test_nemotron_nano_8b_v1_is_llama_3_1_8b() -> None:
    """Llama-3.1-Nemotron-Nano-8B-v1 (reconstructed: Llama-3.1-8B-Instruct's config, which NVIDIA's converter uses for
    it): 8,030,261,248 parameters; a Q8_0 GGUF (34 bytes per 32 weights) of that many is 8.53 GB, the published
    file is 8.54 GB."""
    spec, base = (
        resolve_model("nvidia/Llama-3.1-Nemotron-Nano-8B-v1"),
        resolve_model("meta-llama/Llama-3.1-8B-Instruct"),
    )
    assert spec.params is not None and spec.params == base.params and spec.params.total == 8_030_261_248
    assert 8.52e9 < spec.params.total * 34 / 32 < 8.54e9
    assert spec.max_model_len == 131072 and _reconstructed("nvidia/Llama-3.1-Nemotron-Nano-8B-v1")


def test_devstral_small_is_mistral_small_3_1_text_only() -> None:
    """Devstral Small 2505 and 2507 (reconstructed): Mistral-Small-3.1 fine-tuned with the vision encoder removed, so
    3.1's text model as a MistralForCausalLM: 40 layers of 5120 (q/o 5120 x 4096, k/v 5120 x 1024, gated MLP
    3 x 5120 x 32768), untied 131,072-row embedding and head: 23,572,403,200 parameters, no vision tower, 131,072
    positions."""
    h, layers, vocab = 5120, 40, 131072
    total = layers * (2 * h * 4096 + 2 * h * 1024 + 3 * h * 32768 + 2 * h) + 2 * vocab * h + h
    assert total == 23_572_403_200
    small = resolve_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503")
    assert small.params is not None
    for model_id in ("mistralai/Devstral-Small-2505", "mistralai/Devstral-Small-2507"):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total and spec.vision is None
        assert spec.params.total == small.params.total - small.params.vision
        assert spec.max_model_len == 131072 and _reconstructed(model_id)


def test_deepseek_v3_2_exp_is_v3_2() -> None:
    """DeepSeek-V3.2-Exp (reconstructed: V3.2's config): the indexer keys the V3.2-Exp transformers port lists (64 heads
    of 128, top-2048) are V3.2's, and so are all 671,877,944,064 parameters: R1's 671,026,419,200 plus one lightning
    indexer in each of the 61 layers (13,959,424 parameters each)."""
    entry = load_model("deepseek-ai/DeepSeek-V3.2-Exp")
    assert entry is not None
    assert (entry.config["index_n_heads"], entry.config["index_head_dim"], entry.config["index_topk"]) == (
        64,
        128,
        2048,
    )
    spec, v32 = resolve_model("deepseek-ai/DeepSeek-V3.2-Exp"), resolve_model("deepseek-ai/DeepSeek-V3.2")
    r1 = resolve_model("deepseek-ai/DeepSeek-R1")
    assert spec.params is not None and r1.params is not None
    assert spec.params == v32.params and spec.params.total == 671_877_944_064
    # per layer, the indexer: wq_b 1536 x (64 x 128), wk 7168 x 128, weights_proj 7168 x 64, k_norm LayerNorm(128)
    assert spec.params.attention - r1.params.attention == 61 * (1536 * 64 * 128 + 7168 * 128 + 7168 * 64)
    assert spec.params.norms - r1.params.norms == 61 * 2 * 128
    assert spec.params.total - r1.params.total == 61 * (1536 * 64 * 128 + 7168 * 128 + 7168 * 64 + 2 * 128)
    assert spec.quant == v32.quant and _reconstructed("deepseek-ai/DeepSeek-V3.2-Exp")
