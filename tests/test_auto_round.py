"""Intel AutoRound checkpoints (`quant_method: auto-round`), read as vLLM 0.33's INCConfig reads them
(model_executor/layers/quantization/inc/): bytes hand-checked on the tiny Llama-style config of
test_quantized_weights.py (one layer: q 256x256, k and v 128x256, o 256x256, gate and up 512x256, down 256x512)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recommender.errors import UnsupportedArchitectureError
from recommender.model.quant import resolve_quant

from .test_quantized_weights import _lm_head_bytes, _model, _per_module

# The block Intel's AutoRound writes (auto_round 0.5+), as on Intel/DeepSeek-R1-0528-Qwen3-8B-int4-AutoRound's config.
AUTO_ROUND = {"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": True, "data_type": "int"}


def _gptq_packed(rows: int, cols: int) -> int:
    """auto_round:auto_gptq, symmetric: qweight int32 [cols / 8, rows] and float16 scales [cols / 128, rows] (the
    qzeros of a symmetric checkpoint are dropped by Marlin after loading, as for GPTQ)."""
    return cols // 8 * rows * 4 + cols // 128 * rows * 2


def _awq_packed(rows: int, cols: int) -> int:
    """auto_round:auto_awq, asymmetric: qweight int32 [cols, rows / 8], qzeros int32 [cols / 128, rows / 8] and
    float16 scales [cols / 128, rows]."""
    return cols * rows // 8 * 4 + cols // 128 * rows // 8 * 4 + cols // 128 * rows * 2


def test_auto_round_gptq_packing(tmp_path: Path) -> None:
    spec = _model(tmp_path, AUTO_ROUND)
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("gptq", 4, 128)
    assert not spec.quant.has_zero_points and spec.quant.checkpoint_format == "auto-round"
    layer = _per_module(spec, 0)
    assert layer["qkv_proj"] == _gptq_packed(512, 256) == 67_584
    assert layer["gate_up_proj"] == _gptq_packed(1024, 256) == 135_168
    assert layer["down_proj"] == _gptq_packed(256, 512) == 67_584
    assert _lm_head_bytes(spec) == 1024 * 256 * 2  # ParallelLMHead stays 16-bit unless extra_config lists it


def test_auto_round_awq_packing_with_zero_points(tmp_path: Path) -> None:
    spec = _model(tmp_path, AUTO_ROUND | {"sym": False, "packing_format": "auto_round:auto_awq"})
    assert spec.quant is not None and spec.quant.method == "awq" and spec.quant.has_zero_points
    assert _per_module(spec, 0)["qkv_proj"] == _awq_packed(512, 256) == 68_096


def test_auto_round_extra_config_keeps_16_bit_layers(tmp_path: Path) -> None:
    """extra_config entries of 16 bits stay unquantized: an exact name (one layer's down_proj) and a regular
    expression (every o_proj, matched with re.search as config_parser.py does)."""
    extra: dict[str, Any] = {
        "model.layers.1.mlp.down_proj": {"bits": 16, "data_type": "float"},
        r".*self_attn\.o_proj": {"bits": 16},
        "model.layers.0.mlp.gate_proj": {"bits": 4},
    }
    spec = _model(tmp_path, AUTO_ROUND | {"extra_config": extra})
    first, second = _per_module(spec, 0), _per_module(spec, 1)
    assert first["o_proj"] == second["o_proj"] == 256 * 256 * 2
    assert first["down_proj"] == _gptq_packed(256, 512)
    assert second["down_proj"] == 256 * 512 * 2
    assert first["gate_up_proj"] == _gptq_packed(1024, 256)


def test_auto_round_overrides_the_quantization_flag(tmp_path: Path) -> None:
    """INCConfig.override_quantization_method claims the checkpoint whatever --quantization names."""
    spec = _model(tmp_path, AUTO_ROUND)
    for flag in (None, "auto_round", "inc", "gptq"):
        assert resolve_quant(spec, flag) == spec.quant


@pytest.mark.parametrize(
    ("change", "what"),
    [({"data_type": "mx_fp"}, "data_type"), ({"packing_format": "auto_round:fp8"}, "packing_format")],
)
def test_auto_round_formats_not_modelled_are_refused(tmp_path: Path, change: dict[str, Any], what: str) -> None:
    with pytest.raises(UnsupportedArchitectureError, match=what):
        _model(tmp_path, AUTO_ROUND | change)
