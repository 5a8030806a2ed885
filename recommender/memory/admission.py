"""Steps 5 and 6 of the startup budget: what get_kv_cache_configs does with the KV memory each stage has (pure).

The admission check of one request of max_model_len (or the auto-fit that replaces it), and the capacity line vLLM
prints from the blocks it allocated ("GPU KV cache size: N tokens", "Maximum concurrency for L tokens per request").
memory/budget.py computes the stages and calls these in order.
"""

from __future__ import annotations

from collections.abc import Sequence

from recommender.memory import startup_issues as si
from recommender.memory.engine import VllmVersion
from recommender.memory.explanation import StageBudget
from recommender.memory.scheduler import SchedulerLimits
from recommender.memory.startup_issues import IssueKind, StartupIssue

# --- step 5: KV admission -------------------------------------------------------------------------------------


# From vLLM pull request 29431 (in 0.14.0) to 33698 (merged after 2026-02-08, taken as 0.16), get_kv_cache_configs
# checked one request of max_model_len against each worker's memory with the KV-cache spec of the WHOLE model merged
# from all pipeline stages ("Fix PP KV cache sharding memory validation": "the centralized memory check validates
# using a unified spec that effectively assumes every worker holds all layers"). The log of vLLM issue 32105
# (GLM-4.7-FP8, PP=8 on A100s, nightly 58996f3 of 2026-01-28) prints "71.16 GiB KV cache is needed" for 202,752
# tokens: all 92 layers' KV, not one stage's; issue 34076 (0.15.2rc1.dev93, PP=2) likewise. Auto-fit was truncated
# by the same spec.
PP_WHOLE_MODEL_CHECK = (VllmVersion(0, 14), VllmVersion(0, 16))


def checked_block_bytes(stages: Sequence[StageBudget], worst: StageBudget, version: VllmVersion) -> int:
    """Bytes per block of the KV spec the admission check holds one request against: the worst stage's own, or in
    the releases of PP_WHOLE_MODEL_CHECK the spec merged from all stages (every layer of the model)."""
    low, high = PP_WHOLE_MODEL_CHECK
    if len(stages) < 2 or not low <= version < high:
        return worst.layout.bytes_per_block
    return sum(st.layout.bytes_per_block for st in stages)


def _longest_checked(worst: StageBudget, upper: int, in_flight: int, prefix_caching: bool, checked: int) -> int:
    """vLLM's estimated maximum model length when the check's spec holds `checked` bytes per block."""
    block = worst.layout.bytes_per_block
    if checked == block:
        return worst.longest_len(upper, in_flight, prefix_caching)
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if checked * worst.blocks_per_request(mid, in_flight, prefix_caching) <= worst.available_kv - block:
            lo = mid
        else:
            hi = mid - 1
    return lo


def kv_admission(
    stages: Sequence[StageBudget],
    worst: StageBudget,
    version: VllmVersion,
    limits: SchedulerLimits,
    in_flight: int,
    prefix_caching: bool,
    issues: list[StartupIssue],
) -> int:
    """get_kv_cache_configs' padded layers and _check_enough_kv_cache_memory (or auto-fit) on the worst stage: the
    max_model_len vLLM runs with, errors appended (the spec checked: checked_block_bytes)."""
    issues += [si.padding_layers(pad, n) for _kind, pad, n in worst.layout.padding_by_kind]
    max_len = limits.max_model_len
    block = worst.layout.bytes_per_block
    if not block or any(i.kind is IssueKind.WEIGHTS_DO_NOT_FIT for i in issues):
        return max_len
    if worst.available_kv <= 0:
        issues.append(si.no_cache_memory(block, worst.available_kv))
        return max_len
    check = worst.available_kv - block
    checked = checked_block_bytes(stages, worst, version)
    if limits.auto_fit:
        fitted = _longest_checked(worst, max_len, in_flight, prefix_caching, checked)
        if fitted <= 0:
            issues.append(si.auto_fit_impossible(check))
            return max_len
        if fitted < max_len:
            issues.append(si.auto_fit_reduced(max_len, fitted, check))
        return fitted
    needed = checked * worst.blocks_per_request(max_len, in_flight, prefix_caching)
    if needed > check:
        estimate = _longest_checked(worst, max_len, in_flight, prefix_caching, checked)
        issues.append(si.kv_too_small(max_len, needed, check, estimate))
    return max_len


# --- step 6: the capacity line --------------------------------------------------------------------------------


def capacity(
    worst: StageBudget, max_len: int, bpr: int, version: VllmVersion, issues: list[StartupIssue], *, v0: bool = False
) -> tuple[int, float]:
    """update_kv_cache_capacity: ("GPU KV cache size" tokens, "Maximum concurrency" for max_len); `bpr`: the blocks
    per request the concurrency divides by (StageBudget.concurrency_blocks)."""
    layout = worst.layout
    concurrency = worst.num_blocks / bpr if bpr else 0.0
    if v0:
        # V0 (worker.py): "# GPU blocks: N"; "Maximum concurrency ... = num_gpu_blocks * block_size / max_model_len".
        tokens = worst.num_blocks * layout.block_size
        issues.append(
            si.note(
                IssueKind.V0_ENGINE,
                f"vLLM {version} runs the V0 engine here: figures follow its simpler block accounting",
            )
        )
        return tokens, tokens / max_len if max_len else 0.0
    if version.capacity_tokens_from_concurrency or not layout.groups:
        return int(concurrency * max_len), concurrency
    return worst.num_blocks // len(layout.groups) * layout.block_size, concurrency
