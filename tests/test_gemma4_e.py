"""Gemma-4 E2B / E4B as bundled (maxtext's transcription of their configs, with the released audio encoder):
parameter counts, the layers that own a KV cache and the weights vLLM loads, each figure worked out by hand below."""

from __future__ import annotations

import json

import pytest

from recommender.errors import ModelConfigError
from recommender.memory.weights import Parallel, stage_tensors, tensor_bytes
from recommender.model.encoder_tensors import audio_tensors
from recommender.model.parse import parse_config
from recommender.sources.resolve import resolve_model

from .conftest import invoke

GIB = 2**30

# K/V projections (and k_norm) of the KV-shared layers: the checkpoints ship them, vLLM's loader and transformers
# 5.20 drop them (gemma4.py _gemma4_layer_weights_mapper). E2B shares from layer 15 (16 sliding layers with 1 KV
# head of 256, 4 full ones with 1 of 512, hidden 1536); E4B from layer 24 (15 sliding with 2 KV heads of 256,
# 3 full with 2 of 512, hidden 2560).
E2B_SHARED_KV = 16 * (2 * 256 * 1536 + 256) + 4 * (2 * 512 * 1536 + 512)
E4B_SHARED_KV = 15 * (2 * 2 * 256 * 2560 + 256) + 3 * (2 * 2 * 512 * 2560 + 512)

# The audio conformer (hidden 1024, 12 layers, 8 heads, kernel 5, convs 128/32, output 1536), per layer:
# two FFNs 2 x (2 x 1024 x 4096 + 2 x 1024), q/k/v/post/relative_k 5 x 1024^2, per_dim_scale 128, the light conv
# 3 x 1024^2 + 5 x 1024 + 2 x 1024, three norms 3 x 1024 = 25,180,288; subsampling 128 x 10 + 32 x 1153 +
# 1024 x 1024 = 1,086,752; output_proj 1536 x 1025 = 1,574,400. transformers 5.20 counts the same 304,824,608.
AUDIO_TOWER = 12 * 25_180_288 + 1_086_752 + 1_574_400


def test_the_audio_tower_is_counted_by_hand() -> None:
    assert AUDIO_TOWER == 304_824_608
    e2b = resolve_model("google/gemma-4-E2B-it")
    tensors = {t.module: t.rows * t.cols for t in audio_tensors(e2b)}
    assert sum(v for k, v in tensors.items() if k.startswith("audio_tower.")) == AUDIO_TOWER
    assert tensors["embed_audio.embedding_projection"] == 1536 * 1536  # output_proj_dims -> text width 1536


@pytest.mark.parametrize(
    ("model", "reference", "layers", "shared_kv", "published"),
    [
        # transformers 5.20.2 Gemma4ForConditionalGeneration on the meta device, audio_config included; the
        # checkpoints add one layer_scalar per layer and the shared layers' K/V. Google: 5.1B and 8B "with
        # embeddings" (2.3B and 4.5B effective).
        ("google/gemma-4-E2B-it", 5_104_297_504, 35, E2B_SHARED_KV, 5.1e9),
        ("google/gemma-4-E4B-it", 7_941_100_832, 42, E4B_SHARED_KV, 8.0e9),
    ],
)
def test_parameters_match_transformers_and_the_published_size(
    model: str, reference: int, layers: int, shared_kv: int, published: float
) -> None:
    spec = resolve_model(model)
    assert spec.params is not None and spec.params.total == reference + layers + shared_kv
    assert spec.params.total == pytest.approx(published, rel=0.005)
    assert not spec.approximate  # the audio encoder is counted


def test_per_layer_embeddings_and_kv_sharing_are_read_as_vllm_builds_them() -> None:
    e2b, e4b = resolve_model("google/gemma-4-E2B-it"), resolve_model("google/gemma-4-E4B-it")
    # embed_tokens_per_layer: 262,144 rows of layers x 256; per_layer_model_projection hidden -> that width
    assert e2b.params is not None and e2b.params.embedding == 262_144 * 1536 + 262_144 * 35 * 256
    assert e2b.kv_shared_from == 15 and e4b.kv_shared_from == 24
    assert e2b.intermediate_at(14) == 6144 and e2b.intermediate_at(15) == 2 * 6144  # use_double_wide_mlp
    assert e4b.intermediate_at(41) == 10240  # E4B: no double-wide MLP
    assert (e2b.kv_heads_at(4), e2b.head_dim_at(4), e2b.head_dim_at(0)) == (1, 512, 256)  # full / sliding
    owners = [i for i in range(42) if e4b.has_kv_cache(i)]
    assert owners == list(range(24))


