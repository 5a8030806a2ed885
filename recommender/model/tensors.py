"""The tensors vLLM allocates for a model, with how each is sharded across tensor-parallel ranks.

Pure and exact: `count_params` sums the logical sizes (what a checkpoint counts), and
`recommender.memory.weights` turns the same inventory into bytes per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from recommender.model.spec import AudioSpec, ParamCounts, VisionSpec

if TYPE_CHECKING:
    from recommender.model.spec import ModelSpec

Shard = Literal["column", "row", "kv", "vocab", "replicated", "expert_w13", "expert_w2", "expert_vec", "head"]
Group = Literal[
    "embedding", "attention", "mlp", "experts", "shared_experts", "router", "mixer", "norms", "lm_head", "vision"
]

VOCAB_PADDING = 64  # vllm/model_executor/layers/vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE


@dataclass(frozen=True, slots=True)
class Tensor:
    """One parameter tensor (or `count` stacked experts) of shape [rows, cols]."""

    module: str  # HF-style module path, matched against modules_to_not_convert
    group: Group
    rows: int
    cols: int
    shard: Shard
    layer: int | None  # decoder layer index; None for embedding / final norm / lm_head
    linear: bool = True  # a quantizable Linear weight (biases and norms are not)
    count: int = 1  # stacked experts
    heads: int = 0  # for shard="kv"/"head": number of heads in `rows`
    loaded: bool = True  # False: in the checkpoint but dropped by vLLM's loader (KV-shared layers' K/V)
    in_checkpoint: bool = True  # False: allocated by vLLM but not shipped (Gemma-4 k_eq_v: V filled from K)

    @property
    def numel(self) -> int:
        """Logical element count."""
        return self.rows * self.cols * self.count


def padded_vocab(vocab: int) -> int:
    """Vocabulary padded to a multiple of 64, as VocabParallelEmbedding does before splitting by TP."""
    return -(-vocab // VOCAB_PADDING) * VOCAB_PADDING


def norm(s: ModelSpec, module: str, width: int, layer: int | None) -> Tensor:
    """One norm of the family's kind: RMSNorm holds a weight, LayerNorm a weight and a bias (2 columns)."""
    cols = 2 if s.norm_kind == "layer" else 1
    return Tensor(module, "norms", width, cols, "replicated", layer, linear=False)


def _mla(s: ModelSpec, i: int) -> list[Tensor]:
    assert s.mla is not None
    p = f"model.layers.{i}.self_attn"
    h = s.hidden_size
    m = s.mla
    qk = m.qk_nope_head_dim + m.qk_rope_head_dim
    out: list[Tensor] = []
    if m.q_lora_rank:
        out += [
            Tensor(f"{p}.q_a_proj", "attention", m.q_lora_rank, h, "replicated", i),
            Tensor(f"{p}.q_a_layernorm", "norms", m.q_lora_rank, 1, "replicated", i, linear=False),
            Tensor(f"{p}.q_b_proj", "attention", s.num_heads * qk, m.q_lora_rank, "column", i),
        ]
    else:
        out.append(Tensor(f"{p}.q_proj", "attention", s.num_heads * qk, h, "column", i))
    if m.indexer is not None and i in m.indexer.layers:
        out += _indexer(s, i)
    return [
        *out,
        Tensor(f"{p}.kv_a_proj_with_mqa", "attention", m.kv_lora_rank + m.qk_rope_head_dim, h, "replicated", i),
        Tensor(f"{p}.kv_a_layernorm", "norms", m.kv_lora_rank, 1, "replicated", i, linear=False),
        Tensor(
            f"{p}.kv_b_proj",
            "attention",
            s.num_heads * (m.qk_nope_head_dim + m.v_head_dim),
            m.kv_lora_rank,
            "column",
            i,
        ),
        Tensor(f"{p}.o_proj", "attention", h, s.num_heads * m.v_head_dim, "row", i),
    ]


def _indexer(s: ModelSpec, i: int) -> list[Tensor]:
    """DeepseekV32Indexer: wq_b (quantized with the model), wk and weights_proj (never quantized: quant_config=None),
    k_norm (LayerNorm, weight and bias)."""
    assert s.mla is not None and s.mla.indexer is not None and s.mla.q_lora_rank
    ix = s.mla.indexer
    p = f"model.layers.{i}.self_attn.indexer"
    h = s.hidden_size
    return [
        Tensor(f"{p}.wq_b", "attention", ix.n_heads * ix.head_dim, s.mla.q_lora_rank, "replicated", i),
        Tensor(f"{p}.wk", "attention", ix.head_dim, h, "replicated", i, linear=False),
        Tensor(f"{p}.weights_proj", "attention", ix.n_heads, h, "replicated", i, linear=False),
        Tensor(f"{p}.k_norm", "norms", ix.head_dim, 2, "replicated", i, linear=False),
    ]


