"""GPUs as the field names them: NVIDIA vGPU types, memory-modified GeForce boards, the China-market RTX 5090 D."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import fidelity
from recommender.catalog import load_gpus
from recommender.errors import UnknownGpuError
from recommender.gpu_names import resolve_gpu
from recommender.units import GiB, MiB
from tests.conftest import invoke

CATALOG = load_gpus()


def test_a_vgpu_type_is_its_board_with_the_types_framebuffer() -> None:
    # field4 J007 (vllm-project/vllm#11230): "GPU : NVIDIA A40-48Q", total_gpu_memory=47.74GiB
    card = resolve_gpu("NVIDIA A40-48Q", CATALOG)
    a40 = resolve_gpu("a40", CATALOG)
    assert card.key == "a40-48q" and card.compute_capability == a40.compute_capability == "8.6"
    assert card.total_bytes == 48 * GiB and "memory.cuda_total_mib" in card.estimated
    assert abs(card.total_bytes / GiB - 47.74) / 47.74 < 0.01  # the type's 48 GiB against the 47.74 the VM printed
    assert "A40-48Q" in card.name and "vGPU" in card.name
    # a total a tool reported wins (nvidia-smi --query-gpu=name,memory.total in the VM)
    assert resolve_gpu("NVIDIA A40-48Q, 48885 MiB", CATALOG).total_bytes == 48885 * MiB
    # the older GRID brand and a compute (C) type of an A100; the "A100" in the name is what vLLM's defaults test
    a100 = resolve_gpu("GRID A100-40C", CATALOG)
    assert a100.total_bytes == 40 * GiB and "A100" in a100.name and a100.compute_capability == "8.0"


def test_a_vgpu_type_larger_than_its_board_is_refused() -> None:
    with pytest.raises(UnknownGpuError, match="larger than the 48 GB"):
        resolve_gpu("NVIDIA A40-96Q", CATALOG)


def test_a_memory_modified_geforce_board_keeps_its_chip_and_takes_the_printed_total() -> None:
    # field4 J033 (vllm-project/vllm#35854): "4 * 2080ti 22G"; no total printed, so the size is scaled and marked
    card = resolve_gpu("NVIDIA GeForce RTX 2080 Ti 22G", CATALOG)
    stock = resolve_gpu("rtx2080ti", CATALOG)
    assert card.compute_capability == "7.5" and card.key == "rtx2080ti-22g" and "modified" in card.name
    assert card.total_bytes == pytest.approx(stock.total_bytes * 2, rel=0.001)
    assert "memory.cuda_total_mib" in card.estimated
    # field3 H030: an RTX 4090 re-fitted to 48 GB printed 47.37 GiB; the estimate is 1.3 % above it
    estimate = resolve_gpu("RTX 4090 48GB", CATALOG).total_bytes / GiB
    assert 0 < estimate / 47.37 - 1 < 0.015
    assert resolve_gpu("RTX 4090 48GB", CATALOG, memory_mib=48506).total_bytes == 48506 * MiB


def test_a_datacenter_card_with_an_unknown_size_is_still_refused() -> None:
    with pytest.raises(UnknownGpuError, match="no 48 GB card named 'L4 48GB'"):
        resolve_gpu("L4 48GB", CATALOG)


def test_the_rtx_5090_d_and_its_24_gb_v2() -> None:
    # field4 J002's nvidia-smi line (vllm-project/vllm#34076)
    assert resolve_gpu("1: NVIDIA GeForce RTX 5090 D, 32607 MiB".split(": ", 1)[1], CATALOG).key == "rtx5090d"
    assert resolve_gpu("RTX 5090 D 24GB", CATALOG).key == "rtx5090d-v2"
    assert resolve_gpu("RTX 5090", CATALOG).key == "rtx5090"


def test_field4_modified_and_vgpu_records_resolve_by_name() -> None:
    records = {r["id"]: r for r in fidelity.load_records(*fidelity.FIELD4)}
    assert (g := fidelity.record_gpu(records["J033"])) is not None and g.key == "rtx2080ti-22g"
    assert (g := fidelity.record_gpu(records["J007"])) is not None and g.key == "a40-48q"


def test_a_size_written_as_the_printed_total_picks_the_card() -> None:
    # field4 J024 writes "NVIDIA H20 (95 GiB)": the H20's CUDA total, 95.58 GiB, cut to a whole number
    assert resolve_gpu("NVIDIA H20 (95 GiB)", CATALOG).key == "h20"
    assert resolve_gpu("A100 39GB", CATALOG).key == "a100-40gb"  # 39.38 GiB printed
    # "H100 (96GB)" as field4 J016's reporter writes it: nvidia-smi's 95830MiB read in thousands, the 94 GB H100 NVL
    assert resolve_gpu("NVIDIA H100 96GB", CATALOG).key == "h100-nvl"
    j016 = {r["id"]: r for r in fidelity.load_records(*fidelity.FIELD4)}["J016"]
    assert (card := fidelity.record_gpu(j016)) is not None and card.key == "h100-nvl"


def test_gb300_is_blackwell_ultra() -> None:
    card = resolve_gpu("NVIDIA GB300", CATALOG)
    assert card.compute_capability == "10.3" and card.marketed_gb == 288 and card.fp4


def test_a_pipeline_over_two_cards_is_named_as_such(tmp_path: Path) -> None:
    # field4 J002 (vllm-project/vllm#34076): PP 2 over an RTX 5070 Ti and an RTX 5090 D
    j002 = {r["id"]: r for r in fidelity.load_records(*fidelity.FIELD4)}["J002"]
    assert [g.key for g in fidelity.record_cards(j002)] == ["rtx5070ti", "rtx5090d"]
    assert fidelity.unresolved_reason(j002) == "different cards in one pipeline (a plan holds one GPU type)"
    log = tmp_path / "pp.log"
    log.write_text(
        "GPU 0: NVIDIA GeForce RTX 5070 Ti\nGPU 1: NVIDIA GeForce RTX 5090 D\n"
        "INFO 02-08 10:00:00 [api_server.py:1] vLLM API server version 0.15.2rc1.dev93+g11a4c9d30\n"
        "INFO 02-08 10:00:00 [utils.py:1] non-default args: {'model': 'Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8', "
        "'pipeline_parallel_size': 2}\n"
    )
    err = invoke(["explain", "--log", str(log)], exit_code=2).stderr
    assert "names several GPUs (rtx5070ti, rtx5090d): a plan holds one GPU type; pass --gpu NAME" in err
