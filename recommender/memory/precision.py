"""Step 1 of vLLM's startup as the memory model runs it: the weight dtype, the quantization (and its MoE backend's
layout) and the KV-cache dtype vLLM resolves, and the GPU's own refusals (pure; memory/budget.py runs the steps).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from recommender.hardware import Gpu
from recommender.memory import startup_issues as si
from recommender.memory.encoder_profile import PROCESSORS as ENCODER_PASS_SIZED
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.kv_cache import kv_dtype_bytes
from recommender.memory.mxfp4 import Mxfp4Layout, mxfp4_layout
from recommender.memory.quant_capability import capability_refusal
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.memory.weights import DTYPE_BYTES
from recommender.model.quant import resolve_quant
from recommender.model.spec import ModelSpec, QuantSpec

BITSANDBYTES_REMOVED_IN = VllmVersion(0, 33)  # 0.33's QUANTIZATION_METHODS no longer lists it
# bitsandbytes_loader.py dequantize_dq (vLLM pull request 19742, merged 2025-06-17, after 0.9.1): a double-quantized
# absmax becomes one float32 per 64-element block at load; before it stayed uint8 with its nested float32 absmax.
BNB_ABSMAX_DEQUANTIZED_IN = VllmVersion(0, 9, 2)


@dataclass(frozen=True, slots=True)
class Precision:
    """Weight dtype, quantization and KV-cache dtype as vLLM resolves them."""

    dtype: str
    dtype_bytes: int
    quant: QuantSpec | None
    kv_cache_dtype: str
    kv_bytes: int
    mxfp4: Mxfp4Layout | None = None  # how this GPU's MXFP4 MoE backend stores the experts (memory/mxfp4.py)

    @property
    def mxfp4_triton(self) -> bool:
        """The OAI triton_kernels MoE path (gpt-oss on Hopper): no fused-MoE workspace, its own warm-up reserve."""
        return self.mxfp4 is not None and self.mxfp4.backend == "triton-hopper"

    @property
    def triton_experts(self) -> bool:
        """The routed experts run vLLM's Triton fused-MoE kernel: 16-bit weights, or 8-bit ones (FP8, INT8 w8a8)
        stored as the rest of the checkpoint (memory/overheads.py moe_workspace_bytes)."""
        q = self.quant
        if q is None:
            return True
        eight_bit = q.method in ("fp8", "modelopt-fp8") or (q.method == "compressed-tensors" and q.bits == 8)
        return eight_bit and q.expert_method is None


def compute_capability_floor(version: VllmVersion) -> tuple[int, int]:
    """vLLM's documented floor; vLLM's Python has no check of its own: its compiled kernels (and PyTorch's wheels)
    carry no code for older GPUs, so the first kernel fails. Installation docs: "GPU: compute capability 7.0 or
    higher (e.g., V100, T4, RTX20xx, A100, L4, H100, etc.)" up to v0.14.0
    (https://docs.vllm.ai/en/v0.14.0/getting_started/installation/gpu/), "compute capability 7.5 or higher (e.g.,
    T4, RTX20xx, A100, L4, H100, B200, etc.)" from v0.21.0 on (docs/getting_started/installation/gpu.cuda.inc.md,
    CUDA 12.9 binaries; CUDA 13 and PyTorch's CUDA 12.8+ wheels dropped Volta). Releases in between: the older
    floor (lenient: no record of when it moved)."""
    return (7, 5) if version >= VllmVersion(0, 21) else (7, 0)


def gpu_refusal(gpu: Gpu, version: VllmVersion) -> StartupIssue | None:
    """A CUDA GPU below the floor cannot run vLLM at all (Pascal: Tesla P40, P100; Volta from v0.21)."""
    cc, floor = gpu.cc_major_minor, compute_capability_floor(version)
    return si.gpu_too_old(gpu.name, gpu.compute_capability, floor) if cc and cc < floor else None


def gpu_checks(gpu: Gpu, version: VllmVersion, issues: list[StartupIssue]) -> None:
    """Startup errors that depend on the GPU alone."""
    refusal = gpu_refusal(gpu, version)
    issues += [refusal] if refusal else []


# config/model.py _resolve_auto_dtype (vllm#18751, first in 0.9.1): a float32 checkpoint served with --dtype auto
# is downcast to float16 for a pooling model (where the platform has it), else to the platform's first 16-bit dtype
POOLING_FP16_FROM = VllmVersion(0, 9, 1)


def auto_dtype(checkpoint_dtype: str, gpu: Gpu, *, pooling_fp16: bool = False) -> str:
    """The dtype `--dtype auto` loads a checkpoint of this dtype in (config/model.py _resolve_auto_dtype, 0.33): the
    platform's first supported dtype for a float32 checkpoint (float16 for a pooling model, `pooling_fp16`), and a
    dtype the GPU lacks falls back to it too ("Your device ... doesn't support torch.bfloat16. Falling back to
    torch.float16"): CUDA's supported_dtypes (platforms/cuda.py) lead with bfloat16 from compute capability 8.0,
    with float16 below it (Turing's T4, Volta's V100)."""
    preferred = "bfloat16" if gpu.supports_bf16 and not pooling_fp16 else "float16"
    if checkpoint_dtype == "float32" or (checkpoint_dtype == "bfloat16" and not gpu.supports_bf16):
        return preferred
    return checkpoint_dtype


def _weight_dtype(
    model: ModelSpec, flags: EngineFlags, gpu: Gpu, issues: list[StartupIssue], version: VllmVersion
) -> str:
    d = {"half": "float16", "float": "float32"}.get(flags.dtype, flags.dtype)
    if d == "auto":
        d = auto_dtype(model.dtype, gpu, pooling_fp16=model.pooling and version >= POOLING_FP16_FROM)
    elif d == "bfloat16" and not gpu.supports_bf16:
        issues.append(si.bf16_unsupported(gpu.name, gpu.compute_capability))
    return d


# DeepSeek-V4's routed experts are FP4 in the checkpoint (`expert_dtype: fp4`, MXFP4 values with e8m0 scales) and
# load as such in every release that serves V4: the field logs that started (V4-Flash on 2 x H20 at 0.26, J025; on
# 2 x GB10, K007; V4-Pro DP 8 + EP on 8 x H200, K016) could not hold the experts at the FP8 block's byte a weight
# (134.69 GiB per H20 for Flash at TP 2). On ROCm the MXFP4 MoE backend pads the per-partition intermediate size:
# 0.33 aligns SiLU experts to 128 "rather than the generic ROCm 256 round-up, which would inflate weights and OOM"
# (fused_moe/oracle/mxfp4.py mxfp4_round_up_hidden_size_and_intermediate_size, for moe_intermediate 3072 = 384 per
# partition at TP 8); the release of that fix is not known, so before 0.33 the experts take the generic 256
# alignment (V4-Pro at TP 8: 384 -> 512, a third more expert memory), the conservative reading.
DSV4_ROCM_EXPERTS_ALIGNED_FROM = VllmVersion(0, 33)


def dsv4_expert_layout(model: ModelSpec, quant: QuantSpec | None, gpu: Gpu, version: VllmVersion) -> Mxfp4Layout | None:
    """The padding DeepSeek-V4's MXFP4 experts take on this GPU: ROCm's generic 256 alignment before 0.33, else none
    (the checkpoint's own packing)."""
    v4_fp4 = model.compressed_attention is not None and quant is not None and quant.expert_method == "mxfp4"
    if v4_fp4 and gpu.vendor.lower() == "amd" and version < DSV4_ROCM_EXPERTS_ALIGNED_FROM:
        return Mxfp4Layout("triton-rocm", 256, 256)
    return None


def auto_kv_is_fp8(model: ModelSpec, quant: QuantSpec | None) -> bool:
    """Whether `--kv-cache-dtype auto` already stores fp8: DeepSeek-V4's fp8_ds_mla layout
    (_resolve_dsv4_kv_cache_dtype) or a checkpoint that declares an FP8 KV-cache scheme (ModelOpt, compressed-tensors
    kv_cache_scheme), so `auto` and `fp8` are the same engine."""
    return model.compressed_attention is not None or (quant is not None and quant.kv_cache_fp8)


def resolve_precision(
    model: ModelSpec, flags: EngineFlags, gpu: Gpu, version: VllmVersion, issues: list[StartupIssue]
) -> Precision:
    """ModelConfig's dtype, the quantization config (and its MoE backend's layout) and CacheConfig's KV dtype."""
    dtype = _weight_dtype(model, flags, gpu, issues, version)
    dtype_bytes = DTYPE_BYTES[dtype]
    quant = resolve_quant(model, flags.quantization)
    if quant is not None and quant.method == "bitsandbytes" and version >= BITSANDBYTES_REMOVED_IN:
        issues.append(si.quantization_unknown(quant.method))
    refused = capability_refusal(quant, gpu, version)
    issues += [refused] if refused else []
    if quant is not None and quant.double_quant and version >= BNB_ABSMAX_DEQUANTIZED_IN:
        quant = replace(quant, double_quant=False)  # absmax dequantized to float32 at load
    kv_dtype = flags.kv_cache_dtype
    if model.compressed_attention is not None and kv_dtype == "auto":
        kv_dtype = "fp8"  # DeepSeek-V4's fp8_ds_mla layout: _resolve_dsv4_kv_cache_dtype turns auto into fp8
    elif model.compressed_attention is not None and not kv_dtype.startswith("fp8"):
        issues.append(si.dsv4_kv_dtype(kv_dtype))
    if kv_dtype == "auto" and auto_kv_is_fp8(model, quant):
        kv_dtype = "fp8"
        issues.append(
            si.note(
                IssueKind.FP8_KV_FROM_CHECKPOINT,
                "the checkpoint declares an FP8 KV-cache scheme, so vLLM uses fp8 for --kv-cache-dtype auto",
            )
        )
    skipped = flags.towers_skipped(version, tower_modalities(model))
    if model.multimodal and not skipped and model.vision is None and model.audio is None:
        issues.append(
            si.note(
                IssueKind.ENCODER_NOT_COUNTED,
                "the config does not size the vision/audio encoder: its weights and profiling are not counted",
            )
        )
    elif model.multimodal and not skipped and model.architecture not in ENCODER_PASS_SIZED:
        issues.append(
            si.note(
                IssueKind.ENCODER_NOT_COUNTED,
                "the encoder's own profiling pass (encoder cache budget) is not counted",
            )
        )
    latent = model.mla is not None and not model.mla.per_head_cache
    if kv_dtype.startswith("fp8") and not gpu.fp8 and not latent and model.compressed_attention is None:
        issues.append(
            si.note(
                IssueKind.FP8_KV_WITHOUT_TENSOR_CORES,
                f"{gpu.name} has no FP8 tensor cores; an fp8 KV cache still halves memory but may be slow",
            )
        )
    mxfp4 = dsv4_expert_layout(model, quant, gpu, version)
    if quant is not None and quant.method == "mxfp4":
        mxfp4 = mxfp4_layout(gpu.vendor, gpu.cc_major_minor, (version.major, version.minor))
    elif quant is not None and quant.method == "ocp-mx" and quant.bits == 4 and gpu.vendor.lower() == "amd":
        # Quark MXFP4 experts: QuarkOCP_MX_MoEMethod.maybe_roundup_sizes takes the same MXFP4 backend round-up
        # (fused_moe/oracle/mxfp4.py: ROCm pads hidden and per-partition intermediate to 256); on other vendors the
        # backend Quark's W4A4 / W4A8 keys select is not read here, so the checkpoint's packing is counted
        mxfp4 = mxfp4_layout(gpu.vendor, gpu.cc_major_minor, (version.major, version.minor))
    return Precision(dtype, dtype_bytes, quant, kv_dtype, kv_dtype_bytes(kv_dtype, dtype_bytes), mxfp4)


def tower_modalities(model: ModelSpec) -> tuple[str, ...]:
    """The modalities whose limits must all be 0 for vLLM to skip the towers: a vision tower serves images and, for
    some models, video (both are required here, so an image-only model limited by 'image' alone is still counted);
    an audio encoder serves audio."""
    return ("image", "video") * (model.vision is not None) + ("audio",) * (model.audio is not None)
