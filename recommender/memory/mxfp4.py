"""How vLLM stores MXFP4 MoE experts on a given GPU: the backend it picks, the padding that backend needs and
the re-layout it does after loading (pure).

vLLM 0.33 sources (model_executor/layers/...):
- fused_moe/oracle/mxfp4.py `_get_priority_backends_for_gpt_oss`: FlashInfer TRT-LLM (Blackwell SM10x), then
  TRITON (OAI triton_kernels, SM90 to SM12x per gpt_oss_triton_kernels_moe.py
  `_triton_kernel_moe_supports_current_device`), then MARLIN (SM75+, marlin_moe.py `_supports_current_device`);
  on SM12x MARLIN is moved ahead of TRITON. ROCm takes the triton path with its own alignment.
- fused_moe/oracle/mxfp4.py `mxfp4_round_up_hidden_size_and_intermediate_size`: MARLIN and TRT-LLM round the
  hidden size up to 256 and the per-partition intermediate size to 128; ROCm triton rounds both to 256 (gpt-oss's
  swigluoai is neither SiTU nor SiLU); the emulation path to the 32-element MX block; the Hopper TRITON path
  leaves them (rounded to 64, which gpt-oss's 2,880 already is).
- quantization/utils/mxfp4_utils.py `_swizzle_mxfp4` and third_party/triton_kernels/.../hopper_value.py,
  hopper_scale.py (TRITON on SM90): the values are padded to 16 rows x 32 bytes (a no-op for gpt-oss); the
  block scales get the K axis (scale groups) padded to a multiple of 4 (the #47303 patch) and the N axis to
  2 x 8 warps x 2 x 8 = 256 rows. Expert biases become fp32 (oracle/mxfp4.py `bias.to(torch.float32)`).
- quantization/utils/marlin_utils_fp4.py `prepare_moe_mxfp4_layer_for_marlin`: re-packed weights and e8m0
  scales keep their sizes (after the padding above); biases stay in the model dtype.

Release differences (from logs, since the sources of older releases are not here): up to at least 0.19 the
TRITON path kept the checkpoint's block scales beside their swizzled copy (0.33 deletes them:
`del layer.w13_weight_scale`). That is what "Model loading took" shows: gpt-oss-120b on one H100 loads
64.38 GiB on 0.14.1 (C070) and gpt-oss-20b 13.64 GiB on 0.19.0 (llm-d-planner sweep); without the kept scales
the model predicts 3.6 and 0.6 GiB less. When the release that frees them is not known, keeping them is the
conservative reading: from 0.33 they are freed.

Hopper before 0.12 took MARLIN: gpt-oss-120b on one H100 with vLLM 0.10.1 prints "Your GPU does not have native
support for FP4 computation ... Marlin" and loads 65.97 GiB (calibration C067), and a 0.11 log of the same model
at --gpu-memory-utilization 0.95 leaves 1.71 GiB of KV cache, which the Marlin layout explains and the TRITON one
does not (field record F038); 0.14.1 logs "Using Triton backend" (C070). The release in between is not known.
"""

from __future__ import annotations

from dataclasses import dataclass

from recommender.units import cdiv

MX_BLOCK = 32  # elements sharing one e8m0 scale
SCALES_FREED_IN = (0, 33)
HOPPER_TRITON_FROM = (0, 12)
HOPPER_SCALE_ROWS = 2 * 8 * 2 * 8  # HopperMXScaleLayout SWIZZLE_ALIGN_M with num_warps = 8
HOPPER_SCALE_GROUPS = 4  # the #47303 patch pads K (scale groups) to 0 mod 4 on SM90 (0.33)
HOPPER_VALUE_ROWS, HOPPER_VALUE_BYTES = 16, 32  # HopperMXValueLayout packs (mma v3)


def _round_up(x: int, multiple: int) -> int:
    return cdiv(x, multiple) * multiple


@dataclass(frozen=True, slots=True)
class Mxfp4Layout:
    """One MXFP4 MoE backend's storage of the experts."""

    backend: str  # "marlin" | "triton-hopper" | "flashinfer-trtllm" | "triton-rocm" | "emulation"
    hidden_align: int
    intermediate_align: int
    bias_bytes: int | None = None  # None: the model dtype
    hopper_swizzle: bool = False
    keeps_checkpoint_scales: bool = False

    def padded(self, hidden: int, intermediate: int) -> tuple[int, int]:
        """(hidden, per-partition intermediate) after the backend's round-up."""
        return _round_up(hidden, self.hidden_align), _round_up(intermediate, self.intermediate_align)

    def weight_bytes(self, rows: int, cols: int) -> int:
        """One expert's [rows, cols] MXFP4 weight (already padded): values, scales, kept checkpoint scales."""
        kept = rows * (cols // MX_BLOCK) if self.keeps_checkpoint_scales else 0
        return self._values(rows, cols) + self._scales(rows, cols) + kept

    def _values(self, rows: int, cols: int) -> int:
        if not self.hopper_swizzle:
            return rows * cols // 2
        return _round_up(rows, HOPPER_VALUE_ROWS) * _round_up(cols // 2, HOPPER_VALUE_BYTES)

    def _scales(self, rows: int, cols: int) -> int:
        groups = cols // MX_BLOCK
        if not self.hopper_swizzle:
            return rows * groups
        return _round_up(rows, HOPPER_SCALE_ROWS) * _round_up(groups, HOPPER_SCALE_GROUPS)


def mxfp4_layout(vendor: str, cc: tuple[int, int] | None, version: tuple[int, int]) -> Mxfp4Layout:
    """The backend vLLM selects for gpt-oss-style MXFP4 experts on this GPU, and its storage rules."""
    if vendor.lower() == "amd":
        return Mxfp4Layout("triton-rocm", 256, 256)
    if cc is None or cc < (7, 5):
        return Mxfp4Layout("emulation", MX_BLOCK, MX_BLOCK)
    if (10, 0) <= cc < (11, 0):
        return Mxfp4Layout("flashinfer-trtllm", 256, 128)
    if (9, 0) <= cc < (10, 0) and version >= HOPPER_TRITON_FROM:
        return Mxfp4Layout(
            "triton-hopper", 1, 64, bias_bytes=4, hopper_swizzle=True, keeps_checkpoint_scales=version < SCALES_FREED_IN
        )
    return Mxfp4Layout("marlin", 256, 128)  # SM75-SM89 and SM12x