def _attention(s: ModelSpec, i: int) -> list[Tensor]:
    p = f"model.layers.{i}.self_attn"
    h = s.hidden_size
    out: list[Tensor] = []
    if s.layer_kinds[i] == "mla":
        return _mla(s, i)
    head_dim, kvh = s.head_dim_at(i), s.kv_heads_at(i)
    q_rows = s.num_heads * head_dim * (2 if s.attn_output_gate else 1)
    kv_rows = kvh * head_dim
    v_rows = kvh * s.v_head_dim_at(i)
    shares_kv = not s.has_kv_cache(i)  # Gemma-4 E: K/V ship in the checkpoint, vLLM drops them
    v_shipped = not (s.k_eq_v and s.layer_kinds[i] == "full")  # Gemma-4: V loaded from K
    out += [
        Tensor(f"{p}.q_proj", "attention", q_rows, h, "head", i, heads=s.num_heads),
        Tensor(f"{p}.k_proj", "attention", kv_rows, h, "kv", i, heads=kvh, loaded=not shares_kv),
        Tensor(
            f"{p}.v_proj", "attention", v_rows, h, "kv", i, heads=kvh, loaded=not shares_kv, in_checkpoint=v_shipped
        ),
        Tensor(f"{p}.o_proj", "attention", h, s.num_heads * s.v_head_dim_at(i), "row", i),
    ]
    if s.qkv_bias:
        out += [
            Tensor(f"{p}.q_proj.bias", "attention", q_rows, 1, "head", i, linear=False, heads=s.num_heads),
            Tensor(f"{p}.k_proj.bias", "attention", kv_rows, 1, "kv", i, linear=False, heads=kvh),
            Tensor(f"{p}.v_proj.bias", "attention", v_rows, 1, "kv", i, linear=False, heads=kvh),
        ]
    if s.o_bias:
        out.append(Tensor(f"{p}.o_proj.bias", "attention", h, 1, "replicated", i, linear=False))
    if s.attention_sinks == "all" or (s.attention_sinks == "sliding" and s.layer_kinds[i] == "sliding"):
        out.append(Tensor(f"{p}.sinks", "attention", s.num_heads, 1, "head", i, linear=False, heads=s.num_heads))
    if s.qk_norm:
        q_width, k_width = (q_rows, kv_rows) if s.qk_norm_over_heads else (head_dim, head_dim)
        k_norm = norm(s, f"{p}.k_norm", k_width, i)
        out += [norm(s, f"{p}.q_norm", q_width, i), replace(k_norm, loaded=not shares_kv)]
    return out


def _kda(s: ModelSpec, i: int) -> list[Tensor]:
    """KimiLinearGatedDeltaNetAttention (transformers KimiDeltaAttention names): q/k/v, one depthwise conv over the
    three, the forget gate (f_a/f_b, dt_bias, A_log), beta (b_proj), the output gate (g_a/g_b), o_norm, o_proj."""
    assert s.linear_attention is not None
    la = s.linear_attention
    p = f"model.layers.{i}.self_attn"
    h, d, width = s.hidden_size, la.head_k_dim, la.num_v_heads * la.head_v_dim
    return [
        Tensor(f"{p}.qkv_proj", "mixer", 3 * width, h, "column", i),
        Tensor(f"{p}.conv1d", "mixer", 3 * width, la.conv_kernel, "column", i, linear=False),
        Tensor(f"{p}.f_a_proj", "mixer", d, h, "replicated", i),
        Tensor(f"{p}.f_b_proj", "mixer", width, d, "column", i),
        Tensor(f"{p}.dt_bias", "mixer", width, 1, "column", i, linear=False),
        Tensor(f"{p}.A_log", "mixer", la.num_v_heads, 1, "column", i, linear=False),
        Tensor(f"{p}.b_proj", "mixer", la.num_v_heads, h, "column", i),
        Tensor(f"{p}.g_a_proj", "mixer", d, h, "replicated", i),
        Tensor(f"{p}.g_b_proj", "mixer", width, d, "column", i),
        Tensor(f"{p}.o_norm", "norms", d, 1, "replicated", i, linear=False),
        Tensor(f"{p}.o_proj", "mixer", h, width, "row", i),
    ]


