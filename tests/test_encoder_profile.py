"""The V1 engine's multimodal encoder pass (recommender/memory/encoder_profile.py), hand-checked from vLLM's source:
GPUModelRunner.profile_run runs the vision tower over the largest dummy images before the language model's pass."""

from __future__ import annotations

import pytest

from recommender.catalog import load_gpus
from recommender.errors import FlagError
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.encoder_profile import (
    QWEN2_VL,
    QWEN3_VL,
    DummyItem,
    V0Batch,
    dummy_item,
    encoder_pass,
    formatted_video_frames,
    profiled_items,
    v0_profile_batch,
    video_tokens,
)
from recommender.memory.engine import EngineFlags, VllmVersion, mm_limits
from recommender.serve_args import parse_serve_argv
from recommender.sources.resolve import resolve_model


def test_the_largest_qwen_vl_image() -> None:
    """get_image_size_with_most_features: max_pixels // (patch x merge)^2 tokens, 4 patches each. Qwen2-VL:
    12,845,056 // 28^2 = 16,384 tokens, 65,536 patches, each a pixel_values row of 3 x 2 x 14 x 14 float32 = 4,704
    bytes; Qwen3-VL: 16,777,216 // 32^2 = 16,384 tokens."""
    assert (QWEN2_VL.tokens_per_item, QWEN2_VL.patches_per_item, QWEN2_VL.pixel_bytes_per_patch) == (16384, 65536, 4704)
    assert QWEN3_VL.tokens_per_item == 16384


def test_items_per_profiling_batch() -> None:
    """MultiModalBudget._get_max_items: budget = max(max_num_batched_tokens, 16,384); items = budget // 16,384, capped
    by max_num_seqs x max(1, max_model_len // 16,384)."""
    assert profiled_items(QWEN2_VL, max_num_batched_tokens=2048, max_num_seqs=256, max_model_len=4096) == 1
    assert profiled_items(QWEN2_VL, max_num_batched_tokens=32768, max_num_seqs=256, max_model_len=4096) == 2
    assert profiled_items(QWEN2_VL, max_num_batched_tokens=65536, max_num_seqs=1, max_model_len=40000) == 2


def test_qwen2_vl_2b_encoder_pass() -> None:
    """Qwen2-VL-2B's tower: width h 1,280, MLP 5,120. Attention while a query is rotated: residual 1 h + qkv 3 h +
    contiguous q, k, v 3 h + float32 input and output 2 + 2 h = 11 h = 14,080 values; the MLP: 2 h + 2 x 5,120 =
    12,800. Per patch 2 x 14,080 + 4,704 = 32,864 bytes; 65,536 patches = 2,153,775,104 bytes (2.01 GiB). The cached
    outputs: 16,384 tokens x 1,536 x 2 B = 50,331,648. At TP=2 the attention's 10 h and the MLP's 2 i halve:
    1,280 + 6,400 = 7,680 values either way."""
    spec = resolve_model("Qwen/Qwen2-VL-2B-Instruct")
    one = encoder_pass(spec, max_num_batched_tokens=2048, max_num_seqs=256, max_model_len=4096, tp=1)
    assert (one.peak, one.cached_outputs) == (65536 * 32864, 50_331_648)
    two = encoder_pass(spec, max_num_batched_tokens=2048, max_num_seqs=256, max_model_len=4096, tp=2)
    assert two.peak == 65536 * (4704 + 2 * 7680)


