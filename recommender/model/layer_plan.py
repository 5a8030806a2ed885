"""Which token mixer and which MLP each decoder layer has: sliding-window and chunked patterns, hybrid
attention / linear-attention / Mamba layouts, and MoE placement. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from recommender.errors import ModelConfigError, UnsupportedArchitectureError
from recommender.model.config_values import MAX_LAYERS, MAX_POSITIONS, ConfigValues
from recommender.model.spec import LayerKind, MlpKind

LAYER_TYPES: dict[str, LayerKind] = {
    "full_attention": "full",
    "sliding_attention": "sliding",
    "linear_attention": "linear_attention",
    "chunked_attention": "chunked",
    "attention": "full",
    "deepseek_sparse_attention": "full",
    "mamba": "mamba",  # Granite-4.0-H
    "cross_attention": "cross",  # Llama-3.2-Vision  # GLM-5.2: MLA with the DSA indexer (the config's indexer keys say which)
}
# hybrid_override_pattern symbols (Nemotron-H) and the layers_block_type names that spell them.
PATTERN_SYMBOLS: dict[str, tuple[LayerKind, MlpKind]] = {
    "M": ("mamba", "none"),
    "*": ("full", "none"),
    "-": ("none", "dense"),
    "E": ("none", "moe"),
}
BLOCK_TYPE_SYMBOLS = {"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}
GEMMA2_SLIDING_EVERY = 2  # Gemma-2: even layers slide, odd layers are global
GEMMA3_DEFAULT_PATTERN = 6  # Gemma-3: every 6th layer is global (sliding_window_pattern)
COHERE2_DEFAULT_PATTERN = 4  # Command R7B / A: every 4th layer is global (transformers' Cohere2Config)
LLAMA4_GLOBAL_EVERY = 4  # Llama-4: every 4th layer is global (NoPE), the rest chunked-local


def _repeat(kind: LayerKind, n: int) -> tuple[LayerKind, ...]:
    return tuple(kind for _ in range(n))


def _repeat_mlp(kind: MlpKind, n: int) -> tuple[MlpKind, ...]:
    return tuple(kind for _ in range(n))


def attention_free_plan(n_layers: int) -> LayerPlan:
    """Mamba-only models: a mixer and no MLP in every layer."""
    return LayerPlan(_repeat("mamba", n_layers), _repeat_mlp("none", n_layers))


@dataclass(frozen=True, slots=True)
class LayerPlan:
    """Token mixer and MLP kind per layer, and the window (or chunk) of the windowed layers."""

    kinds: tuple[LayerKind, ...]
    mlps: tuple[MlpKind, ...]
    window: int | None = None


def hybrid_pattern(c: ConfigValues) -> str | None:
    """Nemotron-H's layer pattern, from hybrid_override_pattern or layers_block_type."""
    pattern = c.raw("hybrid_override_pattern")
    if pattern is not None:
        if not isinstance(pattern, str):
            raise ModelConfigError("config.json 'hybrid_override_pattern' must be a string")
        return pattern
    block_types = c.raw("layers_block_type")
    if isinstance(block_types, list):
        return "".join(BLOCK_TYPE_SYMBOLS.get(str(t), "?") for t in block_types)
    return None


def nemotron_h_plan(pattern: str, n_layers: int) -> LayerPlan:
    """One symbol per layer: M (Mamba2), * (attention), - (MLP), E (MoE)."""
    if len(pattern) != n_layers:
        raise ModelConfigError("hybrid_override_pattern length differs from num_hidden_layers")
    kinds: list[LayerKind] = []
    mlps: list[MlpKind] = []
    for ch in pattern:
        if ch not in PATTERN_SYMBOLS:
            raise UnsupportedArchitectureError(f"hybrid_override_pattern symbol {ch!r} is not modelled")
        kind, mlp = PATTERN_SYMBOLS[ch]
        kinds.append(kind)
        mlps.append(mlp)
    return LayerPlan(tuple(kinds), tuple(mlps))


