"""Read a checkpoint's quantization declaration (config.json `quantization_config`, `hf_quant_config.json`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from recommender.errors import FlagError, ModelConfigError, UnsupportedArchitectureError
from recommender.model.quark import quark_quant
from recommender.model.spec import ModelSpec, QuantSpec

# --quantization names vLLM accepts for the same checkpoint formats this module reads.
_QUANT_ALIASES = {
    "awq_marlin": "awq",
    "gptq_marlin": "gptq",
    "auto_awq": "awq",
    "auto_gptq": "gptq",
    "modelopt": "fp8",
    "modelopt_fp4": "nvfp4",
    "fbgemm_fp8": "fp8",
    "modelopt_mxfp8": "mxfp8",
}
# Methods that name a checkpoint family rather than one format: any checkpoint of theirs matches.
_FAMILY_METHODS = ("compressed-tensors", "modelopt", "mxfp4", "modelopt_fp4", "quark")


def online_quant(method: str) -> QuantSpec:
    """The QuantSpec vLLM applies for `--quantization METHOD` on a 16-bit checkpoint."""
    if method == "fp8":
        # Fp8LinearMethod without a checkpoint config: per-tensor weight scale, dynamic activations.
        return QuantSpec(method="fp8", bits=8, group_size=0, label="FP8 (online, per-tensor)")
    if method == "experts_int8":
        # ExpertsInt8Config: the routed experts become int8 with one float32 scale per output row (w13_scale
        # [E, 2I], w2_scale [E, H]: experts_int8.py at v0.5.5-v0.13.0, online/int8.py Int8OnlineMoEMethod in 0.33);
        # every other linear stays 16-bit (UnquantizedLinearMethod).
        return QuantSpec(
            method="experts_int8", bits=8, group_size=-1, expert_method="int8", label="INT8 experts (online)"
        )
    if method == "bitsandbytes":
        # BitsAndBytesModelLoader._unquantized_generator (v0.5.4-v0.32, model_loader/bitsandbytes_loader.py from
        # 0.8): every LinearBase weight goes through bitsandbytes' quantize_4bit(quant_type="nf4",
        # compress_statistics=True), 4-bit codes with 8-bit absmax per 64 weights and a float32 absmax per 256
        # blocks (double quant); embeddings and the LM head (not LinearBase) stay 16-bit.
        return QuantSpec(
            method="bitsandbytes",
            bits=4,
            group_size=64,
            double_quant=True,
            label="bitsandbytes 4-bit (online nf4, removed in vLLM 0.33)",
        )
    raise UnsupportedArchitectureError(
        f"online quantization {method!r} is not modelled; use a pre-quantized checkpoint, --quantization fp8, "
        "experts_int8 or bitsandbytes"
    )


def resolve_quant(model: ModelSpec, quantization: str | None) -> QuantSpec | None:
    """The checkpoint's quantization, or the online method asked for on a 16-bit checkpoint."""
    if model.quant is not None:
        if model.quant.checkpoint_format == "auto-round":
            # INCConfig.override_quantization_method claims every `quant_method: auto-round` checkpoint whatever
            # --quantization says (config/model.py _verify_quantization sets the method to "inc").
            return model.quant
        if quantization and quantization not in _FAMILY_METHODS:
            wanted = _QUANT_ALIASES.get(quantization, quantization)
            if wanted != model.quant.method:
                raise FlagError(
                    f"Quantization method specified in the model config ({model.quant.method}) does not match the "
                    f"quantization method specified in the `quantization` argument ({quantization})."
                )
        return model.quant
    if quantization:
        return online_quant(_QUANT_ALIASES.get(quantization, quantization))
    return None


def expert_format(quant: QuantSpec | None, model_type: str, expert_dtype: Any) -> QuantSpec | None:
    """DeepSeek-V4's FP8 checkpoints keep the routed experts in MXFP4 when the config says expert_dtype "fp4", which
    vLLM also assumes when the key is missing (models/deepseek_v41/quant_config.py DeepseekV4FP8Config.expert_dtype:
    "MXFP4 experts with ue8m0 FP8 linear scales"; "fp8" is the Flash-Base checkpoints' FP8 block experts)."""
    if quant is None or quant.method != "fp8" or model_type != "deepseek_v4" or expert_dtype not in ("fp4", None):
        return quant
    return replace(quant, expert_method="mxfp4", label=f"{quant.label}, MXFP4 experts")


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelConfigError(f"quantization_config.{what} must be an integer, got {value!r}")
    return value


