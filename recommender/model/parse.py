"""config.json (a mapping) -> ModelSpec. Pure: callers read the files.

The steps: lift a multimodal `text_config`, name the architecture, refuse what is not planned (by name), look up
the family's quirks (model/families.py), rename its keys to the common ones, read the dimensions (bounded,
model/config_values.py), lay out the layers (model/layer_plan.py), extract each feature (model/features.py) and
count the parameters (model/tensors.py). An architecture outside the table whose config is standard is read as a
Llama-style decoder and marked approximate, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from recommender.errors import ModelConfigError, UnsupportedArchitectureError
from recommender.model import encoder_features, features
from recommender.model.compressed_attention import compressed_attention_spec
from recommender.model.config_values import MAX_HEADS, MAX_HIDDEN, MAX_LAYERS, MAX_VOCAB, ConfigValues
from recommender.model.families import (
    BERT_TYPES,
    LIGHTNING_TYPES,
    SERVED_UNTIL,
    TEXT_CONFIG_DEFAULTS,
    Family,
    family_for,
    family_key,
    refusal,
)
from recommender.model.layer_plan import (
    LayerPlan,
    attention_free_plan,
    attention_kinds,
    decilm_layers,
    hybrid_pattern,
    jamba_plan,
    mlp_kinds,
    nemotron_h_plan,
)
from recommender.model.pooling import bidirectional_decoder, pooling_by_architecture
from recommender.model.quant import expert_format, parse_quant
from recommender.model.spec import LinearAttentionSpec, MambaSpec, MlaSpec, ModelSpec, MoeSpec
from recommender.model.tensors import count_params

__all__ = ["derive_max_len", "parse_config"]

MLLAMA_IMAGE_TOKENS = 8  # MllamaTextModel embeds vocab_size + 8 rows (transformers and vLLM mllama.py)
MAX_MTP_LAYERS = 16  # a larger num_nextn_predict_layers is refused as malformed
FALCON_H1 = "falcon_h1"  # a Mamba2 mixer beside attention in every layer
DECILM = "nemotron-nas"  # Nemotron-NAS (DeciLM): per-layer block_configs (model/layer_plan.py decilm_layers)
REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")
ATTENTION_FREE_TYPES = ("mamba", "falcon_mamba")
SHORT_CONV_TYPE = "lfm2"  # ShortConv mixers (layers/mamba/short_conv.py) beside attention layers
MULTIMODAL_TEXT_KEYS = ("text_config", "llm_config")
# Gemma configs tie by default (transformers' Gemma*Config: tie_word_embeddings=True), as the family says.
DTYPE_ALIASES = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "float": "float32", "fp32": "float32"}
DEFAULT_DTYPE = "bfloat16"


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
        spec = _parse(config, name=name, source=source, hf_quant_config=hf_quant_config)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError) as exc:
        raise ModelConfigError(f"config.json of {name} has a value of an unexpected type or shape ({exc})") from exc
    spec = replace(spec, published_params=published_params)
    return replace(spec, params=count_params(spec))


def derive_max_len(config: Mapping[str, Any], model_type: str) -> tuple[int, str]:
    """vLLM's derived max_model_len of a (text) config: min over the known keys, times the rope factor."""
    return features.derive_max_len(ConfigValues(config), model_type)


@dataclass(frozen=True, slots=True)
class _Identity:
    arch: str
    model_type: str
    multimodal: bool


