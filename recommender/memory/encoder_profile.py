"""The multimodal encoder's profiling pass of the V1 engine: the vision tower run over the largest dummy images.

vLLM's GPUModelRunner.profile_run (v1/worker/gpu_model_runner.py) first runs the encoder over
`mm_max_items_per_batch` dummy items of the modality with the most tokens per item, keeps their outputs in the
encoder cache, then runs the language model's forward and the sampler. Its torch peak is therefore the larger of the
encoder pass and the language-model pass (plus the cached encoder outputs beside the latter).

Items per batch (multimodal/encoder_budget.py MultiModalBudget._get_max_items, v1/core/encoder_cache_manager.py
compute_mm_encoder_budget): the encoder budget is max(max_num_batched_tokens, tokens per item), so
items = max(1, min(budget // tokens per item, max_num_seqs x max(1, max_model_len // tokens per item))).

Only the dynamic-resolution towers are sized here, where the pass is large: Qwen2-VL and Qwen2.5-VL (patch 14,
spatial merge 2, max_pixels 12,845,056 in the repositories' preprocessor_config.json) and Qwen3-VL (patch 16, merge
2, max_pixels 16,777,216): the largest image, factorised by get_image_size_with_most_features
(model_executor/models/qwen2_vl.py), is 16,384 tokens of 4 patches each, 65,536 patches through every ViT block.
Fixed-resolution towers (CLIP, SigLIP, Pixtral) see a few thousand patches per 8,192-token budget and stay below
the language model's pass (Gemma-3 at 1,024 requests: 32 images of 4,096 patches, ~3.4 GiB against the sampler's
3.7; calibration records C015, C016), so they add nothing here.

Per release: 0.11.0-0.12.x profile Qwen3-VL with a video counted at 12.5 tokens per soft token and keep every dummy
output expanded to the encoder budget (FORMATTED_VIDEO_RELEASES, EXPANDED_OUTPUT_RELEASES below); the V0 engine runs
the dummy image and video inside its profiling sequences (v0_profile_batch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from recommender.memory.engine import EngineFlags
from recommender.model.spec import ModelSpec

ACTIVATION_BYTES = 2  # the tower runs in the model's 16-bit dtype
PIXEL_BYTES = 4  # the processor's pixel_values are float32; they stay referenced by the dummy batch for the pass
CHANNELS = 3


@dataclass(frozen=True, slots=True)
class DynamicResolution:
    """A Qwen-VL style image processor: patches of `patch` pixels, `merge` x `merge` patches per token, frames paired
    (`temporal`), and the most pixels one image may have."""

    patch: int
    merge: int
    max_pixels: int
    temporal: int = 2
    video_max_pixels: int = 0  # Qwen3-VL's video processor: the pixels of all frames together (0: not sized)
    min_video_pixels: int = 0

    @property
    def tokens_per_item(self) -> int:
        unit = self.patch * self.merge
        return self.max_pixels // (unit * unit)

    @property
    def patches_per_item(self) -> int:
        return self.tokens_per_item * self.merge * self.merge

    @property
    def pixel_bytes_per_patch(self) -> int:
        """One row of pixel_values: channels x temporal x patch x patch values."""
        return CHANNELS * self.temporal * self.patch * self.patch * PIXEL_BYTES


QWEN2_VL = DynamicResolution(patch=14, merge=2, max_pixels=12_845_056)
# Qwen3-VL's video_preprocessor_config.json: size {"longest_edge": 25,165,824, "shortest_edge": 4,096} (the
# Qwen3-VL and Qwen3.5/3.6/3.8 snapshots ship the same file).
QWEN3_VL = DynamicResolution(
    patch=16, merge=2, max_pixels=16_777_216, video_max_pixels=25_165_824, min_video_pixels=4096
)
PROCESSORS = {
    "Qwen2VLForConditionalGeneration": QWEN2_VL,
    "Qwen2_5_VLForConditionalGeneration": QWEN2_VL,
    "Qwen3VLForConditionalGeneration": QWEN3_VL,
    "Qwen3VLMoeForConditionalGeneration": QWEN3_VL,
    # Qwen3.5 (and the Qwen3.6/3.8 releases on its architecture) reuse Qwen3-VL's processing and dummy inputs
    # (model_executor/models/qwen3_5.py: Qwen3_5ProcessingInfo(Qwen3VLProcessingInfo), Qwen3VLDummyInputsBuilder)
    # and ship Qwen3-VL's preprocessor_config.json (size.longest_edge 16,777,216, patch 16, merge 2: the
    # Qwen3.8-27B snapshot's, quoted in public test fixtures naming its revision 1d4bf0f2).
    "Qwen3_5ForConditionalGeneration": QWEN3_VL,
    "Qwen3_5MoeForConditionalGeneration": QWEN3_VL,
}

# Bytes per patch of one ViT block, in units of the tower's width h (16-bit values), counted from vLLM's
# Qwen2VisionBlock/Qwen2VisionAttention (model_executor/models/qwen2_vl.py): while a query or key is rotated the
# block holds the residual stream (1 h), the qkv projection (3 h), the contiguous q, k, v (3 h) and the rotation's
# float32 input and output (2 + 2 h, apply_rotary_pos_emb_vision's `t.float()`): 11 h values of 2 bytes. The
# attention's share is divided by TP (the heads are sharded), the residual stream is not.
ATTENTION_SHARDED_VALUES = 10
RESIDUAL_VALUES = 1


# Qwen2-VL's MLP activation is vLLM's QuickGELU, a CustomOp (model_executor/layers/activation.py, "quick_gelu"), and
# the tower is not compiled (qwen2_vl.py has no support_torch_compile, v0.10.2 to 0.33). Where the V1 engine compiles
# the language model with Inductor, CustomOp.default_on() is off (custom_ops defaults to 'none', custom_op.py), so the
# tower runs QuickGELU.forward_native, `x * torch.sigmoid(1.702 * x)`: beside fc1's output it holds 1.702 x and its
# sigmoid, then the sigmoid and the product, 3 i where the fused kernel (forward_cuda, with --enforce-eager or on the
# V0 engine) holds 2 i. Qwen2.5-VL and Qwen3-VL use SiLU / GELU (one output each).
QUICK_GELU_ARCHITECTURES = ("Qwen2VLForConditionalGeneration",)
QUICK_GELU_NATIVE_VALUES = 3


def _block_bytes_per_patch(model: ModelSpec, tp: int, *, compiled: bool = False) -> int:
    """The larger of the attention's and the MLP's live tensors per patch on one GPU. The MLP (`x + mlp(norm2(x))`)
    holds the residual and the normed input (2 h) beside fc1's output and its activation (2 i; a gated MLP's
    gate_up output is 2 i wide, so 3 i; Qwen2-VL's QuickGELU run natively, `compiled`, 3 i)."""
    v = model.vision
    assert v is not None
    h, i = v.hidden, v.intermediate
    attention = RESIDUAL_VALUES * h + ATTENTION_SHARDED_VALUES * h // tp
    gated = v.style in ("qwen2_5", "glm4v")
    native = compiled and model.architecture in QUICK_GELU_ARCHITECTURES
    mlp = 2 * h + (3 if gated or native else 2) * i // tp
    return ACTIVATION_BYTES * max(attention, mlp)