def _cross_attention(s: ModelSpec, i: int) -> list[Tensor]:
    """MllamaCrossAttentionDecoderLayer: q/k/v/o, q and k norms, and the two tanh gates (attention, MLP)."""
    p = f"model.layers.{i}.cross_attn"
    h, hd, kvh = s.hidden_size, s.head_dim, s.num_kv_heads
    return [
        Tensor(f"{p}.q_proj", "attention", s.num_heads * hd, h, "head", i, heads=s.num_heads),
        Tensor(f"{p}.k_proj", "attention", kvh * hd, h, "kv", i, heads=kvh),
        Tensor(f"{p}.v_proj", "attention", kvh * hd, h, "kv", i, heads=kvh),
        Tensor(f"{p}.o_proj", "attention", h, s.num_heads * hd, "row", i),
        Tensor(f"{p}.qk_norms", "norms", 2 * hd, 1, "replicated", i, linear=False),
        Tensor(f"model.layers.{i}.cross_attn_gates", "norms", 2, 1, "replicated", i, linear=False),
    ]


def _linear_attention(s: ModelSpec, i: int) -> list[Tensor]:
    assert s.linear_attention is not None
    la = s.linear_attention
    if la.style == "kda":
        return _kda(s, i)
    p = f"model.layers.{i}.linear_attn"
    h = s.hidden_size
    key_dim = la.num_k_heads * la.head_k_dim
    value_dim = la.num_v_heads * la.head_v_dim
    conv_dim = 2 * key_dim + value_dim
    return [
        Tensor(f"{p}.in_proj_qkvz", "mixer", 2 * key_dim + 2 * value_dim, h, "column", i),
        Tensor(f"{p}.in_proj_ba", "mixer", 2 * la.num_v_heads, h, "column", i),
        Tensor(f"{p}.conv1d", "mixer", conv_dim, la.conv_kernel, "column", i, linear=False),
        Tensor(f"{p}.dt_bias", "mixer", la.num_v_heads, 1, "column", i, linear=False),
        Tensor(f"{p}.A_log", "mixer", la.num_v_heads, 1, "column", i, linear=False),
        Tensor(f"{p}.norm", "norms", la.head_v_dim, 1, "replicated", i, linear=False),
        Tensor(f"{p}.out_proj", "mixer", h, value_dim, "row", i),
    ]


def _mamba(s: ModelSpec, i: int) -> list[Tensor]:
    assert s.mamba is not None
    m = s.mamba
    if m.version == 1:
        return _mamba1(s, i)
    p = f"backbone.layers.{i}.mixer"
    h = s.hidden_size
    conv_dim = m.intermediate + 2 * m.n_groups * m.state_size
    in_rows = 2 * m.intermediate + 2 * m.n_groups * m.state_size + m.num_heads
    out = [
        Tensor(f"{p}.in_proj", "mixer", in_rows, h, "column", i),
        Tensor(f"{p}.conv1d.weight", "mixer", conv_dim, m.conv_kernel, "column", i, linear=False),
        Tensor(f"{p}.dt_bias", "mixer", m.num_heads, 1, "column", i, linear=False),
        Tensor(f"{p}.A_log", "mixer", m.num_heads, 1, "column", i, linear=False),
        Tensor(f"{p}.D", "mixer", m.num_heads, 1, "column", i, linear=False),
        Tensor(f"{p}.out_proj", "mixer", h, m.intermediate, "row", i),
    ]
    if m.gated_norm:
        out.append(Tensor(f"{p}.norm", "norms", m.intermediate, 1, "column", i, linear=False))
    if m.conv_bias:
        out.append(Tensor(f"{p}.conv1d.bias", "mixer", conv_dim, 1, "column", i, linear=False))
    if m.proj_bias:
        out += [
            Tensor(f"{p}.in_proj.bias", "mixer", in_rows, 1, "column", i, linear=False),
            Tensor(f"{p}.out_proj.bias", "mixer", h, 1, "replicated", i, linear=False),
        ]
    return out


