"""MXFP4 expert layouts per backend, hand-checked from vLLM 0.33's source and against logged weights."""

from __future__ import annotations

import pytest

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.mxfp4 import mxfp4_layout
from recommender.memory.weights import Parallel, weight_bytes_per_gpu
from recommender.sources.resolve import resolve_model
from recommender.units import GiB


def _weights(model: str, gpu: str, version: tuple[int, int], tp: int = 1) -> float:
    s = resolve_model(model)
    g = resolve_gpu(gpu, load_gpus())
    layout = mxfp4_layout(g.vendor, g.cc_major_minor, version)
    return weight_bytes_per_gpu(s, Parallel(tp=tp), dtype_bytes=2, quant=s.quant, mxfp4=layout) / GiB


def test_backend_per_gpu() -> None:
    # fused_moe/oracle/mxfp4.py: TRT-LLM on SM10x, OAI triton on SM90, Marlin on SM75-89 and SM12x, ROCm triton.
    assert mxfp4_layout("nvidia", (10, 0), (0, 33)).backend == "flashinfer-trtllm"
    assert mxfp4_layout("nvidia", (9, 0), (0, 33)).backend == "triton-hopper"
    assert mxfp4_layout("nvidia", (8, 0), (0, 33)).backend == "marlin"
    assert mxfp4_layout("nvidia", (12, 0), (0, 33)).backend == "marlin"
    assert mxfp4_layout("amd", None, (0, 33)).backend == "triton-rocm"
    assert mxfp4_layout("nvidia", (7, 0), (0, 33)).backend == "emulation"


def test_marlin_pads_hidden_to_256_and_intermediate_to_128() -> None:
    # gpt-oss-120b at TP=4: intermediate 2,880 / 4 = 720 -> 768, hidden 2,880 -> 3,072 (round_up 128 / 256).
    # w13 [2 x 768, 3072]: 1536 x 3072 / 2 = 2,359,296 B of values + 1536 x 3072 / 32 = 147,456 B of e8m0 scales;
    # w2 [3072, 768]: 1,179,648 + 73,728 B.
    marlin = mxfp4_layout("nvidia", (8, 0), (0, 33))
    assert marlin.padded(2880, 720) == (3072, 768)
    assert marlin.weight_bytes(1536, 3072) == 2_359_296 + 147_456
    assert marlin.weight_bytes(3072, 768) == 1_179_648 + 73_728


def test_hopper_swizzle_pads_scales() -> None:
    # HopperMXScaleLayout: N rows to 256 (5,760 -> 5,888), scale groups 2,880 / 32 = 90 -> 92 (0 mod 4);
    # the value layout's 16-row x 32-byte tiles divide gpt-oss's shapes. Releases before 0.33 also keep the
    # checkpoint's 5,760 x 90 scales.
    new, old = mxfp4_layout("nvidia", (9, 0), (0, 33)), mxfp4_layout("nvidia", (9, 0), (0, 19))
    assert new.padded(2880, 2880) == (2880, 2880)
    assert new.weight_bytes(5760, 2880) == 5760 * 1440 + 5888 * 92
    assert old.weight_bytes(5760, 2880) == 5760 * 1440 + 5888 * 92 + 5760 * 90


@pytest.mark.parametrize(
    ("model", "gpu", "version", "tp", "logged"),
    [
        # Issue 11's figures: predicted 60.78 and 15.23 before the backend layouts.
        ("openai/gpt-oss-120b", "h100", (0, 14), 1, 64.38),  # C070, vLLM 0.14.1 "Model loading took 64.38 GiB"
        ("openai/gpt-oss-120b", "a100-80gb", (0, 33), 4, 17.22),  # A100 TP=4, 17.22 GiB per GPU
        ("openai/gpt-oss-20b", "h100", (0, 19), 1, 13.64),  # A001, llm-d-planner v0.19.0 sweep
    ],
)
def test_gpt_oss_weights_match_logs(model: str, gpu: str, version: tuple[int, int], tp: int, logged: float) -> None:
    assert abs(_weights(model, gpu, version, tp) - logged) / logged < 0.02
