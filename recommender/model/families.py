"""Per-architecture facts that config.json does not state, in one table (what vLLM's model file for the
architecture builds), and the architectures refused by name.

`family_for(arch, model_type)` returns the entry a config is read with; `refusal(arch, model_type)` the reason an
architecture is not planned. Each adapter renames a family's own config keys to the common ones
(`hidden_size`, `num_hidden_layers`, ...) so the feature extractors read one vocabulary. Sources: the vLLM 0.33
file named in each entry (`vllm/model_executor/models/...`), or transformers' config class for key names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from recommender.model.spec import NormKind

Adapter = Callable[[Mapping[str, Any]], "Adapted"]


@dataclass(frozen=True, slots=True)
class Family:
    """How one architecture family lays out a decoder layer beyond what its config says."""

    name: str
    source: str  # the vLLM model file (or transformers class) the facts come from
    gated_mlp: bool = True  # gate+up (SwiGLU-style) vs a plain fc1/fc2 (c_fc/c_proj, dense_h_to_4h) MLP
    norm: NormKind = "rms"
    norms_per_layer: int = 2
    parallel_block: bool = False
    qkv_bias: bool | None = None  # None: the config's attention_bias
    o_bias: bool | None = None  # None: False
    mlp_bias: bool | None = None  # None: the config's mlp_bias
    lm_head_bias: bool = False
    embedding_norm: bool = False
    learned_positions: bool = False
    tie_default: bool = False  # tie_word_embeddings when the config omits it (transformers' config default)
    qk_norm: bool = False
    score_bias: bool | None = None  # MoE e_score_correction_bias; None: when topk_method is "noaux_tc"
    qk_norm_over_heads: bool = False
    attention_sinks: Literal["none", "all", "sliding"] = "none"
    final_norm: bool = True
    position_offset: int = 0  # learned position rows beyond max_position_embeddings (OPT: 2)
    adapt: Adapter | None = None  # family keys -> common keys, and entries that depend on the config
    approximate: str = ""  # non-empty: counted with a generic formula, for this reason
    aliases: tuple[tuple[str, str], ...] = field(default=())  # (common key, family key) renames


@dataclass(frozen=True, slots=True)
class Adapted:
    """What an adapter derives from one config: common keys to set, and Family fields to override."""

    keys: dict[str, Any] = field(default_factory=dict)  # a None value leaves the config's own key alone
    family: dict[str, Any] = field(default_factory=dict)
    drop: tuple[str, ...] = ()  # config keys to ignore


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _gpt2_keys(c: Mapping[str, Any]) -> Adapted:
    """GPT2Config / GPTBigCodeConfig / GPTJConfig: n_embd, n_layer, n_head, n_inner (null: 4 x n_embd)."""
    keys: dict[str, Any] = {}
    hidden = _int(c.get("n_embd", c.get("hidden_size")))
    if c.get("n_inner") is None and hidden is not None:
        keys["intermediate_size"] = 4 * hidden
    if c.get("model_type") == "gpt_bigcode" and c.get("multi_query", True) is not False:
        keys["num_key_value_heads"] = 1
    return Adapted(keys)


def _falcon_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/falcon.py: KV heads from new_decoder_architecture / multi_query; MLP 4 x H (the
    config's ffn_hidden_size is not read); norms: 2 unless parallel_attn, then 1 (or ln_attn + ln_mlp with the new
    decoder architecture); `bias` on every linear."""
    heads = c.get("num_attention_heads", c.get("n_head"))
    hidden = _int(c.get("hidden_size", c.get("n_embed")))
    new_arch = c.get("new_decoder_architecture") is True
    keys: dict[str, Any] = {}
    if new_arch:
        keys["num_key_value_heads"] = c.get("num_kv_heads", heads)
    elif c.get("multi_query", True) is not False:
        keys["num_key_value_heads"] = 1
    else:
        keys["num_key_value_heads"] = heads
    if hidden is not None:
        keys["intermediate_size"] = 4 * hidden
    parallel = c.get("parallel_attn", True) is not False
    norms = 2 if not parallel else (_int(c.get("num_ln_in_parallel_attn")) or (2 if new_arch else 1))
    biased = c.get("bias") is True
    fam = {"norms_per_layer": norms, "parallel_block": parallel, "qkv_bias": biased, "o_bias": biased}
    return Adapted(keys, {**fam, "mlp_bias": biased})