@pytest.mark.parametrize(
    ("model", "kv_bytes", "weights_params"),
    [
        # KV: layers below kv_shared_from, K and V in bf16. E2B: 12 sliding x 1 x 256 x 2 x 2 + 3 full x 1 x 512
        # x 2 x 2 = 18,432. E4B: 20 sliding x 2 x 256 x 4 + 4 full x 2 x 512 x 4 = 57,344. Weights: the
        # parameters less the shared layers' K/V, in bf16, plus the two rotary caches: 131,072 positions x (256 +
        # 512) x 2 bytes. Full layers rotate 25% of 512 dims, but Gemma4RotaryEmbedding (gemma4_rope.py) builds its
        # cache over the whole head, the rest as identity.
        ("google/gemma-4-E2B-it", 18_432, 5_104_297_504 + 35),
        ("google/gemma-4-E4B-it", 57_344, 7_941_100_832 + 42),
    ],
)
def test_explain_gives_the_hand_checked_figures(model: str, kv_bytes: int, weights_params: int) -> None:
    doc = json.loads(invoke(["explain", model, "--gpu", "l4", "--format", "json"]).stdout)
    assert doc["kv_bytes_per_token"] == kv_bytes
    assert doc["weights_gib"] == pytest.approx((weights_params * 2 + 131_072 * 768 * 2) / GIB, abs=1e-4)
    assert not any("audio" in w for w in doc["warnings"])


def _with_audio(audio: dict[str, object]) -> dict[str, object]:
    return {
        "architectures": ["Gemma4ForConditionalGeneration"],
        "model_type": "gemma4",
        "text_config": {
            "model_type": "gemma4_text",
            "hidden_size": 1536,
            "intermediate_size": 6144,
            "num_hidden_layers": 2,
            "num_attention_heads": 8,
            "num_key_value_heads": 1,
            "head_dim": 256,
            "vocab_size": 1024,
        },
        "audio_config": {"model_type": "gemma4_audio", **audio},
    }


def test_a_gemma4_audio_config_is_read_with_transformers_defaults_and_checked() -> None:
    spec = parse_config(_with_audio({}), name="tiny", source="test")
    assert spec.audio is not None and (spec.audio.layers, spec.audio.hidden, spec.audio.out_proj) == (12, 1024, 1536)
    with pytest.raises(ModelConfigError, match="multiple of its heads"):
        parse_config(_with_audio({"num_attention_heads": 7}), name="tiny", source="test")
    with pytest.raises(ModelConfigError, match="subsampling_conv_channels"):
        parse_config(_with_audio({"subsampling_conv_channels": [128]}), name="tiny", source="test")


def test_the_kv_cache_matches_a_real_gemma4_e4b_it_startup() -> None:
    """Field record G008 (benchmarks/data/calibration/vllm_startup_logs_field2.jsonl, a log committed to a public
    repository): google/gemma-4-E4b-it, vLLM 0.19.2, --max-model-len 16384: 'Available KV cache memory: 16.45 GiB',
    'GPU KV cache size: 179,632 tokens', 'Maximum concurrency for 16,384 tokens per request: 47.14x'. Given the
    same KV memory, the layout (20 sliding and 4 full layers own a cache) gives the same tokens within 0.1%. The
    log's 'Model loading took 15.16 GiB' is 1.2% above the 14.98 GiB predicted for 0.33 (not asserted here)."""
    kv_bytes = int(16.45 * GIB)
    args = ["explain", "google/gemma-4-E4b-it", "--gpu", "a100-40gb", "--vllm-version", "0.19", "--format", "json"]
    doc = json.loads(invoke([*args, "--", "--max-model-len", "16384", "--kv-cache-memory", str(kv_bytes)]).stdout)
    assert doc["kv_cache_tokens"] == pytest.approx(179_632, rel=0.001)
    assert doc["max_concurrency"] == pytest.approx(47.14, abs=0.02)


def test_the_proportional_rope_cache_spans_the_whole_head() -> None:
    """Gemma4RotaryEmbedding passes rotary_dim = head_size to RotaryEmbedding, so the full layers' cos/sin cache is
    [max_position, 512] although only 25% rotates; the sliding layers' is [max_position, 256]. Field record F040
    (google/gemma-4-26B-A4B on an A100 80GB, vLLM 0.19, 'Model loading took 48.5 GiB'): 48.47 GiB predicted with
    the whole-head cache (262,144 x 768 x 2 bytes), 48.28 GiB with a 128-wide one."""
    assert resolve_model("google/gemma-4-E4B-it").rotary_dim == 256 + 512
    moe = resolve_model("google/gemma-4-26B-A4B")
    assert (moe.rotary_dim, moe.rope_max_position) == (256 + 512, 262_144)
    args = ["explain", "google/gemma-4-26B-A4B", "--gpu", "a100-80gb", "--vllm-version", "0.19", "--format", "json"]
    doc = json.loads(invoke([*args, "--", "--max-model-len", "131072", "--gpu-memory-utilization", "0.9"]).stdout)
    assert doc["weights_gib"] == pytest.approx(48.5, rel=0.002)


@pytest.mark.parametrize("model", ["google/gemma-4-31B-it", "google/gemma-4-E4B-it"])
def test_the_towers_are_whole_on_every_rank(model: str) -> None:
    """gemma4_mm.py builds the vision and audio towers with AutoModel.from_config and recursive_replace_linear(...,
    "replicate"): tensor parallelism does not split them (the 31B's 27-layer, 1152-wide vision tower is 1.07 GiB
    on each of 1, 2 or 4 GPUs; it was counted halved at TP=2)."""
    spec = resolve_model(model)

    def towers(tp: int) -> int:
        par = Parallel(tp=tp)
        return sum(
            tensor_bytes(spec, t, par, 2, None, None) for t in stage_tensors(spec, par, 0) if t.group == "vision"
        )

    assert towers(1) == towers(2) == towers(4) > 0
