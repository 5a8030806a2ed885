"""Publishers' quantized releases that vLLM deployments serve (benchmarks/data/deployed_models.txt): each is its
bundled base model's architecture with the publisher's quantization block (reconstructed: the repositories' own
config.json files were not found), listed as a variant of that base so `recommend` searches it."""

from __future__ import annotations

import pytest

from recommender.catalog import load_model
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model

from .catalog_support import H100, V033, reconstructed

# (release, base, quantization method as parsed, weight bits)
RELEASES = (
    ("RedHatAI/Llama-3.2-1B-Instruct-quantized.w8a8", "meta-llama/Llama-3.2-1B-Instruct", "int8", 8),
    ("RedHatAI/Llama-3.2-3B-Instruct-quantized.w8a8", "meta-llama/Llama-3.2-3B-Instruct", "int8", 8),
    ("RedHatAI/Meta-Llama-3.1-8B-quantized.w8a8", "meta-llama/Meta-Llama-3.1-8B", "int8", 8),
    ("RedHatAI/Llama-3.2-1B-FP8", "meta-llama/Llama-3.2-1B", "fp8", 8),
    ("RedHatAI/gemma-2-9b-it-FP8", "google/gemma-2-9b-it", "fp8", 8),
    ("RedHatAI/gemma-2-9b-it-quantized.w8a8", "google/gemma-2-9b-it", "int8", 8),
    ("nvidia/Llama-3.1-8B-Instruct-FP8", "meta-llama/Llama-3.1-8B-Instruct", "fp8", 8),
    ("nvidia/Llama-3.1-8B-Instruct-NVFP4", "meta-llama/Llama-3.1-8B-Instruct", "nvfp4", 4),
    ("zai-org/GLM-4.5-FP8", "zai-org/GLM-4.5", "fp8", 8),
    ("zai-org/GLM-4.6-FP8", "zai-org/GLM-4.6", "fp8", 8),
    ("Qwen/Qwen1.5-32B-Chat-AWQ", "Qwen/Qwen1.5-32B-Chat", "awq", 4),
    ("Qwen/Qwen3-VL-235B-A22B-Instruct-FP8", "Qwen/Qwen3-VL-235B-A22B-Instruct", "fp8", 8),
    ("nvidia/Qwen3-Coder-480B-A35B-Instruct-NVFP4", "Qwen/Qwen3-Coder-480B-A35B-Instruct", "nvfp4", 4),
    ("nvidia/Qwen3-VL-235B-A22B-Instruct-NVFP4", "Qwen/Qwen3-VL-235B-A22B-Instruct", "nvfp4", 4),
    ("nvidia/Qwen3-Next-80B-A3B-Instruct-NVFP4", "Qwen/Qwen3-Next-80B-A3B-Instruct", "nvfp4", 4),
    ("nvidia/DeepSeek-R1-0528-NVFP4-v2", "deepseek-ai/DeepSeek-R1-0528", "nvfp4", 4),
    ("nvidia/DeepSeek-V3-FP4", "deepseek-ai/DeepSeek-V3", "nvfp4", 4),
    ("nvidia/GLM-4.7-NVFP4", "zai-org/GLM-4.7", "nvfp4", 4),
    ("nvidia/Kimi-K2-Thinking-NVFP4", "moonshotai/Kimi-K2-Thinking", "nvfp4", 4),
    ("nvidia/Llama-3.3-70B-Instruct-NVFP4", "meta-llama/Llama-3.3-70B-Instruct", "nvfp4", 4),
    ("nvidia/Llama-4-Scout-17B-16E-Instruct-FP8", "meta-llama/Llama-4-Scout-17B-16E-Instruct", "fp8", 8),
    ("nvidia/Llama-4-Scout-17B-16E-Instruct-NVFP4", "meta-llama/Llama-4-Scout-17B-16E-Instruct", "nvfp4", 4),
    ("nvidia/Llama-4-Scout-17B-16E-Instruct-FP4", "meta-llama/Llama-4-Scout-17B-16E-Instruct", "nvfp4", 4),
    ("nvidia/NVIDIA-Nemotron-Nano-9B-v2-FP8", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "fp8", 8),
    ("nvidia/NVIDIA-Nemotron-Nano-9B-v2-NVFP4", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nvfp4", 4),
    ("RedHatAI/gemma-4-31B-it-FP8-dynamic", "google/gemma-4-31B-it", "fp8", 8),
    ("RedHatAI/gemma-4-E2B-it-FP8-dynamic", "google/gemma-4-E2B-it", "fp8", 8),
    ("RedHatAI/gemma-4-E4B-it-FP8-dynamic", "google/gemma-4-E4B-it", "fp8", 8),
    ("RedHatAI/MiniMax-M2-NVFP4", "MiniMaxAI/MiniMax-M2", "nvfp4", 4),
    ("Qwen/Qwen3.6-27B-GPTQ-Int4", "Qwen/Qwen3.6-27B", "gptq", 4),
    ("unsloth/phi-4-bnb-4bit", "microsoft/phi-4", "bitsandbytes", 4),
    ("unsloth/Llama-3.3-70B-Instruct-bnb-4bit", "meta-llama/Llama-3.3-70B-Instruct", "bitsandbytes", 4),
    ("unsloth/Llama-3.2-3B-Instruct-bnb-4bit", "meta-llama/Llama-3.2-3B-Instruct", "bitsandbytes", 4),
    ("unsloth/Llama-3.2-1B-Instruct-bnb-4bit", "meta-llama/Llama-3.2-1B-Instruct", "bitsandbytes", 4),
    ("unsloth/Qwen3-14B-bnb-4bit", "Qwen/Qwen3-14B", "bitsandbytes", 4),
    ("unsloth/Qwen3-32B-bnb-4bit", "Qwen/Qwen3-32B", "bitsandbytes", 4),
    ("casperhansen/llama-3.3-70b-instruct-awq", "meta-llama/Llama-3.3-70B-Instruct", "awq", 4),
    (
        "unsloth/Mistral-Small-24B-Instruct-2501-bnb-4bit",
        "mistralai/Mistral-Small-24B-Instruct-2501",
        "bitsandbytes",
        4,
    ),
)


@pytest.mark.parametrize(("release", "base", "method", "bits"), RELEASES)
def test_release_is_its_base_in_the_publishers_precision(release: str, base: str, method: str, bits: int) -> None:
    spec, base_spec = resolve_model(release), resolve_model(base)
    assert spec.params is not None and spec.params == base_spec.params
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits) == (method, bits)
    entry, base_entry = load_model(release), load_model(base)
    assert entry is not None and base_entry is not None
    assert entry.base_model == base and release in base_entry.variants
    assert reconstructed(release)


