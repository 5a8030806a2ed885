"""The all-reduces MiniMax-M2's QK norm adds under tensor parallelism (recommender/perf/norm_collectives.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.perf.costs import engine_costs
from recommender.perf.norm_collectives import qk_norm_collectives
from recommender.perf.params import PerfParams
from recommender.perf.predict import facts_for, startup
from recommender.perf.step import Batch, step_time
from recommender.sources.resolve import resolve_model

V33 = VllmVersion(0, 33)


def test_minimax_m2_qk_norm_all_reduces_the_variances_across_tp_ranks() -> None:
    m = resolve_model("MiniMaxAI/MiniMax-M2.5")
    assert (m.model_type, m.qk_norm_over_heads, m.num_layers) == ("minimax_m2", True, 62)
    # q_norm and k_norm each all-reduced before vllm#31493 (v0.14.0), one fused all-reduce of both after
    assert [qk_norm_collectives(m, 4, 62, VllmVersion(0, v)) for v in (12, 13, 14, 33)] == [124, 124, 62, 62]
    assert qk_norm_collectives(m, 1, 62, V33) == 0  # one rank holds the whole vector


def test_per_head_qk_norms_need_no_collective() -> None:
    qwen3 = resolve_model("Qwen/Qwen3-32B")
    assert qwen3.qk_norm_over_heads is False
    assert qk_norm_collectives(qwen3, 4, 64, V33) == 0


@pytest.mark.parametrize(("version", "collectives"), [(VllmVersion(0, 12), 124), (V33, 62)])
def test_each_qk_norm_all_reduce_adds_its_latency_to_every_step(version: VllmVersion, collectives: int) -> None:
    m, g = resolve_model("MiniMaxAI/MiniMax-M2.5"), resolve_gpu("b200", load_gpus())
    f = EngineFlags(tensor_parallel_size=4, max_model_len=8192)
    params = replace(PerfParams(), allreduce_latency_us=10.0)
    c = engine_costs(facts_for(m, g, f, startup(m, g, f, version)), g, params)
    assert c.norm_collectives == collectives
    batch = Batch(decodes=1, decode_context=2048, sampled=1)
    without = replace(c, norm_collectives=0)
    added = step_time(c, batch).communication - step_time(without, batch).communication
    assert added == pytest.approx(collectives * 10e-6)  # 62 layers x (2 or 1) x 10 us, no bandwidth term
