"""Popular ids that exited 4 offline (issue #11), session 11: entries checked against their sources by hand."""

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


def test_unsloth_llama_3_1_8b_bnb_4bit_is_the_base_model_in_nf4() -> None:
    """unsloth/Meta-Llama-3.1-8B-bnb-4bit (reconstructed): the base model's 32 layers of 4096 (q/o 4096^2, k/v
    4096 x 1024, gated MLP 3 x 4096 x 14336, two RMSNorms), untied 128,256-row embedding and head, final norm:
    8,030,261,248 parameters (Meta's card), in bitsandbytes NF4."""
    h, vocab = 4096, 128256
    total = 32 * (2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h) + 2 * vocab * h + h
    assert total == 8_030_261_248
    spec = resolve_model("unsloth/Meta-Llama-3.1-8B-bnb-4bit")
    assert spec.params is not None and spec.params.total == total
    assert spec.params == resolve_model("meta-llama/Meta-Llama-3.1-8B").params
    assert spec.quant is not None and spec.quant.method == "bitsandbytes" and spec.quant.bits == 4
    assert spec.max_model_len == 131072 and _reconstructed("unsloth/Meta-Llama-3.1-8B-bnb-4bit")


def test_unsloth_qwen3_8b_bnb_4bit_is_qwen3_8b_in_nf4() -> None:
    """unsloth/Qwen3-8B-bnb-4bit (reconstructed): Qwen3-8B's 8,190,735,360 parameters (36 layers of 4096, q/k norms
    of 128, gated MLP 3 x 4096 x 12288, untied 151,936-row embedding and head) in bitsandbytes NF4."""
    h, vocab = 4096, 151936
    total = 36 * (2 * h * h + 2 * h * 1024 + 2 * 128 + 3 * h * 12288 + 2 * h) + 2 * vocab * h + h
    assert total == 8_190_735_360
    spec = resolve_model("unsloth/Qwen3-8B-bnb-4bit")
    assert spec.params is not None and spec.params.total == total
    assert spec.quant is not None and spec.quant.method == "bitsandbytes" and spec.quant.bits == 4
    assert spec.max_model_len == 40960 and _reconstructed("unsloth/Qwen3-8B-bnb-4bit")


def test_qwen3_next_instruct_fp8_is_block_fp8_of_the_instruct_release() -> None:
    """Qwen3-Next-80B-A3B-Instruct-FP8 (reconstructed): the Instruct release's parameters in Qwen's 128 x 128 block
    FP8; at TP=2 each GPU loads a bit over half of the 16-bit checkpoint (embedding, lm_head, routers and
    shared-expert gates stay 16-bit). It is listed as a variant of the Instruct entry."""
    fp8, bf16 = resolve_model("Qwen/Qwen3-Next-80B-A3B-Instruct-FP8"), resolve_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert fp8.params is not None and fp8.params == bf16.params
    assert fp8.quant is not None and fp8.quant.bits == 8 and fp8.quant.block == (128, 128)
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=2)
    w8, w16 = explain(fp8, H100, flags, V033).stage.weights, explain(bf16, H100, flags, V033).stage.weights
    assert 0.5 < w8 / w16 < 0.53
    base = load_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert base is not None and "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8" in base.variants
    assert _reconstructed("Qwen/Qwen3-Next-80B-A3B-Instruct-FP8")


def test_glm_4_7_fp8_declares_the_publisher_s_compressed_tensors_fp8() -> None:
    """GLM-4.7-FP8 is a compressed-tensors W8A8 FP8 checkpoint (its hub page's library tag), not GLM-5-FP8's block
    FP8: per-channel FP8 Linear weights, 16-bit embedding, lm_head and router; at TP=8 a bit over half of GLM-4.7."""
    fp8, bf16 = resolve_model("zai-org/GLM-4.7-FP8"), resolve_model("zai-org/GLM-4.7")
    assert fp8.quant is not None and fp8.quant.checkpoint_format == "compressed-tensors" and fp8.quant.bits == 8
    assert fp8.quant.block is None and not fp8.quant.lm_head_quantized
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=8)
    w8, w16 = explain(fp8, H100, flags, V033).stage.weights, explain(bf16, H100, flags, V033).stage.weights
    assert 0.5 < w8 / w16 < 0.53


def test_fp8_releases_are_variants_of_their_base_entries() -> None:
    """recommend searches a base entry's variants: the bundled FP8 releases of Llama-3.3-70B and GLM-4.5-Air are
    listed, each naming its base back."""
    for base_id, variant in (
        ("meta-llama/Llama-3.3-70B-Instruct", "nvidia/Llama-3.3-70B-Instruct-FP8"),
        ("zai-org/GLM-4.5-Air", "zai-org/GLM-4.5-Air-FP8"),
    ):
        base, entry = load_model(base_id), load_model(variant)
        assert base is not None and entry is not None
        assert variant in base.variants and entry.base_model == base_id


