"""config.json (a mapping) -> ModelSpec. Pure: callers read the files.

Handles nested `text_config` (multimodal), MoE, MLA, sliding-window / `layer_types`, chunked-local
attention (Llama-4), gated-DeltaNet hybrids (Qwen3-Next, Qwen3.5) and Mamba2 hybrids (Nemotron-H).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recommender.errors import ModelConfigError, UnsupportedArchitectureError
from recommender.model.quant import parse_quant
from recommender.model.spec import (
    LayerKind,
    LinearAttentionSpec,
    MambaSpec,
    MlaSpec,
    MlpKind,
    ModelSpec,
    MoeSpec,
    VisionSpec,
)
from recommender.model.tensors import count_params

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
# Rope types whose `factor` is already reflected in max_position_embeddings (config/model.py).
_ROPE_NO_SCALE = {"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling", "mrope", "default"}

# Architectures whose token mixers the memory model does not cover; named precisely.
_UNSUPPORTED = {
    "DeepseekV32ForCausalLM": "DeepSeek-V3.2 sparse attention (lightning indexer K cache) is not modelled",
    "DeepseekV4ForCausalLM": "DeepSeek-V4 attention (compressed sparse KV) is not modelled",
    "GlmMoeDsaForCausalLM": "GLM-5 DeepSeek-sparse attention (indexer K cache) is not modelled",
    "KimiK3ForConditionalGeneration": "Kimi-K3 (Kimi linear attention) layout is not modelled",
    "KimiLinearForCausalLM": "Kimi delta attention (KDA) state is not modelled",
    "MiniMaxM3ForCausalLM": "MiniMax-M3 attention layout is not modelled",
    "MiniMaxM3SparseForCausalLM": "MiniMax-M3 sparse attention layout is not modelled",
    "MiniMaxM3SparseForConditionalGeneration": "MiniMax-M3 sparse attention layout is not modelled",
    "Gemma4ForConditionalGeneration": "Gemma-4 parallel dense + MoE blocks are not modelled",
    "Gemma4ForCausalLM": "Gemma-4 parallel dense + MoE blocks are not modelled",
    "DeciLMForCausalLM": "Nemotron-NAS (DeciLM) per-layer block configs are not modelled",
    "Step3p7FlashForCausalLM": "Step-3.7 attention layout is not modelled",
    "MiMoV2FlashForCausalLM": "MiMo-V2 hybrid attention layout is not modelled",
}

_REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")


def _vision(config: Mapping[str, Any], text_hidden: int) -> VisionSpec | None:
    """A ViT-style vision tower from `vision_config`, when its size is stated."""
    v = config.get("vision_config")
    if not isinstance(v, Mapping):
        return None
    depth = v.get("depth") or v.get("num_hidden_layers")
    hidden, inter = v.get("hidden_size"), v.get("intermediate_size")
    if not all(isinstance(x, int) and x > 0 for x in (depth, hidden, inter)):
        return None
    assert isinstance(depth, int) and isinstance(hidden, int) and isinstance(inter, int)
    patch = int(v.get("patch_size") or 14)
    channels = int(v.get("in_channels") or v.get("num_channels") or 3)
    temporal = int(v.get("temporal_patch_size") or 1)
    positions = int(v.get("num_position_embeddings") or (int(v.get("image_size") or 896) // patch) ** 2)
    merge = int(v.get("spatial_merge_size") or 0)
    out_hidden = int(v.get("out_hidden_size") or text_hidden)
    proj_in = hidden * merge * merge if merge else hidden
    return VisionSpec(
        depth=depth,
        hidden=hidden,
        intermediate=inter,
        patch_params=channels * patch * patch * temporal * hidden + hidden,
        positions=positions,
        projector_in=proj_in,
        projector_hidden=proj_in if merge else 0,
        out_hidden=out_hidden,
    )


def _merged(config: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """Language-model keys, lifting a nested `text_config` (multimodal wrappers) over the top level."""
    text = config.get("text_config") or config.get("llm_config")
    multimodal = bool(config.get("vision_config") or text)
    merged = {k: v for k, v in config.items() if k not in ("text_config", "vision_config", "llm_config")}
    if isinstance(text, Mapping):
        merged.update(text)
    return merged, multimodal


def _pos_int(c: Mapping[str, Any], key: str, default: int | None = None, *, allow_zero: bool = False) -> int:
    value = c.get(key, default)
    if value is None:
        raise ModelConfigError(f"config.json is missing {key!r}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelConfigError(f"config.json {key!r} must be an integer, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ModelConfigError(f"config.json {key!r} must be positive, got {value}")
    return value


def _opt_int(c: Mapping[str, Any], key: str) -> int | None:
    v = c.get(key)
    return _pos_int(c, key) if v is not None else None


def _dtype(c: Mapping[str, Any]) -> str:
    raw = str(c.get("torch_dtype") or c.get("dtype") or "bfloat16").replace("torch.", "")
    aliases = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "float": "float32", "fp32": "float32"}
    raw = aliases.get(raw, raw)
    if raw not in ("bfloat16", "float16", "float32"):
        raise ModelConfigError(f"config.json torch_dtype {raw!r} is not bfloat16, float16 or float32")
    return raw


def _rope(c: Mapping[str, Any]) -> Mapping[str, Any]:
    rope = c.get("rope_scaling") or c.get("rope_parameters") or {}
    return rope if isinstance(rope, Mapping) else {}


def derive_max_len(c: Mapping[str, Any], model_type: str) -> tuple[int, str]:
    """vLLM's derived max_model_len: min over the known keys, times the rope factor where it applies."""
    found = [(int(c[k]), k) for k in MAX_LEN_KEYS if isinstance(c.get(k), int) and not isinstance(c.get(k), bool)]
    if not found:
        return 2048, "default"
    length, key = min(found)
    rope = _rope(c)
    rope_type = str(rope.get("rope_type", rope.get("type", "default")))
    factor = rope.get("factor")
    if isinstance(factor, (int, float)) and rope_type not in _ROPE_NO_SCALE and not model_type.startswith("gemma3"):
        length = int(length * factor)
    return length, key


