"""NCCL's NVLS buffers before NCCL 2.22 (memory/overheads.py NVLS_EAGER_UNTIL): a TP group of more than two Hopper
GPUs over NVSwitch on vLLM < 0.9 carries F043's non-torch figure, and field9 P007 (Llama-3.1-405B FP8 on 8 x H100,
V0 0.5.3) no longer starts."""

from __future__ import annotations

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory import overheads
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model
from recommender.units import GiB, MiB

GPUS = load_gpus()


def test_nvls_boards_are_hopper_nvlink_boards() -> None:
    # Multicast (NVLS) needs NVSwitch and compute capability 9.0: the SXM boards, not the PCIe cards with a bridge,
    # not Ampere's NVSwitch, not AMD.
    for key in ("h100", "h200", "h800", "h20"):
        assert resolve_gpu(key, GPUS).nvswitch_multicast, key
    for key in ("h100-nvl", "a100-80gb", "l40s", "mi300x"):
        assert not resolve_gpu(key, GPUS).nvswitch_multicast, key


def test_non_torch_with_eager_nvls_buffers() -> None:
    # One 8-GPU communicator's NVLS buffers by hand (ncclNvlsSetup): 16 channels x 2 x (4 MiB + 2 MiB) x 8 heads.
    assert 16 * 2 * (4 + 2) * MiB * 8 == int(1.5 * GiB)
    nvls = {"tp": 8, "nvlink": True, "multicast": True}
    assert overheads.non_torch_bytes(**nvls, version=(0, 5), v0=True) == int(7.71 * GiB)  # F043's driver rank
    assert overheads.non_torch_bytes(**nvls, version=(0, 8), v0=False) == int(5.68 * GiB)  # its largest worker
    # Four GPUs: NVLS buffers for 4 heads, half of F043's excess over the 1.0 GiB NVLink figure (6.71 / 2 on V0).
    assert (
        overheads.non_torch_bytes(tp=4, nvlink=True, multicast=True, version=(0, 5), v0=True)
        == int(1.0 * GiB) + (int(7.71 * GiB) - int(1.0 * GiB)) * 4 // 8
    )
    assert overheads.non_torch_bytes(tp=16, nvlink=True, multicast=True, version=(0, 8)) == int(5.68 * GiB)
    # NCCL 2.26 from vLLM 0.9 (torch 2.7) connects lazily; two GPUs never run NVLS; Ampere has no multicast.
    assert overheads.non_torch_bytes(**nvls, version=(0, 9), v0=True) == overheads.NON_TORCH_TP_NVLINK_OLD
    assert overheads.non_torch_bytes(tp=2, nvlink=True, multicast=True, version=(0, 5)) == int(1.0 * GiB)
    assert overheads.non_torch_bytes(tp=8, nvlink=True, multicast=False, version=(0, 5)) == int(1.0 * GiB)


def test_llama_405b_fp8_on_8_h100_at_0_5_3_does_not_hold_its_context() -> None:
    """field9 P007 (vllm-project/vllm#6746): 'The model's max seq len (131072) is larger than the maximum number of
    tokens that can be stored in KV cache (79392)'. By hand, per GPU at TP 8: weights 126 bf16 attentions x
    (2304 + 2048) x 16384 x 2 B, 124 FP8 MLPs x (13312 + 6656) x 16384 B plus a float32 scale a row, 2 bf16 MLPs,
    the embedding and head (16,032 rows of 16,384 each, bf16), 253 norms and the bf16 rotary cache (131,072 x 128):
    60,951,576,576 B. The V0 profile's peak is the sampler's 36 B x 256 x 128,256 logits; non-torch 7.71 GiB."""
    attention = 126 * (2304 + 2048) * 16384 * 2
    mlp = 124 * ((13312 + 6656) * 16384 + (13312 + 16384) * 4) + 2 * (13312 + 6656) * 16384 * 2
    weights = attention + mlp + 2 * 16032 * 16384 * 2 + 253 * 16384 * 2 + 131072 * 128 * 2
    assert weights == 60_951_576_576
    h100 = resolve_gpu("h100", GPUS)
    flags = EngineFlags(tensor_parallel_size=8, max_model_len=131072)
    e = explain(resolve_model("meta-llama/Meta-Llama-3.1-405B-Instruct-FP8"), h100, flags, VllmVersion.parse("0.5.3"))
    assert e.stage.weights == weights
    assert e.stage.activation_peak == 36 * 256 * 128256
    assert e.stage.non_torch == int(7.71 * GiB)
    available = int(0.9 * h100.total_bytes) - weights - 36 * 256 * 128256 - int(7.71 * GiB)
    assert e.stage.available_kv == available
    assert e.kv_cache_tokens == available // (16 * 64512) * 16 == 94_768  # the log: 79,392
    assert not e.fits and "131072" in e.errors[0]


def test_field9_p007_and_field_f043_through_the_harness() -> None:
    """The records themselves (benchmarks/fidelity.py's reading of their flags and version estimate): P007 is a FAIL
    again, and F043's tokens come within 1 % of its log (2,814,144) where the 1.0 GiB figure gave +6.4 %."""
    from benchmarks.fidelity import FIELD, FIELD9, compare, load_records, rel

    p007 = compare(next(r for r in load_records(*FIELD9) if r["id"] == "P007"))
    assert p007 is not None and p007.predicted == "FAIL" and p007.agrees
    f043 = compare(next(r for r in load_records(*FIELD) if r["id"] == "F043"))
    assert f043 is not None and f043.explanation.stage.non_torch == int(7.71 * GiB)
    error = rel(f043.explanation.kv_cache_tokens, 2_814_144)
    assert error is not None and error <= 0.01
