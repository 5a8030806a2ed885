"""Catalog entries the blind field sets needed ("model not in the catalog" in benchmarks/fidelity.py): checkpoints
whose own config.json was not found, rebuilt from a bundled base config and the quantization their users document
(each entry's 'source' names the documents). Each test checks what the documents state: the base's parameter
count, the quantization as parsed, and the on-disk or logged sizes and architecture facts the sources give."""

from __future__ import annotations

import pytest

from recommender.catalog import find_model, load_model
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags
from recommender.sources.resolve import resolve_model

from .catalog_support import H100, V033, reconstructed

GB, GiB = 1e9, 2**30

# (release, base, quantization method as parsed (compressed-tensors W4A16 runs as GPTQ-style int4), weight bits, group size)
RELEASES = (
    ("google/gemma-4-E2B-it-qat-w4a16-ct", "google/gemma-4-E2B-it", "gptq", 4, 32),
    ("google/gemma-4-E4B-it-qat-w4a16-ct", "google/gemma-4-E4B-it", "gptq", 4, 32),
    ("cyankiwi/Qwen3.5-4B-AWQ-4bit", "Qwen/Qwen3.5-4B", "gptq", 4, 32),
    ("cyankiwi/Qwen3.6-35B-A3B-AWQ-4bit", "Qwen/Qwen3.6-35B-A3B", "gptq", 4, 32),
    ("cyankiwi/Qwen3.8-27B-AWQ-INT4", "Qwen/Qwen3.8-27B", "gptq", 4, 32),
    ("cpatonn/Qwen3-30B-A3B-Thinking-2507-AWQ-4bit", "Qwen/Qwen3-30B-A3B-Thinking-2507", "gptq", 4, 128),
    ("Salyut1/GLM-4.7-NVFP4", "zai-org/GLM-4.7", "nvfp4", 4, 16),
    ("lukealonso/GLM-5.1-NVFP4-MTP", "zai-org/GLM-5.1", "nvfp4", 4, 16),
)


@pytest.mark.parametrize(("release", "base", "method", "bits", "group"), RELEASES)
def test_field_release_is_its_base_in_the_documented_precision(
    release: str, base: str, method: str, bits: int, group: int
) -> None:
    spec, base_spec = resolve_model(release), resolve_model(base)
    assert spec.params is not None and spec.params == base_spec.params
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.group_size) == (
        method,
        bits,
        group,
    )
    entry = load_model(release)
    assert entry is not None and entry.base_model == base
    assert reconstructed(release)


def test_google_qat_w4a16_releases_are_variants_of_their_bases() -> None:
    """Google publishes the QAT W4A16 builds beside the 16-bit releases: `recommend` searches them with the base.
    The 31B sibling's config.json as read (find_string id 70430902425): symmetric int4 in groups of 32, lm_head and
    the vision tower 16-bit."""
    for size in ("E2B", "E4B"):
        base = load_model(f"google/gemma-4-{size}-it")
        assert base is not None and f"google/gemma-4-{size}-it-qat-w4a16-ct" in base.variants
        quant = resolve_model(f"google/gemma-4-{size}-it-qat-w4a16-ct").quant
        assert quant is not None and not quant.has_zero_points and not quant.lm_head_quantized


def test_google_qat_w4a16_weights_are_under_the_16_bit_release() -> None:
    """The int4 body leaves the E models' per-layer embeddings (16-bit, 2.35B of E2B's 5.1B) and towers: E2B's
    weights are well under its 16-bit release's but far above a quarter of it (field11 R009 logged 8.02 GiB on a T4,
    the 16-bit E2B about 9.5 GiB)."""
    flags = EngineFlags(max_model_len=8192)
    for size in ("E2B", "E4B"):
        w4 = explain(resolve_model(f"google/gemma-4-{size}-it-qat-w4a16-ct"), H100, flags, V033).stage.weights
        w16 = explain(resolve_model(f"google/gemma-4-{size}-it"), H100, flags, V033).stage.weights
        assert 0.5 < w4 / w16 < 0.85, size