def test_unsloth_llama_3_1_70b_bnb_4bit_is_not_a_listed_variant() -> None:
    """unsloth/Meta-Llama-3.1-70B-Instruct-bnb-4bit (issue 11; reconstructed) resolves as Llama-3.1-70B-Instruct in
    NF4, but is not listed among that base's variants: vLLM 0.33 (the default release) no longer loads bitsandbytes,
    so `recommend` for the base (examples/llama-3.1-70b-on-4xh100) would only gain six rejected rows."""
    release, base = "unsloth/Meta-Llama-3.1-70B-Instruct-bnb-4bit", "meta-llama/Llama-3.1-70B-Instruct"
    spec, base_spec = resolve_model(release), resolve_model(base)
    assert spec.params is not None and spec.params == base_spec.params
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits) == ("bitsandbytes", 4)
    entry, base_entry = load_model(release), load_model(base)
    assert entry is not None and base_entry is not None and entry.base_model == base
    assert release not in base_entry.variants and reconstructed(release)


def test_the_old_neuralmagic_ids_resolve_to_the_redhatai_entries() -> None:
    """KubeAI's model catalog serves neuralmagic/gemma-2-9b-it-FP8: the organisation's old name (aliases.yaml
    renames) finds the RedHatAI entry."""
    assert resolve_model("neuralmagic/gemma-2-9b-it-FP8").params == resolve_model("RedHatAI/gemma-2-9b-it-FP8").params


