"""The V1 engine's default token budget against max_num_seqs x max_model_len, per release (memory/scheduler.py)."""

from __future__ import annotations

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model

A6000 = resolve_gpu("RTX A6000", load_gpus())
A10 = resolve_gpu("A10", load_gpus())
QWEN05_AWQ = resolve_model("Qwen/Qwen2.5-0.5B-Instruct-AWQ")
QWEN3_MOE = resolve_model("Qwen/Qwen3-30B-A3B")


def test_before_0_11_1_v1_keeps_the_usage_default() -> None:
    """field F047 (vllm#16141: 0.8.3 V1, --max-num-seqs 1 --max-model-len 512 on an RTX A6000): arg_utils set the
    server's 2,048-token default before SchedulerConfig, whose cap at 1 x 512 ran only for a budget still None, so
    the profiling run took 2,048 tokens. From 0.11.1 arg_utils caps the default itself: 512."""
    flags = EngineFlags(max_num_seqs=1, max_model_len=512, gpu_memory_utilization=0.1)
    assert explain(QWEN05_AWQ, A6000, flags, VllmVersion.parse("0.8.3")).max_num_batched_tokens == 2048
    assert explain(QWEN05_AWQ, A6000, flags, VllmVersion.parse("0.11.0")).max_num_batched_tokens == 2048
    assert explain(QWEN05_AWQ, A6000, flags, VllmVersion.parse("0.11.1")).max_num_batched_tokens == 512
    given = EngineFlags(max_num_seqs=1, max_model_len=512, max_num_batched_tokens=1024, gpu_memory_utilization=0.1)
    assert explain(QWEN05_AWQ, A6000, given, VllmVersion.parse("0.8.3")).max_num_batched_tokens == 1024


def test_field7_m020_profiles_the_default_budget() -> None:
    """field7 M020 (Qwen3-30B-A3B, TP 4 on A10, 0.8.5, --max-model-len 1024 --max-num-seqs 1): 2,048 tokens, the
    A10's server default, not 1 x 1,024."""
    flags = EngineFlags(tensor_parallel_size=4, max_num_seqs=1, max_model_len=1024)
    assert explain(QWEN3_MOE, A10, flags, VllmVersion.parse("0.8.5")).max_num_batched_tokens == 2048
