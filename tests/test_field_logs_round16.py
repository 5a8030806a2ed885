"""Round 16 of the field logs (X001-X021, benchmarks/data/calibration/vllm_startup_logs_field16.jsonl), scored with
issue 11's targets: what holds is asserted, what does not yet is a strict xfail naming the records that miss and why
(FIELD16-FINDINGS.md), so meeting a target shows up as XPASS."""

from __future__ import annotations

import statistics

import pytest

from benchmarks.fidelity import FIELD16, compare, load_records, percentile, summarize

ROUND16 = load_records(*FIELD16)
COMPARED = [c for c in (compare(r) for r in ROUND16) if c is not None]
SUMMARY = summarize(ROUND16, COMPARED)


def test_round_sixteen_weights_median_and_crashes() -> None:
    """10 compared since the GTX 1660 SUPER is catalogued (9 blind): weights median <= 1 % (0.05 % since the
    MRotaryEmbedding's 4 x cache is counted), no logged crash called safe."""
    assert len(SUMMARY.compared) >= 10
    assert statistics.median(SUMMARY.weight_errors) <= 0.01
    assert not SUMMARY.crashes_called_safe


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 16's available-KV median is 2.66 % (1.99 before field17 counted the Triton experts' two workspaces, "
    "TritonExperts.workspace_shapes from 0.14): the median record is X006, gemma-4-26b-a4b-it on a Jetson Thor at an "
    "estimated 0.19, -2.0 -> -2.7 % (its copied figures disagree with each other, FIELD16-FINDINGS.md)",
)
def test_round_sixteen_kv_median() -> None:
    assert statistics.median(SUMMARY.kv_errors) <= 0.02


def test_round_sixteen_gemma4_on_a_0_17_2_build_starts() -> None:
    """X001 served google/gemma-4-31B-it on a 0.17.2rc1.dev133 build: no longer refused by the architecture table
    (Gemma4ForConditionalGeneration is a bracket after 0.17.1, by 0.19.0), KV within 1 %."""
    x001 = next(c for c in COMPARED if c.record["id"] == "X001")
    assert x001.predicted != "FAIL"
    assert abs(x001.explanation.stage.available_kv / 2**30 - 57.09) < 0.01 * 57.09


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 16's verdicts are 9 of 10: X005 (Qwen3-30B-A3B at 0.49 on a GB10 beside a Llama-Guard engine that "
    "started first) logged 4.85 GiB of KV where its own weights exceed the non-KV memory it implies: vLLM's non-torch "
    "term came out negative on unified memory; predicted 0.83 GiB, short of one 16,384-token request",
)
def test_round_sixteen_verdicts() -> None:
    assert SUMMARY.agree == len(SUMMARY.compared)


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 16 resolves 10 of 21: ten sources name no card and print no total (X008 an issue's '24 GB GPU', "
    "X010-X013 WSL2 boots on a Blackwell card, X014, X015, X016, X017, X019) and X009's Ovis2-8B-GPTQ-Int4 is not "
    "catalogued (its gfx1101 card is named only by arch)",
)
def test_round_sixteen_resolution_target() -> None:
    assert SUMMARY.resolved / SUMMARY.records >= 0.8


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 16's available-KV p90 is 22.77 %: X005 (-82.9 %, the GB10 co-tenant above), X007 (+7.8 %, "
    "DeepSeek-V4-Flash at TP 8 whose utilisation the write-up does not state, an approximate profile) and X004 "
    "(+5.2 %, Qwen3-VL-30B-A3B at TP 4 on RTX 3090s, 0.11.0)",
)
def test_round_sixteen_kv_p90() -> None:
    assert percentile(SUMMARY.kv_errors, 0.9) <= 0.10
