"""Multimodal encoder extractors: config values -> the spec of a vision tower (Qwen2/2.5/3-VL, Gemma-4,
Llama-3.2-Vision, SigLIP/CLIP-style towers with a projector) or an audio encoder (Qwen2-Audio, Gemma-4). Pure;
every value read through ConfigValues (bounded)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from recommender.errors import ModelConfigError
from recommender.model.config_values import MAX_HEADS, MAX_HIDDEN, MAX_POSITIONS, MAX_VISION_DEPTH, ConfigValues
from recommender.model.spec import AudioSpec, VisionSpec

# Vision-tower defaults when vision_config omits them (SigLIP / CLIP conventions).
DEFAULT_PATCH = 14
DEFAULT_CHANNELS = 3
DEFAULT_IMAGE_SIZE = 896


def vision_spec(config: Mapping[str, Any], text_hidden: int) -> VisionSpec | None:
    """A ViT-style vision tower from `vision_config`, when its size is stated."""
    raw = config.get("vision_config")
    if not isinstance(raw, Mapping):
        return None
    v = ConfigValues(raw, "config.json vision_config")
    top_type = config.get("model_type")
    if top_type in QWEN_VL_TOWERS:
        return _qwen_vl_vision(v, str(top_type), text_hidden)
    if top_type in GLM4V_TOWERS:
        return _glm4v_vision(v, text_hidden)
    if v.text("model_type") == INTERN_VIT:
        return _intern_vit(v, config, text_hidden)
    if not (v.has("depth") or v.has("num_hidden_layers")) or not v.has("hidden_size") or not v.has("intermediate_size"):
        return None
    depth = v.first_int(("depth", "num_hidden_layers"), 0, bound=MAX_VISION_DEPTH)
    hidden = v.get_int("hidden_size", bound=MAX_HIDDEN)
    inter = v.get_int("intermediate_size")
    patch = v.get_int("patch_size", DEFAULT_PATCH)
    channels = v.first_int(("in_channels", "num_channels"), DEFAULT_CHANNELS)
    temporal = v.get_int("temporal_patch_size", 1)
    side = v.get_int("image_size", DEFAULT_IMAGE_SIZE) // patch
    positions = v.get_int("num_position_embeddings", side * side, bound=MAX_POSITIONS)
    merge = v.get_int("spatial_merge_size", 0, zero_ok=True)
    out_hidden = v.get_int("out_hidden_size", text_hidden, bound=MAX_HIDDEN)
    proj_in = hidden * merge * merge if merge else hidden
    if v.text("model_type") == "gemma4_vision":
        return _gemma4_vision(v, depth, hidden, inter, patch, channels, text_hidden)
    if v.text("model_type") == "mllama_vision_model":
        return _mllama_vision(v, depth, hidden, inter, patch, channels, text_hidden)
    deepstack = raw.get("deepstack_visual_indexes")
    qwen3_merger = merge and v.text("model_type").startswith(("qwen3_vl", "qwen3_5"))
    return VisionSpec(
        depth=depth,
        hidden=hidden,
        intermediate=inter,
        patch_params=channels * patch * patch * temporal * hidden + hidden,
        positions=positions,
        projector_in=proj_in,
        projector_hidden=proj_in if merge else 0,
        out_hidden=out_hidden,
        merger_norm=2 * hidden if qwen3_merger else 0,
        deepstack=len(deepstack) if qwen3_merger and isinstance(deepstack, list) else 0,
    )


# transformers Qwen2AudioEncoderConfig defaults (configuration_qwen2_audio.py), for keys an audio_config omits:
# 128 mel bins, 32 layers, ffn 5120, d_model 1280, 1500 source positions.
QWEN2_AUDIO_ENCODER = "qwen2_audio_encoder"
QWEN2_AUDIO_MEL_BINS, QWEN2_AUDIO_LAYERS, QWEN2_AUDIO_FFN, QWEN2_AUDIO_HIDDEN = 128, 32, 5120, 1280
QWEN2_AUDIO_POSITIONS = 1500


# transformers Gemma4AudioConfig defaults (configuration_gemma4.py, 5.20; documented as google/gemma-4-e2b-it's),
# for keys an audio_config omits: a 12-layer, 1024-wide conformer with 8 heads, subsampling convs of 128 and 32
# channels, a depthwise kernel of 5 and a 1536-wide output projection.
GEMMA4_AUDIO = "gemma4_audio"
GEMMA4_AUDIO_LAYERS, GEMMA4_AUDIO_HIDDEN, GEMMA4_AUDIO_HEADS = 12, 1024, 8
GEMMA4_AUDIO_CONV, GEMMA4_AUDIO_KERNEL, GEMMA4_AUDIO_OUT = (128, 32), 5, 1536


def audio_counted(config: Mapping[str, Any]) -> bool:
    """Whether `audio_config` is an encoder the weights model counts (Qwen2-Audio's, Gemma-4's conformer)."""
    raw = config.get("audio_config")
    return isinstance(raw, Mapping) and (
        raw.get("model_type") in (QWEN2_AUDIO_ENCODER, GEMMA4_AUDIO) or config.get("model_type") == "qwen2_audio"
    )


def audio_spec(config: Mapping[str, Any], text_hidden: int) -> AudioSpec | None:
    """The audio encoder from `audio_config` (other audio encoders than those counted are not modelled: None)."""
    raw = config.get("audio_config")
    if not isinstance(raw, Mapping) or not audio_counted(config):
        return None
    a = ConfigValues(raw, "config.json audio_config")
    if raw.get("model_type") == GEMMA4_AUDIO:
        return _gemma4_audio(a, text_hidden)
    return AudioSpec(
        layers=a.get_int("encoder_layers", QWEN2_AUDIO_LAYERS, bound=MAX_VISION_DEPTH),
        hidden=a.get_int("d_model", QWEN2_AUDIO_HIDDEN, bound=MAX_HIDDEN),
        ffn=a.get_int("encoder_ffn_dim", QWEN2_AUDIO_FFN),
        mel_bins=a.get_int("num_mel_bins", QWEN2_AUDIO_MEL_BINS, bound=MAX_HIDDEN),
        positions=a.get_int("max_source_positions", QWEN2_AUDIO_POSITIONS, bound=MAX_POSITIONS),
        out_hidden=text_hidden,
    )


def _gemma4_audio(a: ConfigValues, text_hidden: int) -> AudioSpec:
    """Gemma-4's audio conformer, which vLLM builds with transformers' Gemma4AudioModel (gemma4_mm.py, 0.33)."""
    hidden = a.get_int("hidden_size", GEMMA4_AUDIO_HIDDEN, bound=MAX_HIDDEN)
    heads = a.get_int("num_attention_heads", GEMMA4_AUDIO_HEADS, bound=MAX_HEADS)
    if hidden % heads:
        raise ModelConfigError(
            f"config.json audio_config hidden_size ({hidden}) is not a multiple of its heads ({heads})"
        )
    raw = a.raw("subsampling_conv_channels")
    channels = GEMMA4_AUDIO_CONV if raw is None else raw
    if not (isinstance(channels, (list, tuple)) and len(channels) == 2 and all(_positive(c) for c in channels)):
        raise ModelConfigError("config.json audio_config subsampling_conv_channels must be two positive integers")
    return AudioSpec(
        layers=a.get_int("num_hidden_layers", GEMMA4_AUDIO_LAYERS, bound=MAX_VISION_DEPTH),
        hidden=hidden,
        ffn=4 * hidden,
        mel_bins=0,
        positions=0,
        out_hidden=text_hidden,
        style="gemma4",
        heads=heads,
        conv_channels=(int(channels[0]), int(channels[1])),
        conv_kernel=a.get_int("conv_kernel_size", GEMMA4_AUDIO_KERNEL, bound=MAX_HIDDEN),
        out_proj=a.get_int("output_proj_dims", GEMMA4_AUDIO_OUT, bound=MAX_HIDDEN),
    )


def _positive(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_HIDDEN


# Qwen2-VL and Qwen2.5-VL towers (transformers Qwen2VLVisionConfig / Qwen2_5_VLVisionConfig defaults: depth 32,
# 16 heads, 3 channels, patch 14, temporal patch 2, 2 x 2 merge; their config.json files often omit them). Qwen2-VL
# names the ViT width embed_dim and its output width hidden_size (MLP embed_dim x mlp_ratio, LayerNorms, QuickGELU);
# Qwen2.5-VL names the width hidden_size and the output out_hidden_size (gated SiLU MLP, RMSNorms). Neither has
# learned positions (2-D rotary) or a patch-embedding bias (vLLM qwen2_vl.py / qwen2_5_vl.py, 0.33).
QWEN_VL_TOWERS = ("qwen2_vl", "qwen2_5_vl")

# GLM-4.1V / 4.5V / 4.6V (vllm/model_executor/models/glm4_1v.py Glm4vVisionTransformer): the blocks' gated MLP is
# out_hidden_size wide, intermediate_size is the merger's; transformers' Glm4vVisionConfig defaults for omitted keys
GLM4V_TOWERS = ("glm4v", "glm4v_moe")
GLM4V_DEPTH, GLM4V_IMAGE, GLM4V_PATCH, GLM4V_TEMPORAL, GLM4V_MERGE = 24, 336, 14, 2, 2


def _glm4v_vision(v: ConfigValues, text_hidden: int) -> VisionSpec:
    """Glm4vVisionTransformer: a biased Conv3d patch embedding, learned (image_size / patch)^2 positions, RMSNorm
    blocks of bias-free qkv/proj and a gated MLP of out_hidden_size, then a merge x merge Conv2d down to
    out_hidden_size and Glm4vPatchMerger (proj, LayerNorm, gated MLP of intermediate_size, all bias-free)."""
    depth = v.get_int("depth", GLM4V_DEPTH, bound=MAX_VISION_DEPTH)
    hidden = v.get_int("hidden_size", bound=MAX_HIDDEN)
    out_hidden = v.get_int("out_hidden_size", text_hidden, bound=MAX_HIDDEN)
    patch = v.get_int("patch_size", GLM4V_PATCH)
    channels = v.get_int("in_channels", DEFAULT_CHANNELS)
    merge = v.get_int("spatial_merge_size", GLM4V_MERGE)
    side = v.get_int("image_size", GLM4V_IMAGE) // patch
    return VisionSpec(
        depth=depth,
        hidden=hidden,
        intermediate=out_hidden,
        patch_params=channels * patch * patch * v.get_int("temporal_patch_size", GLM4V_TEMPORAL) * hidden + hidden,
        positions=side * side,
        projector_in=hidden * merge * merge,
        projector_hidden=v.get_int("intermediate_size"),
        out_hidden=out_hidden,
        style="glm4v",
    )


# InternVL 1.5-3.5 (InternVLChatModel, vllm/model_executor/models/intern_vit.py + internvl.py): the InternViT tower
# and the mlp1 projector; transformers-free InternVisionConfig defaults for the keys a vision_config omits
INTERN_VIT = "intern_vit_6b"
INTERN_VIT_IMAGE, INTERN_VIT_PATCH, INTERN_VIT_DOWNSAMPLE = 224, 14, 0.5


def _intern_vit(v: ConfigValues, config: Mapping[str, Any], text_hidden: int) -> VisionSpec:
    """InternVisionModel: a biased Conv2d patch embedding, a class embedding and (image_size / patch)^2 + 1 learned
    positions; blocks of qkv (biased when qkv_bias), proj, fc1 / fc2 (biased), norm1 / norm2 (LayerNorm, or RMSNorm
    when norm_type is rms_norm), the ls1 / ls2 layer scales and, when qk_normalization, RMSNorms over the whole q and
    k; then mlp1: LayerNorm over the pixel-shuffled width (hidden / downsample_ratio^2), Linear to the language
    model's width, GELU, Linear. vLLM keeps the layers up to select_layer (-1: all)."""
    depth = v.get_int("num_hidden_layers", bound=MAX_VISION_DEPTH)
    select = config.get("select_layer", -1)
    if isinstance(select, int) and not isinstance(select, bool) and select < -1:
        depth = max(1, depth + select + 1)
    hidden = v.get_int("hidden_size", bound=MAX_HIDDEN)
    patch = v.get_int("patch_size", INTERN_VIT_PATCH)
    side = v.get_int("image_size", INTERN_VIT_IMAGE) // patch
    ratio = config.get("downsample_ratio", INTERN_VIT_DOWNSAMPLE)
    shuffle = round(1 / ratio) if isinstance(ratio, (int, float)) and 0 < ratio <= 1 else 2
    extra = 2 * hidden  # ls1, ls2
    if v.text("norm_type") == "rms_norm":
        extra -= 2 * hidden  # two RMSNorms: no bias
    if v.raw("qk_normalization") is True:
        extra += 2 * hidden  # q_norm, k_norm RMSNorms over num_heads x head_dim
    if v.raw("qkv_bias") is False:
        extra -= 3 * hidden
    projector_in = hidden * shuffle * shuffle
    return VisionSpec(
        depth=depth,
        hidden=hidden,
        intermediate=v.get_int("intermediate_size"),
        patch_params=v.get_int("num_channels", DEFAULT_CHANNELS) * patch * patch * hidden + hidden,
        positions=side * side + 2,  # the class token's position and the class embedding, each `hidden` wide
        projector_in=projector_in,
        projector_hidden=text_hidden,
        out_hidden=text_hidden,
        merger_norm=2 * projector_in,
        block_extra=extra,
    )