def test_deepseek_v4_flash_0731_is_v4_flash_as_its_checkpoint_reader_states() -> None:
    """The architecture a reader of the 0731 checkpoint (revision 7872f01b) lists in
    github.com/anthony-chaudhary/fak/issues/12635: every stated value is the bundled V4-Flash config's; the field
    records' TP=2 weights (Q012: 74.34 GiB a GPU) are V4-Flash's FP8 attention and FP4 experts."""
    entry = load_model("deepseek-ai/DeepSeek-V4-Flash-0731")
    assert entry is not None
    stated = {
        "num_hidden_layers": 43,
        "hidden_size": 4096,
        "num_attention_heads": 64,
        "head_dim": 512,
        "qk_rope_head_dim": 64,
        "o_groups": 8,
        "o_lora_rank": 1024,
        "sliding_window": 128,
        "index_topk": 512,
        "n_routed_experts": 256,
        "n_shared_experts": 1,
        "num_experts_per_tok": 6,
        "moe_intermediate_size": 2048,
        "scoring_func": "sqrtsoftplus",
        "num_hash_layers": 3,
        "expert_dtype": "fp4",
    }
    assert {k: entry.config[k] for k in stated} == stated
    ratios = entry.config["compress_ratios"]
    assert ratios[:2] == [0, 0] and ratios[2:43] == [4, 128] * 20 + [4]
    spec, flash = resolve_model("deepseek-ai/DeepSeek-V4-Flash-0731"), resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    assert (
        spec.params == flash.params
        and spec.quant == flash.quant
        and reconstructed("deepseek-ai/DeepSeek-V4-Flash-0731")
    )
    w = explain(spec, H100, EngineFlags(max_model_len=8192, tensor_parallel_size=2), V033).stage.weights / GiB
    assert abs(w - 74.34) / 74.34 < 0.02


def test_community_nvfp4_glm_builds_by_their_logged_weights() -> None:
    """Salyut1's GLM-4.7 NVFP4 ships fused k/v quantization scales (its attention is 4-bit, unlike NVIDIA's build
    which keeps attention 16-bit): field6 L001 logged 47.11 GiB a GPU at TP=4 ('177B' on disk). lukealonso's GLM-5.1
    NVFP4 with MTP: L004 logged 55.67 GiB a GPU at TP=8."""
    for model, tp, logged in (("Salyut1/GLM-4.7-NVFP4", 4, 47.11), ("lukealonso/GLM-5.1-NVFP4-MTP", 8, 55.67)):
        spec = resolve_model(model)
        w = explain(spec, H100, EngineFlags(max_model_len=8192, tensor_parallel_size=tp), V033).stage.weights / GiB
        assert abs(w - logged) / logged < 0.02, model
    salyut, nvidia = resolve_model("Salyut1/GLM-4.7-NVFP4"), resolve_model("nvidia/GLM-4.7-NVFP4")
    assert salyut.quant is not None and nvidia.quant is not None
    assert not any("self_attn" in p for p in salyut.quant.keep_unquantized)
    assert any("self_attn" in p for p in nvidia.quant.keep_unquantized)


def test_cyankiwi_int4_sizes_as_documented() -> None:
    """cyankiwi/Qwen3.6-35B-A3B-AWQ-4bit: '24 GB, compressed-tensors pack-quantized 4-bit' (deployment survey),
    '~11.4 GB/card' at TP=2; cyankiwi/Qwen3.5-4B-AWQ-4bit: field11 R011 logged 3.85 GiB."""
    moe = resolve_model("cyankiwi/Qwen3.6-35B-A3B-AWQ-4bit")
    w1 = explain(moe, H100, EngineFlags(max_model_len=8192), V033).stage.weights
    assert 20 * GB < w1 < 25 * GB
    small = explain(resolve_model("cyankiwi/Qwen3.5-4B-AWQ-4bit"), H100, EngineFlags(max_model_len=8192), V033)
    assert abs(small.stage.weights / GiB - 3.85) / 3.85 < 0.05