def _opt_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/opt.py: enable_bias on every linear, a final LayerNorm only with
    do_layer_norm_before, project_in/out when word_embed_proj_dim differs from hidden_size."""
    biased = c.get("enable_bias", True) is not False
    fam: dict[str, Any] = {"qkv_bias": biased, "o_bias": biased, "mlp_bias": biased}
    fam["final_norm"] = c.get("do_layer_norm_before", True) is not False
    proj = c.get("word_embed_proj_dim")
    if proj is not None and proj != c.get("hidden_size"):
        fam["approximate"] = "OPT's word_embed_proj_dim differs from hidden_size: project_in/out are not counted"
    return Adapted({}, fam)


def _bloom_keys(c: Mapping[str, Any]) -> Adapted:
    """BloomConfig: n_embed (or hidden_size), n_layer, n_head; MLP 4 x H (vllm/model_executor/models/bloom.py)."""
    hidden = _int(c.get("hidden_size", c.get("n_embed")))
    return Adapted({"intermediate_size": 4 * hidden} if hidden is not None else {})


def _neox_keys(c: Mapping[str, Any]) -> Adapted:
    """GPTNeoXConfig: rotary_pct, attention_bias (default true) on query_key_value and dense; MLP biases always."""
    biased = c.get("attention_bias", True) is not False
    keys = {"partial_rotary_factor": c["rotary_pct"]} if c.get("rotary_pct") is not None else {}
    return Adapted(keys, {"qkv_bias": biased, "o_bias": biased, "mlp_bias": True})


def _starcoder2_keys(c: Mapping[str, Any]) -> Adapted:
    """Starcoder2Config: use_bias (default true) on q/k/v/o and c_fc/c_proj."""
    biased = c.get("use_bias", True) is not False
    return Adapted({}, {"qkv_bias": biased, "o_bias": biased, "mlp_bias": biased})


def _phi_keys(c: Mapping[str, Any]) -> Adapted:
    """transformers PhiForCausalLM: biases on q/k/v, dense, fc1/fc2 and lm_head; LayerNorm q/k with qk_layernorm.
    The older phi-msft config (MixFormer) names its keys as GPT-2 does."""
    keys = _gpt2_keys(c).keys if c.get("intermediate_size") is None else {}
    return Adapted(keys, {"qkv_bias": True, "o_bias": True, "mlp_bias": True, "qk_norm": c.get("qk_layernorm") is True})


def _chatglm_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/chatglm.py: num_layers, kv_channels, ffn_hidden_size, padded_vocab_size,
    seq_length, multi_query_group_num, add_qkv_bias / add_bias_linear, rmsnorm, post_layer_norm; rotary on half
    of each head."""
    linear_bias = c.get("add_bias_linear") is True
    keys: dict[str, Any] = {
        "num_hidden_layers": c.get("num_layers"),
        "head_dim": c.get("kv_channels"),
        "intermediate_size": c.get("ffn_hidden_size"),
        "vocab_size": c.get("padded_vocab_size", c.get("vocab_size")),
        "max_position_embeddings": c.get("seq_length", 8192),
        "partial_rotary_factor": 0.5,
    }
    if c.get("multi_query_attention"):
        keys["num_key_value_heads"] = c.get("multi_query_group_num")
    fam: dict[str, Any] = {
        "qkv_bias": linear_bias or c.get("add_qkv_bias") is True,
        "o_bias": linear_bias,
        "mlp_bias": linear_bias,
        "final_norm": c.get("post_layer_norm", True) is not False,
    }
    if c.get("rmsnorm", True) is False:
        fam["norm"] = "layer"
    return Adapted(keys, fam)


def _internlm2_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/internlm2.py: `bias` (InternLM2Config default true) on wqkv and wo only."""
    biased = c.get("bias", True) is not False
    return Adapted({}, {"qkv_bias": biased, "o_bias": biased})


def _glm4_moe_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/glm4_moe.py: attention_bias on q/k/v only, use_qk_norm, rotary on half of each
    head unless the config says otherwise."""
    keys = {} if c.get("partial_rotary_factor") is not None else {"partial_rotary_factor": 0.5}
    return Adapted(keys, {"qk_norm": c.get("use_qk_norm") is True})


