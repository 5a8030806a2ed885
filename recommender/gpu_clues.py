"""What a vLLM log says about its GPU besides the name and the total (pure: text in, frozen clues out).

A log that prints only a device total fits several cards; other lines narrow them, each by a rule of the code that
prints it (never by what a card usually runs):

- vLLM's attention selector: "Cannot use FlashAttention-2 backend for Volta and Turing GPUs." is logged when
  `device_capability[0] < 8` (vllm/attention/selector.py which_attn_to_use, 0.4-0.6; vllm/platforms/cuda.py
  CudaPlatform.get_attn_backend_cls, 0.7-0.10);
- "Using FlashAttention version 3" (vllm/v1/attention/backends/flash_attn.py FlashAttentionImpl.__init__, after
  vllm/v1/attention/backends/fa_utils.py get_flash_attn_version): FA3 runs only on compute capability 9.x
  (vllm/vllm_flash_attn/flash_attn_interface.py _is_fa3_supported), FA4 on 9.x, 10.x and 11.x (_is_fa4_supported),
  FA2 from 8.0 (_is_fa2_supported);
- the FP8 Marlin fallback, "Your GPU does not have native support for FP8 computation ..."
  (model_executor/layers/quantization/utils/marlin_utils_fp8.py prepare_fp8_layer_for_marlin): chosen when the
  card lacks FP8 GEMMs, below compute capability 8.9 (quantization/fp8.py Fp8LinearMethod.__init__ before 0.10:
  `not current_platform.has_device_capability(89)`; 0.33: the CUTLASS FP8 kernel is tried first,
  kernels/linear/scaled_mm/cutlass.py), and FP8 Marlin needs 7.5 (marlin_utils_fp8.py is_fp8_marlin_supported);
- V1's oracle "Compute Capability < 8.0 is not supported by V1 Engine" (engine/arg_utils.py _is_v1_supported_oracle,
  0.8-0.9);
- the bfloat16 refusal, "Your <name> GPU has compute capability X.Y" (platforms/cuda.py check_if_supports_dtype),
  and PyTorch's own warnings, "Found GPU0 <name> which is of cuda capability X.Y" and "<name> with CUDA capability
  sm_XY is not compatible" (torch/cuda/__init__.py _check_capability): the card's name and exact capability;
- NCCL's and RCCL's own banner, "NCCL version 2.21.5+cuda12.4" / "...+hip6.2" (the library's VERSION_STR with the
  runtime it was built for): the vendor;
- "Automatically detected platform cuda|rocm." (vllm/platforms/__init__.py resolve_current_platform_cls_qualname)
  and a ROCm offload architecture (`--offload-arch=gfx1201`, gcnArchName): the vendor, and the AMD architecture;
- "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs"
  (distributed/device_communicators/custom_all_reduce.py CustomAllreduce.__init__: the cards are not all linked by
  NVLink, platforms/cuda.py is_fully_connected): a card without NVLink;
- kernels' own checks: flash-attn's "FlashAttention only supports Ampere GPUs or newer" (csrc/flash_attn/
  flash_api.cpp: it passes sm_8x and sm_90, so the card is neither) and Triton's "mma -> mma layout conversion is
  only supported on Ampere" (lib/Analysis/Allocation.cpp getCvtOrder asserts the MMA layout `isAmpere()`, the
  version-2 MMA Triton gives sm_80 to sm_89; Hopper and Volta cards hit it, so the card is not 8.x).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from recommender.hardware import Gpu

ANY = 999  # an open upper end of a compute-capability range (major * 10 + minor)


@dataclass(frozen=True, slots=True)
class GpuClue:
    """One log line that narrows the card: the vendor, the compute capabilities it allows (half-open ranges of
    major * 10 + minor), an AMD offload architecture, the device name it prints, and the rule with its source."""

    line: str
    rule: str
    vendor: str | None = None
    capabilities: tuple[tuple[int, int], ...] = ()
    arch: str | None = None
    device_name: str | None = None
    nvlink: bool | None = None

    def admits(self, gpu: Gpu) -> bool:
        if self.vendor is not None and gpu.vendor != self.vendor:
            return False
        if self.nvlink is not None and gpu.nvlink != self.nvlink:
            return False
        if self.arch is not None and gpu.compute_capability.lower() != self.arch:
            return False
        if not self.capabilities:
            return True
        cc = gpu.cc_major_minor
        return cc is not None and any(lo <= cc[0] * 10 + cc[1] < hi for lo, hi in self.capabilities)


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    rule: str
    vendor: str | None = None
    capabilities: tuple[tuple[int, int], ...] = ()


_RULES = (
    _Rule(
        re.compile(r"Cannot use FlashAttention(?:-2)? backend for Volta and Turing GPUs"),
        "vLLM logs it when the compute capability is below 8.0 (attention/selector.py, platforms/cuda.py)",
        "nvidia",
        ((0, 80),),
    ),
    _Rule(
        re.compile(r"Compute Capability < 8\.0 is not supported by V1 Engine"),
        "vLLM's V1 oracle: compute capability below 8.0 (engine/arg_utils.py _is_v1_supported_oracle)",
        "nvidia",
        ((0, 80),),
    ),
    _Rule(
        re.compile(r"Using FlashAttention version 3\b"),
        "FA3 runs only on compute capability 9.x (vllm_flash_attn _is_fa3_supported)",
        "nvidia",
        ((90, 100),),
    ),
    _Rule(
        re.compile(r"Using FlashAttention version 4\b"),
        "FA4 runs on compute capability 9.x, 10.x and 11.x (vllm_flash_attn _is_fa4_supported)",
        "nvidia",
        ((90, 120),),
    ),
    _Rule(
        re.compile(r"Using FlashAttention version 2\b"),
        "FA2 needs compute capability 8.0 (vllm_flash_attn _is_fa2_supported)",
        "nvidia",
        ((80, ANY),),
    ),
    _Rule(
        re.compile(r"Your GPU does not have native support for FP8 computation"),
        "the FP8 Marlin fallback: no FP8 GEMMs (below 8.9), Marlin from 7.5 (quantization/utils/marlin_utils_fp8.py)",
        "nvidia",
        ((75, 89),),
    ),
    _Rule(
        re.compile(r"FlashAttention only supports? Ampere GPUs or newer"),
        "flash-attn passes sm_8x and sm_90 (csrc/flash_attn/flash_api.cpp)",
        "nvidia",
        ((0, 80), (100, ANY)),
    ),
    _Rule(
        re.compile(r"mma -> mma layout conversion is only supported on Ampere"),
        "Triton asserts the Ampere (sm_80-sm_89) MMA layout (lib/Analysis/Allocation.cpp getCvtOrder)",
        "nvidia",
        ((0, 80), (90, ANY)),
    ),
)
_PCIE_ONLY = re.compile(r"Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs")
_NCCL_BUILD = re.compile(r"\bNCCL version \d+\.\d+\.\d+\+(cuda|hip)\d+(?:\.\d+)*")
_PLATFORM = re.compile(r"Automatically detected platform (cuda|rocm)\b")
_OFFLOAD_ARCH = re.compile(r"(?:--offload-arch=|gcnArchName[=:'\" ]+|\bArch:\s*)(gfx[0-9a-f]{3,4})\b")
_NAMED_CAPABILITY = (
    # vLLM's bfloat16 refusal (platforms/cuda.py check_if_supports_dtype; config.py _check_valid_dtype before)
    re.compile(r"Your ([A-Za-z][\w .\-]{2,60}?) GPU has compute capability (\d+)\.(\d+)"),
    # PyTorch: torch/cuda/__init__.py _check_capability
    re.compile(r"Found GPU\d+ ([A-Za-z][\w .\-]{2,60}?) which is of cuda capability (\d+)\.(\d+)"),
    re.compile(r"([A-Za-z][\w .\-]{2,60}?) with CUDA capability sm_(\d+?)(\d) is not compatible"),
)
MAX_LINE = 120


def _short(text: str) -> str:
    return text.strip()[:MAX_LINE]


def read_gpu_clues(text: str) -> tuple[GpuClue, ...]:
    """Every clue the text holds, once each (the first line that gives it)."""
    found = ((r, r.pattern.search(text)) for r in _RULES)
    clues = [GpuClue(_short(m.group(0)), r.rule, r.vendor, r.capabilities) for r, m in found if m]
    if m := _PCIE_ONLY.search(text):
        rule = "vLLM found the cards not linked by NVLink (custom_all_reduce.py, platforms/cuda.py is_fully_connected)"
        clues.append(GpuClue(_short(m.group(0)), rule, "nvidia", nvlink=False))
    if m := _NCCL_BUILD.search(text):
        vendor = "amd" if m.group(1) == "hip" else "nvidia"
        clues.append(GpuClue(_short(m.group(0)), "the collective library's build (NCCL/RCCL version banner)", vendor))
    if m := _PLATFORM.search(text):
        vendor = "amd" if m.group(1) == "rocm" else "nvidia"
        clues.append(GpuClue(_short(m.group(0)), "vLLM's platform detection (platforms/__init__.py)", vendor))
    if m := _OFFLOAD_ARCH.search(text):
        arch = m.group(1).lower()
        clues.append(GpuClue(_short(m.group(0)), "the ROCm offload architecture the log prints", "amd", arch=arch))
    for pattern in _NAMED_CAPABILITY:
        for m in pattern.finditer(text):
            name, cc = m.group(1).strip(), int(m.group(2)) * 10 + int(m.group(3))
            rule = "the card's name and compute capability as vLLM or PyTorch print them"
            clues.append(GpuClue(_short(m.group(0)), rule, "nvidia", ((cc, cc + 1),), device_name=name))
    return tuple(dict.fromkeys(clues))


def narrow(cards: Sequence[Gpu], clues: Iterable[GpuClue]) -> tuple[list[Gpu], tuple[GpuClue, ...]]:
    """The cards every clue admits, and the clues that took at least one card out."""
    kept, used = list(cards), []
    for clue in clues:
        after = [g for g in kept if clue.admits(g)]
        if len(after) < len(kept):
            used.append(clue)
        kept = after
    return kept, tuple(used)
