"""Catalog entries of DeepSeek's models (LLM 67B, MoE 16B, V2/V2.5, V3 and its revisions, R1, V3.2). Entries and
aliases are checked against their sources by hand; each test's docstring names them (and the field set or issue that
brought the model in)."""

from __future__ import annotations

from recommender.catalog import load_model
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags
from recommender.sources.resolve import resolve_model

from .catalog_support import H100, V033, reconstructed


def test_catalog_round_7_deepseek_v3_0324_and_v3_1_terminus_reconstructed() -> None:
    """DeepSeek's cards: 'The model structure of DeepSeek-V3-0324 is exactly the same as DeepSeek-V3', 'of
    DeepSeek-V3.1-Terminus is the same as DeepSeek-V3'. V3-0324's entry is the config of NVIDIA's quantization of it
    without NVIDIA's block, which equals the bundled V3 config in every key the planner reads; Terminus's BF16 GGUF
    tensor list (github:Thireus/GGUF-Tool-Suite) sums to 671,026,419,200 elements, the count of V3.1's config."""
    v3 = resolve_model("deepseek-ai/DeepSeek-V3")
    for model in ("deepseek-ai/DeepSeek-V3-0324", "deepseek-ai/DeepSeek-V3.1-Terminus"):
        spec = resolve_model(model)
        assert spec.params == v3.params and spec.params is not None
        assert spec.params.total == 671_026_419_200 and spec.max_model_len == 163840
        assert spec.quant is not None and spec.quant.method == "fp8"
        assert any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate)


def test_catalog_round_8_deepseek_moe_16b_by_hand() -> None:
    """DeepSeekMoE 16B: 28 layers of multi-head attention (4 x 2048 x 2048); layer 0 dense (3 x 2048 x 10944); layers
    1-27 with 64 routed experts and 2 shared experts of 3 x 2048 x 1408 each and a 2048 x 64 router; two norms a layer;
    untied 102,400-row embedding and head: 16,375,728,128 (its card: 16.4B)."""
    expert = 3 * 2048 * 1408
    total = 28 * (4 * 2048 * 2048 + 2 * 2048) + 3 * 2048 * 10944
    total += 27 * (64 * expert + 2 * expert + 2048 * 64) + 2 * 102400 * 2048 + 2048
    moe = resolve_model("deepseek-ai/deepseek-moe-16b-chat")
    assert moe.params is not None and moe.params.total == total == 16_375_728_128
    assert moe.params.experts == 27 * 64 * expert and moe.max_model_len == 4096


def test_catalog_round_8_deepseek_llm_67b_by_hand() -> None:
    """DeepSeek LLM 67B: 95 Llama layers (q/o 8192 x 8192, k/v 8192 x 1024, gated MLP 3 x 8192 x 22016, two norms)
    and an untied 102,400-row embedding and head: 67,425,001,472."""
    layer = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 22016 + 2 * 8192
    spec = resolve_model("deepseek-ai/deepseek-llm-67b-chat")
    assert spec.params is not None
    assert spec.params.total == 95 * layer + 2 * 102400 * 8192 + 8192 == 67_425_001_472


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
    assert reconstructed("deepseek-ai/DeepSeek-R1-0528")
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=8)
    assert explain(spec, H100, flags, V033).stage.weights == explain(r1, H100, flags, V033).stage.weights


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
    assert spec.quant == v32.quant and reconstructed("deepseek-ai/DeepSeek-V3.2-Exp")


def test_deepseek_llm_67b_base_is_the_chat_network() -> None:
    """DeepSeek LLM 67B Base (reconstructed from full fine-tunes' copies of its config): the bundled chat release's
    95 layers of 8192 and untied 102,400-row vocabulary, so the same 67,425,001,472 parameters and 4,096 positions."""
    base, chat = resolve_model("deepseek-ai/deepseek-llm-67b-base"), resolve_model("deepseek-ai/deepseek-llm-67b-chat")
    assert base.params is not None and base.params == chat.params and base.params.total == 67_425_001_472
    assert (base.num_kv_heads, base.max_model_len) == (chat.num_kv_heads, chat.max_model_len) == (8, 4096)
    assert reconstructed("deepseek-ai/deepseek-llm-67b-base")
