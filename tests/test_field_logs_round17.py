"""Round 17 of the field logs (Y001-Y020, benchmarks/data/calibration/vllm_startup_logs_field17.jsonl), scored with
issue 11's targets: what holds is asserted, what does not yet is a strict xfail naming the records that miss and why
(FIELD17-FINDINGS.md), so meeting a target shows up as XPASS."""

from __future__ import annotations

import statistics

import pytest

from benchmarks.fidelity import FIELD17, compare, load_records, on_windows, percentile, summarize

ROUND17 = load_records(*FIELD17)
COMPARED = [c for c in (compare(r) for r in ROUND17) if c is not None]
SUMMARY = summarize(ROUND17, COMPARED)
BY_ID = {c.record["id"]: c for c in COMPARED}


def test_round_seventeen_resolution_weights_and_crashes() -> None:
    """19 of 20 resolve (16 blind) since cyankiwi's Qwen3.8-27B AWQ-BF16-INT4 and TheBloke's Mistral-7B-v0.1-AWQ are
    catalogued (Y004's Muse-Glimmer-30B FP8-block is not); weights median <= 1 %; no logged crash called safe (Y005's
    free-memory check, Y006's sampler warm-up beside a display and Y012's 240,000-token context are called FAIL)."""
    assert SUMMARY.resolved / SUMMARY.records >= 0.9
    assert len(SUMMARY.compared) >= 19
    assert statistics.median(SUMMARY.weight_errors) <= 0.01
    assert not SUMMARY.crashes_called_safe
    assert all(BY_ID[i].predicted == "FAIL" for i in ("Y005", "Y006", "Y012"))


def test_a_card_under_wsl_takes_its_nvidia_smi_total() -> None:
    """Y011 (RTX 5070 Ti) and Y020 (RTX 5060 Ti) run under WSL2, where the device total is nvidia-smi's, not the
    Linux total the catalog holds: KV within 3 % (-5.0 % and -6.1 % with the Linux totals)."""
    for rid in ("Y011", "Y020"):
        c = BY_ID[rid]
        assert on_windows(c.record)
        assert abs(c.kv_gib / c.record["kv_available_gib"] - 1) < 0.03, (rid, c.kv_gib)
    assert not on_windows(BY_ID["Y018"].record)  # an AutoDL Linux box


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 17's available-KV median is 4.75 % over 18: Y006 (-15.7 %, a desktop card whose display moved its "
    "free memory while vLLM profiled), Y003 (+13.8 %, DeepSeek-V4-Flash-0731 at TP 2 on RTX PRO 6000s), Y001 (+9.5 %, "
    "Qwen2.5-7B-AWQ on an RTX PRO 4000 at an estimated 0.28), Y015 / Y014 (+8.1 / +4.7 %, Qwen3.5-9B through `vllm "
    "bench latency` on RTX 5090s), Y009 (+7.9 %, cyankiwi's reconstructed AWQ-INT4), Y012 / Y013 (+7.5 %), Y016 "
    "(-6.2 %, a context the post does not state), Y002 (+4.8 %, ROCm gfx1100)",
)
def test_round_seventeen_kv_median() -> None:
    assert statistics.median(SUMMARY.kv_errors) <= 0.02


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 17's available-KV p90 is 10.78 %: Y006 (-15.7 %, the display's memory moved during profiling) and "
    "Y003 (+13.8 %, DeepSeek-V4's profile at TP 2; the guide's 155.4 GiB of weights over two cards is 77.7 a card "
    "against 74.19 predicted)",
)
def test_round_seventeen_kv_p90() -> None:
    assert percentile(SUMMARY.kv_errors, 0.9) <= 0.10


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 17's verdicts are 17 of 19: Y003 (DeepSeek-V4-Flash-0731, TP 2, started) is called at risk, and "
    "Y016 (cyankiwi's Qwen3.8-27B AWQ-INT4 on an A100 40GB at 0.93) FAIL because the post does not state that boot's "
    "--max-model-len: the model's 262,144 is taken, above the 246,735 tokens the log shows it held",
)
def test_round_seventeen_verdicts() -> None:
    assert SUMMARY.agree / len(SUMMARY.compared) >= 0.95