def _minimax_m2_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/minimax_m2.py: use_qk_norm with qk_norm_type "per_layer" (a norm over all heads),
    use_routing_bias (e_score_correction_bias)."""
    per_layer = c.get("qk_norm_type") == "per_layer"
    fam: dict[str, Any] = {"qk_norm": c.get("use_qk_norm") is True, "qk_norm_over_heads": per_layer}
    keys = {"intermediate_size_mlp": c.get("dense_intermediate_size")}  # MiniMax-M3's first_k_dense layers
    sparse = c.get("sparse_attention_config")
    if isinstance(sparse, Mapping) and sparse.get("use_sparse_attention"):
        fam["approximate"] = (
            "MiniMax-M3's block-sparse attention (sparse_attention_config: index heads and their key cache) is not "
            "modelled: counted as dense GQA attention"
        )
    return Adapted(keys, {**fam, "score_bias": c.get("use_routing_bias") is True})


def _mimo_v2_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/mimo_v2.py: hybrid_layer_pattern (1: sliding-window layer with swa_* heads and
    an attention sink bias when add_swa_attention_sink_bias, 0: full attention); moe_layer_freq per layer."""
    pattern = c.get("hybrid_layer_pattern")
    keys: dict[str, Any] = {}
    if isinstance(pattern, list):
        keys["layer_types"] = ["sliding_attention" if p == 1 else "full_attention" for p in pattern]
    sinks = "sliding" if c.get("add_swa_attention_sink_bias") is True else "none"
    return Adapted(keys, {"attention_sinks": sinks})


def _step3p5_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/step3p5.py: q/k norms per head, use_moe_router_bias, moe_num_experts / moe_top_k."""
    keys = {"num_experts": c.get("moe_num_experts"), "num_experts_per_tok": c.get("moe_top_k")}
    fam: dict[str, Any] = {"score_bias": c.get("use_moe_router_bias") is True}
    if c.get("architectures") == ["Step3p7FlashForCausalLM"]:
        fam["approximate"] = (
            "Step3p7FlashForCausalLM is not in vLLM 0.33's registry (it serves Step3p5ForCausalLM and "
            "Step3p7ForConditionalGeneration): counted with Step3p5's layout, without a head-wise attention gate"
        )
    return Adapted(keys, fam)


def _kimi_linear_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/models/kimi_k3 (KimiLinearForCausalLM): KDA on the 1-based linear_attn_config.kda_layers, MLA on the
    others (transformers_utils/configs/kimi_linear.py is_kda_layer); routed experts with a score-correction bias.
    Kimi-K3's additions (full-rank KDA gate, MLA output gate, latent experts) are estimated, not modelled."""
    kda = c.get("linear_attn_config")
    n = c.get("num_hidden_layers")
    keys: dict[str, Any] = {}
    fam: dict[str, Any] = {}
    if isinstance(kda, Mapping) and isinstance(n, int) and isinstance(kda.get("kda_layers"), list):
        layers = set(kda["kda_layers"])
        keys["layer_types"] = ["linear_attention" if i + 1 in layers else "full_attention" for i in range(n)]
        if kda.get("use_full_rank_gate") or c.get("routed_expert_hidden_size") or c.get("mla_use_output_gate"):
            fam["approximate"] = (
                "Kimi-K3's full-rank KDA gate, MLA output gate and latent-expert norms are not modelled: "
                "counted with Kimi-Linear's layout"
            )
    return Adapted(keys, fam)