def test_qwen2_vl_quick_gelu_runs_natively_where_the_engine_compiles() -> None:
    """vLLM's QuickGELU is a CustomOp; with Inductor (V1 without --enforce-eager) custom_ops defaults to 'none', so
    the uncompiled Qwen2-VL tower runs forward_native, `x * torch.sigmoid(1.702 * x)`: fc1's output, 1.702 x and the
    sigmoid live at once, 3 i. Qwen2-VL-2B (h 1,280, i 5,120): the MLP holds 2 x 1,280 + 3 x 5,120 = 17,920 values
    (35,840 bytes) against the attention's 11 x 1,280 = 14,080, so 4,704 + 35,840 = 40,544 bytes a patch; at TP=2
    2,560 + 3 x 2,560 = 10,240 values, 4,704 + 20,480 = 25,184. Qwen2.5-VL's gated SiLU MLP is unchanged."""
    spec = resolve_model("Qwen/Qwen2-VL-2B-Instruct")
    shape = {"max_num_batched_tokens": 2048, "max_num_seqs": 256, "max_model_len": 4096}
    assert encoder_pass(spec, tp=1, compiled=True, **shape).peak == 65536 * 40544  # type: ignore[arg-type]
    assert encoder_pass(spec, tp=2, compiled=True, **shape).peak == 65536 * 25184  # type: ignore[arg-type]
    assert encoder_pass(spec, tp=1, compiled=False, **shape).peak == 65536 * 32864  # type: ignore[arg-type]
    qwen25 = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct")
    fused = encoder_pass(qwen25, tp=1, compiled=False, version=(0, 10), **shape)  # type: ignore[arg-type]
    assert encoder_pass(qwen25, tp=1, compiled=True, version=(0, 10), **shape).peak == fused.peak  # type: ignore[arg-type]


def test_the_pass_is_the_peak_when_it_exceeds_the_language_model() -> None:
    """On vLLM 0.10.2 with 256 requests and 2,048 tokens the language model's pass is 2,048 x 47,000 + 36 B x 256 x
    151,936 logits = 1,496,498,176 bytes, plus the cached outputs 1,546,829,824: below the tower's, which is the peak.
    The engine compiles (no --enforce-eager), so Qwen2-VL's QuickGELU runs natively: 4,704 + 2 x (2 x 1,280 + 3 x
    5,120) = 40,544 bytes a patch, 2,657,091,584 bytes (2.47 GiB; the round-2 log G037, Qwen2-VL-2B on an RTX 4080,
    prints 2.65 GiB: measured, not fitted on). With --enforce-eager the fused kernel's 32,864 (2,153,775,104).
    Towers not sized here (Gemma-3's SigLIP) leave the peak to the language model."""
    card = resolve_gpu("rtx4080", load_gpus())
    flags = EngineFlags(max_model_len=4096, gpu_memory_utilization=0.8)
    e = explain(resolve_model("Qwen/Qwen2-VL-2B-Instruct"), card, flags, VllmVersion.parse("0.10.2"))
    assert e.stage.activation_peak == 65536 * 40544 == 2_657_091_584
    eager = EngineFlags(max_model_len=4096, gpu_memory_utilization=0.8, enforce_eager=True)
    e = explain(resolve_model("Qwen/Qwen2-VL-2B-Instruct"), card, eager, VllmVersion.parse("0.10.2"))
    assert e.stage.activation_peak == 65536 * 32864 == 2_153_775_104
    gemma = resolve_model("google/gemma-3-4b-it")
    assert encoder_pass(gemma, max_num_batched_tokens=8192, max_num_seqs=1024, max_model_len=8192, tp=1).peak == 0
    lm = 2048 * 47_000 + 36 * 256 * gemma.vocab_size  # the forward and the pre-0.17 sampler over 256 x vocab logits
    assert explain(gemma, card, flags, VllmVersion.parse("0.10.2")).stage.activation_peak == lm


def test_limit_mm_per_prompt_as_vllm_reads_it() -> None:
    """config/multimodal.py: a JSON object of counts or {"count": n} options; the older 'image=0,video=0' form."""
    assert mm_limits('{"image": 0, "video": {"count": 0, "num_frames": 8}}') == {"image": 0, "video": 0}
    assert mm_limits("image=0, video=2") == {"image": 0, "video": 2}
    for bad in ("[0]", '{"image": -1}', '{"image": "none"}', "image"):
        with pytest.raises(FlagError, match="limit-mm-per-prompt"):
            mm_limits(bad)