def test_llama_3_2_and_gemma_2_counts_by_hand() -> None:
    """The bases' published sizes, by hand. Llama 3.2 1B: 16 layers of 2048 (q/o 2048^2, k/v 2048 x 512, gated MLP
    3 x 2048 x 8192, two RMSNorms), tied 128,256-row embedding, final norm: 1,235,814,400 (Meta's 1.23B). Llama 3.2
    3B: 28 layers of 3072 (k/v 3072 x 1024, MLP 8192): 3,212,749,824 (3.21B). Gemma 2 9B: 42 layers of 3584 (q 3584
    x 16 x 256, o back, k/v 3584 x 8 x 256, gated MLP 3 x 3584 x 14336, four RMSNorms), tied 256,000-row embedding:
    9,241,705,984 (Google's 9.24B)."""

    def llama(h: int, layers: int, kv: int, mlp: int, vocab: int) -> int:
        return layers * (2 * h * h + 2 * h * kv + 3 * h * mlp + 2 * h) + vocab * h + h

    assert llama(2048, 16, 512, 8192, 128256) == 1_235_814_400
    assert llama(3072, 28, 1024, 8192, 128256) == 3_212_749_824
    h = 3584
    gemma = 42 * (2 * h * 4096 + 2 * h * 2048 + 3 * h * 14336 + 4 * h) + 256000 * h + h
    assert gemma == 9_241_705_984
    for model_id, total in (
        ("RedHatAI/Llama-3.2-1B-FP8", 1_235_814_400),
        ("RedHatAI/Llama-3.2-1B-Instruct-quantized.w8a8", 1_235_814_400),
        ("RedHatAI/Llama-3.2-3B-Instruct-quantized.w8a8", 3_212_749_824),
        ("RedHatAI/gemma-2-9b-it-FP8", gemma),
    ):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total, model_id


def test_qwen1_5_32b_chat_awq_by_hand() -> None:
    """Qwen1.5-32B-Chat: 64 layers of 5120 (q/o 5120^2 with a q bias, k/v 5120 x 8 x 128 with biases, gated MLP
    3 x 5120 x 27392, two RMSNorms), untied 152,064-row embedding and head, final norm: 32,512,218,112 (Qwen's
    32.5B); in AWQ 4-bit (group 128) the weights at TP=1 are under a third of the 16-bit checkpoint's (embedding and
    head stay 16-bit)."""
    h, kv, vocab = 5120, 1024, 152064
    total = 64 * (2 * h * h + h + 2 * (h * kv + kv) + 3 * h * 27392 + 2 * h) + 2 * vocab * h + h
    assert total == 32_512_218_112
    awq, bf16 = resolve_model("Qwen/Qwen1.5-32B-Chat-AWQ"), resolve_model("Qwen/Qwen1.5-32B-Chat")
    assert awq.params is not None and awq.params.total == total
    flags = EngineFlags(max_model_len=4096)
    w4, w16 = explain(awq, H100, flags, V033).stage.weights, explain(bf16, H100, flags, V033).stage.weights
    assert 0.28 < w4 / w16 < 0.31