def _group_size(value: Any, what: str) -> int:
    """A weight group size: -1 (one scale per output channel) or a positive count of weights per scale. vLLM's
    integer kernels divide the input dimension by it (awq.py / gptq.py create_weights), so 0 or another negative
    value fails at load: refused here in one line rather than planned."""
    group = _int(value, what)
    if group == 0 or group < -1:
        raise ModelConfigError(f"quantization_config.{what} must be -1 (per channel) or positive, got {group}")
    return group


def _str_tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return (str(value),)


def parse_quant(qc: Mapping[str, Any] | None, hf_quant: Mapping[str, Any] | None = None) -> QuantSpec | None:
    """QuantSpec from a `quantization_config` mapping and/or a ModelOpt `hf_quant_config.json`."""
    if hf_quant and isinstance(hf_quant.get("quantization"), Mapping):
        return replace(_modelopt(hf_quant["quantization"]), checkpoint_format="modelopt")
    if not qc:
        return None
    if not isinstance(qc, Mapping):
        raise ModelConfigError("quantization_config must be a JSON object")
    method = str(qc.get("quant_method", "")).lower()
    reader = _READERS.get(method)
    if reader is None:
        raise UnsupportedArchitectureError(f"quantization method {method or '(none given)'!r} is not modelled")
    spec = reader(qc)
    return spec if spec.checkpoint_format else replace(spec, checkpoint_format=method)


def _fp8(qc: Mapping[str, Any]) -> QuantSpec:
    """Fp8Config: per-tensor, or blocks of weight_block_size; static or dynamic activation scales."""
    block = qc.get("weight_block_size")
    keep = _str_tuple(qc.get("ignored_layers")) + _str_tuple(qc.get("modules_to_not_convert"))
    static = qc.get("activation_scheme") == "static"
    if block:
        b = (int(block[0]), int(block[1]))
        return QuantSpec(
            "fp8", 8, block=b, keep_unquantized=keep, static_input_scales=static, label=f"FP8 block {b[0]}x{b[1]}"
        )
    return QuantSpec(
        "fp8",
        8,
        group_size=0,
        keep_unquantized=keep,
        static_input_scales=static,
        label="FP8 per-tensor" + (" static" if static else ""),
    )


def _fbgemm_fp8(qc: Mapping[str, Any]) -> QuantSpec:
    """FBGEMMFp8Config (vllm/model_executor/layers/quantization/fbgemm_fp8.py): float8 weights with one float32 scale
    per output channel ([N, 1]), activations quantized per token at run time (a scalar upper bound per layer);
    `modules_to_not_convert` stay in 16 bit. Below compute capability 8.9 the same bytes run through Marlin."""
    return QuantSpec(
        "fp8",
        8,
        group_size=-1,
        keep_unquantized=_str_tuple(qc.get("modules_to_not_convert")),
        label="FBGEMM FP8 per-channel",
    )


def _awq_gptq(qc: Mapping[str, Any]) -> QuantSpec:
    """AWQ / GPTQ integer weights in groups, with zero points when asymmetric."""
    method = str(qc.get("quant_method", "")).lower()
    bits = _int(qc.get("bits", qc.get("w_bit", 4)), "bits")
    group = _group_size(qc.get("group_size", qc.get("q_group_size", 128)), "group_size")
    if bits not in (2, 3, 4, 8):
        raise ModelConfigError(f"{method} with {bits} bits is not a vLLM-supported width")
    zero = (method == "awq" and bool(qc.get("zero_point", True))) or (method == "gptq" and qc.get("sym") is False)
    keep = _str_tuple(qc.get("modules_to_not_convert")) + _gptq_dynamic_skips(qc.get("dynamic"))
    g = "per-channel" if group == -1 else f"g{group}"
    return QuantSpec(
        method,
        bits,
        group_size=group,
        has_zero_points=zero,
        lm_head_quantized=bool(qc.get("lm_head", False)),
        keep_unquantized=keep,
        label=f"{method.upper()} {bits}-bit {g}",
    )