def _layer_kinds(c: Mapping[str, Any], n_layers: int, model_type: str) -> tuple[list[LayerKind], int | None]:
    """Token mixer per layer and the sliding window (or chunk) size."""
    window = c.get("sliding_window") if isinstance(c.get("sliding_window"), int) else None
    kinds: list[LayerKind]
    if "kv_lora_rank" in c and c.get("kv_lora_rank"):
        return ["mla"] * n_layers, None
    types = c.get("layer_types")
    if isinstance(types, list) and len(types) == n_layers:
        mapping: dict[str, LayerKind] = {
            "full_attention": "full",
            "sliding_attention": "sliding",
            "linear_attention": "linear_attention",
            "chunked_attention": "chunked",
            "attention": "full",
        }
        kinds = []
        for t in types:
            if t not in mapping:
                raise UnsupportedArchitectureError(f"layer type {t!r} in layer_types is not modelled")
            kinds.append(mapping[t])
        return kinds, window
    interval = c.get("full_attention_interval")
    if isinstance(interval, int) and interval > 0 and c.get("linear_num_value_heads"):
        return ["full" if (i + 1) % interval == 0 else "linear_attention" for i in range(n_layers)], None
    if model_type == "gemma2":
        return ["sliding" if i % 2 == 0 else "full" for i in range(n_layers)], window
    if model_type.startswith("gemma3"):
        pattern = int(c.get("sliding_window_pattern", 6))
        return ["full" if (i + 1) % pattern == 0 else "sliding" for i in range(n_layers)], window
    chunk = c.get("attention_chunk_size")
    if isinstance(chunk, int) and chunk > 0:
        rope_layers = c.get("no_rope_layers")
        if isinstance(rope_layers, list) and len(rope_layers) == n_layers:
            return ["chunked" if r else "full" for r in rope_layers], chunk
        return ["full" if (i + 1) % 4 == 0 else "chunked" for i in range(n_layers)], chunk
    uses_window = c.get("use_sliding_window", True) is not False
    if window and uses_window and window < int(c.get("max_position_embeddings", 1 << 62)):
        max_window_layers = c.get("max_window_layers")
        if model_type.startswith("qwen") and isinstance(max_window_layers, int):
            return ["sliding" if i < max_window_layers else "full" for i in range(n_layers)], window
        return ["sliding"] * n_layers, window
    return ["full"] * n_layers, None


def _nemotron_h(pattern: str) -> tuple[list[LayerKind], list[MlpKind]]:
    kinds: list[LayerKind] = []
    mlps: list[MlpKind] = []
    table: dict[str, tuple[LayerKind, MlpKind]] = {
        "M": ("mamba", "none"),
        "*": ("full", "none"),
        "-": ("none", "dense"),
        "E": ("none", "moe"),
    }
    for ch in pattern:
        if ch not in table:
            raise UnsupportedArchitectureError(f"hybrid_override_pattern symbol {ch!r} is not modelled")
        k, m = table[ch]
        kinds.append(k)
        mlps.append(m)
    return kinds, mlps


