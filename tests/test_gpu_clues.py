"""The card a log implies beyond its total: rules from the code that prints each line, on real log excerpts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import fidelity
from recommender.catalog import load_gpus
from recommender.errors import UnknownGpuError
from recommender.gpu_clues import narrow, read_gpu_clues
from recommender.gpu_totals import resolve_total
from recommender.startup_log import read_startup_log
from tests.conftest import invoke

# public V0 log on a Turing/Volta card (code index id 19513493048): vLLM 0.6.x selector.py
VOLTA_LINE = "INFO 12-06 17:06:57 selector.py:261] Cannot use FlashAttention-2 backend for Volta and Turing GPUs."
# vLLM's bfloat16 refusal as a Ray job printed it (code index id 15487591866)
BF16_REFUSAL = (
    "(task, pid=13917) ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your "
    "Tesla V100-SXM2-16GB GPU has compute capability 7.0. You can use float16 instead by explicitly setting the`dtype` "
    "flag in CLI, for example: --dtype=half."
)
CATALOG = load_gpus()


def _keys(cards: object) -> set[str]:
    return {g.key for g in cards}  # type: ignore[attr-defined]


def test_the_volta_turing_line_leaves_only_cards_below_compute_capability_8() -> None:
    (clue,) = read_gpu_clues(VOLTA_LINE)
    kept, used = narrow(CATALOG, [clue])
    assert used == (clue,) and kept
    assert all(g.cc_major_minor is not None and g.cc_major_minor < (8, 0) for g in kept)
    assert {"v100-16gb", "t4", "rtx2080ti"} <= _keys(kept) and not {"a100-80gb", "rtx2000-ada"} & _keys(kept)


def test_a_total_that_fits_volta_and_ada_cards_is_narrowed_by_the_volta_line() -> None:
    # 15.77 GiB fits V100 16GB (15.78), RTX 2000 Ada (15.83), RTX 5080 (15.92), P100 (15.90) ...: the line leaves the
    # cards below 8.0, still told apart by the memory model (NVLink, compute capability 6.0), so they are listed
    with pytest.raises(UnknownGpuError) as err:
        resolve_total(15.77, CATALOG, clues=read_gpu_clues(VOLTA_LINE))
    listed = str(err.value)
    assert "v100-16gb" in listed and "p100-pcie-16gb" in listed
    assert "rtx2000-ada" not in listed and "rtx5080" not in listed


def test_the_bfloat16_refusal_names_the_card_and_its_capability() -> None:
    logged = read_startup_log(BF16_REFUSAL)
    assert logged.device_names == ("Tesla V100-SXM2-16GB",)
    (clue,) = logged.gpu_clues
    assert clue.capabilities == ((70, 71),) and clue.device_name == "Tesla V100-SXM2-16GB"


def test_fa3_and_the_fp8_marlin_fallback_bound_the_capability() -> None:
    fa3 = read_gpu_clues("INFO [flash_attn.py:1123] Using FlashAttention version 3")
    assert _keys(narrow(CATALOG, fa3)[0]) >= {"h100-sxm", "h200", "gh200"}
    assert all(g.compute_capability == "9.0" for g in narrow(CATALOG, fa3)[0])
    marlin = read_gpu_clues(
        "WARNING [marlin_utils_fp8.py:109] Your GPU does not have native support for FP8 computation but FP8 "
        "quantization is being used. Weight-only FP8 compression will be used leveraging the Marlin kernel."
    )
    kept = _keys(narrow(CATALOG, marlin)[0])
    assert {"a100-80gb", "rtx3090", "t4"} <= kept and not {"l40s", "h100-sxm", "rtx5090", "v100-16gb"} & kept


def test_the_triton_ampere_assertion_rules_out_ampere_and_ada_only() -> None:
    # ray-project/ray#52377 (field4 J030): 31.73 GiB fits V100 32GB, RTX 5000 Ada and RTX PRO 4500 Blackwell; the
    # assertion takes the Ada card out (Triton's version-2 MMA layout is sm_80-sm_89), not the others
    (j030,) = [r for r in fidelity.load_records(*fidelity.FIELD4) if r["id"] == "J030"]
    clues = fidelity.record_clues(j030)
    assert [c.capabilities for c in clues] == [((0, 80), (90, 999))]
    near = [g for g in CATALOG if g.vendor == "nvidia" and abs(g.total_bytes / 2**30 / 31.73 - 1) <= 0.01]
    assert "rtx5000-ada" in _keys(near) and "rtx5000-ada" not in _keys(narrow(near, clues)[0])
    assert {"v100-32gb", "rtx-pro-4500"} <= _keys(narrow(near, clues)[0])


def test_platform_and_offload_architecture_lines_name_the_vendor() -> None:
    # field2 G019's excerpt: a ROCm clang call with the offload architecture
    clues = read_gpu_clues(
        'failed to execute:/opt/rocm/lib/llvm/bin/clang++  --offload-arch=gfx1201 -O3 -x hip -E -P /dev/null -o "/dev/null"'
    )
    assert [(c.vendor, c.arch) for c in clues] == [("amd", "gfx1201")]
    assert _keys(narrow(CATALOG, clues)[0]) == {"rx9070", "rx9070xt", "radeon-ai-pro-r9700"}
    (cuda,) = read_gpu_clues("INFO 05-30 11:25:20 __init__.py:239] Automatically detected platform cuda.")
    assert cuda.vendor == "nvidia" and not cuda.capabilities


def test_explain_log_names_the_lines_that_narrowed_the_card(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "INFO 04-15 10:19:11 arg_utils.py] vLLM API server version 0.6.4.post1\n"
        "INFO 04-15 10:19:11 api_server.py] args: Namespace(model='Qwen/Qwen2.5-7B-Instruct', dtype='half')\n"
        f"{VOLTA_LINE}\n"
        "INFO worker.py:241] the current vLLM instance can use total_gpu_memory (15.77GiB) x gpu_memory_utilization "
        "(0.90) = 14.20GiB\n"
    )
    err = invoke(["explain", "--log", str(log)], exit_code=2).stderr
    assert "fits cards the memory model tells apart: v100-16gb" in err and "rtx5080" not in err, err


def test_field4_records_carry_their_sources() -> None:
    # J022/J023's card is the one the reporter names (vllm-project/vllm#11251); J030's clue line is its issue's title
    path = fidelity.FIELD4[0]
    records = {r["id"]: r for r in map(json.loads, Path(path).read_text().splitlines())}
    assert "v100x2(16gx2)" in records["J022"]["gpu"] and "v100x2(16gx2)" in records["J023"]["gpu"]
    assert fidelity.record_gpu(records["J022"]) is not None


def test_the_pcie_only_allreduce_warning_rules_out_nvlink_boards() -> None:
    # vLLM's warning as logs print it at TP 4 on PCIe cards (custom_all_reduce.py)
    (clue,) = read_gpu_clues(
        "WARNING 01-15 10:00:00 custom_all_reduce.py:137] Custom allreduce is disabled because it's not supported on "
        "more than two PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly."
    )
    kept = _keys(narrow([g for g in CATALOG if g.key.startswith("a100")], [clue])[0])
    assert kept == {"a100-40gb-pcie", "a100-80gb-pcie"}


def test_a_record_whose_log_says_rocm_is_matched_among_amd_cards() -> None:
    # a record with no GPU name, a 15.92 GiB total (an RTX 5080 and the RX 9070 / 9070 XT print it) and ROCm's
    # offload architecture in its excerpt (field2 G019's clang line): the AMD cards, not the default NVIDIA pool
    record = {
        "id": "T1",
        "gpu": None,
        "gpu_total_gib": 15.92,
        "raw": "failed to execute:/opt/rocm/lib/llvm/bin/clang++  --offload-arch=gfx1201 -O3 -x hip -E -P /dev/null",
    }
    card = fidelity.gpu_by_total(record)
    assert card is not None and card.vendor == "amd" and card.compute_capability == "gfx1201"


def test_explain_log_resolves_a_total_its_rocm_lines_leave_to_alike_cards(tmp_path: Path) -> None:
    # 15.92 GiB fits the RTX 5080 and the RX 9070 / 9070 XT; the RCCL banner (a ROCm build) leaves the two AMD
    # cards, alike for the memory model, so the log's card is one of them and the note says which line decided
    log = tmp_path / "rocm.log"
    log.write_text(
        "INFO 01-21 10:00:00 [api_server.py:1] vLLM API server version 0.14.0\n"
        "INFO 01-21 10:00:00 [utils.py:1] non-default args: {'model': 'Qwen/Qwen2.5-7B-Instruct', 'dtype': 'half'}\n"
        "host:1:1 [0] NCCL INFO NCCL version 2.21.5+hip6.2\n"
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of "
        "15.92 GiB of which 0 bytes is free.\n"
    )
    assert [c.vendor for c in read_startup_log(log.read_text()).gpu_clues] == ["amd"]
    doc = json.loads(invoke(["explain", "--log", str(log), "--format", "json"]).stdout)
    source = doc["log"]["source"]
    assert "one of rx9070" in source and "NCCL version 2.21.5+hip6.2" in source, source
