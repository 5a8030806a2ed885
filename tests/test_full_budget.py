"""A budget of the whole device (memory/full_budget.py): vLLM's snapshot refusal from 0.9.1, and the post-KV room
that is only the freed activation peak before it."""

from __future__ import annotations

from dataclasses import replace

from recommender.catalog import load_gpus
from recommender.check.evaluate import startup_fixes
from recommender.gpu_names import resolve_gpu
from recommender.memory import full_budget, warmup
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind
from recommender.sources.resolve import resolve_model
from recommender.units import GiB, MiB

A10 = resolve_gpu("A10", load_gpus())
QWEN7 = resolve_model("Qwen/Qwen2.5-7B-Instruct")
MINICPMV = resolve_model("openbmb/MiniCPM-V-2_6")


def _flags(util: float) -> EngineFlags:
    return EngineFlags(gpu_memory_utilization=util, max_model_len=2048)


def test_from_0_9_1_v1_refuses_a_budget_of_the_whole_device() -> None:
    """The A10's 22,598 MiB (22.07 GiB): at 1.0 the request is all of it, the snapshot sees it less the process's
    context (at least 128 MiB), so vLLM's own error; at 0.99 the 226 MiB outside the budget clears the floor. 0.9.0
    (no snapshot check) and the V0 engine never refuse."""
    e = explain(QWEN7, A10, _flags(1.0), VllmVersion.parse("0.10.0"))
    issue = e.issue(IssueKind.FREE_BELOW_BUDGET)
    assert issue is not None and not e.fits
    assert issue.needed_bytes == A10.total_bytes == 22_598 * MiB
    assert issue.available_bytes == A10.total_bytes - 128 * MiB
    assert "is less than desired GPU memory utilization (1.0, 22.07 GiB)" in issue.message
    assert not explain(QWEN7, A10, _flags(0.99), VllmVersion.parse("0.10.0")).has(IssueKind.FREE_BELOW_BUDGET)
    assert not explain(QWEN7, A10, _flags(1.0), VllmVersion.parse("0.9.0")).has(IssueKind.FREE_BELOW_BUDGET)
    v0 = explain(QWEN7, A10, replace(_flags(1.0), use_v1=False), VllmVersion.parse("0.9.2"))  # VLLM_USE_V1=0
    assert not v0.has(IssueKind.FREE_BELOW_BUDGET)


def test_the_refusal_at_1_0_gets_the_utilization_the_snapshot_allows() -> None:
    """`explain` / `check` name the fix: the utilization under the snapshot's free memory (22.07 - 0.125 = 21.94
    GiB: 0.99), lowered until the post-KV warm-ups clear their margin, and it starts there."""
    v = VllmVersion.parse("0.33.0")
    e = explain(QWEN7, A10, _flags(1.0), v)
    (fix, *_) = startup_fixes(QWEN7, A10, _flags(1.0), v, e, free_bytes=None)
    assert fix.startswith("lower --gpu-memory-utilization to ") and "(what 21.94 GiB free allows;" in fix
    util = float(fix.split()[3])
    assert util < 0.99 and explain(QWEN7, A10, _flags(util), v).fits


def test_k001_at_1_0_has_only_the_freed_peak_and_is_at_risk() -> None:
    """field5 K001 (MiniCPM-V-2_6 at 1.0 on an A10, ~0.6.3, 2,048 tokens; it ran out of memory): nothing outside the
    budget, the 1.30 GiB peak freed against 1.27 GiB of graphs and context, a 0.03 GiB margin: at risk, not safe.
    At 0.95 the 1.10 GiB outside the budget joins the room: a warm-up warning at most, not at risk."""
    e = explain(MINICPMV, A10, _flags(1.0), VllmVersion.parse("0.6.3"))
    issue = e.issue(IssueKind.WHOLE_DEVICE_MARGIN)
    assert issue is not None and e.fits and e.at_risk
    assert issue.available_bytes is not None and issue.needed_bytes is not None
    assert round(issue.available_bytes / GiB, 2) == 1.30
    assert round((issue.available_bytes - issue.needed_bytes) / GiB, 2) == 0.03
    lower = explain(MINICPMV, A10, _flags(0.95), VllmVersion.parse("0.6.3"))
    assert lower.fits and not lower.has(IssueKind.WHOLE_DEVICE_MARGIN)


def test_nothing_outside_needs_no_outside_share_and_a_margin_under_the_uncertainty() -> None:
    """The rule on its own numbers: 0 outside and 0.5 GiB to spare is at risk; 1 byte outside, or a 1 GiB margin, is
    not; a shortfall is the crash warmup_headroom reports, not this warning."""

    def post(outside: int, freed: int) -> warmup.PostAllocation:
        return warmup.PostAllocation(
            rows=0, sampler=0, cudagraphs=GiB, context=0, outside_budget=outside, freed_activation=freed, reserve=0
        )

    assert full_budget.nothing_outside(post(0, GiB + GiB // 2), 1.0) is not None
    assert full_budget.nothing_outside(post(1, GiB + GiB // 2), 1.0) is None
    assert full_budget.nothing_outside(post(0, 2 * GiB), 1.0) is None
    assert full_budget.nothing_outside(post(0, GiB // 2), 1.0) is None


def test_an_outside_share_no_larger_than_the_context_is_the_same_nothing() -> None:
    """field8 N003 (gemma-3-27b-it AWQ, V0 0.8.3, 0.98 on a 22 GB card at --max-model-len 128; capture_end OOM): on the
    catalog L4 (22,518 MiB = 23,611,834,368 B) 0.98 requests 23,139,597,681 B, so 472,236,687 B (0.44 GiB) lie
    outside the budget, where V0 0.8.3 leaves the CUDA context (0.5 GiB): what follows the KV cache rests on the freed
    peak alone, a 0.92 GiB margin: at risk, not safe. At 0.97 the 0.68 GiB outside covers the context: no such risk.
    On its own numbers: 0.4 GiB outside a 0.5 GiB context is nothing; 0.6 GiB is not."""
    l4 = resolve_gpu("L4", load_gpus())
    gemma = resolve_model("gaunernst/gemma-3-27b-it-int4-awq")
    flags = EngineFlags(gpu_memory_utilization=0.98, max_model_len=128, dtype="float16", use_v1=False)
    e = explain(gemma, l4, flags, VllmVersion.parse("0.8.3"))
    issue = e.issue(IssueKind.WHOLE_DEVICE_MARGIN)
    assert issue is not None and e.fits and e.at_risk
    assert e.post_allocation is not None and e.post_allocation.outside_budget == 472_236_687
    assert e.post_allocation.context == GiB // 2
    assert round((e.post_allocation.room - e.post_allocation.need) / GiB, 2) == 0.92
    assert "leaves 0.44 GiB outside the budget, no more than the ~0.50 GiB CUDA context" in issue.message
    lower = explain(gemma, l4, replace(flags, gpu_memory_utilization=0.97), VllmVersion.parse("0.8.3"))
    assert not lower.has(IssueKind.WHOLE_DEVICE_MARGIN)

    def post(outside: int) -> warmup.PostAllocation:
        return warmup.PostAllocation(
            rows=0,
            sampler=0,
            cudagraphs=GiB,
            context=GiB // 2,
            outside_budget=outside,
            freed_activation=3 * GiB // 2,
            reserve=0,
        )

    assert full_budget.nothing_outside(post(int(0.4 * GiB)), 0.98) is not None
    assert full_budget.nothing_outside(post(int(0.6 * GiB)), 0.97) is None
