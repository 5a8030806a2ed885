"""An integrated GPU whose memory is the machine's BIOS carve-out plus GTT limit (Strix Halo's Radeon 8060S): its name
does not say its memory, so explain says what it assumed and the fidelity harness does not score such a log against the
catalog's one reading (field7 M016/M024/M025 started models a 64 GiB share cannot hold)."""

from __future__ import annotations

from benchmarks import fidelity
from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind
from recommender.sources.resolve import resolve_model
from recommender.units import GiB

V033 = VllmVersion.parse("0.33")


def test_whose_total_is_a_setting() -> None:
    gpus = load_gpus()
    assert resolve_gpu("Radeon 8060S", gpus).total_is_a_setting
    share = resolve_gpu("AMD Radeon 8060S 96GB", gpus)
    assert not share.total_is_a_setting and share.total_bytes == 96 * GiB  # the share written with the name
    assert not resolve_gpu("gb10", gpus).total_is_a_setting  # DGX Spark's 128 GB is the machine's, not a setting
    assert not resolve_gpu("h100", gpus).total_is_a_setting


def test_explain_names_the_assumed_share_and_it_changes_nothing_else() -> None:
    gpus = load_gpus()
    model = resolve_model("Qwen/Qwen3-4B-Instruct-2507")
    flags = EngineFlags(max_model_len=8192)
    e = explain(model, resolve_gpu("Radeon 8060S", gpus), flags, V033)
    issue = e.issue(IssueKind.GPU_MEMORY_IS_A_SETTING)
    assert issue is not None and not issue.kind.fatal and not issue.kind.at_risk and e.fits
    assert issue.available_bytes == 64 * GiB and "64.00 GiB assumed" in issue.message
    shared = explain(model, resolve_gpu("AMD Radeon 8060S 96GB", gpus), flags, V033)
    assert not shared.has(IssueKind.GPU_MEMORY_IS_A_SETTING)
    # the warning does not move the figures: the 64 GiB share's KV is as before
    stated = explain(model, resolve_gpu("Radeon 8060S", gpus), flags, V033, free_bytes=64 * GiB)
    assert not stated.has(IssueKind.GPU_MEMORY_IS_A_SETTING)
    assert stated.stage.available_kv == e.stage.available_kv


def test_fidelity_leaves_such_a_log_unscored_without_a_printed_total() -> None:
    record = {
        "id": "T001",
        "model": "Qwen/Qwen3-4B-Instruct-2507",
        "gpu": "AMD Radeon 8060S (Strix Halo)",
        "gpu_total_gib": None,
        "vllm_version": "0.11.0",
        "status": "ok",
    }
    assert fidelity.unresolved_reason(record) == (
        "GPU's memory is a setting of the machine (BIOS carve-out + GTT), no device total printed"
    )
    assert fidelity.compare(record) is None
    printed = {**record, "gpu_total_gib": 61.35}  # field7 M015's "61.35 GiB": the machine's share is known
    assert fidelity.unresolved_reason(printed) is None
