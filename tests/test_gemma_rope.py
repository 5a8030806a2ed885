"""vLLM 0.5.1-0.5.4 built one Gemma rotary cache per attention layer (memory/weights.py rotary_caches_on_stage)."""

from __future__ import annotations

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model
from recommender.units import GiB

L4 = resolve_gpu("L4", load_gpus())
GEMMA2_9B = resolve_model("google/gemma-2-9b")
CACHE = 8192 * 256 * 2  # [max_position 8,192, head_dim 256] in bfloat16: 4 MiB


def test_gemma2_on_0_5_4_holds_a_cos_sin_cache_per_layer() -> None:
    """field4 J001 (gemma-2-9b, TP 8 on L4s, 0.5.4: 'Loading model weights took 2.3463 GB'): 42 caches on every GPU
    where 0.5.5 (vllm#7638) and later share one, 41 x 4 MiB = 0.16 GiB more: 2.32 GiB predicted (-1.3 %) instead of
    2.16 (-8.1 %). 0.5.0 (get_rope) and a Llama on 0.5.4 keep one."""
    flags = EngineFlags(tensor_parallel_size=8)
    old = explain(GEMMA2_9B, L4, flags, VllmVersion.parse("0.5.4")).stage.weights
    new = explain(GEMMA2_9B, L4, flags, VllmVersion.parse("0.5.5")).stage.weights
    assert old - new == 41 * CACHE
    assert round(old / GiB, 2) == 2.32 and round(new / GiB, 2) == 2.16
    assert explain(GEMMA2_9B, L4, flags, VllmVersion.parse("0.5.0")).stage.weights == new
    pp = explain(GEMMA2_9B, L4, EngineFlags(pipeline_parallel_size=2), VllmVersion.parse("0.5.4"))
    pp_new = explain(GEMMA2_9B, L4, EngineFlags(pipeline_parallel_size=2), VllmVersion.parse("0.5.5"))
    assert pp.stage.weights - pp_new.stage.weights == 20 * CACHE  # 21 layers a stage
