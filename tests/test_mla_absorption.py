"""vLLM 0.7.1-0.7.3's MLA backend kept absorbed decode matrices beside the weights (memory/mla_absorption.py).

Figures worked by hand from MLACommonImpl.process_weights_after_loading (attention/backends/mla/utils.py of v0.7.1,
v0.7.2 and v0.7.3) and the configs: DeepSeek-V3/R1 hidden 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512, nope
128, rope 64, v 128, 61 layers; DeepSeek-V2-Lite hidden 2048, 16 heads, no q_lora_rank, the same head dims, 27 layers.
"""

from __future__ import annotations

from dataclasses import replace

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.mla_absorption import absorbed_bytes_per_layer, absorbed_layer_bytes
from recommender.sources.resolve import resolve_model
from recommender.units import GiB

R1 = resolve_model("deepseek-ai/DeepSeek-R1")
LITE = resolve_model("deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct")
V073, V072, V071 = VllmVersion(0, 7, 3), VllmVersion(0, 7, 2), VllmVersion(0, 7, 1)

# R1 (FP8, 128x128 blocks) at TP 8: 16 heads a rank.
R1_W_QR = 1536 * (16 * 64) * 2  # [Lq, N*R] bf16: 3,145,728
R1_W_Q_UK = 8192 * 1536 + (8192 // 128) * (1536 // 128) * 4  # fp8 [N*L, Lq] + float32 block scales
R1_W_UV_O = 7168 * 8192 + (7168 // 128) * (8192 // 128) * 4  # fp8 [H, N*L] + scales
R1_KV_B = 512 * 16 * (128 + 128)  # the dequantized kv_b_proj the W_UK / W_UV views keep: elements


def test_r1_fp8_at_tp8_per_release() -> None:
    """0.7.3 dequantizes kv_b_proj in the model dtype, 0.7.1-0.7.2 in float32; 78.7 MB a layer (T004's 4.57 GiB
    missing from 'model weights take 83.88GiB': 61 layers hold 4.47 GiB)."""
    at = absorbed_layer_bytes
    assert at(R1, R1.quant, tp=8, version=V073, dtype_bytes=2, v0=True) == 78_660_608
    assert R1_W_QR + R1_W_Q_UK + R1_W_UV_O + R1_KV_B * 2 == 78_660_608
    assert at(R1, R1.quant, tp=8, version=V072, dtype_bytes=2, v0=True) == R1_W_QR + R1_W_Q_UK + R1_W_UV_O + R1_KV_B * 4
    assert at(R1, R1.quant, tp=8, version=V071, dtype_bytes=2, v0=True) == 82_854_912
    per_layer = absorbed_bytes_per_layer(R1, R1.quant, tp=8, version=V073, dtype_bytes=2, v0=True)
    assert len(per_layer) == 61 and round(sum(per_layer) / GiB, 2) == 4.47


def test_lite_16_bit_at_tp8() -> None:
    """No q_lora_rank: W_Q is q_proj itself ([hidden, N*(P+R)]); 16-bit weights keep W_UK / W_UV as views. 2 heads
    a rank: W_QR 2048 x 128, W_Q_UK 2048 x 1024, W_UV_O 1024 x 2048, fp16: 8,912,896 B a layer, 0.224 GiB over 27
    (T005 at 0.7.1 logs 3.97 GiB where the checkpoint's shard is 3.73)."""
    per = absorbed_layer_bytes(LITE, None, tp=8, version=V071, dtype_bytes=2, v0=True)
    assert per == (2048 * 128 + 2048 * 1024 + 1024 * 2048) * 2 == 8_912_896
    assert round(27 * per / GiB, 3) == 0.224


def test_only_the_first_mla_backend_on_v0() -> None:
    """Before 0.7.1 no MLA backend (per-head cache); 0.8.0's mla/common.py keeps views only; V1 had no MLA backend
    in 0.7.x; a checkpoint quantized other than FP8 turns MLA off (0.7.1-0.7.2) or raises (0.7.3)."""
    for version, v0 in ((VllmVersion(0, 7, 0), True), (VllmVersion(0, 8, 0), True), (V073, False)):
        assert absorbed_layer_bytes(R1, R1.quant, tp=8, version=version, dtype_bytes=2, v0=v0) == 0
    assert R1.quant is not None
    awq = replace(R1.quant, method="awq", bits=4, block=None, group_size=128)
    assert absorbed_layer_bytes(R1, awq, tp=8, version=V072, dtype_bytes=2, v0=True) == 0  # use_mla off
    # 0.7.3 keeps MLA for AWQ and dequantizes through quant_method.apply(eye): everything in the model dtype
    bf16 = (1536 * 1024 + 1536 * 8192 + 8192 * 7168) * 2 + 512 * 16 * 256 * 2
    assert absorbed_layer_bytes(R1, awq, tp=8, version=V073, dtype_bytes=2, v0=True) == bf16
    dense = resolve_model("Qwen/Qwen2.5-7B-Instruct")
    assert absorbed_bytes_per_layer(dense, None, tp=1, version=V073, dtype_bytes=2, v0=True) == ()


def test_weights_include_the_absorbed_matrices_except_on_offloaded_layers() -> None:
    """The stage's weights ('Loading model weights took') add them per layer on the GPU; --cpu-offload-gb builds them
    on the CPU with the layer (vLLM #15196, field3 H041: Coder-V2-Lite at 0.7.2 with 30 GB offloaded logs 0.80 GiB)."""
    a100 = resolve_gpu("A100-SXM4-40GB", load_gpus())
    flags = EngineFlags(tensor_parallel_size=8, dtype="float16")
    with_absorbed = explain(LITE, a100, flags, V071).stage.weights
    before = explain(LITE, a100, flags, VllmVersion(0, 7, 0)).stage.weights
    assert with_absorbed - before == 27 * 8_912_896
    l40s = resolve_gpu("L40S", load_gpus())
    offload = EngineFlags(cpu_offload_gb=30, enforce_eager=True, max_model_len=100000)
    assert (
        explain(LITE, l40s, offload, V072).stage.weights
        == explain(LITE, l40s, offload, VllmVersion(0, 7, 0)).stage.weights
    )


def test_per_head_cache_where_vllm_kept_no_latent() -> None:
    """Up to 0.6.6 DeepSeek's Attention cached per-head K/V padded to 256; 0.7.0 to qk_head_dim (128 + 64); 0.7.1-0.7.2
    keep that path when use_mla refuses the checkpoint's quantization; from 0.7.3, and for FP8 or 16 bit from 0.7.1,
    the latent (stage_budgets.pre_mla_head_size)."""
    from recommender.memory.stage_budgets import pre_mla_head_size

    assert R1.quant is not None
    awq = replace(R1.quant, method="awq", bits=4, block=None, group_size=128)
    assert pre_mla_head_size(R1, VllmVersion(0, 6, 6), R1.quant) == 256
    assert pre_mla_head_size(R1, VllmVersion(0, 7, 0), R1.quant) == 192
    assert pre_mla_head_size(R1, V071, R1.quant) == 0 and pre_mla_head_size(LITE, V072, None) == 0
    assert pre_mla_head_size(R1, V072, awq) == 192
    assert pre_mla_head_size(R1, V073, awq) == 0
