"""Which kernels and datasheet peaks one configuration runs on a GPU (pure): the compute kind of the linear
layers, their tensor-core peak, the intra-node link rate, and the MoE / attention kernel paths vLLM picks.
"""

from __future__ import annotations

import re

from recommender.errors import InputError
from recommender.hardware import Gpu
from recommender.memory.engine import VllmVersion
from recommender.model.spec import ModelSpec, QuantSpec

_WEIGHT_ONLY = ("gptq", "awq", "bitsandbytes", "mxfp4")
_PCIE_GBPS = {"gen3": 16.0, "gen4": 32.0, "gen5": 64.0, "gen6": 128.0}  # x16, one direction


class PerfUnavailableError(InputError):
    """The performance model lacks a figure it needs (e.g. the GPU profile has no TFLOPS)."""


def compute_kind(quant: QuantSpec | None, gpu: Gpu) -> str:
    """How the linear layers compute: 'bf16', 'fp8' (W8A8 on sm >= 89), 'int8', 'fp4', or 'w-only' (dequant).
    NVFP4 without FP4 tensor cores runs Marlin W4A16, bf16 activations ("Weight-only FP4 compression will be used
    leveraging the Marlin kernel", model_executor/kernels/linear/nvfp4/marlin.py in vLLM 0.33), not FP8."""
    if quant is None:
        return "bf16"
    method = quant.method
    if method in _WEIGHT_ONLY or "A16" in quant.label:
        return "w-only"
    if method == "fp8":
        return "fp8" if gpu.fp8 else "w-only"
    if method == "int8":
        return "int8"
    if method == "nvfp4":
        return "fp4" if gpu.fp4 else "w-only"
    if method == "ocp-mx":  # Quark MXFP4 / MXFP6: native MX GEMMs where the card has FP4, else dequantized
        return "fp4" if gpu.fp4 else "w-only"
    if method == "mxfp8":
        return "fp8" if gpu.fp8 else "w-only"
    if method == "modelopt-mixed":  # FP8 and NVFP4 layers: the FP8 ones compute in FP8 where the card has it
        return "fp4" if gpu.fp4 else ("fp8" if gpu.fp8 else "w-only")
    return "bf16"


_SIXTEEN_BIT = {"bfloat16": "bf16", "float16": "fp16"}


def peak_flops(gpu: Gpu, kind: str, dtype: str) -> float:
    """Dense tensor-core peak in flop/s (datasheet figures of profiles/gpus) for a compute kind: FP8, INT8 and FP4
    at their own rates; 'bf16' and 'w-only' (dequantized to the activations) at the rate of `dtype`, the dtype the
    model runs in (float16 on T4/V100). BF16 and FP16 with FP32 accumulate share one tensor-core rate on every card
    that has both (tests/test_gpus.py), so either stands in for the other. A missing figure is a one-line error."""
    if kind in ("fp8", "int8", "fp4"):
        rates = {kind: getattr(gpu, f"{kind}_tflops")}
    elif dtype in _SIXTEEN_BIT:
        own = _SIXTEEN_BIT[dtype]
        other = "fp16" if own == "bf16" else "bf16"
        rates = {own: getattr(gpu, f"{own}_tflops"), other: getattr(gpu, f"{other}_tflops")}
    else:
        raise PerfUnavailableError(
            f"the performance model has no {dtype} tensor rate: it covers 16-bit, FP8, INT8 and FP4 compute "
            "(use --dtype auto, bfloat16 or float16)"
        )
    tflops = next((v for v in rates.values() if v), None)
    if tflops is None:
        wanted = next(iter(rates))
        raise PerfUnavailableError(
            f"{gpu.name} has no dense {wanted.upper()} tensor rate in its profile (dense_tflops.{wanted}): "
            "the performance model cannot estimate compute time on it"
        )
    return float(tflops) * 1e12


def link_one_way(gpu: Gpu) -> float:
    """Datasheet bytes/s of the GPU's intra-node link in one direction (NVLink figures are both directions)."""
    text = gpu.interconnect.lower()
    m = re.search(r"(\d+(?:\.\d+)?)\s*gb/s", text)
    if gpu.nvlink:
        return (float(m.group(1)) / 2 if m else 150.0) * 1e9
    gen = re.search(r"pcie\s*(gen\s*\d)(?:\s*x(\d+))?", text)
    lanes = int(gen.group(2)) if gen and gen.group(2) else 16  # "PCIe Gen4 x8" (A2, RTX 4060 Ti): half the x16 rate
    return _PCIE_GBPS.get(gen.group(1).replace(" ", "") if gen else "gen4", 32.0) * lanes / 16 * 1e9