def test_unsloth_gemma_4_26b_a4b_it_is_the_instruct_release() -> None:
    """unsloth's re-upload of gemma-4-26B-A4B-it resolves to the bundled 26B-A4B config, as Google's own -it id does,
    in the case the field10 Q006 report typed it."""
    match = find_model("unsloth/gemma-4-26b-a4b-it")
    assert match is not None and match.entry.id == "google/gemma-4-26B-A4B"
    assert resolve_model("unsloth/gemma-4-26b-a4b-it").params == resolve_model("google/gemma-4-26B-A4B-it").params


def test_a_bare_name_shared_by_aliases_of_one_target_resolves() -> None:
    """'gemma-4-26B-A4B-it FP8' (field8 N013) names no organisation; google/gemma-4-26B-A4B-it and unsloth's copy are
    both aliases of the bundled 26B-A4B config, so the bare name still means that config (and says both ids)."""
    match = find_model("gemma-4-26b-a4b-it")
    assert match is not None and match.entry.id == "google/gemma-4-26B-A4B"
    assert match.via is not None and "google/gemma-4-26B-A4B-it" in match.via and "unsloth/" in match.via
    assert not match.same_model


def test_kimi_vl_a3b_instruct_by_hand() -> None:
    """Kimi-VL-A3B-Instruct's real config.json (revision 398eede0): a DeepSeek-V3 text decoder of 27 layers of 2048
    with MLA (no q LoRA: q 2048 x 16 x 192, kv_a 2048 x 576, kv_b 512 x 16 x 256, o 2048 x 2048), layer 0 dense
    (3 x 2048 x 11264), layers 1-26 with 64 routed and 2 shared experts of 3 x 2048 x 1408 and a 64-way router with
    its bias; untied 163,840-row embedding and head: 15,960,110,208; with MoonViT and the projector ~16.4B (the
    card's 16B). Calibration C036/C037 logged 30.74 / 15.53 GiB of weights at TP 1 / 2."""
    h, layers, vocab, expert = 2048, 27, 163840, 3 * 2048 * 1408
    attention = layers * (h * 16 * 192 + h * 576 + 512 * 16 * 256 + 16 * 128 * h)
    text = attention + 3 * h * 11264 + 26 * (66 * expert + 64 * h + 64) + 2 * vocab * h
    text += layers * (2 * h + 512) + h
    assert text == 15_960_110_208
    spec = resolve_model("moonshotai/Kimi-VL-A3B-Instruct")
    assert spec.params is not None and spec.params.total - spec.params.vision == text
    assert 0.38e9 < spec.params.vision < 0.45e9 and not spec.approximate
    assert spec.params.experts == 26 * 64 * expert and spec.max_model_len == 131072
    for tp, logged in ((1, 30.74), (2, 15.53)):
        w = explain(spec, H100, EngineFlags(max_model_len=8192, tensor_parallel_size=tp), V033).stage.weights / GiB
        assert abs(w - logged) / logged < 0.02, tp


def test_redhatai_qwen3_5_4b_fp8_dynamic_keeps_the_quoted_modules() -> None:
    """The checkpoint's ignore list as a reader of its config.json quotes it: lm_head, embeddings, MTP, the vision
    tower and the linear-attention layers stay 16-bit; a boot log of it: 'Model loading took 5.67 GiB' (the vision
    tower is retained)."""
    spec = resolve_model("RedHatAI/Qwen3.5-4B-FP8-dynamic")
    assert spec.params == resolve_model("Qwen/Qwen3.5-4B").params and reconstructed("RedHatAI/Qwen3.5-4B-FP8-dynamic")
    assert spec.quant is not None and spec.quant.method == "fp8" and spec.quant.bits == 8
    assert any("linear_attn" in p for p in spec.quant.keep_unquantized)
    w = explain(spec, H100, EngineFlags(max_model_len=8192), V033).stage.weights / GiB
    assert abs(w - 5.67) / 5.67 < 0.1
    base = load_model("Qwen/Qwen3.5-4B")
    assert base is not None and "RedHatAI/Qwen3.5-4B-FP8-dynamic" in base.variants


