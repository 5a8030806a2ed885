"""The compute capability each quantization method needs, per vLLM release (pure).

vLLM refuses a quantization method below its `get_min_capability()` before loading anything (0.33
config/vllm.py `_get_quantization_config`: "The quantization method awq is not supported for the current GPU.
Minimum capability: 75. Current capability: 70."), and compressed-tensors refuses a layer's scheme when the
weights are created (compressed_tensors.py `_check_scheme_supported`: "Quantization scheme is not supported for the
current GPU. Min capability: 80. ..."). Both fail at startup: AWQ or FP8 on a V100, FP8 or MXFP4 (gpt-oss) on a T4
in the releases before Marlin ran on Turing.

Each floor names the files it was read from at the release tags (v0.4.2 ... v0.14.0rc0 in the vLLM history and 0.33's
source). Where a floor changed between v0.14.0rc0 and 0.33 at a release not pinned down, the older floor holds until
0.33 (the reading that does not call a refused GPU safe). Methods whose floor is at or below vLLM's own compute
capability floor (GPTQ 6.0, bitsandbytes 7.0, AutoRound 6.0, the compressed-tensors config 7.0) need no check.
"""

from __future__ import annotations

from recommender.hardware import Gpu
from recommender.memory import startup_issues as si
from recommender.memory.engine import VllmVersion
from recommender.model.spec import QuantSpec

V = VllmVersion
# vLLM's --quantization name -> (first release, minimum capability as vLLM writes it), oldest first.
_METHOD_FLOORS: dict[str, tuple[tuple[VllmVersion, int], ...]] = {
    # awq.py AWQConfig at every tag v0.4.2-v0.14.0rc0, auto_awq.py in 0.33. Below 8.0 vLLM keeps "awq" (awq_marlin
    # needs 8.0 until v0.14.0rc0 and is never chosen below AWQ's own floor).
    "awq": ((V(0, 4), 75),),
    # fp8.py: 89 at v0.4.2/v0.5.0; 80 from v0.5.1 (FP8 Marlin on Ampere, vllm#5975); 75 at v0.14.0rc0 and 0.33
    # (Marlin on Turing, vllm#29901).
    "fp8": ((V(0, 4), 89), (V(0, 5, 1), 80), (V(0, 14), 75)),
    "fbgemm_fp8": ((V(0, 5), 80),),  # fbgemm_fp8.py, v0.5.5-0.33
    "experts_int8": ((V(0, 5), 80),),  # experts_int8.py, v0.5.5-0.33
    "mxfp4": ((V(0, 10), 80),),  # mxfp4.py, v0.10.2-0.33
    # modelopt.py ModelOptFp8Config: 89 at v0.6.3-v0.14.0rc0; 80 after vllm#50019 (merged 2026-07-27, its
    # reproduction refused on 0.26.0) and in 0.33.
    "modelopt": ((V(0, 6), 89), (V(0, 27), 80)),
    # modelopt.py ModelOptNvFp4Config: 100 at v0.8.5, 80 at v0.9.2-v0.13.0, 75 at v0.14.0rc0 and 0.33.
    "modelopt_fp4": ((V(0, 8), 100), (V(0, 9), 80), (V(0, 14), 75)),
}
# compressed-tensors schemes (schemes/compressed_tensors_*.py): W4A16/W8A16 integer (wNa16) 80 at v0.5.3-v0.11.2,
# 75 from v0.12.0; FP8 below 8.9 falls back to W8A16 FP8 (80 at v0.6.3-v0.14.0rc0, 75 in 0.33); W8A8 INT8 75
# everywhere; NVFP4 (W4A4, or its W4A16 fallback) 80 at v0.10.2-v0.14.0rc0, 75 in 0.33.
_SCHEME_FLOORS: dict[str, tuple[tuple[VllmVersion, int], ...]] = {
    "gptq": ((V(0, 5), 80), (V(0, 12), 75)),
    "awq": ((V(0, 5), 80), (V(0, 12), 75)),
    "fp8": ((V(0, 5), 80), (V(0, 33), 75)),
    "int8": ((V(0, 5), 75),),
    "nvfp4": ((V(0, 10), 80), (V(0, 33), 75)),
}
_MODELOPT_NAMES = {"fp8": "modelopt", "nvfp4": "modelopt_fp4"}


def _floor(rows: tuple[tuple[VllmVersion, int], ...], version: VllmVersion) -> int | None:
    floors = [cap for first, cap in rows if version >= first]
    return floors[-1] if floors else None


def vllm_method(quant: QuantSpec) -> str:
    """The name vLLM gives the checkpoint's (or the online) method in its capability error."""
    fmt = quant.checkpoint_format
    if fmt == "modelopt":
        return _MODELOPT_NAMES.get(quant.method, "modelopt")
    return fmt or quant.method


def capability_refusal(quant: QuantSpec | None, gpu: Gpu, version: VllmVersion) -> si.StartupIssue | None:
    """vLLM's refusal of this quantization on this GPU in this release, or None."""
    cc = gpu.cc_major_minor
    if quant is None or cc is None:
        return None
    current = cc[0] * 10 + cc[1]
    if quant.checkpoint_format == "compressed-tensors":
        rows = _SCHEME_FLOORS.get(quant.method)
        need = _floor(rows, version) if rows else None
        return si.quant_scheme_capability(need, current) if need is not None and current < need else None
    method = vllm_method(quant)
    rows = _METHOD_FLOORS.get(method)
    need = _floor(rows, version) if rows else None
    return si.quant_capability(method, need, current) if need is not None and current < need else None
