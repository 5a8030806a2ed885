"""Catalog entries of Zhipu's GLM-4.5, 4.6 and 4.7 and their FP8 releases. Entries and aliases are checked against
their sources by hand; each test's docstring names them (and the field set or issue that brought the model in)."""

from __future__ import annotations

from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags
from recommender.sources.resolve import resolve_model

from .catalog_support import H100, V033


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


def test_glm_4_7_fp8_declares_the_publisher_s_compressed_tensors_fp8() -> None:
    """GLM-4.7-FP8 is a compressed-tensors W8A8 FP8 checkpoint (its hub page's library tag), not GLM-5-FP8's block
    FP8: per-channel FP8 Linear weights, 16-bit embedding, lm_head and router; at TP=8 a bit over half of GLM-4.7."""
    fp8, bf16 = resolve_model("zai-org/GLM-4.7-FP8"), resolve_model("zai-org/GLM-4.7")
    assert fp8.quant is not None and fp8.quant.checkpoint_format == "compressed-tensors" and fp8.quant.bits == 8
    assert fp8.quant.block is None and not fp8.quant.lm_head_quantized
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=8)
    w8, w16 = explain(fp8, H100, flags, V033).stage.weights, explain(bf16, H100, flags, V033).stage.weights
    assert 0.5 < w8 / w16 < 0.53


def test_glm_4_5v_is_glm_4_5_air_behind_the_glm_4_1v_tower() -> None:
    """GLM-4.5V (reconstructed: its text_config from Intel's AutoRound copy, the vision tower from transformers'
    Glm4vMoe defaults): glm4_1v.py builds its language model as Glm4MoeForCausalLM from text_config, so the text
    weights are GLM-4.5-Air's 106,852,251,264 (46 layers, 128 experts of 1408, one shared, first layer dense) and
    the tower (24 blocks of 1536) adds about 1.3B: 108.2B, the hub's 108B. Context 65,536."""
    vl, air = resolve_model("zai-org/GLM-4.5V"), resolve_model("zai-org/GLM-4.5-Air")
    assert vl.params is not None and air.params is not None
    assert vl.params.total - vl.params.vision == air.params.total == 106_852_251_264
    assert 1.0e9 < vl.params.vision < 1.5e9 and 107.5e9 < vl.params.total < 108.5e9
    assert vl.moe == air.moe and vl.mlp_kinds == air.mlp_kinds and vl.max_model_len == 65536
    assert vl.vision is not None and vl.vision.depth == 24
    assert len(vl.approximate) == 1 and vl.approximate[0].startswith("config.json reconstructed: ")