def _mamba1(s: ModelSpec, i: int) -> list[Tensor]:
    """vllm/model_executor/layers/mamba/mamba_mixer.py MambaMixer (Jamba, Mamba, Falcon-Mamba)."""
    assert s.mamba is not None
    m = s.mamba
    p = f"model.layers.{i}.mamba"
    h, inner, n, r = s.hidden_size, m.intermediate, m.state_size, m.dt_rank
    out = [
        Tensor(f"{p}.in_proj", "mixer", 2 * inner, h, "column", i),
        Tensor(f"{p}.conv1d.weight", "mixer", inner, m.conv_kernel, "column", i, linear=False),
        Tensor(f"{p}.x_proj", "mixer", r + 2 * n, inner, "row", i),
        Tensor(f"{p}.dt_proj", "mixer", inner, r, "column", i),
        Tensor(f"{p}.dt_proj.bias", "mixer", inner, 1, "column", i, linear=False),
        Tensor(f"{p}.A_log", "mixer", inner, n, "column", i, linear=False),
        Tensor(f"{p}.D", "mixer", inner, 1, "column", i, linear=False),
        Tensor(f"{p}.out_proj", "mixer", h, inner, "row", i),
    ]
    if m.conv_bias:
        out.append(Tensor(f"{p}.conv1d.bias", "mixer", inner, 1, "column", i, linear=False))
    if m.proj_bias:
        out += [
            Tensor(f"{p}.in_proj.bias", "mixer", 2 * inner, 1, "column", i, linear=False),
            Tensor(f"{p}.out_proj.bias", "mixer", h, 1, "replicated", i, linear=False),
        ]
    if m.inner_norms:  # Jamba: dt_layernorm, b_layernorm, c_layernorm
        out.append(Tensor(f"{p}.dt_b_c_layernorms", "norms", r + 2 * n, 1, "replicated", i, linear=False))
    return out


def _dense_mlp(s: ModelSpec, i: int) -> list[Tensor]:
    h = s.hidden_size
    p = f"model.layers.{i}.mlp"
    inter = s.intermediate_at(i)
    up_rows = 2 * inter if s.gated_mlp else inter
    out = [
        Tensor(f"{p}.gate_up_proj", "mlp", up_rows, h, "column", i),
        Tensor(f"{p}.down_proj", "mlp", h, inter, "row", i),
    ]
    if s.mlp_bias:
        out += [
            Tensor(f"{p}.gate_up_proj.bias", "mlp", up_rows, 1, "column", i, linear=False),
            Tensor(f"{p}.down_proj.bias", "mlp", h, 1, "replicated", i, linear=False),
        ]
    return out


def _router(s: ModelSpec, i: int) -> list[Tensor]:
    assert s.moe is not None
    m = s.moe
    h = s.hidden_size
    p = f"model.layers.{i}.mlp"
    out = [Tensor(f"{p}.gate", "router", m.num_experts, h, "replicated", i, linear=False)]
    if m.router_bias:
        out.append(Tensor(f"{p}.gate.bias", "router", m.num_experts, 1, "replicated", i, linear=False))
    if m.score_correction_bias:
        out.append(
            Tensor(f"{p}.gate.e_score_correction_bias", "router", m.num_experts, 1, "replicated", i, linear=False)
        )
    if m.router_scales:  # Gemma-4 Gemma4Router.scale and per_expert_scale
        out.append(Tensor(f"{p}.router.scales", "router", h + m.num_experts, 1, "replicated", i, linear=False))
    if m.extra_norms:
        out.append(Tensor(f"{p}.moe_norms", "norms", m.extra_norms * h, 1, "replicated", i, linear=False))
    return out


def _moe(s: ModelSpec, i: int) -> list[Tensor]:
    assert s.moe is not None
    m = s.moe
    h = s.hidden_size
    p = f"model.layers.{i}.mlp"
    width = m.latent_size or h  # Nemotron-3 latent MoE: experts read and write the latent width
    e_up = 2 * m.expert_intermediate if m.gated else m.expert_intermediate
    out = [
        *_router(s, i),
        Tensor(f"{p}.experts.w13", "experts", e_up, width, "expert_w13", i, count=m.num_experts),
        Tensor(f"{p}.experts.w2", "experts", width, m.expert_intermediate, "expert_w2", i, count=m.num_experts),
    ]
    if m.latent_size:  # ReplicatedLinear fc1_latent_proj / fc2_latent_proj (nemotron_h.py)
        out += [
            Tensor(f"{p}.fc1_latent_proj", "experts", m.latent_size, h, "replicated", i),
            Tensor(f"{p}.fc2_latent_proj", "experts", h, m.latent_size, "replicated", i),
        ]
    if m.expert_bias:
        out += [
            Tensor(f"{p}.experts.w13_bias", "experts", e_up, 1, "expert_vec", i, linear=False, count=m.num_experts),
            Tensor(f"{p}.experts.w2_bias", "experts", width, 1, "expert_vec", i, linear=False, count=m.num_experts),
        ]
    if m.shared_intermediate:
        si = m.shared_intermediate
        s_up = 2 * si if m.gated else si
        out += [
            Tensor(f"{p}.shared_experts.gate_up_proj", "shared_experts", s_up, h, "column", i),
            Tensor(f"{p}.shared_experts.down_proj", "shared_experts", h, si, "row", i),
        ]
        if m.shared_gate:
            out.append(Tensor(f"{p}.shared_expert_gate", "router", 1, h, "replicated", i, linear=False))
    return out


