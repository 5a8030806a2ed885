"""The tensors vLLM allocates for a model, with how each is sharded across tensor-parallel ranks.

Pure and exact: `count_params` sums the logical sizes (what a checkpoint counts), and
`recommender.memory.weights` turns the same inventory into bytes per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from recommender.model.spec import ParamCounts

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

    @property
    def numel(self) -> int:
        """Logical element count."""
        return self.rows * self.cols * self.count


def padded_vocab(vocab: int) -> int:
    """Vocabulary padded to a multiple of 64, as VocabParallelEmbedding does before splitting by TP."""
    return -(-vocab // VOCAB_PADDING) * VOCAB_PADDING


def _attention(s: ModelSpec, i: int) -> list[Tensor]:
    p = f"model.layers.{i}.self_attn"
    h = s.hidden_size
    out: list[Tensor] = []
    if s.layer_kinds[i] == "mla":
        assert s.mla is not None
        m = s.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        if m.q_lora_rank:
            out += [
                Tensor(f"{p}.q_a_proj", "attention", m.q_lora_rank, h, "replicated", i),
                Tensor(f"{p}.q_a_layernorm", "norms", m.q_lora_rank, 1, "replicated", i, linear=False),
                Tensor(f"{p}.q_b_proj", "attention", s.num_heads * qk, m.q_lora_rank, "column", i),
            ]
        else:
            out.append(Tensor(f"{p}.q_proj", "attention", s.num_heads * qk, h, "column", i))
        out += [
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
        return out
    q_rows = s.num_heads * s.head_dim * (2 if s.attn_output_gate else 1)
    kv_rows = s.num_kv_heads * s.head_dim
    out += [
        Tensor(f"{p}.q_proj", "attention", q_rows, h, "head", i, heads=s.num_heads),
        Tensor(f"{p}.k_proj", "attention", kv_rows, h, "kv", i, heads=s.num_kv_heads),
        Tensor(f"{p}.v_proj", "attention", kv_rows, h, "kv", i, heads=s.num_kv_heads),
        Tensor(f"{p}.o_proj", "attention", h, s.num_heads * s.v_head_dim, "row", i),
    ]
    if s.qkv_bias:
        out += [
            Tensor(f"{p}.q_proj.bias", "attention", q_rows, 1, "head", i, linear=False, heads=s.num_heads),
            Tensor(f"{p}.k_proj.bias", "attention", kv_rows, 1, "kv", i, linear=False, heads=s.num_kv_heads),
            Tensor(f"{p}.v_proj.bias", "attention", kv_rows, 1, "kv", i, linear=False, heads=s.num_kv_heads),
        ]
    if s.o_bias:
        out.append(Tensor(f"{p}.o_proj.bias", "attention", h, 1, "replicated", i, linear=False))
    if s.model_type == "gpt_oss":
        out.append(Tensor(f"{p}.sinks", "attention", s.num_heads, 1, "head", i, linear=False, heads=s.num_heads))
    if s.qk_norm:
        out += [
            Tensor(f"{p}.q_norm", "norms", s.head_dim, 1, "replicated", i, linear=False),
            Tensor(f"{p}.k_norm", "norms", s.head_dim, 1, "replicated", i, linear=False),
        ]
    return out


def _linear_attention(s: ModelSpec, i: int) -> list[Tensor]:
    assert s.linear_attention is not None
    la = s.linear_attention
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
    p = f"backbone.layers.{i}.mixer"
    h = s.hidden_size
    conv_dim = m.intermediate + 2 * m.n_groups * m.state_size
    return [
        Tensor(
            f"{p}.in_proj", "mixer", 2 * m.intermediate + 2 * m.n_groups * m.state_size + m.num_heads, h, "column", i
        ),
        Tensor(f"{p}.conv1d.weight", "mixer", conv_dim, m.conv_kernel, "column", i, linear=False),
        Tensor(f"{p}.conv1d.bias", "mixer", conv_dim, 1, "column", i, linear=False),
        Tensor(f"{p}.dt_bias", "mixer", m.num_heads, 1, "column", i, linear=False),
        Tensor(f"{p}.A_log", "mixer", m.num_heads, 1, "column", i, linear=False),
        Tensor(f"{p}.D", "mixer", m.num_heads, 1, "column", i, linear=False),
        Tensor(f"{p}.norm", "norms", m.intermediate, 1, "column", i, linear=False),
        Tensor(f"{p}.out_proj", "mixer", h, m.intermediate, "row", i),
    ]


def _mlp(s: ModelSpec, i: int) -> list[Tensor]:
    h = s.hidden_size
    kind = s.mlp_kinds[i]
    p = f"model.layers.{i}.mlp"
    if kind == "dense":
        inter = s.intermediate_size
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
    if kind == "none":
        return []
    assert s.moe is not None
    m = s.moe
    e_up = 2 * m.expert_intermediate if m.gated else m.expert_intermediate
    out = [
        Tensor(f"{p}.gate", "router", m.num_experts, h, "replicated", i, linear=False),
        Tensor(f"{p}.experts.w13", "experts", e_up, h, "expert_w13", i, count=m.num_experts),
        Tensor(f"{p}.experts.w2", "experts", h, m.expert_intermediate, "expert_w2", i, count=m.num_experts),
    ]
    if m.router_bias:
        out.append(Tensor(f"{p}.gate.bias", "router", m.num_experts, 1, "replicated", i, linear=False))
    if m.expert_bias:
        out += [
            Tensor(f"{p}.experts.w13_bias", "experts", e_up, 1, "expert_vec", i, linear=False, count=m.num_experts),
            Tensor(f"{p}.experts.w2_bias", "experts", h, 1, "expert_vec", i, linear=False, count=m.num_experts),
        ]
    if s.model_type.startswith("deepseek") or s.model_type in ("kimi_k2", "nemotron_h"):
        out.append(
            Tensor(f"{p}.gate.e_score_correction_bias", "router", m.num_experts, 1, "replicated", i, linear=False)
        )
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


def layer_tensors(s: ModelSpec, i: int) -> list[Tensor]:
    """All tensors of decoder layer i."""
    h = s.hidden_size
    kind = s.layer_kinds[i]
    out = [
        Tensor(f"model.layers.{i}.norm{j}", "norms", h, 1, "replicated", i, linear=False)
        for j in range(s.norms_per_layer)
    ]
    if kind in ("full", "sliding", "chunked", "mla"):
        out += _attention(s, i)
    elif kind == "linear_attention":
        out += _linear_attention(s, i)
    elif kind == "mamba":
        out += _mamba(s, i)
    return out + _mlp(s, i)


def vision_tensors(s: ModelSpec) -> list[Tensor]:
    """The vision encoder (kept in 16 bit: quantization recipes skip it) and its projector, TP-sharded."""
    v = s.vision
    if v is None:
        return []
    h, i = v.hidden, v.intermediate
    out = [
        Tensor("visual.patch_embed", "vision", v.patch_params, 1, "replicated", None, linear=False),
        Tensor("visual.pos_embed", "vision", v.positions, h, "replicated", None, linear=False),
    ]
    for k in range(v.depth):
        p = f"visual.blocks.{k}"
        out += [
            Tensor(f"{p}.attn.qkv", "vision", 3 * h, h + 1, "column", None, linear=False),
            Tensor(f"{p}.attn.proj", "vision", h, h, "row", None, linear=False),
            Tensor(f"{p}.mlp.fc1", "vision", i, h + 1, "column", None, linear=False),
            Tensor(f"{p}.mlp.fc2", "vision", h, i, "row", None, linear=False),
            Tensor(f"{p}.biases_norms", "vision", 6 * h, 1, "replicated", None, linear=False),
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


def model_tensors(s: ModelSpec) -> list[Tensor]:
    """Every weight tensor of the model (vision encoder, embedding, layers, final norm, lm_head)."""
    h = s.hidden_size
    out = vision_tensors(s)
    out.append(Tensor("model.embed_tokens", "embedding", s.vocab_size, h, "vocab", None, linear=False))
    for i in range(s.num_layers):
        out += layer_tensors(s, i)
    out.append(Tensor("model.norm", "norms", h, 1, "replicated", None, linear=False))
    if not s.tie_word_embeddings:
        out.append(Tensor("lm_head", "lm_head", s.vocab_size, h, "vocab", None, linear=False))
    return out


def count_params(s: ModelSpec) -> ParamCounts:
    """Exact logical parameter counts per tensor group."""
    totals: dict[str, int] = {}
    for t in model_tensors(s):
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
