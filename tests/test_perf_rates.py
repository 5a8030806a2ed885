"""The tensor rate the performance model reads for a GPU: the rate of the dtype the model runs in (FP16 on T4/V100),
the card's own FP8/INT8/FP4 figures, and a one-line error naming a missing figure."""

from __future__ import annotations

from dataclasses import replace

import pytest

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.hardware import Gpu, custom_gpu
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.model.spec import QuantSpec
from recommender.perf.kernels import (
    PerfUnavailableError,
    compute_kind,
    link_one_way,
    peak_flops,
    triton_attention_backend,
)
from recommender.perf.predict import facts_for, startup
from recommender.sources.resolve import resolve_model
from tests.conftest import invoke

V33 = VllmVersion(0, 33)
LOAD = ["--input-len", "1000", "--output-len", "200", "--max-concurrency", "8"]


def _gpu(name: str) -> Gpu:
    return resolve_gpu(name, load_gpus())


def test_a_bfloat16_model_on_t4_runs_in_float16_at_the_fp16_rate() -> None:
    # Turing has no BF16: vLLM casts the bfloat16 checkpoint to float16, and the T4 datasheet gives 65 FP16 TFLOPS.
    m, g = resolve_model("Qwen/Qwen2.5-7B-Instruct"), _gpu("t4")
    f = EngineFlags(tensor_parallel_size=2)
    e = startup(m, g, f, V33)
    assert e.weight_dtype == "float16"
    facts = facts_for(m, g, f, e)
    assert facts.peak_dense == facts.peak_attention == 65e12


def test_the_rate_follows_the_dtype_and_the_compute_kind() -> None:
    rtx4090 = _gpu("rtx4090")
    assert peak_flops(rtx4090, "bf16", "bfloat16") == pytest.approx(165.2e12)
    assert peak_flops(rtx4090, "w-only", "float16") == pytest.approx(165.2e12)
    assert peak_flops(rtx4090, "fp8", "bfloat16") == pytest.approx(330.3e12)  # FP32 accumulate, as vLLM's kernels
    assert peak_flops(rtx4090, "int8", "bfloat16") == pytest.approx(660.6e12)  # INT32 accumulate: the full rate
    # Blackwell Ultra cut INT8 to 153.5 dense TOPS (aiconfigurator b300_sxm.yaml): not 2 x its BF16.
    assert peak_flops(_gpu("b300"), "int8", "bfloat16") == pytest.approx(153.5e12)
    # A card with only one 16-bit figure serves both 16-bit dtypes (one tensor-core rate where both exist).
    only_fp16 = replace(rtx4090, bf16_tflops=None)
    assert peak_flops(only_fp16, "bf16", "bfloat16") == pytest.approx(165.2e12)


def test_nvfp4_computes_in_fp4_on_blackwell_and_dequantizes_elsewhere() -> None:
    # vLLM 0.33 serves NVFP4 without FP4 tensor cores through Marlin (W4A16): 16-bit math after dequantization
    nvfp4 = QuantSpec(method="nvfp4", bits=4, group_size=16)
    assert compute_kind(nvfp4, _gpu("b200")) == "fp4"
    assert compute_kind(nvfp4, _gpu("h100")) == "w-only"
    assert compute_kind(nvfp4, _gpu("a100")) == "w-only"
    assert compute_kind(QuantSpec(method="fp8", bits=8), _gpu("h100")) == "fp8"


@pytest.mark.parametrize(
    ("gpu", "kind", "dtype", "message"),
    [
        (custom_gpu(24), "bf16", "bfloat16", r"^custom \(24 GiB\) has no dense BF16 tensor rate .*dense_tflops\.bf16"),
        (custom_gpu(24), "bf16", "float16", r"no dense FP16 tensor rate in its profile \(dense_tflops\.fp16\)"),
        ("v100-32gb", "int8", "float16", r"Tesla V100-SXM2-32GB has no dense INT8 tensor rate .*dense_tflops\.int8"),
        ("h100", "bf16", "float32", r"no float32 tensor rate"),
    ],
)
def test_a_missing_rate_is_a_one_line_error_naming_it(gpu: Gpu | str, kind: str, dtype: str, message: str) -> None:
    card = _gpu(gpu) if isinstance(gpu, str) else gpu
    with pytest.raises(PerfUnavailableError, match=message) as info:
        peak_flops(card, kind, dtype)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("gpu", ["a10g", "rtx3090", "rtx-a6000", "rtx6000-ada", "rtx5090", "l4"])
