"""Round 15 of the field logs (W001-W020, benchmarks/data/calibration/vllm_startup_logs_field15.jsonl), scored with
issue 11's targets: what holds is asserted, what does not yet is a strict xfail naming the records that miss and why
(FIELD15-FINDINGS.md), so meeting a target shows up as XPASS."""

from __future__ import annotations

import statistics

import pytest

from benchmarks.fidelity import FIELD15, compare, load_records, percentile, summarize

ROUND15 = load_records(*FIELD15)
COMPARED = [c for c in (compare(r) for r in ROUND15) if c is not None]
SUMMARY = summarize(ROUND15, COMPARED)


def test_round_fifteen_weights_verdicts_and_crashes() -> None:
    """16 compared since the catalog holds Qwen3-Reranker-8B, DeepSeek-V4-Flash-Base, cyankiwi's Qwen3.5-9B
    AWQ-4bit and the desktop RTX 3050 6GB (12 blind): weights median <= 1 %, every start/fail verdict as logged, no
    crash called safe."""
    assert len(SUMMARY.compared) >= 16
    assert statistics.median(SUMMARY.weight_errors) <= 0.01
    assert SUMMARY.agree == len(SUMMARY.compared)
    assert not SUMMARY.crashes_called_safe


def test_round_fifteen_resolution_target() -> None:
    """16 of 20 resolve (80 %) since the desktop RTX 3050 6GB is catalogued (W009). The other four: W005 (a local
    W4A16 build), W007 (the checkpoint inside an image) and W018 ('Qwen3-VL-8B' with no -Instruct/-Thinking) name no
    checkpoint; tiiuae/Falcon-H1-3B-Base (W019) has no public config.json copy in reach."""
    assert SUMMARY.resolved / SUMMARY.records >= 0.8


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 15's available-KV median is 3.10 % over 15: W009 (-35 %, Qwen3-0.6B eager on the RTX 3050 6GB, whose "
    "total is estimated), W003 (+6.4 %, a GB10's unified-memory terms), W014 (+12.4 %, its utilisation is not "
    "stated), W017 (-13.4 %, two boots in one journal), W016 (-8.9 %: its figures need more than the 0.92 its "
    "command states), "
    "W011 (the 70B FP8 KV-too-small failure, -0.32 predicted for 1.04 GiB) and W008 / W020 at about +3 %",
)
def test_round_fifteen_kv_median() -> None:
    assert statistics.median(SUMMARY.kv_errors) <= 0.02


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 15's available-KV p90 is 26.83 %: W009 (-35 %: 1.38 GiB predicted for 2.14 with the card's total "
    "estimated as the 8 GB card's and Qwen3-0.6B's activation and non-torch 0.83 GiB, the small-model class of "
    "field14 U017), W011's 1.04 GiB (non-KV terms 1.36 GiB over for a 70B FP8 at "
    "0.27.1, not split by its paraphrased error), W017 and W014 (see the KV median)",
)
def test_round_fifteen_kv_p90() -> None:
    assert percentile(SUMMARY.kv_errors, 0.9) <= 0.10