def _gptq_dynamic_skips(dynamic: Any) -> tuple[str, ...]:
    """GPTQModel's per-module `dynamic` rules: a `-:REGEX` key keeps every linear whose vLLM prefix the regex
    matches from its start unquantized (gptq_utils.py get_dynamic_override returns False, get_linear_quant_method
    then UnquantizedLinearMethod; 0.33). Positive keys only override bits or group size and are not read here.
    Written as compressed-tensors' `re:` entries, which are matched the same way."""
    if not isinstance(dynamic, Mapping):
        return ()
    return tuple(f"re:{str(k)[2:]}" for k in dynamic if str(k).startswith("-:"))


def _mxfp4(qc: Mapping[str, Any]) -> QuantSpec:
    return QuantSpec(
        "mxfp4",
        4,
        group_size=32,
        keep_unquantized=_str_tuple(qc.get("modules_to_not_convert")),
        label="MXFP4 (experts)",
    )


def _bitsandbytes(qc: Mapping[str, Any]) -> QuantSpec:
    """BitsAndBytesConfig (vLLM until 0.32): `llm_int8_skip_modules` stay 16-bit, an entry naming one component of
    the module's path or a leading part of it (bitsandbytes.py is_layer_skipped_bnb); unsloth's "dynamic" 4-bit
    re-uploads list the layers they leave unquantized there."""
    bits = 4 if qc.get("load_in_4bit") else 8
    return QuantSpec(
        "bitsandbytes",
        bits,
        group_size=64,
        double_quant=bits == 4 and qc.get("bnb_4bit_use_double_quant") is True,
        keep_unquantized=_str_tuple(qc.get("llm_int8_skip_modules")),
        label=f"bitsandbytes {bits}-bit (removed in vLLM 0.33)",
    )


def _auto_round(qc: Mapping[str, Any]) -> QuantSpec:
    """Intel AutoRound (`quant_method: auto-round`), which vLLM serves as INCConfig (quantization/inc/inc.py): integer
    weights in the packing its `packing_format` names, "auto_round:auto_gptq" by default (GPTQ's qweight, scales and
    qzeros, run through AutoGPTQ's Marlin method) or "auto_round:auto_awq" (AWQ's, zero points when not symmetric);
    inc_wna16_linear.py INCWNA16LinearScheme. `extra_config` entries of 16 bits or more stay unquantized
    (INCConfig.get_quant_method); lm_head is not quantized unless listed (config_parser.py: ParallelLMHead).
    `block_name_to_quantize` is not read: the blocks it leaves out (vision towers, MTP heads) are counted in 16 bit
    already. Layers that extra_config gives another integer width are counted at the default width (the label says
    so)."""
    data_type = str(qc.get("data_type", "int"))
    if data_type != "int":
        raise UnsupportedArchitectureError(f"AutoRound data_type {data_type!r} is not modelled (only int)")
    bits = _int(qc.get("bits"), "bits")
    group = _group_size(qc.get("group_size"), "group_size")
    sym = qc.get("sym", True) is not False
    packing = str(qc.get("packing_format") or "auto_round:auto_gptq")
    if packing not in ("auto_round:auto_gptq", "auto_round:auto_awq"):
        raise UnsupportedArchitectureError(f"AutoRound packing_format {packing!r} is not modelled")
    extra = qc.get("extra_config") or {}
    if not isinstance(extra, Mapping) or not all(isinstance(v, Mapping) for v in extra.values()):
        raise ModelConfigError("quantization_config.extra_config must map layer names to their settings")
    keep = tuple(
        (f"re:.*(?:{name})" if any(c in name for c in "*+?^$()[]{}|\\") else name)
        for name, cfg in extra.items()
        if _int(cfg.get("bits", bits), f"extra_config[{name!r}].bits") >= 16
    )
    widths = {w for cfg in extra.values() if (w := cfg.get("bits", bits)) < 16} - {bits}
    method = "awq" if packing.endswith("auto_awq") else "gptq"
    mixed = f", other widths {sorted(widths)} counted at {bits}" if widths else ""
    return QuantSpec(
        method,
        bits,
        group_size=group,
        has_zero_points=not sym,
        keep_unquantized=keep,
        checkpoint_format="auto-round",
        label=f"AutoRound INT{bits} g{group} ({method.upper()} packing{mixed})",
    )


