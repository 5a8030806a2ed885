"""Round 18 of the field logs (Z001-Z021, benchmarks/data/calibration/vllm_startup_logs_field18.jsonl), scored with
issue 11's targets: what holds is asserted, what does not yet is a strict xfail naming the records that miss and why
(FIELD18-FINDINGS.md), so meeting a target shows up as XPASS. And the one rule the round added: Mamba cache "align"
mode's block-size assertion (memory/budget.py mamba_align_checks)."""

from __future__ import annotations

import statistics

import pytest

from benchmarks.fidelity import FIELD18, compare, load_records, percentile, summarize
from recommender.memory.startup_issues import IssueKind

ROUND18 = load_records(*FIELD18)
COMPARED = [c for c in (compare(r) for r in ROUND18) if c is not None]
SUMMARY = summarize(ROUND18, COMPARED)
BY_ID = {c.record["id"]: c for c in COMPARED}


def test_round_eighteen_weights_and_crashes() -> None:
    """17 compared since the catalog holds neuralmagic's Mistral-7B-Instruct-v0.3-FP8 and Qwen2.5-VL-32B-Instruct (13
    blind): weights median <= 1 %, no crash called safe (blind: Z010, the align-mode assertion, was called a start)."""
    assert len(SUMMARY.compared) >= 17
    assert statistics.median(SUMMARY.weight_errors) <= 0.01
    assert not SUMMARY.crashes_called_safe


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="16 of 17 verdicts: Z021 (Mistral-7B-Instruct-v0.3-FP8 at 19,000 tokens on an RTX 4070 SUPER) started with "
    "19,696 tokens of KV cache; the model prices 2.30 GiB for 2.41 logged (activation 0.37 + non-torch 0.13 against "
    "0.39 left beside W and KV) and calls a start FAIL by 1 %",
)
def test_round_eighteen_every_verdict_as_logged() -> None:
    assert SUMMARY.agree == len(SUMMARY.compared)


def test_round_eighteen_resolution_target() -> None:
    """17 of 21 (81 %): not resolved are EXAONE-4.0-32B-FP8, MiniCPM5-1B and a Qwen3-8B fine-tune under a local path
    (no config.json copy in reach), and Z017's Kaggle card, which its log does not name."""
    assert SUMMARY.resolved / SUMMARY.records >= 0.8


def test_the_align_mode_block_must_fit_one_step() -> None:
    """Z010 / Z011: Qwen3.5-122B-A10B-GPTQ-Int4 at 0.20.2 with prefix caching (Mamba cache "align" mode): the attention
    block grows to 2,096 tokens to hold the Mamba page; vLLM asserts it fits max_num_batched_tokens, so 2,048 is
    refused (the record's AssertionError) and 4,096 starts."""
    refused, started = BY_ID["Z010"].explanation, BY_ID["Z011"].explanation
    assert refused.stage.layout.block_size == 2096 and refused.max_num_batched_tokens == 2048
    issue = refused.issue(IssueKind.MAMBA_ALIGN_BLOCK)
    assert issue is not None and issue.count == 2096 and issue.requested == 2048
    assert issue.message == "In Mamba cache align mode, block_size (2096) must be <= max_num_batched_tokens (2048)."
    assert not started.has(IssueKind.MAMBA_ALIGN_BLOCK) and started.max_num_batched_tokens == 4096


def test_an_engine_built_from_engine_args_takes_the_scheduler_defaults() -> None:
    """Z010 / Z011 build AsyncEngineArgs directly (UsageContext.ENGINE_CONTEXT): SchedulerConfig's own 128 sequences and
    2,048 batched tokens, not the API server's 1,024 / 8,192 of a 96 GB card; with them the logged KV (14.99 GiB at
    both 2,048 and 4,096 batched tokens) is priced within 2 %."""
    for rid in ("Z010", "Z011"):
        e = BY_ID[rid].explanation
        assert e.max_num_seqs == 128
        assert abs(BY_ID[rid].kv_gib / 14.99 - 1) < 0.02, (rid, BY_ID[rid].kv_gib)
    assert BY_ID["Z011"].explanation.max_num_batched_tokens == 4096


def test_without_prefix_caching_there_is_no_align_mode() -> None:
    """The same boot with prefix caching off keeps one Mamba state block a request: no align mode, no assertion."""
    record = next(r for r in ROUND18 if r["id"] == "Z010")
    off = dict(
        record, other_flags=record["other_flags"].replace("enable_prefix_caching=True", "enable_prefix_caching=False")
    )
    c = compare(off)
    assert c is not None and not c.explanation.prefix_caching
    assert not c.explanation.has(IssueKind.MAMBA_ALIGN_BLOCK)


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 18's available-KV median is 4.57 % over 12: Z005 / Z006 / Z008 (-19 / -24 / -8 %, WSL2 RTX 4090 at "
    "an estimated Model Runner V2 release: 1.59 GiB of overheads priced for 0.45 logged), Z009 (+6.4 %, a forced awq kernel), Z004 (-48 %, "
    "gpt-oss-120b on an MI325X at an unknown release), Z021 (-4.6 %)",
)
def test_round_eighteen_kv_median() -> None:
    assert statistics.median(SUMMARY.kv_errors) <= 0.02


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 18's available-KV p90 is 23.72 %: Z004 (-48 %) and Z006 (-24 %), see the KV median",
)
def test_round_eighteen_kv_p90() -> None:
    assert percentile(SUMMARY.kv_errors, 0.9) <= 0.10
