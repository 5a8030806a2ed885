"""Per-feature extractors: config values -> the spec of one architectural feature (MoE, MLA, gated DeltaNet,
Mamba, rotary positions, context length; the multimodal encoders are in encoder_features). Pure; every value read
through ConfigValues (bounded)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recommender.errors import ModelConfigError
from recommender.model.config_values import (
    MAX_EXPERTS,
    MAX_HEADS,
    MAX_HIDDEN,
    MAX_LAYERS,
    MAX_POSITIONS,
    ConfigValues,
    checked_int,
)
from recommender.model.spec import IndexerSpec, LinearAttentionSpec, MambaSpec, MlaSpec, MoeSpec

# vLLM transformers_utils/model_arch_config_convertor.py: keys whose minimum is the derived max length.
MAX_LEN_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
DEFAULT_MAX_LEN = 2048  # vLLM's fallback when no key is set (config/model.py _get_and_verify_max_len)
# Rope types whose `factor` is already reflected in max_position_embeddings (config/model.py).
ROPE_NO_SCALE = {"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling", "mrope", "default"}
YARN_TYPES = ("yarn", "deepseek_yarn")

# Config keys naming the routed-expert count, top-k and widths, across families.
EXPERT_COUNT_KEYS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")
TOP_K_KEYS = ("num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_topk", "top_k_experts")

GEMMA4_MOE_NORMS = 3  # post_feedforward_layernorm_1/_2, pre_feedforward_layernorm_2 (gemma4.py)

# transformers' config defaults for topk_method ("noaux_tc" adds an e_score_correction_bias per expert).
TOPK_METHOD_DEFAULTS = {"deepseek_v3": "noaux_tc", "kimi_k2": "noaux_tc"}

DEFAULT_CONV_KERNEL = 4  # Mamba / gated DeltaNet causal conv width (transformers defaults)
MAMBA1_DT_RANK_DIVISOR = 16  # time_step_rank "auto" = ceil(hidden / 16) (MambaConfig, JambaConfig)


def experts_count(c: ConfigValues) -> int:
    """Routed experts per MoE layer (0 for a dense model)."""
    return c.first_int(EXPERT_COUNT_KEYS, 0, bound=MAX_EXPERTS)


def moe_spec(c: ConfigValues, model_type: str, intermediate: int, *, score_bias: bool | None = None) -> MoeSpec:
    """Routed experts, shared experts and router extras of an MoE layer."""
    n_experts = experts_count(c)
    top_k = c.first_int(TOP_K_KEYS, 0, bound=MAX_EXPERTS)
    if top_k <= 0:
        raise ModelConfigError("MoE config is missing num_experts_per_tok")
    if top_k > n_experts:
        raise ModelConfigError(f"MoE config routes each token to {top_k} experts but has only {n_experts}")
    if model_type.startswith(("llama4", "gemma4")):
        # Llama-4: the shared expert has the dense width; Gemma-4: a dense MLP runs beside the experts.
        expert_i = c.get_int("moe_intermediate_size", intermediate)
        shared = intermediate
    else:
        expert_i = c.first_int(("moe_intermediate_size",), intermediate)
        shared = c.first_int(("shared_expert_intermediate_size",), 0)
        if not shared:  # Granite-MoE-shared / 4.0-H: a shared MLP of shared_intermediate_size, no gate
            shared = c.first_int(("shared_intermediate_size",), 0)
        if not shared and c.has("share_expert_dim"):  # Step-3.5: one shared expert of share_expert_dim
            shared = c.get_int("n_shared_experts", 1, bound=MAX_EXPERTS) * c.get_int("share_expert_dim")
        n_shared = c.first_int(("n_shared_experts", "num_shared_experts"), 0, bound=MAX_EXPERTS)
        if not shared and n_shared:
            shared = n_shared * c.first_int(("moe_shared_expert_intermediate_size",), expert_i)
    if expert_i <= 0:
        raise ModelConfigError("MoE config is missing moe_intermediate_size")
    return MoeSpec(
        num_experts=n_experts,
        top_k=top_k,
        expert_intermediate=expert_i,
        shared_intermediate=shared,
        gated=model_type != "nemotron_h",
        expert_bias=model_type == "gpt_oss",
        router_bias=model_type == "gpt_oss",
        shared_gate=c.has("shared_expert_intermediate_size"),
        latent_size=c.first_int(("moe_latent_size", "routed_expert_hidden_size"), 0, bound=MAX_HIDDEN),
        score_correction_bias=(
            score_bias
            if score_bias is not None
            else c.text("topk_method", TOPK_METHOD_DEFAULTS.get(model_type, "")) == "noaux_tc"
        ),
        router_scales=model_type.startswith("gemma4"),
        extra_norms=GEMMA4_MOE_NORMS if model_type.startswith("gemma4") else 0,
    )


@dataclass(frozen=True, slots=True)
class LayerShapes:
    """Per-layer attention and MLP sizes where layers differ (Gemma-4: global_head_dim and
    num_global_key_value_heads on full-attention layers, KV sharing, double-wide MLPs on the shared layers)."""

    kv_heads: tuple[int, ...] = ()
    head_dim: tuple[int, ...] = ()
    intermediate: tuple[int, ...] = ()
    k_eq_v: bool = False
    kv_shared_from: int | None = None


def layer_shapes(c: ConfigValues, kinds: tuple[str, ...], head_dim: int, kv_heads: int, inter: int) -> LayerShapes:
    """vllm/model_executor/models/gemma4.py: per_layer_config (full layers use global_head_dim and
    num_global_key_value_heads), the last num_kv_shared_layers read an earlier layer's KV, and use_double_wide_mlp
    doubles their MLP."""
    n = len(kinds)
    shared = c.get_int("num_kv_shared_layers", 0, zero_ok=True, bound=MAX_LAYERS)
    if shared >= n:
        raise ModelConfigError(f"config.json num_kv_shared_layers ({shared}) must be below num_hidden_layers ({n})")
    shared_from = n - shared if shared else None
    global_dim = c.opt_int("global_head_dim")
    global_kv = c.opt_int("num_global_key_value_heads", bound=MAX_HEADS)
    swa_dim = c.opt_int("swa_head_dim")  # MiMo-V2: the sliding layers' own heads
    swa_kv = c.opt_int("swa_num_key_value_heads", bound=MAX_HEADS)
    dims: tuple[int, ...] = ()
    heads: tuple[int, ...] = ()
    if global_dim or global_kv or swa_dim or swa_kv:
        full_dim, full_kv = global_dim or head_dim, global_kv or kv_heads
        slide_dim, slide_kv = swa_dim or head_dim, swa_kv or kv_heads
        dims = tuple(full_dim if k == "full" else slide_dim for k in kinds)
        heads = tuple(full_kv if k == "full" else slide_kv for k in kinds)
    widths: tuple[int, ...] = ()
    if shared_from is not None and c.flag("use_double_wide_mlp"):
        widths = tuple(2 * inter if i >= shared_from else inter for i in range(n))
    return LayerShapes(heads, dims, widths, c.flag("attention_k_eq_v"), shared_from)


# MiniCPM3: MLA projections over a per-head cache (MlaSpec.per_head_cache). Its remote MiniCPM3Config sets
# v_head_dim to qk_nope_head_dim when config.json omits it (openbmb/MiniCPM3-4B configuration_minicpm.py).
PER_HEAD_MLA_TYPES = frozenset({"minicpm3"})


def mla_spec(c: ConfigValues, n_layers: int, model_type: str = "") -> MlaSpec:
    """Multi-head latent attention ranks (DeepSeek V2/V3, Kimi-K2), with the sparse-attention indexer when the
    config has index_topk (DeepSeek-V3.2, GLM-5)."""
    nope, rope = c.get_int("qk_nope_head_dim"), c.get_int("qk_rope_head_dim")
    per_head = model_type in PER_HEAD_MLA_TYPES
    return MlaSpec(
        kv_lora_rank=c.get_int("kv_lora_rank"),
        q_lora_rank=c.opt_int("q_lora_rank") or None,
        qk_nope_head_dim=nope,
        qk_rope_head_dim=rope,
        v_head_dim=c.get_int("v_head_dim", nope) if per_head else c.get_int("v_head_dim"),
        indexer=indexer_spec(c, n_layers) if c.has("index_topk") else None,
        per_head_cache=nope + rope if per_head else 0,
    )


INDEX_SKIP_TOPK_OFFSET = 2  # vllm/models/deepseek_v32/attention.py: getattr(config, "index_skip_topk_offset", 2)


def indexer_spec(c: ConfigValues, n_layers: int) -> IndexerSpec:
    """The indexer and the layers that hold one: every layer unless index_topk_freq / index_topk_pattern skip it
    (skip when max(layer - offset + 1, 0) % freq != 0, or the pattern says "S")."""
    freq = c.get_int("index_topk_freq", 1, bound=MAX_LAYERS)
    offset = c.get_int("index_skip_topk_offset", INDEX_SKIP_TOPK_OFFSET, zero_ok=True, bound=MAX_LAYERS)
    pattern = c.raw("index_topk_pattern")
    if isinstance(pattern, str):
        layers = {i for i in range(n_layers) if i >= len(pattern) or pattern[i] != "S"}
    else:
        layers = {i for i in range(n_layers) if max(i - offset + 1, 0) % freq == 0}
    return IndexerSpec(
        n_heads=c.get_int("index_n_heads", bound=MAX_HEADS),
        head_dim=c.get_int("index_head_dim"),
        topk=c.get_int("index_topk", bound=MAX_POSITIONS),
        layers=frozenset(layers),
    )


def linear_attention_spec(c: ConfigValues) -> LinearAttentionSpec:
    """Gated DeltaNet heads (Qwen3-Next, Qwen3.5), or Kimi delta attention from linear_attn_config (Kimi-Linear:
    MambaStateShapeCalculator.kda_state_shape, recurrent state in float32 unless --mamba-ssm-cache-dtype)."""
    if c.has("linear_attn_config"):
        kda = ConfigValues(c.mapping("linear_attn_config"), "config.json linear_attn_config")
        heads, dim = kda.get_int("num_heads", bound=MAX_HEADS), kda.get_int("head_dim")
        return LinearAttentionSpec(
            num_k_heads=heads,
            num_v_heads=heads,
            head_k_dim=dim,
            head_v_dim=dim,
            conv_kernel=kda.get_int("short_conv_kernel_size", DEFAULT_CONV_KERNEL),
            state_dtype="float32",
            style="kda",
        )
    return LinearAttentionSpec(
        num_k_heads=c.get_int("linear_num_key_heads"),
        num_v_heads=c.get_int("linear_num_value_heads"),
        head_k_dim=c.get_int("linear_key_head_dim"),
        head_v_dim=c.get_int("linear_value_head_dim"),
        conv_kernel=c.get_int("linear_conv_kernel_dim", DEFAULT_CONV_KERNEL),
        state_dtype=c.text("mamba_ssm_dtype") or None,
    )


def lightning_attention_spec(c: ConfigValues) -> LinearAttentionSpec:
    """MiniMax lightning attention (LinearAttention base, layers/mamba/linear/base.py): num_attention_heads heads of
    head_dim (hidden_size // heads when absent), no conv; its (heads, head_dim, head_dim) state is in the served
    model dtype (linear_attention_state_dtype: get_kv_cache_torch_dtype of --mamba-cache-dtype auto), which
    memory/kv_cache.py applies."""
    heads = c.get_int("num_attention_heads", bound=MAX_HEADS)
    dim = c.opt_int("head_dim") or max(1, c.get_int("hidden_size") // heads)
    return LinearAttentionSpec(
        num_k_heads=heads,
        num_v_heads=heads,
        head_k_dim=dim,
        head_v_dim=dim,
        conv_kernel=1,  # no causal conv: conv_kernel - 1 = 0 state columns
        style="lightning",
    )


def mamba2_spec(c: ConfigValues, model_type: str) -> MambaSpec:
    """A Mamba2 mixer (Nemotron-H, Granite-4-H, Falcon-H1). The SSM state is float32 for Nemotron-H unless its config
    says otherwise (config.py NemotronHForCausalLMConfig); the model dtype elsewhere (--mamba-ssm-cache-dtype auto)."""
    heads = c.get_int("mamba_num_heads")
    head_dim = c.get_int("mamba_head_dim")
    if c.has("mamba_d_ssm") and c.get_int("mamba_d_ssm") != heads * head_dim:
        raise ModelConfigError("config.json mamba_d_ssm differs from mamba_n_heads x mamba_d_head")
    return MambaSpec(
        num_heads=heads,
        head_dim=head_dim,
        state_size=c.get_int("ssm_state_size"),
        n_groups=c.get_int("n_groups", 1),
        conv_kernel=c.get_int("conv_kernel", DEFAULT_CONV_KERNEL),
        intermediate=heads * head_dim,
        ssm_state_dtype=c.text("mamba_ssm_cache_dtype") or ("float32" if model_type == "nemotron_h" else None),
        conv_bias=c.flag("use_conv_bias", True),
        proj_bias=c.flag("mamba_proj_bias", False),
        gated_norm=c.flag("mamba_rms_norm", False) if model_type == "falcon_h1" else True,  # FalconH1Config: False
    )


def short_conv_spec(c: ConfigValues) -> MambaSpec:
    """LFM2's ShortConv mixer (vllm/model_executor/layers/mamba/short_conv.py): in_proj to 3 x conv_dim, a depthwise
    conv of conv_kernel taps, out_proj back; its state is the conv's last conv_kernel - 1 columns (version 0)."""
    return MambaSpec(
        num_heads=0,
        head_dim=0,
        state_size=0,
        n_groups=1,
        conv_kernel=c.get_int("conv_kernel", DEFAULT_CONV_KERNEL),
        intermediate=c.get_int("short_conv_dim", bound=MAX_HIDDEN * 4),
        version=0,
        conv_bias=c.flag("use_conv_bias", False),
        proj_bias=c.flag("use_conv_bias", False),
        gated_norm=False,
    )


def mamba1_spec(c: ConfigValues, hidden: int, *, jamba: bool) -> MambaSpec:
    """A Mamba1 mixer (Jamba's mamba_* keys, or MambaConfig's state_size / expand / time_step_rank)."""
    prefix, state_key, conv_key, rank_key = (
        ("mamba_", "mamba_d_state", "mamba_d_conv", "mamba_dt_rank")
        if jamba
        else ("", "state_size", "conv_kernel", "time_step_rank")
    )
    expand = c.get_int(f"{prefix}expand", 2)
    # vLLM's MambaMixer takes config.intermediate_size; MambaConfig derives it from expand x hidden, but a saved
    # intermediate_size wins (Falcon-Mamba-7B: expand 16 written, intermediate_size 8192 = the real d_inner)
    width = expand * hidden if jamba or not c.has("intermediate_size") else c.get_int("intermediate_size")
    rank_raw = c.raw(rank_key, "auto")
    dt_rank = math.ceil(hidden / MAMBA1_DT_RANK_DIVISOR) if rank_raw == "auto" else c.get_int(rank_key)
    return MambaSpec(
        num_heads=0,
        head_dim=0,
        state_size=c.get_int(state_key, 16),
        n_groups=1,
        conv_kernel=c.get_int(conv_key, DEFAULT_CONV_KERNEL),
        intermediate=checked_int(width, "mamba intermediate_size (expand x hidden_size)", bound=MAX_HIDDEN * 4),
        ssm_state_dtype=c.text("mamba_ssm_cache_dtype") or None,
        version=1,
        dt_rank=dt_rank,
        conv_bias=c.flag("mamba_conv_bias" if jamba else "use_conv_bias", True),
        proj_bias=c.flag("mamba_proj_bias" if jamba else "use_bias", False),
        inner_norms=jamba,
    )


def rope_parameters(c: ConfigValues) -> Mapping[str, Any]:
    """rope_scaling / rope_parameters (one mapping; per-layer-type maps keep their full-attention entry)."""
    rope = c.data.get("rope_scaling") or c.data.get("rope_parameters") or {}
    if not isinstance(rope, Mapping):
        return {}
    full = rope.get("full_attention")
    return full if isinstance(full, Mapping) else rope


def derive_max_len(c: ConfigValues, model_type: str) -> tuple[int, str]:
    """vLLM's derived max_model_len: min over the known keys, times the rope factor where it applies."""
    found = [(c.get_int(k, bound=MAX_POSITIONS), k) for k in MAX_LEN_KEYS if isinstance(c.data.get(k), int)]
    if not found:
        return DEFAULT_MAX_LEN, "default"
    length, key = min(found)
    rope = rope_parameters(c)
    rope_type = str(rope.get("rope_type", rope.get("type", "default")))
    factor = rope.get("factor")
    if isinstance(factor, (int, float)) and rope_type not in ROPE_NO_SCALE and not model_type.startswith("gemma3"):
        if not math.isfinite(factor) or factor <= 0:
            raise ModelConfigError(f"config.json rope factor must be a positive finite number, got {factor!r}")
        length = checked_int(int(length * factor), "max length x rope factor", bound=MAX_POSITIONS)
    return length, key


@dataclass(frozen=True, slots=True)
class Rotary:
    """The rotary cos/sin cache vLLM allocates: `dim` columns over `max_position` rows (0: no rotary). `mrope`: the
    rope parameters carry `mrope_section`, so get_rope builds an MRotaryEmbedding (Qwen2-VL, Qwen2.5/3-VL,
    Qwen3.5), whose cache vLLM enlarges (memory/weights.py rotary_caches_on_stage)."""

    dim: int
    max_position: int
    mrope: bool = False


def rotary(c: ConfigValues, head_dim: int, max_len: int, *, mla_rope_dim: int | None, uses_rope: bool) -> Rotary:
    """Rotary dimension (partial_rotary_factor, rotary_dim) and cache length (yarn extends it)."""
    if not uses_rope:
        return Rotary(0, 0)
    rope = rope_parameters(c)
    per_type = _per_layer_type_rope(c, head_dim)
    if mla_rope_dim is not None:
        dim = mla_rope_dim
    elif per_type is not None:
        dim = per_type
    elif c.has("rotary_dim"):
        dim = c.get_int("rotary_dim")
    else:
        partial = c.number("partial_rotary_factor", 0.0) or _number(rope.get("partial_rotary_factor"), 1.0)
        dim = int(head_dim * partial)
    max_position = c.get_int("max_position_embeddings", max_len, bound=MAX_POSITIONS)
    orig, factor = rope.get("original_max_position_embeddings"), rope.get("factor")
    mrope = "mrope_section" in rope
    if str(rope.get("rope_type", rope.get("type", ""))) in YARN_TYPES and orig and factor:
        original = checked_int(orig, "rope original_max_position_embeddings", bound=MAX_POSITIONS)
        extended = int(original * _number(factor, 1))
        # get_rope's yarn branch hands an MRotaryEmbedding the original length (it scales inside), a
        # YaRNScalingRotaryEmbedding the extended one
        max_position = original if mrope else checked_int(extended, "rope original x factor", bound=MAX_POSITIONS)
    return Rotary(dim, max_position, mrope)


def _per_layer_type_rope(c: ConfigValues, head_dim: int) -> int | None:
    """Gemma-4 style rope_parameters keyed by layer type: one cos/sin cache per type (get_rope caches by shape),
    full-attention layers on global_head_dim. The sum of their rotary dims, or None for a single rope. A
    "proportional" rope (Gemma4RotaryEmbedding, vllm/model_executor/layers/rotary_embedding/gemma4_rope.py) builds
    its cache over the whole head (rotary_dim = head_size, the unrotated part as identity), whatever
    partial_rotary_factor says."""
    raw = c.data.get("rope_parameters") or c.data.get("rope_scaling")
    if not isinstance(raw, Mapping) or not isinstance(raw.get("full_attention"), Mapping):
        return None
    total = 0
    for layer_type, params in raw.items():
        if isinstance(params, Mapping):
            head = c.get_int("global_head_dim", head_dim) if layer_type == "full_attention" else head_dim
            whole = params.get("rope_type") == "proportional"
            total += head if whole else int(head * _number(params.get("partial_rotary_factor"), 1.0))
    return total


def _number(value: Any, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return default
    return float(value)
