"""The tensors of the multimodal encoders vLLM builds beside the language model (vision towers and projectors, the
Qwen2-Audio and Gemma-4 audio encoders, Llama-3.2-Vision's tower), with how each is sharded across TP ranks.
Pure; `recommender.model.tensors.model_tensors` puts them in front of the language model's own tensors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recommender.model.spec import AudioSpec, VisionSpec
from recommender.model.tensor import Tensor

if TYPE_CHECKING:
    from recommender.model.spec import ModelSpec


def vision_tensors(s: ModelSpec) -> list[Tensor]:
    """The vision encoder (kept in 16 bit: quantization recipes skip it) and its projector, TP-sharded."""
    v = s.vision
    if v is None:
        return []
    if v.style == "mllama":
        return _mllama_vision(v)
    if v.style == "glm4v":
        return _glm4v_vision(v)
    h, i = v.hidden, v.intermediate
    out = [
        Tensor("visual.patch_embed", "vision", v.patch_params, 1, "replicated", None, linear=False),
        Tensor("visual.pos_embed", "vision", v.positions, h, "replicated", None, linear=False),
    ]
    for k in range(v.depth):
        p = f"visual.blocks.{k}"
        if v.style == "gemma4":  # q/k/v/o without bias, gated MLP, 4 RMSNorms and q/k norms; vLLM builds the tower
            # with AutoModel.from_config and recursive_replace_linear(..., "replicate") (gemma4_mm.py): whole on every rank
            out += [
                Tensor(f"{p}.attn.qkvo", "vision", 4 * h, h, "replicated", None, linear=False),
                Tensor(f"{p}.mlp.gate_up", "vision", 2 * i, h, "replicated", None, linear=False),
                Tensor(f"{p}.mlp.down", "vision", h, i, "replicated", None, linear=False),
                Tensor(f"{p}.norms", "vision", 4 * h + 2 * v.head_dim, 1, "replicated", None, linear=False),
            ]
            continue
        if v.style == "qwen2_5":  # biased qkv/proj and gated MLP, 2 RMSNorms (qwen2_5_vl.py Qwen2_5_VisionBlock)
            out += [
                Tensor(f"{p}.attn.qkv", "vision", 3 * h, h + 1, "column", None, linear=False),
                Tensor(f"{p}.attn.proj", "vision", h, h, "row", None, linear=False),
                Tensor(f"{p}.mlp.gate_up_proj", "vision", 2 * i, h + 1, "column", None, linear=False),
                Tensor(f"{p}.mlp.down_proj", "vision", h, i, "row", None, linear=False),
                Tensor(f"{p}.biases_norms", "vision", 4 * h, 1, "replicated", None, linear=False),
            ]
            continue
        out += [
            Tensor(f"{p}.attn.qkv", "vision", 3 * h, h + 1, "column", None, linear=False),
            Tensor(f"{p}.attn.proj", "vision", h, h, "row", None, linear=False),
            Tensor(f"{p}.mlp.fc1", "vision", i, h + 1, "column", None, linear=False),
            Tensor(f"{p}.mlp.fc2", "vision", h, i, "row", None, linear=False),
            Tensor(f"{p}.biases_norms", "vision", 6 * h + v.block_extra, 1, "replicated", None, linear=False),
        ]
    if v.merger_norm:
        out.append(Tensor("visual.merger.norm", "vision", v.merger_norm, 1, "replicated", None, linear=False))
    for k in range(v.deepstack):  # Qwen3-VL: LayerNorm over the merged width, then the same two projections
        p = f"visual.deepstack_merger_list.{k}"
        out += [
            Tensor(f"{p}.norm", "vision", 2 * v.projector_in, 1, "replicated", None, linear=False),
            Tensor(f"{p}.fc1", "vision", v.projector_hidden, v.projector_in + 1, "column", None, linear=False),
            Tensor(f"{p}.fc2", "vision", v.out_hidden, v.projector_hidden + 1, "row", None, linear=False),
        ]
    if v.projector_hidden:
        out += [
            Tensor("visual.merger.fc1", "vision", v.projector_hidden, v.projector_in + 1, "column", None, linear=False),
            Tensor("visual.merger.fc2", "vision", v.out_hidden, v.projector_hidden + 1, "row", None, linear=False),
        ]
    else:
        out.append(
            Tensor("multi_modal_projector", "vision", v.out_hidden, v.projector_in, "replicated", None, linear=False)
        )
    return out


QVO = ("q_proj", "v_proj", "out_proj")  # the Whisper attention projections with a bias (k_proj has none)


def audio_tensors(s: ModelSpec) -> list[Tensor]:
    """The Qwen2-Audio encoder and projector. vLLM builds transformers' Qwen2AudioEncoder and a plain nn.Linear
    projector (qwen2_audio.py, 0.33): every rank holds them whole and in 16 bit (quantization skips nn modules).
    Conv1d weights are [out, in, 3] plus a bias; k_proj has no bias (Whisper); LayerNorms have weight and bias;
    embed_positions is a learned table (frozen, still loaded); avg_pooler has no parameters."""
    a = s.audio
    if a is None:
        return []
    if a.style == "gemma4":
        return _gemma4_audio(a)
    h, f = a.hidden, a.ffn
    out = [
        Tensor("audio_tower.conv1", "vision", h, 3 * a.mel_bins + 1, "replicated", None, linear=False),
        Tensor("audio_tower.conv2", "vision", h, 3 * h + 1, "replicated", None, linear=False),
        Tensor("audio_tower.embed_positions", "vision", a.positions, h, "replicated", None, linear=False),
    ]
    for k in range(a.layers):
        p = f"audio_tower.layers.{k}"
        out += [
            *(Tensor(f"{p}.self_attn.{m}", "vision", h, h + 1, "replicated", None, linear=False) for m in QVO),
            Tensor(f"{p}.self_attn.k_proj", "vision", h, h, "replicated", None, linear=False),
            Tensor(f"{p}.fc1", "vision", f, h + 1, "replicated", None, linear=False),
            Tensor(f"{p}.fc2", "vision", h, f + 1, "replicated", None, linear=False),
            Tensor(f"{p}.layer_norms", "vision", 4 * h, 1, "replicated", None, linear=False),
        ]
    return [
        *out,
        Tensor("audio_tower.layer_norm", "vision", 2 * h, 1, "replicated", None, linear=False),
        Tensor("multi_modal_projector.linear", "vision", a.out_hidden, h + 1, "replicated", None, linear=False),
    ]


def _gemma4_audio(a: AudioSpec) -> list[Tensor]:
    """transformers Gemma4AudioModel, which vLLM 0.33 builds with AutoModel.from_config (gemma4_mm.py): two
    3x3 subsampling convs without bias, each with a LayerNorm weight, and input_proj_linear from
    (channels[0] // 4) x channels[1]; per conformer layer two macaron FFNs (h -> 4h -> h, pre/post RMSNorm),
    attention (q/k/v/post and relative_k_proj h x h, per_dim_scale one head wide), the light conv (linear_start
    h -> 2h, linear_end h -> h, a depthwise kernel, two RMSNorms) and three RMSNorms; output_proj with a bias;
    embed_audio projects output_proj_dims to the text width without bias (its norm has no weight). Every rank
    holds it whole; it stays in 16 bit (linear=False), as the other towers here."""
    h, f, c0, c1 = a.hidden, a.ffn, *a.conv_channels
    per_layer = 2 * (2 * h * f + 2 * h) + 5 * h * h + h // a.heads + 3 * h * h + a.conv_kernel * h + 2 * h + 3 * h
    return [
        Tensor("audio_tower.subsample_conv_projection.layer0", "vision", c0, 9 + 1, "replicated", None, linear=False),
        Tensor(
            "audio_tower.subsample_conv_projection.layer1", "vision", c1, 9 * c0 + 1, "replicated", None, linear=False
        ),
        Tensor(
            "audio_tower.subsample_conv_projection.input_proj_linear",
            "vision",
            h,
            (c0 // 4) * c1,
            "replicated",
            None,
            linear=False,
        ),
        Tensor("audio_tower.layers", "vision", a.layers * per_layer, 1, "replicated", None, linear=False),
        Tensor("audio_tower.output_proj", "vision", a.out_proj, h + 1, "replicated", None, linear=False),
        Tensor(
            "embed_audio.embedding_projection", "vision", a.out_hidden, a.out_proj, "replicated", None, linear=False
        ),
    ]


def _mllama_vision(v: VisionSpec) -> list[Tensor]:
    """MllamaVisionModel: class and patch embeddings, gated position and tile-position embeddings, local and gated
    global layers (q/k/v/o without bias, fc1/fc2 with bias, two LayerNorms), pre/post LayerNorms; the projector
    maps the concatenated intermediate states (vision_output_dim) to the text width, with a bias."""
    h, i, n = v.hidden, v.intermediate, v.positions
    rows = v.aspect_ratios + 1
    per_layer = 4 * h * h + 2 * h * i + i + h + 4 * h  # attention, MLP with biases, two LayerNorms
    out = [
        Tensor("vision.embeddings", "vision", h + v.patch_params + n * h + 1, 1, "replicated", None, linear=False),
        Tensor(
            "vision.tile_embeddings",
            "vision",
            rows * v.tiles * n * h + 2 * (rows * v.tiles * h + 1),
            1,
            "replicated",
            None,
            linear=False,
        ),
        Tensor("vision.layernorm_pre_post", "vision", 4 * h, 1, "replicated", None, linear=False),
        Tensor(
            "vision.layers",
            "vision",
            v.depth * per_layer + v.global_depth * (per_layer + 2),
            1,
            "replicated",
            None,
            linear=False,
        ),
        Tensor("multi_modal_projector", "vision", v.out_hidden, v.projector_in + 1, "replicated", None, linear=False),
    ]
    return out


def _glm4v_vision(v: VisionSpec) -> list[Tensor]:
    """vllm glm4_1v.py Glm4vVisionTransformer: the biased Conv3d patch embedding, learned positions and two
    RMSNorms around the blocks (replicated); per block bias-free QKV/proj and gate_up/down (TP-sharded) and two
    RMSNorms; the Conv2d downsample (biased, replicated); the merger's bias-free proj (column, gathered), its
    LayerNorm and its gated MLP of projector_hidden."""
    h, i, o, m = v.hidden, v.intermediate, v.out_hidden, v.projector_hidden
    out = [
        Tensor("visual.patch_embed", "vision", v.patch_params, 1, "replicated", None, linear=False),
        Tensor("visual.embeddings.position_embedding", "vision", v.positions, h, "replicated", None, linear=False),
        Tensor("visual.post_conv_layernorm+post_layernorm", "vision", 2 * h, 1, "replicated", None, linear=False),
    ]
    for k in range(v.depth):
        p = f"visual.blocks.{k}"
        out += [
            Tensor(f"{p}.attn.qkv", "vision", 3 * h, h, "column", None, linear=False),
            Tensor(f"{p}.attn.proj", "vision", h, h, "row", None, linear=False),
            Tensor(f"{p}.mlp.gate_up_proj", "vision", 2 * i, h, "column", None, linear=False),
            Tensor(f"{p}.mlp.down_proj", "vision", h, i, "row", None, linear=False),
            Tensor(f"{p}.norms", "vision", 2 * h, 1, "replicated", None, linear=False),
        ]
    return [
        *out,
        Tensor("visual.downsample", "vision", o, v.projector_in + 1, "replicated", None, linear=False),
        Tensor("visual.merger.proj", "vision", o, o, "column", None, linear=False),
        Tensor("visual.merger.post_projection_norm", "vision", 2 * o, 1, "replicated", None, linear=False),
        Tensor("visual.merger.gate_up_proj", "vision", 2 * m, o, "column", None, linear=False),
        Tensor("visual.merger.down_proj", "vision", o, m, "row", None, linear=False),
    ]
