"""Catalog entries the field15 startup logs (benchmarks/data/calibration/vllm_startup_logs_field15.jsonl) needed,
each checked by hand and against the weights its log printed."""

from __future__ import annotations

from recommender.memory.spec_decode import mtp_weight_bytes
from recommender.memory.weights import Parallel
from recommender.sources.resolve import resolve_model

from .catalog_support import reconstructed


def test_qwen3_reranker_8b_by_hand() -> None:
    """Qwen/Qwen3-Reranker-8B (its config.json quoted whole in a committed model report): 36 layers of 4096 with 32
    query heads and 8 KV heads of 128 (q/o 4096 x 4096, k/v 4096 x 1024), gated MLP 3 x 4096 x 12288, q/k norms of
    128 and two RMSNorms a layer, an untied 151,669-row embedding and LM head, a final norm: 8,188,548,096 parameters
    (the report's own weight count), 15.25 GiB in bfloat16 (field15 W002: 'Model loading took 15.26 GiB')."""
    h, layers, vocab = 4096, 36, 151669
    per_layer = 2 * h * h + 2 * h * 1024 + 3 * h * 12288 + 2 * h + 2 * 128
    total = layers * per_layer + 2 * vocab * h + h
    assert total == 8_188_548_096
    spec = resolve_model("Qwen/Qwen3-Reranker-8B")
    assert spec.params is not None and spec.params.total == total
    assert spec.max_model_len == 40960
    assert round(total * 2 / 2**30, 2) == 15.25


def test_deepseek_v4_flash_base_is_v4_flash_with_fp8_experts() -> None:
    """deepseek-ai/DeepSeek-V4-Flash-Base (reconstructed): a hand-off note that diffed the two configs key by key
    found only expert_dtype fp8 (the instruct release: fp4) and four DSpark drafter keys; 'the same architecture,
    layers, experts and 284.3B parameters'. So the same parameter count as V4-Flash, the routed experts in FP8 blocks
    instead of MXFP4."""
    base, instruct = resolve_model("deepseek-ai/DeepSeek-V4-Flash-Base"), resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    assert base.params is not None and instruct.params is not None
    assert base.params.total == instruct.params.total and round(base.params.total / 1e9, 1) == 284.3
    assert base.quant is not None and base.quant.method == "fp8" and base.quant.expert_method is None
    assert instruct.quant is not None and instruct.quant.expert_method == "mxfp4"
    assert reconstructed("deepseek-ai/DeepSeek-V4-Flash-Base")


def test_cyankiwi_qwen3_5_9b_awq_4bit_is_the_base_in_int4_groups_of_32() -> None:
    """cyankiwi/Qwen3.5-9B-AWQ-4bit (reconstructed): Qwen3.5-9B's parameters, with cyankiwi's llm-compressor W4A16
    block (4-bit integer weights in groups of 32 with zero points, as its INT4 releases are described) and the ignore
    list of the bundled Qwen3.5-4B release."""
    quant, base = resolve_model("cyankiwi/Qwen3.5-9B-AWQ-4bit"), resolve_model("Qwen/Qwen3.5-9B")
    assert quant.params is not None and base.params is not None and quant.params.total == base.params.total
    assert quant.quant is not None and quant.quant.bits == 4 and quant.quant.group_size == 32
    assert quant.quant.has_zero_points and base.quant is None
    assert reconstructed("cyankiwi/Qwen3.5-9B-AWQ-4bit")


def test_redhat_qwen3_6_nvfp4_keeps_its_mtp_layer_in_16_bit() -> None:
    """llm-compressor quantizes the modules of the transformers model, which for Qwen3.5 / 3.6 has no MTP layer, so a
    checkpoint's mtp.* tensors stay 16-bit and its ignore list names them (Red Hat's Qwen3.5-4B-FP8-dynamic: 're:^mtp.*').
    RedHatAI/Qwen3.6-35B-A3B-NVFP4's drafter then weighs what the BF16 base's does: field15 W003's author logs 21.86 GiB
    without MTP and 23.43 with it, 1.57 GiB for the one MTP MoE layer (its 256 experts alone are 256 x 3 x 2048 x 512
    x 2 B = 1.5 GiB in 16 bit, 0.4 in NVFP4)."""
    nvfp4, base = resolve_model("RedHatAI/Qwen3.6-35B-A3B-NVFP4"), resolve_model("Qwen/Qwen3.6-35B-A3B")
    drafter = mtp_weight_bytes(nvfp4, Parallel(), dtype_bytes=2, quant=nvfp4.quant)
    assert drafter == mtp_weight_bytes(base, Parallel(), dtype_bytes=2, quant=base.quant)
    assert drafter > 256 * 3 * 2048 * 512 * 2 == 1.5 * 2**30
    assert round(drafter / 2**30, 2) == 1.57
