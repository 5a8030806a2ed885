"""Config-key adapters of the architecture families: each renames a family's own config keys to the common ones
(`hidden_size`, `num_hidden_layers`, ...) and derives the Family fields that depend on the config, so the feature
extractors read one vocabulary. `recommender.model.families` names the adapter each family uses; sources are in
each adapter (transformers' config classes, the vLLM 0.33 model files)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Adapted:
    """What an adapter derives from one config: common keys to set, and Family fields to override."""

    keys: dict[str, Any] = field(default_factory=dict)  # a None value leaves the config's own key alone
    family: dict[str, Any] = field(default_factory=dict)
    drop: tuple[str, ...] = ()  # config keys to ignore


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def gpt2_keys(c: Mapping[str, Any]) -> Adapted:
    """GPT2Config / GPTBigCodeConfig / GPTJConfig: n_embd, n_layer, n_head, n_inner (null: 4 x n_embd)."""
    keys: dict[str, Any] = {}
    hidden = _int(c.get("n_embd", c.get("hidden_size")))
    if c.get("n_inner") is None and hidden is not None:
        keys["intermediate_size"] = 4 * hidden
    if c.get("model_type") == "gpt_bigcode" and c.get("multi_query", True) is not False:
        keys["num_key_value_heads"] = 1
    return Adapted(keys)


def falcon_keys(c: Mapping[str, Any]) -> Adapted:
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


def opt_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/opt.py: enable_bias on every linear, a final LayerNorm only with
    do_layer_norm_before, project_in/out when word_embed_proj_dim differs from hidden_size."""
    biased = c.get("enable_bias", True) is not False
    fam: dict[str, Any] = {"qkv_bias": biased, "o_bias": biased, "mlp_bias": biased}
    fam["final_norm"] = c.get("do_layer_norm_before", True) is not False
    proj = c.get("word_embed_proj_dim")
    if proj is not None and proj != c.get("hidden_size"):
        fam["approximate"] = "OPT's word_embed_proj_dim differs from hidden_size: project_in/out are not counted"
    return Adapted({}, fam)


def bloom_keys(c: Mapping[str, Any]) -> Adapted:
    """BloomConfig: n_embed (or hidden_size), n_layer, n_head; MLP 4 x H (vllm/model_executor/models/bloom.py)."""
    hidden = _int(c.get("hidden_size", c.get("n_embed")))
    return Adapted({"intermediate_size": 4 * hidden} if hidden is not None else {})