def test_towers_skipped_only_when_every_modality_is_zero() -> None:
    """_mark_tower_model skips a tower when all its modalities are limited to 0 (a modality not given keeps 999);
    --language-model-only sets every limit to 0. From 0.15 only (pull request 32757)."""
    v33, v14 = VllmVersion.parse("0.33.0"), VllmVersion.parse("0.14.0")
    both = ("image", "video")
    assert EngineFlags(language_model_only=True).towers_skipped(v33, both)
    assert not EngineFlags(language_model_only=True).towers_skipped(v14, both)
    assert EngineFlags(limit_mm_per_prompt='{"image": 0, "video": 0}').towers_skipped(v33, both)
    assert not EngineFlags(limit_mm_per_prompt='{"image": 0}').towers_skipped(v33, both)
    assert not EngineFlags().towers_skipped(v33, both)


def test_language_model_only_drops_the_tower_and_its_pass() -> None:
    """Qwen2.5-VL-7B's tower in bf16: 32 blocks of qkv 1,280 x 3,840 + 3,840, proj 1,280^2 + 1,280, gate and up
    2 x (1,280 x 3,420 + 3,420), down 3,420 x 1,280 + 1,280 and two RMSNorms 2,560 (19,702,200 each), the patch
    embedding 3 x 2 x 14 x 14 x 1,280 = 1,505,280, the merger's norm 1,280 and MLP 5,120^2 + 5,120 and 5,120 x 3,584 +
    3,584: 676,550,144 parameters, 1,353,100,288 bytes fewer, and no encoder pass (the peak is the language model's)."""
    argv = ["vllm", "serve", "Qwen/Qwen2.5-VL-7B-Instruct", "--max-model-len", "8192"]
    card = resolve_gpu("rtx4090", load_gpus())
    spec, v = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct"), VllmVersion.parse("0.33.0")
    full = explain(spec, card, parse_serve_argv(argv).engine_flags(), v)
    text = explain(spec, card, parse_serve_argv([*argv, "--language-model-only"]).engine_flags(), v)
    assert full.stage.weights - text.stage.weights == 1_353_100_288
    assert full.stage.activation_peak == 65536 * (4704 + 2 * 14080)
    assert text.stage.activation_peak < full.stage.activation_peak


