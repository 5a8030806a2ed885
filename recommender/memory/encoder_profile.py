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
"""

from __future__ import annotations

from dataclasses import dataclass

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
QWEN3_VL = DynamicResolution(patch=16, merge=2, max_pixels=16_777_216)
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


def _block_bytes_per_patch(model: ModelSpec, tp: int) -> int:
    """The larger of the attention's and the MLP's live tensors per patch on one GPU. The MLP (`x + mlp(norm2(x))`)
    holds the residual and the normed input (2 h) beside fc1's output and its activation (2 i; a gated MLP's
    gate_up output is 2 i wide, so 3 i)."""
    v = model.vision
    assert v is not None
    h, i = v.hidden, v.intermediate
    attention = RESIDUAL_VALUES * h + ATTENTION_SHARDED_VALUES * h // tp
    gated = v.style == "qwen2_5"
    mlp = 2 * h + (3 if gated else 2) * i // tp
    return ACTIVATION_BYTES * max(attention, mlp)


def profiled_items(
    processor: DynamicResolution, *, max_num_batched_tokens: int, max_num_seqs: int, max_model_len: int
) -> int:
    """MultiModalBudget._get_max_items for the image modality (the default limit of images per prompt is far above
    max_model_len // tokens per item for these towers)."""
    tokens = processor.tokens_per_item
    budget = max(max_num_batched_tokens, tokens)
    per_prompt = max(1, max_model_len // tokens)
    return max(1, min(budget // tokens, max_num_seqs * per_prompt))


@dataclass(frozen=True, slots=True)
class EncoderPass:
    """The encoder pass's transient peak and the encoder outputs it leaves cached for the language-model pass."""

    peak: int
    cached_outputs: int


def encoder_pass(
    model: ModelSpec, *, max_num_batched_tokens: int, max_num_seqs: int, max_model_len: int, tp: int
) -> EncoderPass:
    """The vision tower's profiling pass on one GPU (zeros for a model whose tower is not sized here)."""
    processor = PROCESSORS.get(model.architecture)
    if processor is None or model.vision is None:
        return EncoderPass(0, 0)
    items = profiled_items(
        processor, max_num_batched_tokens=max_num_batched_tokens, max_num_seqs=max_num_seqs, max_model_len=max_model_len
    )
    patches = items * processor.patches_per_item
    peak = patches * (processor.pixel_bytes_per_patch + _block_bytes_per_patch(model, tp))
    cached = items * processor.tokens_per_item * model.vision.out_hidden * ACTIVATION_BYTES
    return EncoderPass(peak, cached)