def _mlp_kinds(c: Mapping[str, Any], n_layers: int, n_experts: int) -> list[MlpKind]:
    if n_experts <= 0:
        return ["dense"] * n_layers
    first_dense = int(c.get("first_k_dense_replace", 0) or 0)
    raw_freq = c.get("moe_layer_freq", 1)
    per_layer = raw_freq if isinstance(raw_freq, list) and len(raw_freq) == n_layers else None
    freq = 1 if per_layer is not None else int(raw_freq or 1)
    step = int(c.get("decoder_sparse_step", 1) or 1)
    interleave = int(c.get("interleave_moe_layer_step", 1) or 1)
    only_dense = set(c.get("mlp_only_layers") or [])
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
    return kinds


def parse_config(
    config: Mapping[str, Any],
    *,
    name: str,
    source: str,
    hf_quant_config: Mapping[str, Any] | None = None,
    published_params: int | None = None,
) -> ModelSpec:
    """Build a ModelSpec from a parsed config.json."""
    if not isinstance(config, Mapping):
        raise ModelConfigError("config.json must hold a JSON object")
    try:
        return _parse(
            config, name=name, source=source, hf_quant_config=hf_quant_config, published_params=published_params
        )
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        raise ModelConfigError(f"config.json of {name} has a value of an unexpected type or shape ({exc})") from exc