def jamba_plan(c: ConfigValues, n_layers: int, n_experts: int) -> LayerPlan:
    """JambaConfig: attention where i % attn_layer_period == attn_layer_offset (else Mamba1); MoE where
    i % expert_layer_period == expert_layer_offset (else a dense MLP)."""
    attn_period = c.get_int("attn_layer_period", 8, bound=MAX_LAYERS)
    attn_offset = c.get_int("attn_layer_offset", 4, zero_ok=True, bound=MAX_LAYERS)
    moe_period = c.get_int("expert_layer_period", 2, bound=MAX_LAYERS)
    moe_offset = c.get_int("expert_layer_offset", 1, zero_ok=True, bound=MAX_LAYERS)
    kinds: tuple[LayerKind, ...] = tuple("full" if i % attn_period == attn_offset else "mamba" for i in range(n_layers))
    mlps: tuple[MlpKind, ...] = tuple(
        "moe" if n_experts > 1 and i % moe_period == moe_offset else "dense" for i in range(n_layers)
    )
    return LayerPlan(kinds, mlps)


def _global_every(c: ConfigValues, model_type: str, window: int | None) -> int | None:
    """Every how many layers one is global, the rest sliding: Gemma-3's sliding_window_pattern (default 6), and
    Cohere2's (default 4) when it has a window: Cohere2Config builds layer_types from it when a config has none,
    and vllm/model_executor/models/commandr.py gives the window only to its "sliding_attention" layers."""
    if model_type.startswith("gemma3"):
        return c.get_int("sliding_window_pattern", GEMMA3_DEFAULT_PATTERN, bound=MAX_LAYERS)
    if model_type == "cohere2" and window:
        return c.get_int("sliding_window_pattern", COHERE2_DEFAULT_PATTERN, bound=MAX_LAYERS)
    return None


def attention_kinds(c: ConfigValues, n_layers: int, model_type: str) -> tuple[tuple[LayerKind, ...], int | None]:
    """Token mixer per layer and the sliding window (or chunk) size, for attention (and gated-DeltaNet) models."""
    raw_window = c.raw("sliding_window")
    window = (
        c.get_int("sliding_window", zero_ok=True, bound=MAX_POSITIONS) or None
        if isinstance(raw_window, int) and not isinstance(raw_window, bool)
        else None
    )
    types = c.raw("layer_types")
    mla = bool(c.raw("kv_lora_rank"))
    if isinstance(types, list) and len(types) != n_layers:
        raise ModelConfigError(f"config.json layer_types lists {len(types)} layers, num_hidden_layers is {n_layers}")
    if isinstance(types, list):
        unknown = next((t for t in types if t not in LAYER_TYPES), None)
        if unknown is not None:
            raise UnsupportedArchitectureError(f"layer type {unknown!r} in layer_types is not modelled")
        kinds = tuple(LAYER_TYPES[t] for t in types)
        return tuple("mla" if mla and k == "full" else k for k in kinds), window
    if mla:
        return _repeat("mla", n_layers), None
    interval = c.opt_int("full_attention_interval", bound=MAX_LAYERS)
    if interval and c.has("linear_num_value_heads"):
        return tuple("full" if (i + 1) % interval == 0 else "linear_attention" for i in range(n_layers)), None
    if model_type == "gemma2":
        return tuple("sliding" if i % GEMMA2_SLIDING_EVERY == 0 else "full" for i in range(n_layers)), window
    global_every = _global_every(c, model_type, window)
    if global_every:
        return tuple("full" if (i + 1) % global_every == 0 else "sliding" for i in range(n_layers)), window
    chunk = c.opt_int("attention_chunk_size", bound=MAX_POSITIONS)
    if chunk:
        no_rope = c.raw("no_rope_layers")
        if isinstance(no_rope, list) and len(no_rope) == n_layers:
            return tuple("chunked" if r else "full" for r in no_rope), chunk
        return tuple("full" if (i + 1) % LLAMA4_GLOBAL_EVERY == 0 else "chunked" for i in range(n_layers)), chunk
    max_positions = c.get_int("max_position_embeddings", MAX_POSITIONS, bound=MAX_POSITIONS)
    if window and c.raw("use_sliding_window", True) is not False and window < max_positions:
        max_window_layers = c.opt_int("max_window_layers", bound=MAX_LAYERS)
        if model_type.startswith("qwen") and max_window_layers is not None:
            return tuple("sliding" if i < max_window_layers else "full" for i in range(n_layers)), window
        return _repeat("sliding", n_layers), window
    return _repeat("full", n_layers), None