def _cohere_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/commandr.py: one norm (LayerNorm without bias) before parallel attention and MLP,
    the lm_head always tied to the embeddings, use_qk_norm over every head (heads x head_dim)."""
    return Adapted({"tie_word_embeddings": True}, {"qk_norm": c.get("use_qk_norm") is True})


def _granite_hybrid_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/granitemoehybrid.py: layer_types "mamba" / "attention" (or layers_block_type), a
    Mamba2 mixer from the mamba_* keys, MoE with a shared MLP of shared_intermediate_size (a dense MLP of that width
    when there are no experts), no positional encoding on attention ("nope")."""
    types = c.get("layer_types") or c.get("layers_block_type")
    keys: dict[str, Any] = {
        "mamba_num_heads": c.get("mamba_n_heads"),
        "mamba_head_dim": c.get("mamba_d_head"),
        "ssm_state_size": c.get("mamba_d_state"),
        "n_groups": c.get("mamba_n_groups"),
        "conv_kernel": c.get("mamba_d_conv"),
        "use_conv_bias": c.get("mamba_conv_bias"),
    }
    if isinstance(types, list):
        keys["layer_types"] = ["full_attention" if t == "attention" else "mamba" for t in types]
    if not c.get("num_local_experts"):
        keys["intermediate_size"] = c.get("shared_intermediate_size")
    return Adapted(keys, {})