def mpt_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm mpt.py (served until 0.28.0) over transformers' MptConfig: d_model, n_layers, n_heads, max_seq_len;
    attn_config.kv_n_heads (default n_heads); an ungated GELU MLP of expansion_ratio x d_model (MptConfig default
    4); ALiBi, no position table; the embedding is the LM head. no_bias (default true) removes the bias of every
    linear and LayerNorm (MPTModel registers each module's bias as None); attn_config.qk_ln adds q/k LayerNorms."""
    attn = c.get("attn_config")
    attn = attn if isinstance(attn, Mapping) else {}
    hidden = _int(c.get("d_model"))
    ratio = _int(c.get("expansion_ratio", 4))
    keys: dict[str, Any] = {"intermediate_size": ratio * hidden} if hidden is not None and ratio is not None else {}
    if (kv := _int(attn.get("kv_n_heads"))) is not None:
        keys["num_key_value_heads"] = kv
    biased = c.get("no_bias", True) is False
    fam: dict[str, Any] = {
        "qkv_bias": biased,
        "o_bias": biased,
        "mlp_bias": biased,
        "qk_norm": attn.get("qk_ln") is True,
    }
    return Adapted(keys, {**fam, "norm": "layer" if biased else "layer_nobias"})


def neox_keys(c: Mapping[str, Any]) -> Adapted:
    """GPTNeoXConfig: rotary_pct, attention_bias (default true) on query_key_value and dense; MLP biases always."""
    biased = c.get("attention_bias", True) is not False
    keys = {"partial_rotary_factor": c["rotary_pct"]} if c.get("rotary_pct") is not None else {}
    return Adapted(keys, {"qkv_bias": biased, "o_bias": biased, "mlp_bias": True})


def starcoder2_keys(c: Mapping[str, Any]) -> Adapted:
    """Starcoder2Config: use_bias (default true) on q/k/v/o and c_fc/c_proj."""
    biased = c.get("use_bias", True) is not False
    return Adapted({}, {"qkv_bias": biased, "o_bias": biased, "mlp_bias": biased})


def phi_keys(c: Mapping[str, Any]) -> Adapted:
    """transformers PhiForCausalLM: biases on q/k/v, dense, fc1/fc2 and lm_head; LayerNorm q/k with qk_layernorm.
    The older phi-msft config (MixFormer) names its keys as GPT-2 does."""
    keys = gpt2_keys(c).keys if c.get("intermediate_size") is None else {}
    return Adapted(keys, {"qkv_bias": True, "o_bias": True, "mlp_bias": True, "qk_norm": c.get("qk_layernorm") is True})


def chatglm_keys(c: Mapping[str, Any]) -> Adapted:
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


def internlm2_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/internlm2.py: `bias` (InternLM2Config default true) on wqkv and wo only."""
    biased = c.get("bias", True) is not False
    return Adapted({}, {"qkv_bias": biased, "o_bias": biased})


def glm4_moe_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/glm4_moe.py: attention_bias on q/k/v only, use_qk_norm, rotary on half of each
    head unless the config says otherwise."""
    keys = {} if c.get("partial_rotary_factor") is not None else {"partial_rotary_factor": 0.5}
    return Adapted(keys, {"qk_norm": c.get("use_qk_norm") is True})


def minimax_m2_keys(c: Mapping[str, Any]) -> Adapted:
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


def mimo_v2_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/mimo_v2.py: hybrid_layer_pattern (1: sliding-window layer with swa_* heads and
    an attention sink bias when add_swa_attention_sink_bias, 0: full attention); moe_layer_freq per layer."""
    pattern = c.get("hybrid_layer_pattern")
    keys: dict[str, Any] = {}
    if isinstance(pattern, list):
        keys["layer_types"] = ["sliding_attention" if p == 1 else "full_attention" for p in pattern]
    sinks = "sliding" if c.get("add_swa_attention_sink_bias") is True else "none"
    return Adapted(keys, {"attention_sinks": sinks})


def step3p5_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/step3p5.py: q/k norms per head, use_moe_router_bias, moe_num_experts / moe_top_k."""
    keys = {"num_experts": c.get("moe_num_experts"), "num_experts_per_tok": c.get("moe_top_k")}
    fam: dict[str, Any] = {"score_bias": c.get("use_moe_router_bias") is True}
    if c.get("architectures") == ["Step3p7FlashForCausalLM"]:
        fam["approximate"] = (
            "Step3p7FlashForCausalLM is not in vLLM 0.33's registry (it serves Step3p5ForCausalLM and "
            "Step3p7ForConditionalGeneration): counted with Step3p5's layout, without a head-wise attention gate"
        )
    return Adapted(keys, fam)


def bailing_moe_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/bailing_moe.py (Ling / Ring: BailingMoeForCausalLM, BailingMoeV2ForCausalLM): a fused
    query_key_value biased when use_bias or use_qkv_bias, a dense output biased when use_bias, query_layernorm /
    key_layernorm RMSNorms over head_dim when use_qk_norm, and the router's expert_bias when
    moe_router_enable_expert_bias; the shared MLP is num_shared_experts x (moe_shared_expert_intermediate_size or
    moe_intermediate_size) wide, the first first_k_dense_replace layers dense."""
    use_bias = c.get("use_bias") is True
    fam: dict[str, Any] = {
        "qkv_bias": use_bias or c.get("use_qkv_bias") is True,
        "o_bias": use_bias,
        "mlp_bias": use_bias,
        "qk_norm": c.get("use_qk_norm") is True,
        "score_bias": c.get("moe_router_enable_expert_bias") is True,
    }
    return Adapted({}, fam)


def ernie45_moe_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/ernie45_moe.py: moe_num_experts routed experts of moe_intermediate_size, top
    moe_k, a shared MLP of moe_intermediate_size x moe_num_shared_experts, a gate without bias plus an
    e_score_correction_bias; layer i holds experts when moe_layer_start_index <= i <= moe_layer_end_index (default
    and -1: the last layer) and (i + 1) % moe_layer_interval == 0, else a dense MLP of intermediate_size."""
    n = _int(c.get("num_hidden_layers"))
    start = _int(c.get("moe_layer_start_index")) or 0
    end = _int(c.get("moe_layer_end_index"))
    interval = _int(c.get("moe_layer_interval")) or 1
    keys: dict[str, Any] = {
        "num_experts_per_tok": c.get("moe_k"),
        "n_shared_experts": c.get("moe_num_shared_experts"),
    }
    if n is not None and (c.get("moe_num_experts") or 0) > 0:
        last = n - 1 if end is None or end < 0 else end
        keys["mlp_layer_types"] = [
            "sparse" if start <= i <= last and (i + 1) % interval == 0 else "dense" for i in range(n)
        ]
    return Adapted(keys)


def _per_layer(value: Any) -> tuple[int | None, bool]:
    """A HunYuan per-layer setting (an int, or a list of one per layer): its value, and whether every layer agrees."""
    if isinstance(value, list):
        ints = [v for v in value if _int(v) is not None]
        if not ints or len(ints) != len(value):
            return None, False
        return ints[0], len(set(ints)) == 1
    return _int(value), True


def hunyuan_v1_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/hunyuan_v1.py (HunYuanMoEV1ForCausalLM): q/k RMSNorms over head_dim when
    use_qk_norm; every layer a HunYuanSparseMoeBlock of num_experts experts, top moe_topk[layer], experts of
    moe_intermediate_size[layer], a gate without bias, and with use_mixed_mlp_moe a shared MLP of intermediate_size x
    num_shared_expert[layer]. Per-layer lists are read at layer 0 (approximate when the layers differ); CLA (use_cla,
    K/V shared across cla_share_factor layers) is not modelled."""
    top_k, same_k = _per_layer(c.get("moe_topk"))
    expert_i, same_i = _per_layer(c.get("moe_intermediate_size"))
    shared, same_s = _per_layer(c.get("num_shared_expert"))
    keys: dict[str, Any] = {"num_experts_per_tok": top_k, "moe_intermediate_size": expert_i}
    keys["n_shared_experts"] = (shared or 0) if c.get("use_mixed_mlp_moe") else 0
    keys["moe_shared_expert_intermediate_size"] = c.get("intermediate_size")
    fam: dict[str, Any] = {"qk_norm": c.get("use_qk_norm") is True}
    if c.get("use_cla") is True:
        fam["approximate"] = "HunYuan's cross-layer attention (use_cla) shares K/V across layers: counted per layer"
    elif not (same_k and same_i and same_s):
        fam["approximate"] = "per-layer moe_topk / moe_intermediate_size / num_shared_expert differ: read at layer 0"
    return Adapted(keys, fam)


def kimi_linear_keys(c: Mapping[str, Any]) -> Adapted:
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


def minimax_text01_keys(c: Mapping[str, Any]) -> Adapted:
    """MiniMax-Text-01 / MiniMax-M1 (vLLM's minimax_text_01.py, served until 0.23.0; the layer lives on in 0.33 as
    layers/mamba/linear/minimax_linear_attn.py MiniMaxText01LinearAttention): attn_type_list per layer, 0 a
    lightning (linear) attention layer, 1 softmax attention. A lightning layer is qkv_proj (3 x heads x head_dim),
    output_gate, out_proj and a norm over heads x head_dim, and caches one (heads, head_dim, head_dim) state per
    request (MambaStateShapeCalculator.linear_attention_state_shape) in the model dtype; experts are Mixtral's
    (num_local_experts of intermediate_size), plus a shared MLP only when shared_intermediate_size > 0."""
    types = c.get("attn_type_list")
    keys: dict[str, Any] = {}
    if isinstance(types, list):
        keys["layer_types"] = ["full_attention" if t == 1 else "linear_attention" for t in types]
    return Adapted(keys)


def qwen1_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/qwen.py (to 0.23.0) QWenBlock: QWenMLP(hidden_size, intermediate_size // 2) -- the
    config's intermediate_size counts both halves of the gated MLP (w1, w2), c_proj takes half back; c_attn is a
    fused q/k/v with a bias and one K/V head per query head (no num_key_value_heads key); c_proj has no bias."""
    inter = _int(c.get("intermediate_size"))
    return Adapted(
        {"intermediate_size": inter // 2 if inter else None, "num_key_value_heads": _int(c.get("num_attention_heads"))}
    )


def cohere_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/commandr.py: one norm (LayerNorm without bias) before parallel attention and MLP,
    the lm_head always tied to the embeddings, use_qk_norm over every head (heads x head_dim)."""
    return Adapted({"tie_word_embeddings": True}, {"qk_norm": c.get("use_qk_norm") is True})


def cohere2_moe_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/cohere2_moe.py (North Mini Code, BLS-Mini-Code): no lm_head (the logits come from
    embed_tokens), the dense prefix layers' MLP is prefix_dense_intermediate_size wide (the experts' width is
    intermediate_size), use_qk_norm as Command-R has it."""
    keys = {"tie_word_embeddings": True, "intermediate_size_mlp": c.get("prefix_dense_intermediate_size")}
    return Adapted(keys, {"qk_norm": c.get("use_qk_norm") is True})


def _mamba2_keys(c: Mapping[str, Any]) -> dict[str, Any]:
    """The Mamba2 mixer's mamba_* config keys (granite-4.0-h, Falcon-H1) under the names the mixer reader takes."""
    return {
        "mamba_num_heads": c.get("mamba_n_heads"),
        "mamba_head_dim": c.get("mamba_d_head"),
        "ssm_state_size": c.get("mamba_d_state"),
        "n_groups": c.get("mamba_n_groups"),
        "conv_kernel": c.get("mamba_d_conv"),
        "use_conv_bias": c.get("mamba_conv_bias"),
    }


def granite_hybrid_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/granitemoehybrid.py: layer_types "mamba" / "attention" (or layers_block_type), a
    Mamba2 mixer from the mamba_* keys, MoE with a shared MLP of shared_intermediate_size (a dense MLP of that width
    when there are no experts), no positional encoding on attention ("nope")."""
    types = c.get("layer_types") or c.get("layers_block_type")
    keys = _mamba2_keys(c)
    if isinstance(types, list):
        keys["layer_types"] = ["full_attention" if t == "attention" else "mamba" for t in types]
    if not c.get("num_local_experts"):
        keys["intermediate_size"] = c.get("shared_intermediate_size")
    return Adapted(keys, {})


def falcon_h1_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/falcon_h1.py FalconH1ParallelHybrid: attention and a Mamba2 mixer side by side in
    every layer (mamba_d_ssm wide, or mamba_expand x hidden), then the MLP; RMSNormGated only with mamba_rms_norm."""
    return Adapted(
        {
            **_mamba2_keys(c),
            "mamba_proj_bias": c.get("mamba_proj_bias"),
        }
    )


def deepseek_v4_keys(c: Mapping[str, Any]) -> Adapted:  # noqa: ARG001 (adapters take the config)
    """DeepSeek-V4 (vllm/models/deepseek_v4): its KV cache (model/compressed_attention.py, memory/kv_dsv4.py) and
    its attention tensors (model/dsv4_tensors.py) follow vLLM 0.33; what its profiling pass allocates beyond a
    generic decoder is not known well enough (the field logs of 0.22-0.27 leave 2 to 40 GiB unexplained), so the
    memory left for the KV cache is an estimate."""
    reason = (
        "DeepSeek-V4's profiling pass (sparse-attention and indexer workspaces, hyper-connection activations) is not "
        "fully modelled: the memory left for the KV cache is an estimate (its weights and KV cache layout follow "
        "vLLM 0.33)"
    )
    return Adapted({}, {"approximate": reason}, drop=("sliding_window",))


def mllama_keys(c: Mapping[str, Any]) -> Adapted:
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


def dbrx_keys(c: Mapping[str, Any]) -> Adapted:
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


def lfm2_keys(c: Mapping[str, Any]) -> Adapted:
    """vllm/model_executor/models/lfm2.py: layer_types "conv" (a ShortConv mixer, layers/mamba/short_conv.py, of
    conv_dim channels and conv_L_cache taps) or "full_attention"; every layer a gated MLP (w1, w3, w2) whose width
    Lfm2MLP derives from intermediate_size (transformers' Lfm2Config reads block_ff_dim first): with
    block_auto_adjust_ff_dim, int(2 x it / 3), times block_ffn_dim_multiplier, rounded up to block_multiple_of.
    Lfm2Config ties the embedding by default (tie_embedding is the older key) and, without layer_types, makes the layers
    in full_attn_idxs attention and the rest "conv"."""
    types = c.get("layer_types")
    ff = _int(c.get("block_ff_dim")) or _int(c.get("intermediate_size"))
    if ff is not None and c.get("block_auto_adjust_ff_dim") is True:
        ff = int(2 * ff / 3)
        multiplier = c.get("block_ffn_dim_multiplier")
        if isinstance(multiplier, (int, float)) and not isinstance(multiplier, bool):
            ff = int(multiplier * ff)
        step = _int(c.get("block_multiple_of")) or 1
        ff = step * ((ff + step - 1) // step)
    keys: dict[str, Any] = {
        "intermediate_size": ff,
        "short_conv_dim": _int(c.get("conv_dim")) or _int(c.get("hidden_size")),
        "conv_kernel": c.get("conv_L_cache"),
        "use_conv_bias": c.get("conv_bias") is True,
        "rms_norm_eps": c.get("norm_eps"),
        "tie_word_embeddings": c.get("tie_word_embeddings", c.get("tie_embedding")),
    }
    attn = c.get("full_attn_idxs")
    layers = _int(c.get("num_hidden_layers"))
    if not isinstance(types, list) and isinstance(attn, list) and layers is not None:
        # Lfm2Config without layer_types (the first releases): full_attn_idxs names the attention layers
        types = ["full_attention" if i in attn else "conv" for i in range(layers)]
    if isinstance(types, list):
        keys["layer_types"] = ["mamba" if t == "conv" else t for t in types]
    return Adapted(keys, {})