def _merged(config: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """Language-model keys, lifting a nested `text_config` (multimodal wrappers) over the top level."""
    text = next((config[k] for k in MULTIMODAL_TEXT_KEYS if isinstance(config.get(k), Mapping)), None)
    multimodal = bool(config.get("vision_config") or text)
    merged = {k: v for k, v in config.items() if k not in ("vision_config", *MULTIMODAL_TEXT_KEYS)}
    if text is not None:
        merged.update(TEXT_CONFIG_DEFAULTS.get(str(text.get("model_type")), {}))
        merged.update(text)
    return merged, multimodal


def _identity(config: Mapping[str, Any], merged: Mapping[str, Any], multimodal: bool) -> _Identity:
    archs = config.get("architectures") or merged.get("architectures") or []
    model_type = str(merged.get("model_type") or config.get("model_type") or "")
    arch = str(archs[0]) if isinstance(archs, list) and archs else model_type or "unknown"
    return _Identity(arch, model_type, multimodal)


def _canonical(merged: dict[str, Any], family: Family) -> tuple[ConfigValues, Family]:
    """Rename the family's keys to the common ones and apply its config-dependent facts."""
    data = dict(merged)
    for common, alias in family.aliases:
        if data.get(common) is None and data.get(alias) is not None:
            data[common] = data[alias]
    if family.adapt is not None:
        adapted = family.adapt(data)
        data.update({k: v for k, v in adapted.keys.items() if v is not None})
        for key in adapted.drop:
            data.pop(key, None)
        family = replace(family, **adapted.family)
    pattern = hybrid_pattern(ConfigValues(data))
    if data.get("num_hidden_layers") is None and pattern:
        data["num_hidden_layers"] = len(pattern)
    return ConfigValues(data), family


def _check_required(c: ConfigValues, ident: _Identity, family: Family) -> None:
    required = [k for k in REQUIRED if not (k == "num_attention_heads" and ident.model_type in ATTENTION_FREE_TYPES)]
    missing = [k for k in required if not c.has(k)]
    if not missing:
        return
    aliases = {common: alias for common, alias in family.aliases}
    named = ", ".join(f"{k} ({aliases[k]})" if k in aliases else k for k in missing)
    if not ident.model_type and ident.arch == "unknown":  # `{}`, a tokenizer's or a pipeline's config.json
        raise ModelConfigError(
            f"config.json names no architecture (no `architectures` list, no `model_type`) and lacks {named}: "
            "is it a model's config.json?"
        )
    if family.approximate:
        raise UnsupportedArchitectureError(
            f"{ident.arch} (model_type {ident.model_type!r}) is not modelled, and its config.json lacks {named}, "
            "so not even an approximate answer can be given"
        )
    raise ModelConfigError(f"config.json is missing {named} (needed for {ident.arch}, read as {family.name})")


@dataclass(frozen=True, slots=True)
class _Dims:
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    intermediate: int


def _dimensions(c: ConfigValues, attention_free: bool) -> _Dims:
    hidden = c.get_int("hidden_size", bound=MAX_HIDDEN)
    heads = c.get_int("num_attention_heads", 1 if attention_free else None, bound=MAX_HEADS)
    kv_heads = c.get_int("num_key_value_heads", heads, bound=MAX_HEADS)
    if kv_heads > heads:
        raise ModelConfigError(f"config.json has more KV heads ({kv_heads}) than attention heads ({heads})")
    return _Dims(
        hidden=hidden,
        layers=c.get_int("num_hidden_layers", bound=MAX_LAYERS),
        heads=heads,
        kv_heads=kv_heads,
        head_dim=c.opt_int("head_dim") or max(1, hidden // heads),
        vocab=c.get_int("vocab_size", bound=MAX_VOCAB),
        intermediate=c.get_int("intermediate_size", 0, zero_ok=True),
    )


def _layer_plan(c: ConfigValues, key: str, model_type: str, d: _Dims) -> LayerPlan:
    n_experts = features.experts_count(c)
    pattern = hybrid_pattern(c)
    if model_type == "nemotron_h" or pattern:
        return nemotron_h_plan(pattern or "", d.layers)
    if key == "jamba":
        return jamba_plan(c, d.layers, n_experts)
    if key in ATTENTION_FREE_TYPES:
        return attention_free_plan(d.layers)
    kinds, window = attention_kinds(c, d.layers, model_type)
    return LayerPlan(kinds, mlp_kinds(c, d.layers, n_experts), window)


@dataclass(frozen=True, slots=True)
class _Features:
    moe: MoeSpec | None
    mla: MlaSpec | None
    linear: LinearAttentionSpec | None
    mamba: MambaSpec | None


def _features(c: ConfigValues, key: str, family: Family, model_type: str, plan: LayerPlan, d: _Dims) -> _Features:
    moe = None
    if "moe" in plan.mlps and features.experts_count(c):
        moe = features.moe_spec(c, model_type, d.intermediate, score_bias=family.score_bias)
    mamba = _mamba_spec(c, key, model_type, d) if "mamba" in plan.kinds or key == FALCON_H1 else None
    return _Features(
        moe=moe,
        mla=features.mla_spec(c, d.layers, model_type) if "mla" in plan.kinds else None,
        linear=_linear_spec(c, key) if "linear_attention" in plan.kinds else None,
        mamba=mamba,
    )


def _mamba_spec(c: ConfigValues, key: str, model_type: str, d: _Dims) -> MambaSpec:
    if key == SHORT_CONV_TYPE:
        return features.short_conv_spec(c)
    if key == "jamba" or key in ATTENTION_FREE_TYPES:
        return features.mamba1_spec(c, d.hidden, jamba=key == "jamba")
    return features.mamba2_spec(c, model_type)


def _linear_spec(c: ConfigValues, key: str) -> LinearAttentionSpec:
    if key in LIGHTNING_TYPES:
        return features.lightning_attention_spec(c)
    return features.linear_attention_spec(c)


def _approximations(config: Mapping[str, Any], family: Family) -> tuple[str, ...]:
    """Why the figures are estimates: an architecture outside the table, or an encoder the config does not size."""
    reasons = [family.approximate] if family.approximate else []  # the adapter may add one (family.approximate)
    if isinstance(config.get("audio_config"), Mapping) and not encoder_features.audio_counted(config):
        reasons.append("the audio encoder (audio_config) is not counted in the weights")
    return tuple(reasons)


def _dtype(c: ConfigValues) -> str:
    raw = str(c.raw("torch_dtype") or c.raw("dtype") or DEFAULT_DTYPE).replace("torch.", "")
    raw = DTYPE_ALIASES.get(raw, raw)
    if raw not in ("bfloat16", "float16", "float32"):
        raise ModelConfigError(f"config.json torch_dtype {raw!r} is not bfloat16, float16 or float32")
    return raw


@dataclass(frozen=True, slots=True)
class _Read:
    """Everything read from one config before the spec is assembled."""

    ident: _Identity
    c: ConfigValues
    family: Family
    key: str
    dims: _Dims
    plan: LayerPlan
    feats: _Features
    shapes: features.LayerShapes
    intermediate: int
    approximate: tuple[str, ...]


def _read(config: Mapping[str, Any]) -> _Read:
    """Name the architecture (refusing what is not planned), read its dimensions, layers and features."""
    merged, multimodal = _merged(config)
    ident = _identity(config, merged, multimodal)
    reason = refusal(ident.arch, ident.model_type)
    if reason is not None:
        raise UnsupportedArchitectureError(reason)
    key = family_key(ident.arch, ident.model_type)
    c, family = _canonical(merged, family_for(ident.arch, ident.model_type))
    _check_required(c, ident, family)
    d = _dimensions(c, key in ATTENTION_FREE_TYPES)
    approximate = _approximations(config, family)
    if key == DECILM:
        deci = decilm_layers(c, d.layers, d.heads, d.hidden)
        plan, intermediate = deci.plan, max(deci.intermediate)
        shapes = features.LayerShapes(kv_heads=deci.kv_heads, intermediate=deci.intermediate)
        d = replace(d, kv_heads=max(deci.kv_heads) or 1)
        approximate += (deci.approximate,) if deci.approximate else ()
    else:
        plan = _layer_plan(c, key, ident.model_type, d)
        intermediate = c.first_int(("intermediate_size_mlp",), d.intermediate)
        shapes = features.layer_shapes(c, plan.kinds, d.head_dim, d.kv_heads, intermediate)
    if "dense" in plan.mlps and intermediate <= 0:
        raise ModelConfigError("config.json is missing intermediate_size")
    feats = _features(c, key, family, ident.model_type, plan, d)
    return _Read(ident, c, family, key, d, plan, feats, shapes, intermediate, approximate)


def _rotary(r: _Read, max_len: int) -> features.Rotary:
    """Rotary embedding of the model (none for learned positions, ALiBi, BLOOM, or `nope`)."""
    c, family = r.c, r.family
    uses_rope = (
        family.learned_positions is False
        and not c.raw("alibi")
        and r.ident.model_type != "bloom"
        and c.text("position_embedding_type", "rope") != "nope"
    )
    mla_rope_dim = r.feats.mla.qk_rope_head_dim if r.feats.mla else None
    return features.rotary(c, r.dims.head_dim, max_len, mla_rope_dim=mla_rope_dim, uses_rope=uses_rope)


# long: one keyword per ModelSpec field (about sixty), each read from the parts _read gathered; the flat list is
# the one place that maps config facts to spec fields, and splitting the call would scatter it.
def _parse(
    config: Mapping[str, Any], *, name: str, source: str, hf_quant_config: Mapping[str, Any] | None
) -> ModelSpec:
    """Assemble the spec from the parts `_read` gathered."""
    r = _read(config)
    c, family, d, plan, feats, shapes = r.c, r.family, r.dims, r.plan, r.feats, r.shapes
    max_len, max_key = features.derive_max_len(c, r.ident.model_type)
    rope = _rotary(r, max_len)
    quant = expert_format(
        parse_quant(config.get("quantization_config") or c.raw("quantization_config"), hf_quant_config),
        r.ident.model_type,
        config.get("expert_dtype") or c.raw("expert_dtype"),
    )
    positions = (
        c.get_int("max_position_embeddings", max_len) + family.position_offset if family.learned_positions else 0
    )
    bert = r.key in BERT_TYPES
    if bert:
        max_len = _bert_max_len(c, r.key, max_len)
    return ModelSpec(
        name=name,
        architecture=r.ident.arch,
        model_type=r.ident.model_type,
        dtype=_dtype(c),
        hidden_size=d.hidden,
        num_layers=d.layers,
        num_heads=d.heads,
        num_kv_heads=d.kv_heads,
        head_dim=d.head_dim,
        v_head_dim=d.head_dim if feats.mla else c.get_int("v_head_dim", d.head_dim),
        intermediate_size=r.intermediate,
        vocab_size=d.vocab,
        max_model_len=max_len,
        max_len_key=max_key,
        tie_word_embeddings=c.flag("tie_word_embeddings", family.tie_default),
        layer_kinds=plan.kinds,
        mlp_kinds=plan.mlps,
        sliding_window=plan.window if "sliding" in plan.kinds else None,
        attention_chunk_size=plan.window if "chunked" in plan.kinds else None,
        qkv_bias=family.qkv_bias if family.qkv_bias is not None else c.flag("attention_bias"),
        o_bias=family.o_bias if family.o_bias is not None else c.flag("attention_bias") and r.key == "gpt_oss",
        mlp_bias=family.mlp_bias if family.mlp_bias is not None else c.flag("mlp_bias"),
        gated_mlp=family.gated_mlp and r.key != "nemotron_h",
        qk_norm=family.qk_norm,
        qk_norm_over_heads=family.qk_norm_over_heads,
        attention_sinks=family.attention_sinks,
        norms_per_layer=family.norms_per_layer,
        norms_follow_blocks=r.key == DECILM,
        norm_kind=family.norm,
        final_norm=family.final_norm,
        embedding_norm=family.embedding_norm,
        learned_positions=positions,
        lm_head_bias=family.lm_head_bias,
        parallel_block=family.parallel_block,
        layer_kv_heads=shapes.kv_heads,
        layer_head_dim=shapes.head_dim,
        layer_intermediate=shapes.intermediate,
        k_eq_v=shapes.k_eq_v,
        kv_shared_from=shapes.kv_shared_from,
        per_layer_input=c.get_int("hidden_size_per_layer_input", 0, zero_ok=True),
        per_layer_vocab=c.get_int("vocab_size_per_layer_input", d.vocab, bound=MAX_VOCAB),
        layer_scalar=r.ident.model_type.startswith("gemma4"),
        embedding_rows=d.vocab + MLLAMA_IMAGE_TOKENS if r.key.startswith("mllama") else 0,
        mamba_beside_attention=r.key == FALCON_H1,
        attn_output_gate=c.flag("attn_output_gate"),
        rotary_dim=rope.dim,
        rope_max_position=rope.max_position,
        rope_mrope=rope.mrope,
        moe=feats.moe,
        mla=feats.mla,
        compressed_attention=compressed_attention_spec(ConfigValues(config), r.ident.model_type, d.layers),
        linear_attention=feats.linear,
        mamba=feats.mamba,
        quant=quant,
        multimodal=r.ident.multimodal,
        vision=encoder_features.vision_spec(config, d.hidden),
        audio=encoder_features.audio_spec(config, d.hidden),
        source=source,
        family=family.name,
        approximate=r.approximate,
        served_until=SERVED_UNTIL.get(r.ident.arch),
        mtp_layers=c.first_int(("num_nextn_predict_layers", "mtp_num_hidden_layers"), 0, bound=MAX_MTP_LAYERS),
        pooling=pooling_by_architecture(r.ident.arch),
        encoder_only=bert or bidirectional_decoder(config, r.key),
        token_types=c.get_int("type_vocab_size", 2, bound=MAX_VOCAB) if bert else 0,
        classifier_labels=_labels(c) if r.ident.arch.endswith("ForSequenceClassification") else 0,
    )


# RoBERTa's position ids start after the padding index (roberta.py RobertaEmbedding: `positions + padding_idx + 1`),
# so a table of max_position_embeddings rows serves max_position_embeddings - pad_token_id - 1 tokens (XLM-R: 514 ->
# 512, bge-m3: 8194 -> 8192, the model_max_length these repositories' tokenizer_config.json states and vLLM takes for
# a pooling model with absolute positions: config/model.py get_and_verify_max_len).
def _bert_max_len(c: ConfigValues, key: str, max_len: int) -> int:
    if key == "bert":
        return max_len
    return max(
        1, min(max_len, c.get_int("max_position_embeddings", max_len) - c.get_int("pad_token_id", 1, zero_ok=True) - 1)
    )


MAX_LABELS = 1 << 20


def _labels(c: ConfigValues) -> int:
    """A classification head's outputs: num_labels, else the id2label entries, else transformers' default of 2."""
    if c.has("num_labels"):
        return c.get_int("num_labels", bound=MAX_LABELS)
    id2label = c.raw("id2label")
    return len(id2label) if isinstance(id2label, Mapping) and 0 < len(id2label) <= MAX_LABELS else 2