def _compressed_tensors(qc: Mapping[str, Any]) -> QuantSpec:
    groups = qc.get("config_groups") or {}
    if not isinstance(groups, Mapping) or not groups:
        raise ModelConfigError("compressed-tensors quantization_config has no config_groups")
    first = next(iter(groups.values()))
    weights = first.get("weights") or {}
    bits = _int(weights.get("num_bits", 8), "config_groups.weights.num_bits")
    kind = str(weights.get("type", "int"))
    strategy = str(weights.get("strategy", "channel"))
    group = weights.get("group_size")
    keep = _str_tuple(qc.get("ignore"))
    kv_fp8 = bool(qc.get("kv_cache_scheme"))
    fmt = str(qc.get("format", ""))
    if (bits == 4 and kind == "float") or "nvfp4" in fmt:
        return QuantSpec(
            "nvfp4", 4, group_size=16, keep_unquantized=keep, kv_cache_fp8=kv_fp8, label="NVFP4 (compressed-tensors)"
        )
    if strategy == "group":
        g = 128 if group is None else _group_size(group, "config_groups.weights.group_size")
        return QuantSpec(
            "gptq",
            bits,
            group_size=g,
            has_zero_points=not bool(weights.get("symmetric", True)),
            keep_unquantized=keep,
            kv_cache_fp8=kv_fp8,
            label=f"W{bits}A16 g{g} (compressed-tensors)",
        )
    if strategy == "block":
        bs = weights.get("block_structure") or [128, 128]
        return QuantSpec(
            "fp8",
            bits,
            block=(int(bs[0]), int(bs[1])),
            keep_unquantized=keep,
            kv_cache_fp8=kv_fp8,
            label=f"W{bits} block (compressed-tensors)",
        )
    gs = 0 if strategy == "tensor" else -1
    label = f"W{bits}A{8 if first.get('input_activations') else 16} {'FP8' if kind == 'float' else 'INT8'} {strategy}"
    return QuantSpec(
        "fp8" if kind == "float" else "int8",
        bits,
        group_size=gs,
        keep_unquantized=keep,
        kv_cache_fp8=kv_fp8,
        label=label + " (compressed-tensors)",
    )


def _modelopt(q: Mapping[str, Any]) -> QuantSpec:
    """ModelOpt: an hf_quant_config.json `quantization` block, or the same keys in config.json's
    quantization_config (top level, or nested under `quantization` as vLLM's ModelOpt configs also read it)."""
    nested = q.get("quantization")
    if isinstance(nested, Mapping) and not q.get("quant_algo"):
        q = nested
    algo = str(q.get("quant_algo", "")).upper()
    keep = _str_tuple(q.get("exclude_modules")) + _str_tuple(q.get("ignore"))
    kv_fp8 = str(q.get("kv_cache_quant_algo", "")).upper() == "FP8"
    if algo == "FP8":
        return QuantSpec(
            "fp8",
            8,
            group_size=0,
            keep_unquantized=keep,
            kv_cache_fp8=kv_fp8,
            static_input_scales=True,
            label="FP8 (ModelOpt)",
        )
    if algo in ("NVFP4", "W4A16_NVFP4"):
        return QuantSpec(
            "nvfp4",
            4,
            group_size=int(q.get("group_size", 16)),
            keep_unquantized=keep,
            kv_cache_fp8=kv_fp8,
            label="NVFP4 (ModelOpt)",
        )
    if algo == "MXFP8":
        return _mxfp8(keep, kv_fp8, "ModelOpt")
    if algo == "MIXED_PRECISION":
        mixed = _mixed_layers(q.get("quantized_layers"))
        return QuantSpec(
            "modelopt-mixed",
            4,
            group_size=16,
            keep_unquantized=keep,
            kv_cache_fp8=kv_fp8,
            static_input_scales=True,  # its FP8 layers are ModelOpt's static per-tensor W8A8 (an input_scale each)
            mixed=mixed,
            label="ModelOpt mixed NVFP4/FP8",
        )
    raise UnsupportedArchitectureError(f"ModelOpt quant_algo {algo or '(none)'!r} is not modelled")