def _parse(
    config: Mapping[str, Any],
    *,
    name: str,
    source: str,
    hf_quant_config: Mapping[str, Any] | None,
    published_params: int | None,
) -> ModelSpec:
    c, multimodal = _merged(config)
    archs = config.get("architectures") or c.get("architectures") or []
    arch = str(archs[0]) if isinstance(archs, list) and archs else str(c.get("model_type", "unknown"))
    model_type = str(c.get("model_type", ""))
    if arch in _UNSUPPORTED:
        raise UnsupportedArchitectureError(f"{arch}: {_UNSUPPORTED[arch]}")
    block_types = c.get("layers_block_type")
    if isinstance(block_types, list) and not c.get("hybrid_override_pattern"):
        symbols = {"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}
        c["hybrid_override_pattern"] = "".join(symbols.get(str(t), "?") for t in block_types)
    if c.get("num_hidden_layers") is None and c.get("hybrid_override_pattern"):
        c["num_hidden_layers"] = len(str(c["hybrid_override_pattern"]))
    missing = [k for k in _REQUIRED if k not in c]
    if missing:
        raise ModelConfigError(f"config.json is missing {', '.join(missing)} (needed for {arch})")
    hidden = _pos_int(c, "hidden_size")
    n_layers = _pos_int(c, "num_hidden_layers")
    n_heads = _pos_int(c, "num_attention_heads")
    n_kv = _pos_int(c, "num_key_value_heads", n_heads)
    vocab = _pos_int(c, "vocab_size")
    head_dim = _opt_int(c, "head_dim") or hidden // n_heads
    intermediate = _pos_int(c, "intermediate_size", 0, allow_zero=True)

    if model_type == "nemotron_h" or c.get("hybrid_override_pattern"):
        kinds, mlps = _nemotron_h(str(c.get("hybrid_override_pattern", "")))
        if len(kinds) != n_layers:
            raise ModelConfigError("hybrid_override_pattern length differs from num_hidden_layers")
        window = None
    else:
        kinds, window = _layer_kinds(c, n_layers, model_type)
        n_exp = int(c.get("num_experts") or c.get("num_local_experts") or c.get("n_routed_experts") or 0)
        mlps = _mlp_kinds(c, n_layers, n_exp)

    moe = None
    n_experts = int(c.get("num_experts") or c.get("num_local_experts") or c.get("n_routed_experts") or 0)
    if n_experts and "moe" in mlps:
        top_k = int(c.get("num_experts_per_tok") or c.get("experts_per_token") or c.get("moe_topk") or 0)
        if top_k <= 0:
            raise ModelConfigError("MoE config is missing num_experts_per_tok")
        if model_type.startswith("llama4"):
            expert_i = intermediate
            shared = intermediate
        else:
            expert_i = int(c.get("moe_intermediate_size") or intermediate)
            shared = int(c.get("shared_expert_intermediate_size") or 0)
            n_shared = int(c.get("n_shared_experts") or 0)
            if not shared and n_shared:
                shared = n_shared * int(c.get("moe_shared_expert_intermediate_size") or expert_i)
        moe = MoeSpec(
            num_experts=n_experts,
            top_k=top_k,
            expert_intermediate=expert_i,
            shared_intermediate=shared,
            gated=model_type != "nemotron_h",
            expert_bias=model_type == "gpt_oss",
            router_bias=model_type == "gpt_oss",
            shared_gate=bool(c.get("shared_expert_intermediate_size")),
        )
    dense_intermediate = int(c.get("intermediate_size_mlp") or intermediate)
    if "dense" in mlps and dense_intermediate <= 0:
        raise ModelConfigError("config.json is missing intermediate_size")

    mla = None
    if "mla" in kinds:
        mla = MlaSpec(
            kv_lora_rank=_pos_int(c, "kv_lora_rank"),
            q_lora_rank=c.get("q_lora_rank") or None,
            qk_nope_head_dim=_pos_int(c, "qk_nope_head_dim"),
            qk_rope_head_dim=_pos_int(c, "qk_rope_head_dim"),
            v_head_dim=_pos_int(c, "v_head_dim"),
        )
    linear = None
    if "linear_attention" in kinds:
        linear = LinearAttentionSpec(
            num_k_heads=_pos_int(c, "linear_num_key_heads"),
            num_v_heads=_pos_int(c, "linear_num_value_heads"),
            head_k_dim=_pos_int(c, "linear_key_head_dim"),
            head_v_dim=_pos_int(c, "linear_value_head_dim"),
            conv_kernel=_pos_int(c, "linear_conv_kernel_dim", 4),
            state_dtype=c.get("mamba_ssm_dtype"),
        )
    mamba = None
    if "mamba" in kinds:
        m_heads = _pos_int(c, "mamba_num_heads")
        m_hd = _pos_int(c, "mamba_head_dim")
        mamba = MambaSpec(
            num_heads=m_heads,
            head_dim=m_hd,
            state_size=_pos_int(c, "ssm_state_size"),
            n_groups=_pos_int(c, "n_groups", 1),
            conv_kernel=_pos_int(c, "conv_kernel", 4),
            intermediate=m_heads * m_hd,
            ssm_state_dtype=c.get("mamba_ssm_cache_dtype") or "float32",
        )

    max_len, max_key = derive_max_len(c, model_type)
    rope = _rope(c)
    partial = float(c.get("partial_rotary_factor") or rope.get("partial_rotary_factor") or 1.0)
    rotary_dim = mla.qk_rope_head_dim if mla else int(head_dim * partial)
    rope_max = int(c.get("max_position_embeddings") or max_len)
    orig = rope.get("original_max_position_embeddings")
    factor = rope.get("factor")
    if str(rope.get("rope_type", rope.get("type", ""))) in ("yarn", "deepseek_yarn") and orig and factor:
        rope_max = int(int(orig) * float(factor))

    norms = 2
    if model_type.startswith("gemma2") or model_type.startswith("gemma3") or model_type.startswith("gemma4"):
        norms = 4
    if model_type == "nemotron_h":
        norms = 1
    quant = parse_quant(config.get("quantization_config") or c.get("quantization_config"), hf_quant_config)
    spec = ModelSpec(
        name=name,
        architecture=arch,
        model_type=model_type,
        dtype=_dtype(c),
        hidden_size=hidden,
        num_layers=n_layers,
        num_heads=n_heads,
        num_kv_heads=n_kv,
        head_dim=head_dim,
        v_head_dim=head_dim,
        intermediate_size=dense_intermediate,
        vocab_size=vocab,
        max_model_len=max_len,
        max_len_key=max_key,
        # Gemma configs tie by default (transformers' Gemma*Config: tie_word_embeddings=True).
        tie_word_embeddings=bool(c.get("tie_word_embeddings", model_type.startswith("gemma"))),
        layer_kinds=tuple(kinds),
        mlp_kinds=tuple(mlps),
        sliding_window=window if "sliding" in kinds else None,
        attention_chunk_size=window if "chunked" in kinds else None,
        qkv_bias=bool(c.get("attention_bias", False)) or model_type == "qwen2" or model_type == "qwen2_moe",
        o_bias=bool(c.get("attention_bias", False)) and model_type == "gpt_oss",
        mlp_bias=bool(c.get("mlp_bias", False)),
        gated_mlp=model_type not in ("nemotron_h",),
        qk_norm=model_type.startswith(("qwen3", "gemma3", "gemma4", "olmo2")),
        norms_per_layer=norms,
        attn_output_gate=bool(c.get("attn_output_gate", False)),
        rotary_dim=rotary_dim,
        rope_max_position=rope_max,
        moe=moe,
        mla=mla,
        linear_attention=linear,
        mamba=mamba,
        quant=quant,
        multimodal=multimodal,
        vision=_vision(config, hidden),
        published_params=published_params,
        source=source,
    )
    return _with_params(spec)


def _with_params(spec: ModelSpec) -> ModelSpec:
    from dataclasses import replace

    return replace(spec, params=count_params(spec))