def _falcon_h1_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/falcon_h1.py FalconH1ParallelHybrid: attention and a Mamba2 mixer side by side in
    every layer (mamba_d_ssm wide, or mamba_expand x hidden), then the MLP; RMSNormGated only with mamba_rms_norm."""
    return Adapted(
        {
            "mamba_num_heads": c.get("mamba_n_heads"),
            "mamba_head_dim": c.get("mamba_d_head"),
            "ssm_state_size": c.get("mamba_d_state"),
            "n_groups": c.get("mamba_n_groups"),
            "conv_kernel": c.get("mamba_d_conv"),
            "use_conv_bias": c.get("mamba_conv_bias"),
            "mamba_proj_bias": c.get("mamba_proj_bias"),
        }
    )


def _deepseek_v4_keys(c: Mapping[str, Any]) -> Adapted:
    """DeepSeek-V4 (vllm/models/deepseek_v4) is estimated: its compressed sparse attention keeps one state per
    `compress_ratio` tokens per layer plus a short window; counted as full attention with its one head_dim-wide KV
    head, the KV cache is an upper bound. Weights come within ~3% of transformers' count (hyper-connections, grouped
    output LoRA and the indexer are not counted)."""
    ratios = sorted({r for r in c.get("compress_ratios") or () if isinstance(r, int) and r > 1})
    kept = " or ".join(f"1/{r}" for r in ratios) or "a fraction"
    reason = (
        f"DeepSeek-V4's compressed sparse attention (vLLM keeps {kept} of the tokens per layer, an indexer, "
        "hyper-connections) is not modelled: every layer is counted as full attention with one KV head of head_dim, "
        "so KV memory is an upper bound and weights are within ~3%"
    )
    return Adapted({}, {"approximate": reason}, drop=("sliding_window",))


def _mllama_keys(c: Mapping[str, Any]) -> Adapted:
    """Llama-3.2-Vision (vLLM's mllama.py, served until 0.10.2): cross-attention decoder layers at
    cross_attention_layers, the embedding 8 rows longer than the vocabulary (image tokens)."""
    n, cross = c.get("num_hidden_layers"), c.get("cross_attention_layers")
    keys: dict[str, Any] = {}
    if isinstance(n, int) and isinstance(cross, list):
        keys["layer_types"] = ["cross_attention" if i in cross else "full_attention" for i in range(n)]
    reason = (
        "Llama-3.2-Vision's cross-attention layers cache the image encoder's tokens (max_num_tiles x (patches + 1) "
        "per image), not the prompt's: their KV is counted per prompt token, and the encoder's profiling pass is not"
    )
    return Adapted(keys, {"approximate": reason})


def _dbrx_keys(c: Mapping[str, Any]) -> Adapted:
    """DbrxConfig: d_model, n_layers, n_heads, max_seq_len, attn_config.kv_n_heads, ffn_config.{ffn_hidden_size,
    moe_num_experts, moe_top_k} (vllm/model_executor/models/dbrx.py); every layer is MoE."""
    attn = c.get("attn_config") if isinstance(c.get("attn_config"), Mapping) else {}
    ffn = c.get("ffn_config") if isinstance(c.get("ffn_config"), Mapping) else {}
    assert isinstance(attn, Mapping) and isinstance(ffn, Mapping)
    return Adapted(
        {
            "hidden_size": c.get("d_model"),
            "num_hidden_layers": c.get("n_layers"),
            "num_attention_heads": c.get("n_heads"),
            "num_key_value_heads": attn.get("kv_n_heads"),
            "max_position_embeddings": c.get("max_seq_len"),
            "moe_intermediate_size": ffn.get("ffn_hidden_size"),
            "num_local_experts": ffn.get("moe_num_experts"),
            "num_experts_per_tok": ffn.get("moe_top_k"),
            "intermediate_size": ffn.get("ffn_hidden_size"),
        }
    )


_GPT2_ALIASES = (
    ("hidden_size", "n_embd"),
    ("num_hidden_layers", "n_layer"),
    ("num_attention_heads", "n_head"),
    ("intermediate_size", "n_inner"),
    ("max_position_embeddings", "n_positions"),
)
_BLOOM_ALIASES = (("hidden_size", "n_embed"), ("num_hidden_layers", "n_layer"), ("num_attention_heads", "n_head"))

LLAMA = Family("Llama-style decoder", "vllm/model_executor/models/llama.py")
_QWEN2 = Family("Qwen2", "vllm/model_executor/models/qwen2.py", qkv_bias=True)
_QK_NORM = Family("Qwen3-style decoder (q/k norms)", "vllm/model_executor/models/qwen3.py", qk_norm=True)
_GEMMA = Family("Gemma", "vllm/model_executor/models/gemma.py", tie_default=True)
_GEMMA_SANDWICH = Family(
    "Gemma 2/3 (four norms a layer)", "vllm/model_executor/models/gemma2.py", norms_per_layer=4, tie_default=True
)
_GEMMA3 = Family("Gemma 3", "vllm/model_executor/models/gemma3.py", norms_per_layer=4, tie_default=True, qk_norm=True)
_NEMOTRON_H = Family(
    "Nemotron-H hybrid", "vllm/model_executor/models/nemotron_h.py", norms_per_layer=1, score_bias=True
)
_INTERNLM2 = Family("InternLM2", "vllm/model_executor/models/internlm2.py", adapt=_internlm2_keys)
_GLM4_MOE = Family(
    "GLM-4.5/4.6/4.7 MoE", "vllm/model_executor/models/glm4_moe.py", score_bias=True, adapt=_glm4_moe_keys
)
_GPT2 = Family(
    "GPT-2",
    "vllm/model_executor/models/gpt2.py",
    gated_mlp=False,
    norm="layer",
    qkv_bias=True,
    o_bias=True,
    mlp_bias=True,
    learned_positions=True,
    tie_default=True,
    adapt=_gpt2_keys,
    aliases=_GPT2_ALIASES,
)
# GPT-BigCode keeps GPT-2's block and key names (the shared adapter reads its multi_query key)
_GPT_BIGCODE = replace(
    _GPT2, name="GPT-BigCode (StarCoder)", source="transformers GPTBigCodeForCausalLM (vLLM's Transformers backend)"
)
_GPTJ = Family(
    "GPT-J",
    "vllm/model_executor/models/gpt_j.py",
    gated_mlp=False,
    norm="layer",
    norms_per_layer=1,
    parallel_block=True,
    qkv_bias=False,
    o_bias=False,
    mlp_bias=True,
    lm_head_bias=True,
    adapt=_gpt2_keys,
    aliases=_GPT2_ALIASES,
)
_NEOX = Family(
    "GPT-NeoX / Pythia",
    "transformers GPTNeoXForCausalLM (vLLM's Transformers backend)",
    gated_mlp=False,
    norm="layer",
    parallel_block=True,
    adapt=_neox_keys,
)
_PHI = Family(
    "Phi-1.5 / Phi-2",
    "transformers PhiForCausalLM (vLLM's Transformers backend)",
    gated_mlp=False,
    norm="layer",
    norms_per_layer=1,
    parallel_block=True,
    lm_head_bias=True,
    adapt=_phi_keys,
)
_STARCODER2 = Family(
    "StarCoder2",
    "transformers Starcoder2ForCausalLM (vLLM's Transformers backend)",
    gated_mlp=False,
    norm="layer",
    tie_default=True,
    adapt=_starcoder2_keys,
)
_FALCON = Family(
    "Falcon",
    "vllm/model_executor/models/falcon.py",
    gated_mlp=False,
    norm="layer",
    tie_default=True,
    adapt=_falcon_keys,
    aliases=(("hidden_size", "n_embed"), ("num_hidden_layers", "n_layer"), ("num_attention_heads", "n_head")),
)
_OPT = Family(
    "OPT",
    "vllm/model_executor/models/opt.py",
    gated_mlp=False,
    norm="layer",
    learned_positions=True,
    position_offset=2,  # OPTLearnedPositionalEmbedding
    tie_default=True,
    adapt=_opt_keys,
    aliases=(("intermediate_size", "ffn_dim"),),
)
_BLOOM = Family(
    "BLOOM",
    "vllm/model_executor/models/bloom.py",
    gated_mlp=False,
    norm="layer",
    qkv_bias=True,
    o_bias=True,
    mlp_bias=True,
    embedding_norm=True,
    tie_default=True,
    adapt=_bloom_keys,
    aliases=_BLOOM_ALIASES,
)
_CHATGLM = Family("ChatGLM / GLM-4 (0414 and earlier)", "vllm/model_executor/models/chatglm.py", adapt=_chatglm_keys)
_DBRX = Family("DBRX", "vllm/model_executor/models/dbrx.py", norm="layer_nobias", adapt=_dbrx_keys)
_JAMBA = Family("Jamba (Mamba1 + attention + MoE)", "vllm/model_executor/models/jamba.py")
_MAMBA = Family("Mamba (attention-free)", "vllm/model_executor/models/mamba.py", norms_per_layer=1, tie_default=True)

# Keyed by model_type (text config). Types not listed are read as LLAMA and marked approximate.
FAMILIES: dict[str, Family] = {
    **dict.fromkeys(
        (
            "llama",
            "mistral",
            "mixtral",
            "granite",
            "granitemoe",
            "phi3",
            "deepseek",  # DeepSeek-MoE (v1): vLLM runs DeepseekForCausalLM from deepseek_v2.py
            "deepseek_v2",
            "deepseek_v3",
            "kimi_k2",
            "kimi_k25",
            "llama4",
            "llama4_text",
            "internlm3",
            "exaone",
            "yi",
            "mistral3",
            "ministral",
            "ministral3",  # Ministral3ForCausalLM: vLLM's registry runs it as MistralForCausalLM
            "smollm3",
        ),
        LLAMA,
    ),
    **dict.fromkeys(("qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "mimo"), _QWEN2),
    **dict.fromkeys(
        (
            "qwen3",
            "qwen3_moe",
            "qwen3_vl",
            "qwen3_vl_moe",
            "qwen3_next",
            "qwen3_5",
            "qwen3_5_moe",
            "olmo2",
            "olmo3",
            "exaone4",  # vllm/model_executor/models/exaone4.py: q/k RMSNorm over head_dim, two norms a layer
        ),
        _QK_NORM,
    ),
    "gemma": _GEMMA,
    "gemma2": _GEMMA_SANDWICH,
    **dict.fromkeys(("gemma3", "gemma3_text"), _GEMMA3),
    **dict.fromkeys(
        ("gemma4", "gemma4_text"), replace(_GEMMA3, name="Gemma 4", source="vllm/model_executor/models/gemma4.py")
    ),
    "nemotron_h": _NEMOTRON_H,
    "gpt2": _GPT2,
    "gpt_bigcode": _GPT_BIGCODE,
    "gptj": _GPTJ,
    "gpt_neox": _NEOX,
    "phi": _PHI,
    "phi-msft": replace(_PHI, aliases=(*_GPT2_ALIASES, ("num_key_value_heads", "n_head_kv"))),
    "starcoder2": _STARCODER2,
    **dict.fromkeys(("falcon", "RefinedWeb", "RefinedWebModel"), _FALCON),
    "opt": _OPT,
    "bloom": _BLOOM,
    "chatglm": _CHATGLM,
    "dbrx": _DBRX,
    "internlm2": _INTERNLM2,
    **dict.fromkeys(
        ("mllama", "mllama_text_model"),
        Family("Llama-3.2-Vision (mllama)", "vllm mllama.py (to 0.10.2)", adapt=_mllama_keys),
    ),
    **dict.fromkeys(
        ("deepseek_v4", "deepseek_ref"),
        Family("DeepSeek-V4 (estimated)", "vllm/models/deepseek_v4", adapt=_deepseek_v4_keys),
    ),
    "falcon_h1": Family(
        "Falcon-H1 (parallel attention + Mamba2)", "vllm/model_executor/models/falcon_h1.py", adapt=_falcon_h1_keys
    ),
    "granitemoehybrid": Family(
        "Granite-4.0-H (Mamba2 + attention)",
        "vllm/model_executor/models/granitemoehybrid.py",
        adapt=_granite_hybrid_keys,
    ),
    **dict.fromkeys(
        ("cohere", "cohere2"),
        Family(
            "Cohere Command-R / Aya",
            "vllm/model_executor/models/commandr.py",
            norm="layer_nobias",
            norms_per_layer=1,
            parallel_block=True,
            tie_default=True,
            qk_norm_over_heads=True,
            adapt=_cohere_keys,
        ),
    ),
    "nemotron-nas": Family("Nemotron-NAS (DeciLM)", "vllm/model_executor/models/nemotron_nas.py"),
    "kimi_linear": Family(
        "Kimi-Linear (KDA + MLA)", "vllm/models/kimi_k3/nvidia/model.py", score_bias=True, adapt=_kimi_linear_keys
    ),
    **dict.fromkeys(
        ("step3p5", "step3p7"),
        Family("Step-3.5", "vllm/model_executor/models/step3p5.py", qk_norm=True, adapt=_step3p5_keys),
    ),
    "gpt_oss": Family("gpt-oss", "vllm/model_executor/models/gpt_oss.py", attention_sinks="all"),
    **dict.fromkeys(
        ("mimo_v2_flash", "mimo_v2"),
        Family("MiMo-V2 (hybrid SWA)", "vllm/model_executor/models/mimo_v2.py", adapt=_mimo_v2_keys),
    ),
    **dict.fromkeys(
        ("minimax_m2", "minimax_m3", "minimax_m3_vl"),
        Family("MiniMax-M2/M3", "vllm/model_executor/models/minimax_m2.py", adapt=_minimax_m2_keys),
    ),
    "glm4_moe": _GLM4_MOE,
    **dict.fromkeys(("deepseek_v32", "glm_moe_dsa"), LLAMA),  # MLA + indexer: model/features.py indexer_spec
    "glm4_moe_lite": Family(
        "GLM-4.7-Flash (MLA + GLM MoE)", "vllm/model_executor/models/glm4_moe_lite.py", score_bias=True
    ),
    "jamba": _JAMBA,
    **dict.fromkeys(("mamba", "falcon_mamba"), _MAMBA),
}

# Architectures whose config carries no (or an unreliable) model_type, keyed by `architectures[0]`.
_BY_ARCHITECTURE: dict[str, str] = {
    "GPT2LMHeadModel": "gpt2",
    "GPTBigCodeForCausalLM": "gpt_bigcode",
    "GPTJForCausalLM": "gptj",
    "GPTNeoXForCausalLM": "gpt_neox",
    "PhiForCausalLM": "phi",
    "MixFormerSequentialForCausalLM": "phi-msft",
    "Starcoder2ForCausalLM": "starcoder2",
    "FalconForCausalLM": "falcon",
    "OPTForCausalLM": "opt",
    "BloomForCausalLM": "bloom",
    "ChatGLMModel": "chatglm",
    "ChatGLMForConditionalGeneration": "chatglm",
    "DbrxForCausalLM": "dbrx",
    "DeciLMForCausalLM": "nemotron-nas",
    "JambaForCausalLM": "jamba",
    "FalconH1ForCausalLM": "falcon_h1",
    "GraniteMoeHybridForCausalLM": "granitemoehybrid",
    "MambaForCausalLM": "mamba",
    "FalconMambaForCausalLM": "falcon_mamba",
}


# Sub-configs are saved as a diff against their config class (transformers' to_diff_dict), so a multimodal
# wrapper's text_config may omit what equals the class default: transformers LlamaConfig / MistralConfig /
# Qwen2Config __init__ defaults.
TEXT_CONFIG_DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": {
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "vocab_size": 32000,
        "max_position_embeddings": 2048,
    },
    "mistral": {
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 32000,
        "max_position_embeddings": 4096 * 32,
        "sliding_window": 4096,
    },
    "qwen2": {
        "hidden_size": 4096,
        "intermediate_size": 22016,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "vocab_size": 151936,
        "max_position_embeddings": 32768,
    },
}


def family_key(arch: str, model_type: str) -> str:
    """The FAMILIES key for a config: its model_type, or the type its architecture implies."""
    if model_type in FAMILIES:
        return model_type
    base = model_type.removesuffix("_text")
    if base in FAMILIES:
        return base
    return _BY_ARCHITECTURE.get(arch, model_type)


def family_for(arch: str, model_type: str) -> Family:
    """The table entry for this architecture; unknown ones get the Llama layout, marked inexact."""
    found = FAMILIES.get(family_key(arch, model_type))
    if found is not None:
        return found
    reason = (
        f"model_type {model_type!r} is not in vllm-plan's architecture table: counted as a Llama-style decoder "
        "(gated MLP, RMSNorm, no biases)"
    )
    return Family(LLAMA.name, LLAMA.source, approximate=reason)


# --- Architectures refused by name -----------------------------------------------------------------------------

_ENCODER_ONLY_TYPES = frozenset(
    {
        "bert",
        "roberta",
        "xlm-roberta",
        "distilbert",
        "electra",
        "deberta",
        "deberta-v2",
        "modernbert",
        "nomic_bert",
        "albert",
        "mpnet",
        "camembert",
        "new",
        "xlm-roberta-xl",
        "ernie",
    }
)
_ENCODER_DECODER_TYPES = frozenset({"t5", "mt5", "umt5", "bart", "mbart", "pegasus", "marian", "whisper", "m2m_100"})
_TASK_HEADS = ("ForSequenceClassification", "ForTokenClassification", "ForMaskedLM", "ForQuestionAnswering")

# vllm/model_executor/models/registry.py _PREVIOUSLY_SUPPORTED_MODELS (0.33.0): the last release that served them.
SERVED_UNTIL: dict[str, str] = {
    "MotifForCausalLM": "0.10.2",
    "Phi3SmallForCausalLM": "0.9.2",
    "Phi4FlashForCausalLM": "0.10.2",
    "Phi4MultimodalForCausalLM": "0.12.0",
    "DonutForConditionalGeneration": "0.10.2",
    "MllamaForConditionalGeneration": "0.10.2",
    "BambaForCausalLM": "0.23.0",
    "MiniMaxForCausalLM": "0.23.0",
    "MiniMaxText01ForCausalLM": "0.23.0",
    "MiniMaxM1ForCausalLM": "0.23.0",
    "BaiChuanForCausalLM": "0.23.0",
    "BaichuanForCausalLM": "0.23.0",
    "QWenLMHeadModel": "0.23.0",
    "InternLMForCausalLM": "0.23.0",
    "XverseForCausalLM": "0.23.0",
    "AquilaForCausalLM": "0.24.0",
    "Grok1ForCausalLM": "0.24.0",
    "PersimmonForCausalLM": "0.25.0",
    "Plamo2ForCausalLM": "0.26.0",
    "ArcticForCausalLM": "0.28.0",
    "MPTForCausalLM": "0.28.0",
    "MptForCausalLM": "0.28.0",
    "RWForCausalLM": "0.28.0",
    "StableLMEpochForCausalLM": "0.28.0",
}


def refusal(arch: str, model_type: str) -> str | None:
    """Why vllm-plan does not plan this architecture (a decoder served for generation is planned), or None."""
    if model_type in _ENCODER_ONLY_TYPES or arch.endswith(_TASK_HEADS) or arch in ("BertModel", "RobertaModel"):
        return (
            f"{arch} (model_type {model_type!r}) is an encoder-only model: vLLM serves it for embeddings or "
            "classification with no KV cache, and vllm-plan plans decoder (text generation) serving"
        )
    if model_type in _ENCODER_DECODER_TYPES:
        return (
            f"{arch} (model_type {model_type!r}) is an encoder-decoder model: vLLM 0.33 serves none in-tree except "
            "Whisper, whose encoder cache vllm-plan does not model"
        )
    return None