def _mxfp8(keep: tuple[str, ...], kv_fp8: bool, producer: str) -> QuantSpec:
    """ModelOptMxFp8Config (modelopt.py): every linear and the routed experts in float8_e4m3 with one uint8 e8m0
    scale per 32 inputs (ModelOptMxFp8LinearMethod / ModelOptMxFp8FusedMoE.create_weights, MXFP8_BLOCK_SIZE 32);
    `exclude_modules` stay 16-bit; activations are quantized at run time (no input scales)."""
    return QuantSpec("mxfp8", 8, group_size=32, keep_unquantized=keep, kv_cache_fp8=kv_fp8, label=f"MXFP8 ({producer})")


def _mxfp8_checkpoint(qc: Mapping[str, Any]) -> QuantSpec:
    """MiniMax-style `quant_method: mxfp8` checkpoints: ModelOptMxFp8Config.from_config normalizes them to the
    ModelOpt MXFP8 schema (`ignored_layers` as exclude_modules, kv_cache_quant_algo kept), the same bytes on disk."""
    keep = _str_tuple(qc.get("ignored_layers")) + _str_tuple(qc.get("modules_to_not_convert"))
    kv_fp8 = str(qc.get("kv_cache_quant_algo") or "").upper() == "FP8"
    return replace(_mxfp8(keep, kv_fp8, "MXFP8 checkpoint"), checkpoint_format="modelopt")


# The per-layer algorithms of MIXED_PRECISION whose bytes memory/weights.py counts (vLLM 0.33 has more: block FP8
# and GGML-style block codecs, modelopt.py _BLOCK_FP8_MOE_ALGOS and B12X_BLOCK_CODECS).
MIXED_LAYER_ALGOS = ("FP8", "NVFP4", "W4A16_NVFP4", "MXFP8")


def _mixed_layers(layers: Any) -> tuple[tuple[str, str], ...]:
    """MIXED_PRECISION's `quantized_layers` as (module, algorithm) pairs. vLLM requires a non-empty mapping of
    layer names to their recipes (ModelOptMixedPrecisionConfig.from_config) and reads each recipe's quant_algo."""
    if not isinstance(layers, Mapping) or not layers or not all(isinstance(v, Mapping) for v in layers.values()):
        raise ModelConfigError(
            "ModelOpt MIXED_PRECISION needs quantized_layers: a non-empty mapping of layer names to their quant_algo"
        )
    mixed = tuple(sorted((str(k), str(v.get("quant_algo", "")).upper()) for k, v in layers.items()))
    unknown = sorted({algo for _, algo in mixed} - set(MIXED_LAYER_ALGOS))
    if unknown:
        raise UnsupportedArchitectureError(
            f"ModelOpt MIXED_PRECISION layer quant_algo {unknown[0] or '(none)'!r} is not modelled "
            f"(only {', '.join(MIXED_LAYER_ALGOS)})"
        )
    return mixed


# quant_method of a config.json -> its reader
_READERS: dict[str, Callable[[Mapping[str, Any]], QuantSpec]] = {
    "fp8": _fp8,
    "fbgemm_fp8": _fbgemm_fp8,
    "awq": _awq_gptq,
    "gptq": _awq_gptq,
    "compressed-tensors": _compressed_tensors,
    "mxfp4": _mxfp4,
    "modelopt": _modelopt,
    "modelopt_fp4": _modelopt,
    "bitsandbytes": _bitsandbytes,
    "auto-round": _auto_round,
    "quark": quark_quant,
    "mxfp8": _mxfp8_checkpoint,
}