def _mlp(s: ModelSpec, i: int) -> list[Tensor]:
    kind = s.mlp_kinds[i]
    if kind == "dense":
        return _dense_mlp(s, i)
    if kind == "none":
        return []
    return _moe(s, i)


def layer_tensors(s: ModelSpec, i: int) -> list[Tensor]:
    """All tensors of decoder layer i."""
    h = s.hidden_size
    kind = s.layer_kinds[i]
    n_norms = s.norms_per_layer
    if s.norms_follow_blocks:
        n_norms = (kind != "none") + (s.mlp_kinds[i] != "none")
    out = [norm(s, f"model.layers.{i}.norm{j}", h, i) for j in range(n_norms)]
    if kind == "cross":
        out += _cross_attention(s, i)
    elif kind in ("full", "sliding", "chunked", "mla"):
        out += _attention(s, i)
        if s.mamba_beside_attention:
            out += _mamba(s, i)
    elif kind == "linear_attention":
        out += _linear_attention(s, i)
    elif kind == "mamba":
        out += _mamba(s, i)
    if s.per_layer_input:  # Gemma-4 E: per_layer_input_gate, per_layer_projection, post_per_layer_input_norm
        ple, p = s.per_layer_input, f"model.layers.{i}"
        out += [
            Tensor(f"{p}.per_layer_input_gate", "mlp", ple, h, "replicated", i),
            Tensor(f"{p}.per_layer_projection", "mlp", h, ple, "replicated", i),
            norm(s, f"{p}.post_per_layer_input_norm", h, i),
        ]
    if s.layer_scalar:
        out.append(Tensor(f"model.layers.{i}.layer_scalar", "norms", 1, 1, "replicated", i, linear=False))
    return out + _mlp(s, i)


def vision_tensors(s: ModelSpec) -> list[Tensor]:
    """The vision encoder (kept in 16 bit: quantization recipes skip it) and its projector, TP-sharded."""
    v = s.vision
    if v is None:
        return []
    if v.style == "mllama":
        return _mllama_vision(v)
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
            Tensor(f"{p}.biases_norms", "vision", 6 * h, 1, "replicated", None, linear=False),
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


def model_tensors(s: ModelSpec) -> list[Tensor]:
    """Every weight tensor of the model (vision encoder, embeddings, layers, final norm, lm_head)."""
    h = s.hidden_size
    out = vision_tensors(s) + audio_tensors(s)
    rows = s.embedding_rows or s.vocab_size
    out.append(Tensor("model.embed_tokens", "embedding", rows, h, "vocab", None, linear=False))
    if s.learned_positions:  # nn.Embedding, replicated (gpt2.py wpe, opt.py embed_positions)
        out.append(
            Tensor("model.embed_positions", "embedding", s.learned_positions, h, "replicated", None, linear=False)
        )
    if s.per_layer_input:  # Gemma-4 E: embed_tokens_per_layer, per_layer_model_projection and its norm
        width = s.per_layer_input * s.num_layers
        out += [
            Tensor("model.embed_tokens_per_layer", "embedding", s.per_layer_vocab, width, "vocab", None, linear=False),
            Tensor("model.per_layer_model_projection", "mlp", width, h, "column", None),
            norm(s, "model.per_layer_projection_norm", s.per_layer_input, None),
        ]
    if s.embedding_norm:
        out.append(norm(s, "model.embed_layernorm", h, None))
    for i in range(s.num_layers):
        out += layer_tensors(s, i)
    if s.final_norm:
        out.append(norm(s, "model.norm", h, None))
    if not s.tie_word_embeddings:
        out.append(Tensor("lm_head", "lm_head", s.vocab_size, h, "vocab", None, linear=False))
    if s.lm_head_bias:
        out.append(Tensor("lm_head.bias", "lm_head", s.vocab_size, 1, "vocab", None, linear=False))
    return out


def count_params(s: ModelSpec) -> ParamCounts:
    """Exact logical parameter counts per tensor group."""
    totals: dict[str, int] = {}
    for t in model_tensors(s):
        if t.in_checkpoint:
            totals[t.group] = totals.get(t.group, 0) + t.numel
    return ParamCounts(
        embedding=totals.get("embedding", 0),
        attention=totals.get("attention", 0),
        mlp=totals.get("mlp", 0),
        experts=totals.get("experts", 0),
        shared_experts=totals.get("shared_experts", 0),
        router=totals.get("router", 0),
        mixer=totals.get("mixer", 0),
        norms=totals.get("norms", 0),
        lm_head=totals.get("lm_head", 0),
        vision=totals.get("vision", 0),
    )