def test_google_gemma_4_31b_qat_w4a16_between_its_file_and_its_file_less_one_table() -> None:
    """A reader of google/gemma-4-31b-it-qat-w4a16-ct's config.json and model.safetensors (find_string id 70430902425):
    int4 symmetric groups of 32, vision tower and the tied 262,144 x 5,376 embedding 16-bit, one file of
    23,265,352,448 bytes. What vLLM loads at TP 1 lies under the file and above the file less one 16-bit embedding
    table (the file may store the tied head beside the embedding); about a third of the 16-bit release."""
    spec = resolve_model("google/gemma-4-31B-it-qat-w4a16-ct")
    assert spec.params == resolve_model("google/gemma-4-31B-it").params
    assert spec.quant is not None and (spec.quant.bits, spec.quant.group_size, spec.quant.has_zero_points) == (
        4,
        32,
        False,
    )
    flags = EngineFlags(max_model_len=8192)
    w4 = explain(spec, H100, flags, V033).stage.weights
    file_bytes, table = 23_265_352_448, 262144 * 5376 * 2
    assert file_bytes - table < w4 < file_bytes
    w16 = explain(resolve_model("google/gemma-4-31B-it"), H100, flags, V033).stage.weights
    assert 0.3 < w4 / w16 < 0.4
    base = load_model("google/gemma-4-31B-it")
    assert base is not None and "google/gemma-4-31B-it-qat-w4a16-ct" in base.variants


def test_huihui_gpt_oss_20b_abliterated_is_gpt_oss_20b() -> None:
    """The repository at 79f64a52 holds 13,789,257,124 bytes outside GGUF/ (a pinned mirror manifest): gpt-oss-20b's
    MXFP4 checkpoint, within 1 % of what the planner loads at TP 1 (field2 G015 logged 13.72 GiB on a GB10)."""
    spec, base = resolve_model("huihui-ai/Huihui-gpt-oss-20b-mxfp4-abliterated-v2"), resolve_model("openai/gpt-oss-20b")
    assert spec.params == base.params and spec.quant == base.quant
    assert reconstructed("huihui-ai/Huihui-gpt-oss-20b-mxfp4-abliterated-v2")
    w = explain(spec, H100, EngineFlags(max_model_len=8192), V033).stage.weights
    assert abs(w - 13_789_257_124) / 13_789_257_124 < 0.01


def test_community_4_bit_builds_of_bundled_bases() -> None:
    """cognitivecomputations/DeepSeek-V3-0324-AWQ ('AWQ 4-bit, group 128', '~360GB'): field7 M013 logged 21.21 GiB a
    GPU at TP 16. TechxGenus/Mistral-Large-Instruct-2407-GPTQ: the 'GPTQ Int4' build of Mistral Large 2, '~67 GB'."""
    dsv3 = resolve_model("cognitivecomputations/DeepSeek-V3-0324-AWQ")
    assert dsv3.params == resolve_model("deepseek-ai/DeepSeek-V3-0324").params
    assert dsv3.quant is not None and (dsv3.quant.method, dsv3.quant.bits, dsv3.quant.group_size) == ("awq", 4, 128)
    w = explain(dsv3, H100, EngineFlags(max_model_len=8192, tensor_parallel_size=16), V033).stage.weights / GiB
    assert abs(w - 21.21) / 21.21 < 0.02
    large = resolve_model("TechxGenus/Mistral-Large-Instruct-2407-GPTQ")
    assert large.params == resolve_model("mistralai/Mistral-Large-Instruct-2407").params
    assert large.quant is not None and (large.quant.method, large.quant.bits) == ("gptq", 4)
    w = explain(large, H100, EngineFlags(max_model_len=8192), V033).stage.weights
    assert 60 * GB < w < 70 * GB
    for model in ("cognitivecomputations/DeepSeek-V3-0324-AWQ", "TechxGenus/Mistral-Large-Instruct-2407-GPTQ"):
        assert reconstructed(model)