def test_granite_4_0_micro_by_hand() -> None:
    """Granite 4.0 Micro (reconstructed): 40 attention layers of 2560 (q/o 2560^2, k/v 2560 x 8 x 64, the shared
    MLP as a dense gated MLP 3 x 2560 x 8192, two RMSNorms), a tied 100,352-row embedding, final norm:
    3,402,836,480 parameters, IBM's "3B"; no Mamba layer, so no Mamba state."""
    h, layers, vocab = 2560, 40, 100352
    total = layers * (2 * h * h + 2 * h * 512 + 3 * h * 8192 + 2 * h) + vocab * h + h
    assert total == 3_402_836_480
    spec = resolve_model("ibm-granite/granite-4.0-micro")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert spec.params.mixer == 0 and spec.mamba is None
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 64, 131072)
    assert _reconstructed("ibm-granite/granite-4.0-micro")


def test_qwen3_coder_next_is_the_qwen3_next_80b_a3b_architecture() -> None:
    """Qwen3-Coder-Next (reconstructed from its re-saves): every sizing key equals Qwen3-Next-80B-A3B-Instruct's
    (48 layers of 2048, 36 Gated DeltaNet + 12 gated-attention layers, 512 experts of 512 with 10 active, a shared
    expert of 512), only rope_theta differs: the same parameters, KV cache and Mamba-style state."""
    coder, nxt = resolve_model("Qwen/Qwen3-Coder-Next"), resolve_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert coder.params is not None and coder.params == nxt.params
    assert coder.moe == nxt.moe and coder.linear_attention == nxt.linear_attention
    entry = load_model("Qwen/Qwen3-Coder-Next")
    assert entry is not None and entry.config["rope_theta"] == 5_000_000
    assert coder.max_model_len == 262144 and _reconstructed("Qwen/Qwen3-Coder-Next")


def test_magistral_small_2509_is_mistral_small_3_2_with_its_vision_encoder() -> None:
    """Magistral Small 1.2 (reconstructed: its card builds it on Mistral Small 3.2 and adds the vision encoder):
    3.2's 40 layers of 5120 (q/o 5120 x 4096, k/v 5120 x 1024, gated MLP 3 x 5120 x 32768, two RMSNorms), untied
    131,072-row embedding and head, final norm: 23,572,403,200 text parameters, plus the Pixtral tower."""
    h, layers, vocab = 5120, 40, 131072
    text = layers * (2 * h * 4096 + 2 * h * 1024 + 3 * h * 32768 + 2 * h) + 2 * vocab * h + h
    assert text == 23_572_403_200
    spec = resolve_model("mistralai/Magistral-Small-2509")
    small = resolve_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506")
    assert spec.params is not None and spec.params.total - spec.params.vision == text
    assert spec.params == small.params and spec.vision == small.vision and spec.vision is not None
    assert spec.max_model_len == 131072 and _reconstructed("mistralai/Magistral-Small-2509")


def test_qwen3_235b_awq_is_4_bit_qwen3_235b() -> None:
    """cognitivecomputations/Qwen3-235B-A22B-AWQ (reconstructed): Qwen3-235B-A22B's parameters in 4-bit group-128
    weights (embedding, lm_head and routers 16-bit): 233.8B weights at 0.5 byte plus a 2-byte scale and a 4-bit zero
    point per 128 (0.52 byte), 2.5 GB in 16 bits: at TP=4 each GPU loads 0.26-0.27 of the 16-bit shard, 31 GB, more
    than a 24 GB A10 holds (vLLM issue #18156's OOM on four A10s)."""
    awq, bf16 = resolve_model("cognitivecomputations/Qwen3-235B-A22B-AWQ"), resolve_model("Qwen/Qwen3-235B-A22B")
    assert awq.params is not None and awq.params == bf16.params
    assert awq.quant is not None and awq.quant.bits == 4 and awq.quant.group_size == 128
    assert awq.quant.has_zero_points and not awq.quant.lm_head_quantized
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=4)
    w4, w16 = explain(awq, H100, flags, V033).stage.weights, explain(bf16, H100, flags, V033).stage.weights
    assert 0.26 < w4 / w16 < 0.27 and 30e9 < w4 < 32e9
    assert _reconstructed("cognitivecomputations/Qwen3-235B-A22B-AWQ")