TRTLLM_MOE_FROM = VllmVersion(0, 15)
_TRTLLM_MOE_METHODS = (None, "fp8", "nvfp4", "mxfp4", "modelopt-mixed")
# MXFP4 experts (gpt-oss): FlashInfer's TRT-LLM MoE on sm100 wherever flashinfer is installed, before the 0.15 oracle;
# a default CUDA dependency of vLLM from 0.11.1 (vllm-project/vllm#26443), an optional extra before (#21959)
MXFP4_TRTLLM_MOE_FROM = VllmVersion(0, 11, 1)


def trtllm_moe_path(model: ModelSpec, gpu: Gpu, quant: QuantSpec | None, version: VllmVersion) -> bool:
    """Whether vLLM runs the routed experts on FlashInfer's TRT-LLM MoE kernels (one fused routing + grouped-GEMM
    + finalize launch sequence) rather than the Triton fused-MoE kernels the fit's vLLM 0.10-0.11 rows ran.

    vLLM 0.33's MoE oracles put FLASHINFER_TRTLLM first for 16-bit, FP8, NVFP4 and MXFP4 experts on CUDA
    (model_executor/layers/fused_moe/oracle/unquantized.py, fp8.py, nvfp4.py, mxfp4.py) and those kernels run on the
    sm100 family only (datacenter Blackwell: B200, B300, GB200; not sm120 GeForce / RTX PRO); Hopper moves them to
    the back (unquantized) or prefers Triton for block FP8 with TP. The priority oracle arrived with vLLM 0.15.0
    (vllm-project/vllm#32414, "[MoE Refactor] Oracle Select FP8+NVFP4 Kernels In Priority", the v0.15.0 regression
    named in #33417). Weight-only INT4/INT8 experts (GPTQ, AWQ, compressed-tensors WNA16) run Marlin, not these.

    MXFP4 experts went there earlier: `get_mxfp4_backend` (quantization/mxfp4.py, vllm-project/vllm at afdb4a4f and
    007d5005) returns a FlashInfer TRT-LLM backend on sm100 whenever `has_flashinfer()` (SM100_FI_MXFP4_BF16, or
    SM100_FI_MXFP4_MXFP8_TRTLLM with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1) and Marlin or OpenAI's Triton kernels only
    without it. flashinfer-python became a default CUDA dependency in 0.11.1 (#26443, after #21959 had made it an
    optional extra in July 2025), so from 0.11.1 every install has it; earlier installs may not (the 0.10 B200 fit
    rows of gpt-oss, P000-P009, state no environment)."""
    cc = gpu.cc_major_minor
    if not model.is_moe or cc is None or cc[0] != 10 or gpu.vendor.lower() != "nvidia":
        return False
    method = quant.method if quant is not None else None
    if method == "mxfp4":
        return version >= MXFP4_TRTLLM_MOE_FROM
    return version >= TRTLLM_MOE_FROM and method in _TRTLLM_MOE_METHODS


def triton_attention_backend(model: ModelSpec, gpu: Gpu) -> bool:
    """Whether vLLM serves this model's attention with its Triton backend on this GPU rather than FlashAttention.

    On NVIDIA GPUs below compute capability 9.0 only FlashAttention 2 exists, and it serves neither attention sinks
    ("sink not supported on compute capability < 9.0", v1/attention/backends/flash_attn.py in vLLM 0.33) nor
    layers of different head sizes in one model: Gemma 4 (256-wide sliding, 512-wide global heads) gets FA4 where
    FA4 is built and `TRITON_ATTN` for every layer elsewhere ("FA4 not available, forcing TRITON_ATTN backend",
    Gemma4Config in model_executor/models/config.py); FA4 needs sm 9.0 or newer."""
    cc = gpu.cc_major_minor
    if gpu.vendor.lower() != "nvidia" or cc is None or cc >= (9, 0):
        return False
    return model.attention_sinks != "none" or len(set(model.layer_head_dim)) > 1