def profiled_items(
    processor: DynamicResolution, *, max_num_batched_tokens: int, max_num_seqs: int, max_model_len: int
) -> int:
    """MultiModalBudget._get_max_items for the image modality (the default limit of images per prompt is far above
    max_model_len // tokens per item for these towers)."""
    return _items(
        processor.tokens_per_item,
        max_num_batched_tokens=max_num_batched_tokens,
        max_num_seqs=max_num_seqs,
        max_model_len=max_model_len,
    )


def _items(tokens: int, *, max_num_batched_tokens: int, max_num_seqs: int, max_model_len: int) -> int:
    budget = max(max_num_batched_tokens, tokens)
    per_prompt = max(1, max_model_len // tokens)
    return max(1, min(budget // tokens, max_num_seqs * per_prompt))


# vLLM 0.11.0 to 0.12.x profiled Qwen3-VL with a video (qwen3_vl.py of v0.11.0-v0.12.0, vllm#25557; gone in 0.13.0
# with vllm#30475): get_max_video_tokens counts the soft tokens of the video with the most frames
# (Qwen2VLProcessingInfo._get_max_video_frames: frames added from 2 while the tokens stay within max_model_len, at
# most _MAX_FRAMES_PER_VIDEO = 24,576) times 12.5 for the timestamp text around each token. That figure (over
# 150,000) beats the image's 16,384, so the dummy is that video and the encoder budget is the formatted figure.
FORMATTED_VIDEO_RELEASES = ((0, 11), (0, 12))
FORMATTED_VIDEO_FACTOR = 12.5
FORMATTED_VIDEO_MAX_FRAMES = 24_576
# The same releases copy every dummy encoder output into a zero tensor of encoder_budget rows kept in the encoder
# cache through the language model's pass (gpu_model_runner.py profile_run, `output.new_zeros((encoder_budget,
# hidden))`, vllm#25810; removed by vllm#30475 in 0.13.0).
EXPANDED_OUTPUT_RELEASES = ((0, 11), (0, 12))


def _video_side(processor: DynamicResolution, frames: int, side: int) -> int:
    """transformers' Qwen3-VL video smart_resize of `frames` square frames of `side` pixels: the side shrinks until
    all the frames' pixels fit video_max_pixels (factor = patch x merge)."""
    factor = processor.patch * processor.merge
    bar = round(side / factor) * factor
    t_bar = round(frames / processor.temporal) * processor.temporal
    if t_bar * bar * bar > processor.video_max_pixels:
        beta = math.sqrt(frames * side * side / processor.video_max_pixels)
        return max(factor, math.floor(side / beta / factor) * factor)
    if t_bar * bar * bar < processor.min_video_pixels:
        beta = math.sqrt(processor.min_video_pixels / (frames * side * side))
        return math.ceil(side * beta / factor) * factor
    return bar


def video_tokens(processor: DynamicResolution, frames: int) -> int:
    """The soft tokens of a video of `frames` frames of the largest image (_get_vision_info: frames padded to the
    temporal patch, grid_t x grid_h x grid_w patches, merge^2 patches per token)."""
    side = math.isqrt(processor.max_pixels)
    resized = _video_side(processor, frames, side) // processor.patch
    grid_t = max((frames + frames % processor.temporal) // processor.temporal, 1)
    return grid_t * resized * resized // (processor.merge * processor.merge)


@lru_cache(maxsize=64)
def formatted_video_frames(processor: DynamicResolution, seq_len: int) -> int:
    """get_num_frames_with_most_features of 0.11-0.12 for one video: frames from 2 while the next count's tokens
    stay within seq_len, capped at 24,576."""
    frames = 2
    while frames < FORMATTED_VIDEO_MAX_FRAMES and video_tokens(processor, frames + 1) <= seq_len:
        frames += 1
    return frames


@dataclass(frozen=True, slots=True)
class DummyItem:
    """One dummy item of the profiling batch: the tokens it counts against the encoder budget, the patches through
    the tower and the encoder outputs (rows) it returns."""

    tokens: int
    patches: int
    outputs: int


# From vLLM 0.11.0 the dummy item is built at max_model_len (gpu_model_runner.py _get_mm_dummy_batch, later
# multimodal/encoder_budget.py get_dummy_encoder_profile_inputs: get_dummy_mm_inputs with no scheduler config), where
# 0.8-0.10.2 built it at max_num_batched_tokens. Qwen2-VL and Qwen2.5-VL then profile their video of the most frames
# within max_model_len (Qwen2VLProcessingInfo._get_max_video_frames from 1 frame, get_num_frames_with_most_features
# capped at _MAX_FRAMES_PER_VIDEO = 14 from 0.11.0): frame pairs of the largest image, 16,384 tokens and 65,536
# patches each, up to 7 pairs (114,688 tokens, 458,752 patches) from 114,688 tokens of context. Its token count is
# never below the image's, so it is the dummy modality whenever video is allowed; under 32,768 tokens it is a single
# pair, the image's size.
VIDEO_AT_MAX_MODEL_LEN_FROM = (0, 11)
QWEN2_VL_MAX_FRAMES = 14


def qwen2_vl_video_frames(processor: DynamicResolution, max_model_len: int) -> int:
    """get_num_frames_with_most_features for one video: frames whose pairs' tokens fit max_model_len, 1 to 14."""
    frames = 2 * (max_model_len // processor.tokens_per_item)  # ceil(frames / 2) x tokens per pair <= max_model_len
    return max(1, min(frames, QWEN2_VL_MAX_FRAMES))


def dummy_item(processor: DynamicResolution, *, version: tuple[int, int], max_model_len: int, video: bool) -> DummyItem:
    """The profiled item of a release: the largest image, Qwen3-VL's formatted video on 0.11-0.12, or from 0.11
    Qwen2-VL's video of the most frames within max_model_len."""
    image = DummyItem(processor.tokens_per_item, processor.patches_per_item, processor.tokens_per_item)
    if not video or version < VIDEO_AT_MAX_MODEL_LEN_FROM:
        return image
    if not processor.video_max_pixels:
        pairs = (qwen2_vl_video_frames(processor, max_model_len) + 1) // 2
        return DummyItem(pairs * image.tokens, pairs * image.patches, pairs * image.tokens)
    if version not in FORMATTED_VIDEO_RELEASES:
        return image
    soft = video_tokens(processor, formatted_video_frames(processor, max_model_len))
    formatted = int(soft * FORMATTED_VIDEO_FACTOR)
    if formatted <= image.tokens:
        return image
    return DummyItem(formatted, soft * processor.merge * processor.merge, soft)


# --mm-encoder-tp-mode data (from 0.10.2): vLLM keeps it for the models that declare supports_encoder_tp_data (0.33:
# the Qwen-VL family here, Kimi-K2.5, Llama-4 and others) and falls back to "weights" for the rest
# (config/model.py: "This model does not support `--mm-encoder-tp-mode data`").
DATA_PARALLEL_TOWERS = (*PROCESSORS, "KimiK25ForConditionalGeneration", "Llama4ForConditionalGeneration")


def towers_data_parallel(model: ModelSpec, flags: EngineFlags) -> bool:
    """Whether the towers run data-parallel over the TP ranks (replicated weights, whole items per rank)."""
    return flags.mm_encoder_tp_mode == "data" and model.architecture in DATA_PARALLEL_TOWERS


@dataclass(frozen=True, slots=True)
class EncoderPass:
    """The encoder pass's transient peak and the encoder outputs it leaves cached for the language-model pass."""

    peak: int
    cached_outputs: int


def encoder_pass(
    model: ModelSpec,
    *,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    max_model_len: int,
    tp: int,
    version: tuple[int, int] = (0, 33),
    video: bool = True,
    data_parallel: bool = False,
    compiled: bool = False,
) -> EncoderPass:
    """The vision tower's profiling pass on one GPU (zeros for a model whose tower is not sized here). `video`: the
    video modality is not limited to 0. The cached outputs are out_hidden wide, times 1 + the deepstack levels
    Qwen3-VL concatenates to them (qwen3_vl.py: visual_dim + multiscale_dim). `data_parallel`: --mm-encoder-tp-mode
    data, each rank runs whole items unsharded (run_dp_sharded_mrope_vision_model: the first rank takes
    ceil(items / TP) of them) and all ranks gather every output. `compiled`: the engine compiles the language model
    with Inductor (V1 without --enforce-eager), so the towers' CustomOps run their native code."""
    processor = PROCESSORS.get(model.architecture)
    if processor is None or model.vision is None:
        return EncoderPass(0, 0)
    item = dummy_item(processor, version=version, max_model_len=max_model_len, video=video)
    limits = {"max_num_batched_tokens": max_num_batched_tokens, "max_num_seqs": max_num_seqs}
    items = _items(item.tokens, max_model_len=max_model_len, **limits)
    on_rank, shard = (-(-items // tp), 1) if data_parallel else (items, tp)
    peak = (
        on_rank
        * item.patches
        * (processor.pixel_bytes_per_patch + _block_bytes_per_patch(model, shard, compiled=compiled))
    )
    rows = item.outputs
    if version in EXPANDED_OUTPUT_RELEASES:
        rows = max(rows, max_num_batched_tokens, item.tokens)  # the encoder budget
    width = model.vision.out_hidden * (1 + model.vision.deepstack)
    return EncoderPass(peak, items * rows * width * ACTIVATION_BYTES)


# The V0 engine's profile_run (worker/model_runner.py _dummy_run) builds min(max_num_seqs, max_num_batched_tokens //
# max_mm_tokens) dummy sequences (at least 1) of max_num_batched_tokens // that many tokens, each with the dummy
# multimodal data of the default limits (1 image and 1 video per prompt on V0, config.py
# get_default_limit_per_prompt). max_mm_tokens sums the largest item of each modality at max_model_len. A Qwen2-VL
# video takes the frames left after the images (get_num_frames_with_most_features: at least 1, padded to a frame
# pair, at most 16): with fewer than 2 x 16,384 tokens per sequence the image and the one-pair video overflow it, and
# from vLLM 0.8.3 (vllm#15673, the legacy input registry removed) the overflowing sequence is profiled whole, its
# 32,772 tokens through the language model (multimodal/profiling.py get_decoder_dummy_data only warns); before,
# V0 profiled seq_len text tokens without the images.
V0_WHOLE_MM_SEQUENCE_FROM = (0, 8, 3)
V0_DEFAULT_ITEMS_PER_PROMPT = 1
V0_MAX_FRAMES_PER_VIDEO = 16
SPECIAL_TOKENS_PER_ITEM = 2  # <|vision_start|> and <|vision_end|> around each item's pad tokens


def _v0_video_tokens(processor: DynamicResolution, seq_len: int, images: int, videos: int) -> int:
    """Qwen2VLProcessingInfo's video of the most frames left by `images` largest images within seq_len (0.8.x)."""
    per_pair = processor.tokens_per_item
    left = seq_len - images * per_pair
    total_frames = 2 * (left // per_pair) if left >= per_pair else 0
    frames = max(min(total_frames // max(videos, 1), V0_MAX_FRAMES_PER_VIDEO), 1)
    return (frames + frames % 2) // 2 * per_pair


@dataclass(frozen=True, slots=True)
class V0Batch:
    """V0's profiling forward: its tokens and sequences, and the float32 pixel_values of the dummy items the model
    runner holds on the GPU through it (the tower casts a 16-bit copy, the float32 input stays referenced)."""

    tokens: int
    seqs: int
    pixel_bytes: int = 0


def v0_profile_batch(
    model: ModelSpec,
    *,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    max_model_len: int,
    items: tuple[int | None, int | None],
    version: tuple[int, int, int],
) -> V0Batch:
    """V0's profiling batch for a Qwen2-VL-style model: the scheduler's figures unless the dummy image and video
    overflow each sequence (from 0.8.3). `items`: --limit-mm-per-prompt's images and videos (None: V0's 1)."""
    processor = PROCESSORS.get(model.architecture)
    unchanged = V0Batch(max_num_batched_tokens, max_num_seqs)
    if processor is None or model.vision is None or processor.video_max_pixels or version < V0_WHOLE_MM_SEQUENCE_FROM:
        return unchanged
    images, videos = (V0_DEFAULT_ITEMS_PER_PROMPT if n is None else n for n in items)
    largest = processor.tokens_per_item * (images > 0)
    largest += _v0_video_tokens(processor, max_model_len, images > 0, 1) * (videos > 0)
    if largest == 0:
        return unchanged
    seqs = max(1, min(max_num_seqs, max_num_batched_tokens // largest))
    video = _v0_video_tokens(processor, max_num_batched_tokens // seqs, images, videos) if videos else 0
    mm_tokens = images * processor.tokens_per_item + videos * video
    prompt = mm_tokens + (images + videos) * SPECIAL_TOKENS_PER_ITEM
    patches = seqs * mm_tokens * processor.merge * processor.merge
    return V0Batch(max(max_num_batched_tokens, seqs * prompt), seqs, patches * processor.pixel_bytes_per_patch)