def test_seed_oss_36b_by_hand() -> None:
    """Seed-OSS-36B-Instruct (reconstructed): 64 layers of 5120 with 80 query heads of 128 (q 5120 x 10240, o 10240 x
    5120), 8 KV heads (k/v 5120 x 1024), q/k/v biases but no o bias, gated MLP 3 x 5120 x 27648, two RMSNorms; an untied
    155,136-row embedding and head, final norm: 36,151,104,512 parameters, the published 36B; 524,288 positions."""
    h, layers, vocab, q = 5120, 64, 155136, 80 * 128
    layer = 2 * h * q + 2 * h * 1024 + (q + 2 * 1024) + 3 * h * 27648 + 2 * h
    total = layers * layer + 2 * vocab * h + h
    assert total == 36_151_104_512
    spec = resolve_model("ByteDance-Seed/Seed-OSS-36B-Instruct")
    assert spec.params is not None and spec.params.total == total
    assert (spec.num_heads, spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (80, 8, 128, 524288)
    assert _reconstructed("ByteDance-Seed/Seed-OSS-36B-Instruct")


def test_gemma_3_27b_qat_unquantized_is_gemma_3_27b_in_bfloat16() -> None:
    """google/gemma-3-27b-it-qat-q4_0-unquantized (reconstructed): the QAT-trained Gemma 3 27B stored in 16 bits,
    gemma-3-27b-it's architecture and parameter count, no quantization block (vLLM loads it as bfloat16)."""
    qat, it = resolve_model("google/gemma-3-27b-it-qat-q4_0-unquantized"), resolve_model("google/gemma-3-27b-it")
    assert qat.params is not None and qat.params == it.params and qat.vision == it.vision
    assert qat.quant is None and qat.dtype == "bfloat16" and qat.max_model_len == it.max_model_len == 131072
    assert _reconstructed("google/gemma-3-27b-it-qat-q4_0-unquantized")


def test_nemotron_super_49b_v1_5_is_v1_s_nas_layout() -> None:
    """Llama-3.3-Nemotron-Super-49B-v1.5 (reconstructed: its card calls it an upgraded v1, the same NAS 49B): v1's 80
    blocks, 49 with attention and 31 without, the same 49,867,145,216 parameters and 131,072 positions."""
    v15, v1 = (
        resolve_model("nvidia/Llama-3_3-Nemotron-Super-49B-v1_5"),
        resolve_model("nvidia/Llama-3_3-Nemotron-Super-49B-v1"),
    )
    assert v15.params is not None and v15.params == v1.params and v15.params.total == 49_867_145_216
    assert v15.layer_kinds == v1.layer_kinds and v15.layer_kinds.count("full") == 49
    assert v15.max_model_len == 131072 and _reconstructed("nvidia/Llama-3_3-Nemotron-Super-49B-v1_5")


def test_nemotron_nano_9b_v2_by_hand() -> None:
    """NVIDIA-Nemotron-Nano-9B-v2 (reconstructed from NVIDIA's Megatron-Bridge provider): 56 blocks of 4480, each with
    one RMSNorm. 27 Mamba-2 mixers of 128 heads x 80 (d_inner 10240, 8 groups of state 128): in_proj 4480 x (2 x 10240
    + 2 x 8 x 128 + 128), a 4-wide conv over 12288 channels with biases, A/D/dt of 128, a gated norm of 10240, out_proj
    10240 x 4480; 25 squared-ReLU MLPs 2 x 4480 x 15680; 4 attention blocks (40 heads, 8 KV heads, of 128); untied
    131,072-row embedding and head, final norm: 8,888,227,328 parameters, the '9B'. Only the 4 attention layers
    cache K/V; the 27 Mamba layers hold a fixed state per sequence."""
    h, d_inner, conv = 4480, 128 * 80, 128 * 80 + 2 * 8 * 128
    mamba = h * (2 * d_inner + 2 * 8 * 128 + 128) + conv * 4 + conv + 3 * 128 + d_inner + d_inner * h
    attention = h * 5120 + 2 * h * 1024 + 5120 * h
    total = 27 * mamba + 25 * 2 * h * 15680 + 4 * attention + 56 * h + 2 * 131072 * h + h
    assert total == 8_888_227_328
    spec = resolve_model("nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    assert spec.params is not None and spec.params.total == total
    assert spec.layer_kinds.count("full") == 4 and spec.layer_kinds.count("mamba") == 27
    assert spec.mamba is not None and (spec.mamba.num_heads, spec.mamba.head_dim, spec.mamba.n_groups) == (128, 80, 8)
    assert spec.max_model_len == 131072 and _reconstructed("nvidia/NVIDIA-Nemotron-Nano-9B-v2")
