"""Before vLLM 0.8.0 fused_experts_impl held the gate-up and the down outputs as two tensors (memory/overheads.py
MOE_SHARED_CACHE_FROM); 0.8.0 carves both from one cache13 of the wider width."""

from __future__ import annotations

from recommender.memory.overheads import moe_workspace_bytes
from recommender.sources.resolve import resolve_model

R1 = resolve_model("deepseek-ai/DeepSeek-R1")


def test_r1_at_tp8_holds_both_widths_before_0_8() -> None:
    """DeepSeek-R1, TP 8, 32,000 profiled tokens (field13 T004), top-8 of 256 experts, moe_intermediate 2048:
    the gate-up width 2 x 2048 / 8 = 512, the down output 7168 wide. 0.8: 32,000 x 8 x 7168 x 2 B; 0.7.3 adds the
    512-wide cache1, 32,000 x 8 x 512 x 2 = 262,144,000 B (0.24 GiB)."""
    shared = moe_workspace_bytes(R1, 32_000, 8, False, version=(0, 8))
    separate = moe_workspace_bytes(R1, 32_000, 8, False, version=(0, 7))
    assert shared == 32_000 * 8 * 7168 * 2
    assert separate - shared == 32_000 * 8 * 512 * 2 == 262_144_000
    # the 32,768-token chunk bounds both (VLLM_FUSED_MOE_CHUNK_SIZE)
    assert moe_workspace_bytes(R1, 65_536, 8, False, version=(0, 7)) == 32_768 * 8 * (512 + 7168) * 2