def test_qwen3_5_tower_profiled_whole_on_the_first_pipeline_stage() -> None:
    """Qwen3.5 reuses Qwen3-VL's processing and dummy inputs (vLLM qwen3_5.py: Qwen3_5MoeProcessingInfo subclasses
    Qwen3VLProcessingInfo): one 16,384-token image of 65,536 patches. Qwen3.5-35B-A3B's tower: h 1,152, MLP 4,304
    (not gated). At TP=1 the attention holds 11 h = 12,672 values (the MLP 2 h + 2 i = 10,912): 25,344 bytes, plus a
    3 x 2 x 16 x 16 float32 pixel row of 6,144: 31,488 bytes per patch, 2,063,597,568 (1.92 GiB). At TP=4 the MLP's
    2,304 + 8,608 / 4 = 4,456 values lead (attention 1,152 + 2,880 = 4,032): 65,536 x (8,912 + 6,144) = 0.92 GiB.
    Under pipeline parallelism the tower is not sharded and runs on the first stage only: field4 J029 (four A10s,
    PP 4, 160,000 tokens, vLLM ~0.17) ran out of memory where TP 4 (J028) starts; stage 0 then has 0.32 GiB of KV
    for a request that needs 0.63."""
    spec = resolve_model("Qwen/Qwen3.5-35B-A3B")
    one = encoder_pass(spec, max_num_batched_tokens=4096, max_num_seqs=32, max_model_len=160_000, tp=1)
    assert one.peak == 65536 * 31_488 == 2_063_597_568
    assert one.cached_outputs == 16384 * 2048 * 2
    four = encoder_pass(spec, max_num_batched_tokens=4096, max_num_seqs=32, max_model_len=160_000, tp=4)
    assert four.peak == 65536 * (2 * 4456 + 6144)
    a10 = resolve_gpu("a10", load_gpus())
    common = {"max_model_len": 160_000, "max_num_batched_tokens": 4096, "max_num_seqs": 32}
    v = VllmVersion.parse("0.17.0")
    pp = explain(spec, a10, EngineFlags(pipeline_parallel_size=4, **common), v)  # type: ignore[arg-type]
    assert pp.stages[0].activation_peak == one.peak
    # the later stages run no tower: their peak is the text layers' own (0.43-0.53 GiB, the Triton experts' two
    # workspaces counted from 0.14 since 9683e23), under half of stage 0's 1.92 GiB encoder pass
    assert all(st.activation_peak < one.peak // 2 for st in pp.stages[1:])
    assert not pp.fits
    tp = explain(spec, a10, EngineFlags(tensor_parallel_size=4, **common), v)  # type: ignore[arg-type]
    assert tp.stage.activation_peak == four.peak and tp.fits


def test_qwen3_vl_video_dummy_of_vllm_0_11_and_0_12() -> None:
    """qwen3_vl.py of v0.11.0-v0.12.0: get_max_video_tokens counts the video with the most frames at the largest image
    (4,096 px square) x 12.5. transformers' video smart_resize shrinks the side until frames x side^2 <= 25,165,824:
    2 frames: beta = sqrt(2 x 4,096^2 / 25,165,824) = 1.1547, side floor(4,096 / 1.1547 / 32) x 32 = 3,520, one
    temporal pair of 220 x 220 patches = 12,100 tokens; 3 frames (padded to 4, two pairs): beta = sqrt(2), side 2,880,
    2 x 180^2 / 4 = 16,200. Frames grow while the next count stays within max_model_len: at 8,192 tokens the video
    keeps 2 frames (151,250 formatted tokens, 48,400 patches); from 16,200 tokens on it reaches the cap of 24,576
    frames of 32 px (12,288 tokens, 49,152 patches, 153,600 formatted). 0.13 dropped the factor: the image leads."""
    assert (video_tokens(QWEN3_VL, 2), video_tokens(QWEN3_VL, 3), video_tokens(QWEN3_VL, 24576)) == (
        12100,
        16200,
        12288,
    )
    assert formatted_video_frames(QWEN3_VL, 8192) == 2
    assert formatted_video_frames(QWEN3_VL, 65536) == 24576
    assert dummy_item(QWEN3_VL, version=(0, 11), max_model_len=8192, video=True) == DummyItem(151_250, 48_400, 12_100)
    assert dummy_item(QWEN3_VL, version=(0, 12), max_model_len=65536, video=True) == DummyItem(153_600, 49_152, 12_288)
    image = DummyItem(16384, 65536, 16384)
    assert dummy_item(QWEN3_VL, version=(0, 13), max_model_len=65536, video=True) == image
    assert dummy_item(QWEN3_VL, version=(0, 12), max_model_len=65536, video=False) == image


def test_qwen3_vl_30b_on_0_12_keeps_the_expanded_encoder_outputs() -> None:
    """v0.11.0-v0.12.0 copy each dummy output into new_zeros((encoder_budget, width)): one video item, a budget of
    153,600 rows, each out_hidden 2,048 x (1 + 3 deepstack levels) = 8,192 wide in bf16: 2,516,582,400 bytes (2.34 GiB)
    held through the language model's pass. The pass itself at TP=2: 49,152 patches x (6,144 pixel bytes + 2 x
    max(1,152 + 5,760, 2,304 + 4,304)) = 49,152 x 19,968. Round-6 log L013 (Qwen3-VL-30B-A3B, TP 2 on H100, 65,536
    tokens, 256 sequences, vLLM 0.12.0) logs 37.23 GiB of KV: predicted 39.28 without the copy, within 1 % with it
    (measured, not fitted on; -1.1 % since the MRotaryEmbedding's 4 x max_position cache is counted: its weights are
    then 29.20 GiB predicted for 29.31 logged, where one cache left 29.02). On 0.13 the same command profiles the
    image and keeps its 16,384 rows only."""
    spec = resolve_model("Qwen/Qwen3-VL-30B-A3B-Instruct")
    shape = {"max_num_batched_tokens": 8192, "max_num_seqs": 256, "max_model_len": 65536, "tp": 2}
    old = encoder_pass(spec, version=(0, 12), **shape)  # type: ignore[arg-type]
    assert (old.peak, old.cached_outputs) == (49_152 * 19_968, 2_516_582_400)
    new = encoder_pass(spec, version=(0, 13), **shape)  # type: ignore[arg-type]
    assert new.cached_outputs == 16384 * 8192 * 2
    flags = EngineFlags(max_model_len=65536, tensor_parallel_size=2, max_num_seqs=256)
    e = explain(spec, resolve_gpu("h100", load_gpus()), flags, VllmVersion.parse("0.12.0"))
    assert abs(e.stage.available_kv / 2**30 - 37.23) < 0.015 * 37.23
    no_video = EngineFlags(max_model_len=65536, tensor_parallel_size=2, max_num_seqs=256, limit_mm_per_prompt="video=0")
    image = explain(spec, resolve_gpu("h100", load_gpus()), no_video, VllmVersion.parse("0.12.0"))
    assert image.stage.available_kv > e.stage.available_kv + 2 * 2**30


def test_v0_profiles_the_dummy_image_and_video_whole() -> None:
    """V0's _dummy_run (worker/model_runner.py, 0.8.x) gives min(max_num_seqs, max_num_batched_tokens //
    max_mm_tokens) sequences (at least 1) the default 1 image + 1 video per prompt. Qwen2.5-VL at 8,192 tokens:
    max_mm_tokens = 16,384 (image) + 16,384 (a one-frame video, padded to a pair, since 8,192 - 16,384 leaves no
    frames) = 32,768, so 1 sequence; its prompt holds both items whole, 2 x (16,384 + 2) = 32,772 tokens through the
    language model (from 0.8.3; before, an overflowing sequence was profiled as 8,192 text tokens), and the float32
    pixel_values of 32,768 x 4 patches x 4,704 bytes = 616,562,688 stay on the GPU. Field6 L016 (Qwen2.5-VL-7B on an
    RTX 3090, V0, 8,192 tokens, ~0.8.4) logged 2,400 KV tokens and failed; predicted 66,912 tokens without this."""
    spec = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct")
    shape = {"max_num_batched_tokens": 8192, "max_num_seqs": 256, "max_model_len": 8192}
    batch = v0_profile_batch(spec, items=(None, None), version=(0, 8, 4), **shape)  # type: ignore[arg-type]
    assert batch == V0Batch(32772, 1, 616_562_688)
    assert v0_profile_batch(spec, items=(None, None), version=(0, 8, 2), **shape) == V0Batch(8192, 256)  # type: ignore[arg-type]
    assert v0_profile_batch(spec, items=(0, 0), version=(0, 8, 4), **shape) == V0Batch(8192, 256)  # type: ignore[arg-type]
    card = resolve_gpu("rtx3090", load_gpus())
    e = explain(spec, card, EngineFlags(max_model_len=8192, use_v1=False), VllmVersion.parse("0.8.4"))
    assert not e.fits
    assert e.stage.activation_peak == 32772 * 8 * 18944 + 616_562_688  # V0's forward: 8 B per token and channel


def test_qwen2_5_vl_profiles_its_longest_video_from_0_11() -> None:
    """From 0.11.0 the dummy item is built at max_model_len: Qwen2-VL's video of the most frames, from 1 while
    ceil(frames / 2) x 16,384 tokens fit, capped at 14 (7 pairs of 65,536 patches). Under 32,768 tokens one pair (the
    image's size); at 65,536, 8 frames, 4 pairs; at Qwen2.5-VL's default 128,000, 14 frames: 114,688 tokens and
    458,752 patches. Qwen2.5-VL-7B's tower at TP=1: 4,704 + 2 x 14,080 = 32,864 bytes a patch, 15,076,425,728 bytes
    (14.04 GiB) for the pass, and 114,688 x 3,584 x 2 = 822,083,584 bytes of outputs. Before 0.11 the item was built
    at max_num_batched_tokens: one pair. With --limit-mm-per-prompt video=0, the image."""
    assert dummy_item(QWEN2_VL, version=(0, 33), max_model_len=16384, video=True) == DummyItem(16384, 65536, 16384)
    assert dummy_item(QWEN2_VL, version=(0, 12), max_model_len=65536, video=True) == DummyItem(65536, 262144, 65536)
    assert dummy_item(QWEN2_VL, version=(0, 10), max_model_len=65536, video=True) == DummyItem(16384, 65536, 16384)
    spec = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct")
    shape = {"max_num_batched_tokens": 8192, "max_num_seqs": 256, "max_model_len": 128_000, "tp": 1}
    long = encoder_pass(spec, version=(0, 33), **shape)  # type: ignore[arg-type]
    assert (long.peak, long.cached_outputs) == (15_076_425_728, 822_083_584)
    image = encoder_pass(spec, version=(0, 33), video=False, **shape)  # type: ignore[arg-type]
    assert image.peak == 65536 * 32864


def test_mm_encoder_tp_mode_data_replicates_the_tower() -> None:
    """--mm-encoder-tp-mode data (Qwen's model-card command for Qwen3-VL-235B): the tower's linears are built with
    disable_tp, whole on every rank: 576,388,336 parameters, 1,152,776,672 bytes in bf16 where TP 8 holds
    152,248,220 of them (norms and the patch embedding are whole either way), 1,000,528,452 bytes more a GPU. The
    profiling item runs unsharded on one rank (run_dp_sharded_mrope_vision_model): on 0.11 the one video of 49,152
    patches at 6,144 + 2 x 12,672 bytes a patch (TP 1 attention: 11 x 1,152 values), where weights mode shards it
    over 8 ranks to 6,144 + 2 x 3,380 (the MLP's 2,304 + 2 x 4,304 / 8 values lead). A model without
    supports_encoder_tp_data falls back to weights mode."""
    spec = resolve_model("Qwen/Qwen3-VL-235B-A22B-Instruct")
    shape = {"max_num_batched_tokens": 8192, "max_num_seqs": 1024, "max_model_len": 262_144, "tp": 8}
    data = encoder_pass(spec, version=(0, 11), data_parallel=True, **shape)  # type: ignore[arg-type]
    weights = encoder_pass(spec, version=(0, 11), **shape)  # type: ignore[arg-type]
    assert (data.peak, weights.peak) == (49_152 * (6144 + 2 * 12_672), 49_152 * (6144 + 2 * 3380))
    assert data.cached_outputs == weights.cached_outputs == 153_600 * 4096 * 4 * 2
    card, v = resolve_gpu("h100", load_gpus()), VllmVersion.parse("0.11.0")
    base = EngineFlags(tensor_parallel_size=8, enable_expert_parallel=True)
    replicated = EngineFlags(tensor_parallel_size=8, enable_expert_parallel=True, mm_encoder_tp_mode="data")
    w_base, w_data = (explain(spec, card, f, v).stage.weights for f in (base, replicated))
    assert w_data - w_base == 1_000_528_452
    gemma = resolve_model("google/gemma-3-27b-it")
    g = [explain(gemma, card, EngineFlags(tensor_parallel_size=2, mm_encoder_tp_mode=m), v) for m in (None, "data")]
    assert g[0].stage.weights == g[1].stage.weights