def test_8_bit_moe_releases_load_about_half_at_tp8() -> None:
    """GLM-4.5/4.6 FP8 (compressed-tensors, routers and lm_head 16-bit) and Qwen3-VL-235B-A22B FP8 (128 x 128
    blocks, vision tower and routers 16-bit): a bit over half of the 16-bit checkpoint per GPU at TP=8."""
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=8)
    for release, base in (
        ("zai-org/GLM-4.5-FP8", "zai-org/GLM-4.5"),
        ("zai-org/GLM-4.6-FP8", "zai-org/GLM-4.6"),
        ("Qwen/Qwen3-VL-235B-A22B-Instruct-FP8", "Qwen/Qwen3-VL-235B-A22B-Instruct"),
    ):
        w8 = explain(resolve_model(release), H100, flags, V033).stage.weights
        w16 = explain(resolve_model(base), H100, flags, V033).stage.weights
        assert 0.5 < w8 / w16 < 0.52, release


def test_releases_whose_base_resolves_through_an_alias() -> None:
    """Qwen3-235B-A22B-Instruct-2507 and gemma-4-26B-A4B-it are aliases (aliases.yaml), not entries, so their
    quantized releases name no base_model; each is its alias's architecture in the publisher's precision."""
    for release, base, method in (
        ("nvidia/Qwen3-235B-A22B-Instruct-2507-NVFP4", "Qwen/Qwen3-235B-A22B-Instruct-2507", "nvfp4"),
        ("RedHatAI/gemma-4-26B-A4B-it-FP8-dynamic", "google/gemma-4-26B-A4B-it", "fp8"),
        ("RedHatAI/gemma-4-26B-A4B-it-NVFP4", "google/gemma-4-26B-A4B-it", "nvfp4"),
    ):
        spec, base_spec = resolve_model(release), resolve_model(base)
        assert spec.params is not None and spec.params == base_spec.params, release
        assert spec.quant is not None and spec.quant.method == method, release
        assert reconstructed(release)


def test_bf16_and_native_releases_are_the_bases_of_the_bundled_quantizations() -> None:
    """NVIDIA's BF16 Nemotron checkpoints (the bundled quantization's real config.json read at 16 bits) and
    Moonshot's own INT4 Kimi releases (their real config.json): the bases of NVIDIA's quantizations, listed with them
    as variants and of the same parameter count."""
    for base, quantized, method in (
        ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", None),
        (
            "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16",
            "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4",
            None,
        ),
        ("moonshotai/Kimi-K2.6", "nvidia/Kimi-K2.6-NVFP4", "gptq"),
        ("moonshotai/Kimi-K2.7-Code", "nvidia/Kimi-K2.7-Code-NVFP4", "gptq"),
    ):
        spec, q_spec = resolve_model(base), resolve_model(quantized)
        assert spec.params is not None and spec.params == q_spec.params, base
        assert (spec.quant.method if spec.quant else None) == method, base
        entry, q_entry = load_model(base), load_model(quantized)
        assert entry is not None and q_entry is not None
        assert quantized in entry.variants and q_entry.base_model == base
        # Moonshot's own config.json files are bundled (KinChow/model-structure-viewer); NVIDIA's BF16 ones are not
        assert reconstructed(base) == base.startswith("nvidia/")


def test_qwen3_coder_480b_count_by_hand() -> None:
    """Qwen3-Coder-480B-A35B: 62 layers of 6144 (q 6144 x 96 x 128 and o back, k/v 6144 x 8 x 128, q/k RMSNorms of
    128, two RMSNorms of 6144), 160 experts of gated 3 x 6144 x 2560 and a 6144 x 160 router per layer, untied
    151,936-row embedding and head, final norm: 480,154,875,392 (Qwen's 480B); NVIDIA's NVFP4 release at TP=8 holds
    a bit under 0.29 of the 16-bit checkpoint per GPU (routers, embedding and lm_head stay 16-bit)."""
    h, q, kv = 6144, 96 * 128, 8 * 128
    layer = 2 * h * q + 2 * h * kv + 2 * 128 + 160 * 3 * h * 2560 + h * 160 + 2 * h
    total = 62 * layer + 2 * 151936 * h + h
    assert total == 480_154_875_392
    spec = resolve_model("nvidia/Qwen3-Coder-480B-A35B-Instruct-NVFP4")
    assert spec.params is not None and spec.params.total == total
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=8)
    w4 = explain(spec, H100, flags, V033).stage.weights
    w16 = explain(resolve_model("Qwen/Qwen3-Coder-480B-A35B-Instruct"), H100, flags, V033).stage.weights
    assert 0.27 < w4 / w16 < 0.29


