"""MRotaryEmbedding's cos/sin cache (vLLM rotary_embedding/mrope.py: `cache_max_position_num =
max_position_embeddings * 4`, from the Qwen2.5-VL pull request in 0.7.2): a model whose rope parameters carry
`mrope_section` holds four caches' worth of rows on every GPU, checked against logged weights."""

from __future__ import annotations

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.weights import MROPE_ROWS, rotary_cache_bytes, rotary_caches_on_stage
from recommender.sources.resolve import resolve_model
from recommender.units import GiB


def test_mrope_models_are_read_from_their_rope_parameters() -> None:
    for model in ("Qwen/Qwen3-VL-30B-A3B-Instruct", "Qwen/Qwen3.5-9B", "Qwen/Qwen2.5-VL-7B-Instruct"):
        assert resolve_model(model).rope_mrope, model
    for model in ("Qwen/Qwen3-8B", "google/gemma-4-31B-it"):
        assert not resolve_model(model).rope_mrope, model


def test_the_cache_is_four_times_longer_from_0_7_2() -> None:
    spec = resolve_model("Qwen/Qwen3-VL-30B-A3B-Instruct")
    assert rotary_cache_bytes(spec, 2) == 262_144 * 128 * 2  # one cache: 64 MiB
    assert rotary_caches_on_stage(spec, (0, 7, 2), 48) == MROPE_ROWS == 4
    assert rotary_caches_on_stage(spec, (0, 7, 1), 48) == 1  # Qwen2-VL's MRotaryEmbedding before the enlargement
    assert rotary_caches_on_stage(resolve_model("Qwen/Qwen3-8B"), (0, 30, 0), 36) == 1


def test_logged_weights_of_mrope_models() -> None:
    """field16 X004 (Qwen3-VL-30B-A3B, TP 4 on RTX 3090, 0.11.0): 14.7708 GiB a GPU; field10 Q018 / field16 X002
    (Qwen3.5-9B, L40S, 0.19.0): 17.66 GiB. One cache left 14.56 and 17.56."""
    gpus = load_gpus()
    vl = explain(
        resolve_model("Qwen/Qwen3-VL-30B-A3B-Instruct"),
        resolve_gpu("rtx3090", gpus),
        EngineFlags(max_model_len=65536, tensor_parallel_size=4),
        VllmVersion.parse("0.11.0"),
    )
    assert abs(vl.stage.weights / GiB - 14.7708) < 0.005 * 14.7708
    q35 = explain(
        resolve_model("Qwen/Qwen3.5-9B"), resolve_gpu("l40s", gpus), EngineFlags(), VllmVersion.parse("0.19.0")
    )
    assert abs(q35.stage.weights / GiB - 17.66) < 0.002 * 17.66
