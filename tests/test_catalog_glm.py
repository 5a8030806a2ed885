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


def _glm4v_tower() -> int:
    """The GLM-4.1V vision tower by hand (vllm glm4_1v.py Glm4vVisionTransformer, 24 blocks of 1536, out 4096,
    merger 13696): a biased Conv3d patch embedding 3 x 2 x 14 x 14 x 1536 + 1536, 576 learned positions, per block a
    bias-free qkv 1536 x 4608, proj 1536^2, gate_up 1536 x 2 x 4096 and down 4096 x 1536 (the blocks' MLP is
    out_hidden_size wide) with two RMSNorms, post-conv and post RMSNorms, a biased 2 x 2 Conv2d 1536 x 4 -> 4096,
    and the merger: proj 4096^2, a LayerNorm, gate_up 4096 x 2 x 13696, down 13696 x 4096, all bias-free."""
    h, o, i = 1536, 4096, 13696
    block = 3 * h * h + h * h + 2 * o * h + o * h + 2 * h
    merger = o * o + 2 * o + 2 * i * o + i * o
    return 3 * 2 * 14 * 14 * h + h + 576 * h + 2 * h + 24 * block + o * h * 4 + o + merger


def test_glm_4_5v_and_4_6v_are_glm_4_5_air_behind_the_glm_4_1v_tower() -> None:
    """GLM-4.5V (reconstructed: its text_config from Intel's AutoRound copy, the tower from transformers' Glm4vMoe
    defaults) and GLM-4.6V (the same network with 131,072 positions): glm4_1v.py builds the language model as
    Glm4MoeForCausalLM from text_config, so the text weights are GLM-4.5-Air's 106,852,251,264; the tower adds
    892,498,432: 107,744,749,696, the hub's 108B."""
    tower = _glm4v_tower()
    assert tower == 892_498_432
    air = resolve_model("zai-org/GLM-4.5-Air")
    assert air.params is not None and air.params.total == 106_852_251_264
    for model_id, context in (("zai-org/GLM-4.5V", 65536), ("zai-org/GLM-4.6V", 131072)):
        vl = resolve_model(model_id)
        assert vl.params is not None and vl.params.vision == tower, model_id
        assert vl.params.total == air.params.total + tower == 107_744_749_696
        assert vl.moe == air.moe and vl.mlp_kinds == air.mlp_kinds and vl.max_model_len == context
        assert len(vl.approximate) == 1 and vl.approximate[0].startswith("config.json reconstructed: ")


def test_glm_4_1v_9b_thinking_and_4_6v_flash_by_hand() -> None:
    """GLM-4.1V-9B-Thinking (reconstructed: a transformers test repository's copy of its config) and GLM-4.6V-Flash
    (a fine-tune's copy of its text_config): 40 layers of 4096, q 4096^2 and k/v 4096 x 256 with biases, o 4096^2,
    gated MLP 3 x 4096 x 13696, untied 151,552-row embedding and head, and the GLM-4.1V tower: 10,292,449,792
    parameters, the hub's 10B. The language model is Glm4ForCausalLM (four RMSNorms a layer), which the planner counts
    as a Llama-style decoder (two) and says so."""
    h = 4096
    text = 40 * (h * h + h + 2 * (h * 256 + 256) + h * h + 3 * h * 13696) + 2 * 151552 * h
    for model_id, context in (("zai-org/GLM-4.1V-9B-Thinking", 65536), ("zai-org/GLM-4.6V-Flash", 131072)):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.vision == _glm4v_tower(), model_id
        assert spec.params.total - spec.params.norms == text + _glm4v_tower()  # the language model's norms apart
        assert spec.params.total == 10_292_449_792 and spec.max_model_len == context
        assert (spec.num_kv_heads, spec.head_dim) == (2, 128)
        assert any("'glm4v_text' is not in vllm-plan's architecture table" in r for r in spec.approximate)