def test_perf_answers_on_the_most_deployed_cards(gpu: str) -> None:
    out = invoke(["perf", "Qwen/Qwen2.5-7B-Instruct", "--gpu", gpu, *LOAD]).stdout
    assert "TPOT" in out and "Throughput:" in out


def test_perf_answers_a_float16_model_on_t4() -> None:
    out = invoke(["perf", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "t4", "-tp", "2", *LOAD]).stdout
    assert "on Tesla T4" in out and "TPOT" in out


def test_perf_names_the_missing_figure() -> None:
    """A card without the rate the checkpoint computes in: a one-line error naming the profile field. (W8A8 INT8
    on a V100, the case this covered, is now refused by vLLM itself below compute capability 7.5.)"""
    v100 = resolve_gpu("v100-32gb", load_gpus())
    with pytest.raises(PerfUnavailableError) as err:
        peak_flops(v100, "int8", "float16")
    assert str(err.value) == (
        "Tesla V100-SXM2-32GB has no dense INT8 tensor rate in its profile (dense_tflops.int8): the "
        "performance model cannot estimate compute time on it"
    )
    w8a8 = "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8"
    result = invoke(["perf", w8a8, "--gpu", "v100-32gb", "--vllm-version", "0.20", *LOAD], exit_code=3)
    assert result.stderr.strip().splitlines() == [
        "Error: vLLM would not start with these flags, so nothing can be measured: Quantization scheme is not "
        "supported for the current GPU. Min capability: 75. Current capability: 70."
    ]


@pytest.mark.parametrize(
    ("gpu", "gbps"),
    [
        ("h100-sxm", 450),  # NVLink 4.0, 900 GB/s both directions
        ("rtx5090", 64),  # PCIe 5.0 x16
        ("rtx4090", 32),  # PCIe 4.0 x16
        ("rtx4060ti-16gb", 16),  # PCIe 4.0 x8 (AD106)
        ("t4", 16),  # PCIe 3.0 x16
    ],
)
def test_the_all_reduce_link_one_way(gpu: str, gbps: float) -> None:
    assert link_one_way(_gpu(gpu)) == gbps * 1e9


def test_latency_targets_on_a_card_described_by_its_memory_alone() -> None:
    # --gpu-memory-gib gives no bandwidth or tensor rate: planning by memory works, latency targets say what is missing.
    args = ["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu-memory-gib", "24"]
    invoke([*args, "--concurrency", "8", "--context", "4096"])
    result = invoke([*args, "--input-len", "1000", "--output-len", "200", "--ttft-ms", "2000"], exit_code=2)
    assert result.stderr.strip().splitlines() == [
        "Error: custom (24 GiB) has no memory-bandwidth figure (bandwidth_gbps): the performance model needs a "
        "catalogued GPU (--gpu, see `vllm-plan gpus`)"
    ]


def test_vllm_serves_gemma4_and_gpt_oss_with_triton_attention_below_hopper_only() -> None:
    # Gemma 4's 512-wide global heads exceed FlashAttention 2 (Gemma4Config forces TRITON_ATTN without FA4); gpt-oss's
    # attention sinks need FA3+ (flash_attn.py). Llama keeps FlashAttention everywhere.
    gemma4, gpt_oss, llama = (
        resolve_model(n) for n in ("google/gemma-4-31B-it", "openai/gpt-oss-20b", "meta-llama/Llama-3.1-8B-Instruct")
    )
    assert len(set(gemma4.layer_head_dim)) == 2
    for gpu, below_hopper in (("a100", True), ("l40s", True), ("h100", False), ("b200", False), ("mi300x", False)):
        g = _gpu(gpu)
        assert triton_attention_backend(gemma4, g) is below_hopper
        assert triton_attention_backend(gpt_oss, g) is below_hopper
        assert triton_attention_backend(llama, g) is False
