"""The tensors vLLM allocates for a model, with how each is sharded across tensor-parallel ranks.

Pure and exact: `count_params` sums the logical sizes (what a checkpoint counts), and
`recommender.memory.weights` turns the same inventory into bytes per GPU.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from recommender.model import dsv4_tensors
from recommender.model.encoder_tensors import audio_tensors, vision_tensors
from recommender.model.pooling import headless_checkpoint
from recommender.model.spec import ParamCounts
from recommender.model.tensor import Tensor

if TYPE_CHECKING:
    from recommender.model.spec import ModelSpec

VOCAB_PADDING = 64  # vllm/model_executor/layers/vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE


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
    if s.compressed_attention is not None:
        return dsv4_tensors.attention_tensors(s, i)
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


def _lightning(s: ModelSpec, i: int) -> list[Tensor]:
    """MiniMaxText01LinearAttention: qkv_proj and output_gate (column), out_proj (row), and MiniMaxText01RMSNormTP
    over heads x head_dim, sharded with the heads; no biases, no conv."""
    assert s.linear_attention is not None
    la = s.linear_attention
    p = f"model.layers.{i}.self_attn"
    h, inner = s.hidden_size, la.num_v_heads * la.head_v_dim
    return [
        Tensor(f"{p}.qkv_proj", "mixer", 3 * inner, h, "column", i),
        Tensor(f"{p}.output_gate", "mixer", inner, h, "column", i),
        Tensor(f"{p}.out_proj", "mixer", h, inner, "row", i),
        Tensor(f"{p}.norm", "norms", inner, 1, "column", i, linear=False),
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
    if la.style == "lightning":
        return _lightning(s, i)
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
    if m.version == 0:
        return _short_conv(s, i)
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


def _short_conv(s: ModelSpec, i: int) -> list[Tensor]:
    """vllm/model_executor/layers/mamba/short_conv.py ShortConv (LFM2): in_proj (B, C, x gates) 3 x conv_dim, a
    depthwise conv of conv_kernel taps, out_proj; conv_bias on all three."""
    assert s.mamba is not None
    m = s.mamba
    p = f"model.layers.{i}.conv"
    out = [
        Tensor(f"{p}.in_proj", "mixer", 3 * m.intermediate, s.hidden_size, "column", i),
        Tensor(f"{p}.conv.weight", "mixer", m.intermediate, m.conv_kernel, "column", i, linear=False),
        Tensor(f"{p}.out_proj", "mixer", s.hidden_size, m.intermediate, "row", i),
    ]
    if m.conv_bias:
        out += [
            Tensor(f"{p}.in_proj.bias", "mixer", 3 * m.intermediate, 1, "column", i, linear=False),
            Tensor(f"{p}.conv.bias", "mixer", m.intermediate, 1, "column", i, linear=False),
            Tensor(f"{p}.out_proj.bias", "mixer", s.hidden_size, 1, "replicated", i, linear=False),
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
    if s.compressed_attention is not None:
        out += dsv4_tensors.layer_extra_tensors(s, i)
    return out + _mlp(s, i)


def _pooling_head(s: ModelSpec) -> list[Tensor]:
    """A BERT-style checkpoint's pooler (dense + tanh: saved with BertModel / XLMRobertaModel, dropped on load by
    bert.py BertModel.hf_to_vllm_mapper `pooler.` -> None), or a sequence-classification head: RoBERTa's
    classifier.dense + classifier.out_proj (roberta.py RobertaClassificationHead), BERT's pooler + classifier
    (bert.py BertForSequenceClassification), a decoder's score (no bias; adapters.py as_seq_cls_model)."""
    h, labels = s.hidden_size, s.classifier_labels
    dense = [
        Tensor("pooler.dense", "mlp", h, h, "replicated", None, linear=False),
        Tensor("pooler.dense.bias", "mlp", h, 1, "replicated", None, linear=False),
    ]
    if not labels:
        return [replace(t, loaded=False) for t in dense] if s.token_types else []
    out = [
        Tensor("classifier.out_proj", "mlp", labels, h, "replicated", None, linear=False),
        Tensor("classifier.out_proj.bias", "mlp", labels, 1, "replicated", None, linear=False),
    ]
    if s.model_type in ("roberta", "xlm-roberta"):
        return [replace(t, module=t.module.replace("pooler", "classifier")) for t in dense] + out
    if s.token_types:
        return dense + out
    return [Tensor("score", "mlp", labels, h, "replicated", None, linear=False)]


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
    if s.compressed_attention is not None:
        out += dsv4_tensors.head_tensors(s)
    if s.token_types:  # BERT token_type_embeddings (VocabParallelEmbedding of type_vocab_size rows)
        out.append(
            Tensor(
                "model.embeddings.token_type_embeddings", "embedding", s.token_types, h, "column", None, linear=False
            )
        )
    out += _pooling_head(s)
    if s.pooling and headless_checkpoint(s.architecture):  # MistralModel, Qwen2Model...: the backbone alone
        return out
    head = (
        [Tensor("lm_head", "lm_head", s.vocab_size, h, "vocab", None, linear=False)]
        if not s.tie_word_embeddings
        else []
    )
    if s.lm_head_bias:
        head.append(Tensor("lm_head.bias", "lm_head", s.vocab_size, 1, "vocab", None, linear=False))
    return out + [replace(t, loaded=not s.pooling) for t in head]  # the pooling runner allocates no LM head


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
