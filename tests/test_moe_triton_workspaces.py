"""From vLLM 0.14 the Triton experts run through the modular kernel, whose TritonExperts.workspace_shapes holds two
buffers at once (memory/overheads.py MOE_MODULAR_FROM): workspace1 (M, top_k, max(N / 2, K)) and workspace2
(M, top_k, max(N, K)). Other expert kernels, and the releases before, keep the one-cache term."""

from __future__ import annotations

import statistics

from benchmarks.fidelity import FIELD17, compare, load_records
from recommender.memory.overheads import moe_workspace_bytes
from recommender.memory.precision import Precision
from recommender.model.spec import QuantSpec
from recommender.sources.resolve import resolve_model

QWEN235 = resolve_model("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8")


def test_two_workspaces_from_0_14_for_the_triton_experts() -> None:
    """Qwen3-235B-A22B: top-8, expert width 1536 (N = 3072 with expert parallelism, whole experts on each rank),
    hidden 4096: one cache of max(3072, 4096) before, max(1536, 4096) + max(3072, 4096) from 0.14."""
    assert QWEN235.moe is not None and QWEN235.moe.top_k == 8 and QWEN235.hidden_size == 4096
    one = moe_workspace_bytes(QWEN235, 65_536, 4, True, version=(0, 20))
    two = moe_workspace_bytes(QWEN235, 65_536, 4, True, version=(0, 20), triton_experts=True)
    assert one == 65_536 * 8 * 4096 * 2
    assert two == 65_536 * 8 * (4096 + 4096) * 2 == 2 * one
    # 0.13 runs the monolithic fused_experts_impl: one cache (the fit the older records hold)
    assert (
        moe_workspace_bytes(QWEN235, 65_536, 4, True, version=(0, 13), triton_experts=True)
        == min(65_536, 32_768) * 8 * 4096 * 2
    )


def test_which_experts_are_triton() -> None:
    bf16 = Precision("bfloat16", 2, None, "auto", 2)
    fp8 = Precision("bfloat16", 2, QuantSpec("fp8", 8, block=(128, 128)), "auto", 2)
    awq = Precision("float16", 2, QuantSpec("awq", 4, group_size=128), "auto", 2)
    nvfp4 = Precision("bfloat16", 2, QuantSpec("nvfp4", 4, group_size=16), "auto", 2)
    v4 = Precision("bfloat16", 2, QuantSpec("fp8", 8, block=(128, 128), expert_method="mxfp4"), "auto", 2)
    assert bf16.triton_experts and fp8.triton_experts
    assert not (awq.triton_experts or nvfp4.triton_experts or v4.triton_experts)


def test_round_seventeen_moe_prefill_at_65536_and_32768_tokens() -> None:
    """Y012 / Y013 (4 x H100, TP 4 with expert parallelism, vLLM 0.20, TRITON Fp8 MoE backend): available KV within
    10 % at 65,536 and 32,768 batched tokens (+103.8 % and +23.9 % with one cache)."""
    compared = {c.record["id"]: c for c in (compare(r) for r in load_records(*FIELD17)) if c is not None}
    errors = [abs(compared[i].kv_gib / compared[i].record["kv_available_gib"] - 1) for i in ("Y012", "Y013")]
    assert max(errors) < 0.10
    assert statistics.mean(errors) < 0.09
    assert compared["Y012"].predicted == "FAIL" and compared["Y013"].predicted == "ok"