def test_nemotron_nano_9b_v2_nvfp4_keeps_the_layers_its_sibling_keeps() -> None:
    """nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4 keeps lm_head, every attention layer, the Mamba layer before each
    attention layer and every conv1d 16-bit; the same rule over Nemotron-Nano-9B-v2's pattern keeps its 4 attention
    layers and 4 Mamba layers, so the 4-bit checkpoint is well over a quarter of the 16-bit one."""
    entry = load_model("nvidia/NVIDIA-Nemotron-Nano-9B-v2-NVFP4")
    assert entry is not None and entry.hf_quant_config is not None
    kept = entry.hf_quant_config["quantization"]["exclude_modules"]
    assert sum(k.endswith(".o_proj") for k in kept) == 4 and sum(k.endswith(".in_proj") for k in kept) == 4
    flags = EngineFlags(max_model_len=4096)
    w4 = explain(resolve_model(entry.id), H100, flags, V033).stage.weights
    w16 = explain(resolve_model("nvidia/NVIDIA-Nemotron-Nano-9B-v2"), H100, flags, V033).stage.weights
    assert 0.35 < w4 / w16 < 0.5


def test_unsloth_llama_3_3_70b_bnb_4bit_loads_its_published_shards() -> None:
    """unsloth/Llama-3.3-70B-Instruct-bnb-4bit (issue 11; reconstructed): its eight safetensors shards are 39.53 GB
    (the repository's file list: 4.95 + 4.98 + 4.98 + 4.93 + 4.98 + 4.98 + 4.98 + 4.75). vLLM 0.9.1 loads them as
    stored (NF4 nibbles, uint8 absmax with nested float32 absmax, embedding and lm_head 16-bit): within 0.2 % of
    that; from 0.9.2 the absmax is dequantized to float32 at load, so the weights grow by 3 bytes per 64-element
    block, about 3.2 GB for 68.4B linear weights."""
    spec = resolve_model("unsloth/Llama-3.3-70B-Instruct-bnb-4bit")
    flags = EngineFlags(max_model_len=4096)
    old = explain(spec, H100, flags, VllmVersion.parse("0.9.1")).stage.weights
    assert abs(old / 39.53e9 - 1) < 0.002
    new = explain(spec, H100, flags, VllmVersion.parse("0.10.0")).stage.weights
    assert 3.0e9 < new - old < 3.4e9
    assert spec.max_model_len == 131072


def test_casperhansen_llama_3_3_70b_awq_weighs_what_its_llama_3_sibling_does() -> None:
    """casperhansen/llama-3.3-70b-instruct-awq (issue 11; reconstructed): the same 80 layers of 8192 and 128,256-row
    vocabulary as the publisher's bundled llama-3-70b-instruct-awq (whose nine shards, 4.97 + 6 x 4.89 + 3.36 + 2.1 =
    39.77 GB, its weights match), and the 3.3 repository lists the same first seven shard sizes: the two load within
    0.2 % of each other, while the context is Llama 3.3's 131,072 positions, not Llama 3's 8,192."""
    new, old = (
        resolve_model("casperhansen/llama-3.3-70b-instruct-awq"),
        resolve_model("casperhansen/llama-3-70b-instruct-awq"),
    )
    flags = EngineFlags(max_model_len=4096)
    w_new, w_old = (explain(s, H100, flags, V033).stage.weights for s in (new, old))
    assert abs(w_old / 39.77e9 - 1) < 0.002 and abs(w_new / w_old - 1) < 0.002
    assert (new.max_model_len, old.max_model_len) == (131072, 8192)