QWEN_VL_DEPTH, QWEN_VL_PATCH, QWEN_VL_TEMPORAL, QWEN_VL_MERGE = 32, 14, 2, 2
QWEN2_VL_MLP_RATIO = 4.0
QWEN2_5_VL_INTERMEDIATE = 3420


def _qwen_vl_vision(v: ConfigValues, model_type: str, text_hidden: int) -> VisionSpec:
    """The Qwen2-VL / Qwen2.5-VL vision tower and its patch merger (LN, fc1 merged -> merged, GELU, fc2 -> text)."""
    depth = v.get_int("depth", QWEN_VL_DEPTH, bound=MAX_VISION_DEPTH)
    patch = v.first_int(("patch_size", "spatial_patch_size"), QWEN_VL_PATCH)
    temporal = v.get_int("temporal_patch_size", QWEN_VL_TEMPORAL)
    channels = v.first_int(("in_channels", "in_chans"), DEFAULT_CHANNELS)
    merge = v.get_int("spatial_merge_size", QWEN_VL_MERGE)
    if model_type == "qwen2_vl":
        hidden = v.get_int("embed_dim", bound=MAX_HIDDEN)
        inter = int(hidden * v.number("mlp_ratio", QWEN2_VL_MLP_RATIO))
        out_hidden = v.get_int("hidden_size", text_hidden, bound=MAX_HIDDEN)
        style: Literal["vit", "qwen2_5"] = "vit"
        merger_norm = 2 * hidden  # LayerNorm
    else:
        hidden = v.get_int("hidden_size", bound=MAX_HIDDEN)
        inter = v.get_int("intermediate_size", QWEN2_5_VL_INTERMEDIATE)
        out_hidden = v.get_int("out_hidden_size", text_hidden, bound=MAX_HIDDEN)
        style = "qwen2_5"
        merger_norm = hidden  # RMSNorm
    merged = hidden * merge * merge
    return VisionSpec(
        depth=depth,
        hidden=hidden,
        intermediate=inter,
        patch_params=channels * patch * patch * temporal * hidden,
        positions=0,
        projector_in=merged,
        projector_hidden=merged,
        out_hidden=out_hidden,
        style=style,
        merger_norm=merger_norm,
    )


