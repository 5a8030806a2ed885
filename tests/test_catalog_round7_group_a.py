"""Catalog round 7, group A (session 8): entries checked against their sources by hand."""

from __future__ import annotations

import json
from dataclasses import replace

from recommender.catalog import find_model
from recommender.sources.resolve import resolve_model


def _indent2_bytes(config: dict[str, object]) -> int:
    """The size of a config.json as transformers writes it (indent 2, final newline): what the hub page prints."""
    return len(json.dumps(config, indent=2)) + 1


def test_catalog_round_7_minicpm_v_official_pages_whole() -> None:
    """MiniCPM-Llama3-V-2_5 and MiniCPM-V-2 come from the official repositories' blame pages, whose byte counts
    (1,373 and 1,179) the transcriptions re-serialised at indent 2 reproduce exactly; QwQ-32B-Preview from unsloth's
    re-save (728 bytes). A dropped or mistyped key would change the count."""
    for model, size in (
        ("openbmb/MiniCPM-Llama3-V-2_5", 1373),
        ("openbmb/MiniCPM-V-2", 1179),
        ("Qwen/QwQ-32B-Preview", 728),
    ):
        match = find_model(model)
        assert match is not None and match.entry.id == model
        assert _indent2_bytes(dict(match.entry.config)) == size, model


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


def test_catalog_round_7_qwq_preview_is_qwen2_5_32b_layout() -> None:
    """QwQ-32B-Preview keeps Qwen2.5-32B-Instruct's widths (its card: 32.5B parameters, 64 layers, 40 query and 8 KV
    heads, 32,768 positions), so its count equals the bundled Qwen2.5-32B-Instruct's."""
    preview, base = resolve_model("Qwen/QwQ-32B-Preview"), resolve_model("Qwen/Qwen2.5-32B-Instruct")
    assert preview.params == base.params
    attention = 5120 * 5120 * 2 + 5120 * 1024 * 2 + (5120 + 1024 + 1024)  # q, o; k, v; q/k/v biases
    layer = attention + 3 * 5120 * 27648 + 2 * 5120
    assert preview.params is not None
    assert preview.params.total == 64 * layer + 2 * 152064 * 5120 + 5120 == 32_763_876_352


def test_catalog_round_7_qwen_v1_layout_by_hand() -> None:
    """Qwen-7B (QWenLMHeadModel, vLLM's qwen.py until 0.23.0): the config's intermediate_size 22016 counts both halves
    of the gated MLP, so each half is 11008 wide; c_attn is a fused q/k/v with a bias and 32 K/V heads. By hand: 32 x
    (c_attn 4096 x 12288 + 12288, c_proj 4096 x 4096, MLP 3 x 4096 x 11008, two norms) + embedding and head
    2 x 151936 x 4096 + final norm = 7,721,324,544, Qwen-7B's published 7.7B; the context is seq_length, 8192."""
    qwen = resolve_model("Qwen/Qwen-7B")
    layer = 4096 * 12288 + 12288 + 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096
    assert qwen.params is not None and not qwen.approximate
    assert qwen.params.total == 32 * layer + 2 * 151936 * 4096 + 4096 == 7_721_324_544
    assert qwen.max_model_len == 8192 and qwen.num_kv_heads == 32


def test_catalog_round_7_embedding_models_by_hand() -> None:
    """gte-Qwen2-7B-instruct is Qwen2-7B with a 151,646-row vocabulary: 7,615,616,512 less 2 x 418 x 3584 rows of
    embedding and head = 7,612,620,288; e5-mistral-7b-instruct keeps Mistral-7B-v0.1's widths (the bundled base's
    count) without its head: a MistralModel checkpoint is the backbone alone (tests/test_pooling_models.py)."""
    gte = resolve_model("Alibaba-NLP/gte-Qwen2-7B-instruct")
    assert gte.params is not None and gte.params.total == 7_615_616_512 - 2 * 418 * 3584 == 7_612_620_288
    e5, base = resolve_model("intfloat/e5-mistral-7b-instruct"), resolve_model("mistralai/Mistral-7B-v0.1")
    assert e5.params is not None and base.params is not None and base.params.lm_head == 32000 * 4096
    assert e5.params == replace(base.params, lm_head=0)


def test_catalog_round_7_glm_4_5_and_4_6_reconstructed_from_their_tensors() -> None:
    """GLM-4.5 and GLM-4.6 are GLM-4.7's config (reconstructed, and said so): the tensor lists of their BF16 GGUF
    conversions (github:Thireus/GGUF-Tool-Suite models/GLM-4.{5,6,7}/group0/tensors.bf16.map) hold the same 1,736
    main-model tensors with the same shapes, 352,797,829,024 elements without the MTP layer (summed from GLM-4.6's
    map), which the planner's count of the config must equal. Only the context differs (131,072 for GLM-4.5)."""
    for model, context in (("zai-org/GLM-4.6", 202752), ("zai-org/GLM-4.5", 131072)):
        spec = resolve_model(model)
        assert spec.params is not None and spec.params.total == 352_797_829_024, model
        assert spec.params == resolve_model("zai-org/GLM-4.7").params
        assert spec.max_model_len == context
        assert any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate)


def test_catalog_round_7_qwen3_4b_thinking_2507_reconstructed_from_its_tensors() -> None:
    """Qwen3-4B-Thinking-2507 is its Instruct-2507 sibling's config (reconstructed, and said so): the BF16 GGUF tensor
    lists of both (github:Thireus/GGUF-Tool-Suite models/Qwen3-4B-{Thinking,Instruct}-2507/group0/tensors.bf16.map)
    hold the same 398 tensors, 4,022,468,096 elements with the head tied to the embedding, which the planner's count
    must equal; 262,144 positions as its card and LM Studio's summary state."""
    spec = resolve_model("Qwen/Qwen3-4B-Thinking-2507")
    assert spec.params is not None and spec.params.total == 4_022_468_096 and spec.params.lm_head == 0
    assert spec.params == resolve_model("Qwen/Qwen3-4B-Instruct-2507").params
    assert spec.max_model_len == 262144
    assert any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate)


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