def mlp_kinds(c: ConfigValues, n_layers: int, n_experts: int) -> tuple[MlpKind, ...]:
    """Dense or MoE per layer: first_k_dense_replace, moe_layer_freq (int or per-layer list),
    decoder_sparse_step, interleave_moe_layer_step, mlp_only_layers."""
    if n_experts <= 0:
        return _repeat_mlp("dense", n_layers)
    named = c.raw("mlp_layer_types")  # GLM-5.2, Step-3.5, Laguna: "dense" / "sparse" per layer
    if isinstance(named, list) and len(named) == n_layers:
        return tuple("moe" if t == "sparse" else "dense" for t in named)
    first_dense = c.get_int("first_k_dense_replace", 0, zero_ok=True, bound=MAX_LAYERS)
    raw_freq = c.raw("moe_layer_freq", 1)
    per_layer = c.int_list("moe_layer_freq", length=n_layers) if isinstance(raw_freq, list) else None
    freq = 1 if per_layer is not None else c.get_int("moe_layer_freq", 1, bound=MAX_LAYERS)
    step = c.get_int("decoder_sparse_step", 1, bound=MAX_LAYERS)
    interleave = c.get_int("interleave_moe_layer_step", 1, bound=MAX_LAYERS)
    only_dense = set(c.int_list("mlp_only_layers", bound=MAX_LAYERS) or [])
    kinds: list[MlpKind] = []
    for i in range(n_layers):
        moe = (
            i >= first_dense
            and i % freq == 0
            and (per_layer is None or bool(per_layer[i]))
            and (i + 1) % step == 0
            and (i + 1) % interleave == 0
            and i not in only_dense
        )
        kinds.append("moe" if moe else "dense")
    return tuple(kinds)


DECILM_FFN_MULTIPLE = 256  # nemotron_nas.py _ffn_mult_to_intermediate_size: int(2 * mult * H / 3), rounded up to 256


@dataclass(frozen=True, slots=True)
class DeciLayers:
    """Nemotron-NAS (DeciLM) block_configs: which layers keep attention / an FFN, and their sizes."""

    plan: LayerPlan
    kv_heads: tuple[int, ...]
    intermediate: tuple[int, ...]
    approximate: str = ""


def decilm_layers(c: ConfigValues, n_layers: int, heads: int, hidden: int) -> DeciLayers:
    """vllm/model_executor/models/nemotron_nas.py DeciLMDecoderLayer: attention.no_op drops attention (and its
    input norm), n_heads_in_group sets the KV heads; ffn.no_op drops the MLP, ffn_mult (or intermediate_size) sizes
    it. replace_with_linear blocks are counted as absent and marked approximate."""
    blocks = c.raw("block_configs")
    if not isinstance(blocks, list) or len(blocks) != n_layers:
        raise ModelConfigError("config.json block_configs must list one block per layer")
    kinds: list[LayerKind] = []
    mlps: list[MlpKind] = []
    kv: list[int] = []
    widths: list[int] = []
    linear = False
    for i, block in enumerate(blocks):
        b = ConfigValues(block if isinstance(block, dict) else {}, f"config.json block_configs[{i}]")
        attn = ConfigValues(b.mapping("attention"), f"config.json block_configs[{i}].attention")
        ffn = ConfigValues(b.mapping("ffn"), f"config.json block_configs[{i}].ffn")
        linear = linear or attn.flag("replace_with_linear") or ffn.flag("replace_with_linear")
        has_attn = not attn.flag("no_op") and not attn.flag("replace_with_linear")
        kinds.append("full" if has_attn else "none")
        kv.append(heads // attn.get_int("n_heads_in_group", bound=heads) if has_attn else 0)
        if ffn.flag("no_op") or ffn.flag("replace_with_linear"):
            mlps.append("none")
            widths.append(0)
            continue
        mlps.append("dense")
        if ffn.has("ffn_mult"):
            width = int(2 * ffn.number("ffn_mult", 0.0) * hidden / 3)
            widths.append(-(-width // DECILM_FFN_MULTIPLE) * DECILM_FFN_MULTIPLE)
        else:
            widths.append(ffn.get_int("intermediate_size"))
    reason = (
        "replace_with_linear blocks (a linear layer in place of attention or FFN) are not counted" if linear else ""
    )
    return DeciLayers(LayerPlan(tuple(kinds), tuple(mlps)), tuple(kv), tuple(widths), reason)