def _gemma4_vision(
    v: ConfigValues, depth: int, hidden: int, inter: int, patch: int, channels: int, text_hidden: int
) -> VisionSpec:
    """transformers Gemma4VisionModel: a patch input projection without bias, a 2-D position table
    (2 x position_embedding_size x hidden), blocks with RMSNorms, q/k norms and a gated MLP, no biases; vLLM's
    Gemma4MultimodalEmbedder projects hidden -> text hidden (gemma4_mm.py)."""
    table = v.get_int("position_embedding_size", 0, zero_ok=True, bound=MAX_POSITIONS)
    heads = v.get_int("num_attention_heads", bound=MAX_HEADS)
    return VisionSpec(
        depth=depth,
        hidden=hidden,
        intermediate=inter,
        patch_params=channels * patch * patch * hidden,
        positions=2 * table,
        projector_in=hidden,
        projector_hidden=0,
        out_hidden=text_hidden,
        style="gemma4",
        head_dim=v.get_int("head_dim", hidden // heads),
    )


def _mllama_vision(
    v: ConfigValues, depth: int, hidden: int, inter: int, patch: int, channels: int, text_hidden: int
) -> VisionSpec:
    """transformers MllamaVisionConfig: (image_size / patch)^2 + 1 positions per tile, max_num_tiles tiles,
    num_global_layers gated layers, the projector input vision_output_dim."""
    side = v.get_int("image_size") // patch
    ratios = v.raw("supported_aspect_ratios")
    return VisionSpec(
        depth=depth,
        hidden=hidden,
        intermediate=inter,
        patch_params=channels * patch * patch * hidden,
        positions=side * side + 1,
        projector_in=v.get_int("vision_output_dim", bound=MAX_HIDDEN * 8),
        projector_hidden=0,
        out_hidden=text_hidden,
        style="mllama",
        global_depth=v.get_int("num_global_layers", 0, zero_ok=True, bound=MAX_VISION_DEPTH),
        tiles=v.get_int("max_num_tiles", bound=64),
        aspect_ratios=len(ratios) if isinstance(ratios, list) else 0,
    )
