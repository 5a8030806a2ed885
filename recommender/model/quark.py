"""Read an AMD Quark checkpoint's declaration (config.json `quantization_config` with `quant_method: quark`).

vLLM serves these with QuarkConfig (model_executor/layers/quantization/quark/quark.py, vllm-project/vllm main):
- `from_config` needs the `export` block; its `kv_cache_group` (e.g. ["*k_proj", "*v_proj"]) names the layers whose
  `layer_quant_config` entry carries the KV cache's `output_tensors` spec, which QuarkKVCacheMethod accepts only as
  fp8_e4m3 per_tensor. That ships K/V scales; it does not switch the cache to fp8: `--kv-cache-dtype auto` resolves
  only ModelOpt's kv_cache_quant_algo (utils/torch_utils.py get_kv_cache_quant_algo_string), so the cache stays
  16-bit unless `--kv-cache-dtype fp8` is passed (as AMD's model cards do).
- `get_quant_method`: a layer named in `exclude` (exact name or `re:` regex, quark/utils.py should_ignore_layer; a
  fused layer by its shards) keeps UnquantizedLinearMethod; every other LinearBase takes the scheme of its
  `layer_quant_config` pattern, else `layer_type_quant_config`, else `global_quant_config` (_find_matched_config);
  RoutedExperts take QuarkMoEMethod of the same config. ParallelLMHead and embeddings are not LinearBase: 16-bit.
- `_get_scheme_from_config`, in its order: NVFP4 (a [fp4 group 16, fp8 per_tensor] weight pair), W8A8 FP8
  (fp8_e4m3 per_tensor / per_channel static weights, fp8_e4m3 inputs), static W8A8 INT8, W4A8 MXFP4 + FP8
  (schemes/quark_w4a8_mxfp4_fp8.py), dynamic-per-token INT8, OCP MX (schemes/quark_ocp_mx.py: fp4 / fp6_e3m2 /
  fp6_e2m3 per_group 32 with e8m0 scales; anything else raises NotImplementedError ("No quark compatible scheme").

Storage per scheme (create_weights of each scheme): FP8 one byte a weight with one float32 scale per tensor
(per output channel for per_channel) and a float32 input scale when activations are static; OCP MX packs fp4 two
to a byte (fp6 four to three bytes) with one uint8 e8m0 scale per 32 inputs ([N, K // 32]); the MoE method stores
the experts the same way (quark_moe.py QuarkOCP_MX_MoEMethod.create_weights).
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from recommender.errors import ModelConfigError, UnsupportedArchitectureError
from recommender.model.spec import QuantSpec

FP8 = "fp8_e4m3"
# OCP MX element types QuarkOCP_MX accepts (quark.py _is_w_ocp_mx_a_x) -> bits a weight
MX_BITS = {"fp4": 4, "fp6_e3m2": 6, "fp6_e2m3": 6}
MX_GROUP = 32  # OCP_MX_BLOCK_SIZE


def _spec(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _names(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ModelConfigError(f"Quark quantization_config.{what} must be a list of layer names")
    return tuple(value)


def _fp8_w8a8(weight: Mapping[str, Any], inputs: Mapping[str, Any] | None) -> bool:
    """quark.py _is_fp8_w8a8: fp8 static per-tensor / per-channel weights and fp8 inputs (dynamic, or static per
    tensor)."""
    if inputs is None or weight.get("dtype") != FP8 or inputs.get("dtype") != FP8 or weight.get("is_dynamic"):
        return False
    if weight.get("qscheme") not in ("per_tensor", "per_channel"):
        return False
    return bool(inputs.get("is_dynamic")) or inputs.get("qscheme") == "per_tensor"


def _int8(weight: Mapping[str, Any], inputs: Mapping[str, Any] | None) -> bool:
    """quark.py _is_static_tensor_w8a8 / _is_dynamic_per_token_w8a8: symmetric int8 weights per tensor or channel."""
    return (
        inputs is not None
        and weight.get("dtype") == inputs.get("dtype") == "int8"
        and weight.get("qscheme") in ("per_tensor", "per_channel")
        and weight.get("symmetric") is True
    )


def _ocp_mx(weight: Mapping[str, Any]) -> bool:
    """quark.py _is_w_ocp_mx_a_x (W4A8 MXFP4 + FP8 stores the same weight)."""
    return (
        weight.get("qscheme") == "per_group"
        and weight.get("group_size") == MX_GROUP
        and weight.get("scale_format") == "e8m0"
        and weight.get("dtype") in MX_BITS
    )


def _nvfp4(weight: Any) -> bool:
    """quark.py _is_nvfp4: a [fp4 per_group 16, fp8 per_tensor] weight pair."""
    if not isinstance(weight, list) or len(weight) != 2 or not all(isinstance(w, Mapping) for w in weight):
        return False
    fp4, outer = weight
    return bool(fp4.get("dtype") == "fp4" and fp4.get("group_size") == 16 and outer.get("dtype") == FP8)


def _scheme(weight: Any, inputs: Any) -> QuantSpec:
    """The QuantSpec of one Quark layer config (weight and input_tensors specs), in vLLM's scheme order."""
    if _nvfp4(weight):
        return QuantSpec("nvfp4", 4, group_size=16, label="NVFP4 (Quark)")
    w, a = _spec(weight), _spec(inputs)
    if w is None:
        raise UnsupportedArchitectureError(
            "Quark global_quant_config has no weight spec vLLM can serve (No quark compatible scheme was found)"
        )
    if _fp8_w8a8(w, a):
        assert a is not None
        static = not a.get("is_dynamic")
        per_channel = w.get("qscheme") == "per_channel"
        label = f"FP8 W8A8 per-{'channel' if per_channel else 'tensor'}{' static' if static else ''} (Quark)"
        return QuantSpec("fp8", 8, group_size=-1 if per_channel else 0, static_input_scales=static, label=label)
    if _int8(w, a):
        return QuantSpec("int8", 8, group_size=-1, label="INT8 W8A8 (Quark)")
    if _ocp_mx(w):
        bits = MX_BITS[str(w["dtype"])]
        act = "" if a is None else f", {str(a.get('dtype', '')).upper().replace('_E4M3', '')} activations"
        return QuantSpec("ocp-mx", bits, group_size=MX_GROUP, label=f"MX{str(w['dtype']).upper()}{act} (Quark)")
    raise UnsupportedArchitectureError(
        f"Quark weight scheme {w.get('dtype')!r} {w.get('qscheme')!r} is not one vLLM serves "
        "(No quark compatible scheme was found)"
    )


def scheme_key(spec: QuantSpec) -> str:
    """The per-layer byte rule of a scheme (memory/weights.py quantized_bytes): FP8 per-tensor (static or dynamic
    inputs) or per-channel, INT8, OCP MX of 4 or 6 bits, NVFP4."""
    if spec.method == "fp8":
        return (
            "fp8-channel" if spec.group_size == -1 else "fp8-tensor" + ("-static" if spec.static_input_scales else "")
        )
    if spec.method == "ocp-mx":
        return f"ocp-mx{spec.bits}"
    return spec.method


def _layer_schemes(layers: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """`layer_quant_config` in its order as (pattern, scheme key); entries without a weight spec (a KV-cache output
    spec alone) fall through to the global scheme."""
    return tuple(
        (name, scheme_key(_scheme(cfg["weight"], cfg.get("input_tensors"))))
        for name, cfg in layers.items()
        if cfg.get("weight") is not None
    )


def _pattern_matches(name: str, pattern: str) -> bool:
    """quark.py _find_matched_config: fnmatch when the pattern has a `*`, else `name in pattern`."""
    return fnmatchcase(name, pattern) if "*" in pattern else name in pattern


def layer_scheme(mixed: tuple[tuple[str, str], ...], module: str, fused: tuple[str, ...], experts: bool) -> str | None:
    """The scheme key `layer_quant_config` gives this module, or None (the global scheme). A fused module takes its
    shards' (vLLM requires them to agree, the first is read); routed experts are looked up by their parent (the
    FusedMoE prefix) and, failing that, by an expert projection under it (the FusedMoE fallback probes)."""
    parent = module.rpartition(".")[0]
    if experts:
        probes = (f"{parent}{sub}.{p}" for sub in (".0", "") for p in ("down_proj", "gate_proj", "up_proj"))
        names = [parent, *probes]
    else:
        names = [f"{parent}.{fused[0]}" if fused else module]
    for name in names:
        key = next((k for pattern, k in mixed if _pattern_matches(name, pattern)), None)
        if key is not None:
            return key
    return None


def _kv_scales(export: Mapping[str, Any], layers: Mapping[str, Any]) -> bool:
    """Whether the checkpoint ships FP8 KV-cache scales: QuarkConfig.from_config finds the `kv_cache_group`
    patterns in layer_quant_config and QuarkKVCacheMethod accepts only fp8_e4m3 per_tensor output tensors."""
    group = _names(export.get("kv_cache_group"), "export.kv_cache_group")
    if not group:
        return False
    specs = [cfg.get("output_tensors") for name, cfg in layers.items() if any(fnmatchcase(name, p) for p in group)]
    if not specs or not all(isinstance(s, Mapping) for s in specs):
        raise ModelConfigError(
            "The Quark quantized model has the kv_cache_group parameter setting, but no kv_cache quantization "
            "settings were found in the quantization configuration."
        )
    kv = specs[0]
    if kv.get("dtype") != FP8 or kv.get("qscheme") != "per_tensor":
        raise UnsupportedArchitectureError(
            f"Quark KV-cache quantization {kv.get('dtype')!r} {kv.get('qscheme')!r} is not served by vLLM "
            "(only fp8_e4m3 per_tensor)"
        )
    return True


def quark_quant(qc: Mapping[str, Any]) -> QuantSpec:
    """QuantSpec of a Quark `quantization_config`: the global scheme, `exclude` kept 16-bit, FP8 KV scales noted,
    and `layer_quant_config` as (pattern, scheme) pairs in `mixed` when one names another scheme than the global one
    (memory/weights.py resolves each module as _find_matched_config does); `layer_type_quant_config` is not read."""
    export = _spec(qc.get("export"))
    if export is None:
        raise ModelConfigError("The export key should be included in the configurations of Quark quantized model")
    glob = _spec(qc.get("global_quant_config"))
    layers = _spec(qc.get("layer_quant_config")) or {}
    if glob is None or not all(isinstance(cfg, Mapping) for cfg in layers.values()):
        raise ModelConfigError("Quark quantization_config needs a global_quant_config and layer configs as objects")
    kv_scales = _kv_scales(export, layers)
    spec = _scheme(glob.get("weight"), glob.get("input_tensors"))
    mixed = _layer_schemes(layers)
    label = spec.label
    others = sorted({key for _, key in mixed} - {scheme_key(spec)})
    if others:
        label += f", {' / '.join(others)} by layer_quant_config"
    if kv_scales:
        label += ", FP8 KV scales (cache fp8 only with --kv-cache-dtype fp8)"
    return QuantSpec(
        spec.method,
        spec.bits,
        group_size=spec.group_size,
        keep_unquantized=_names(qc.get("exclude"), "exclude"),
        static_input_scales=spec.static_input_scales,
        mixed=mixed if others else (),
        checkpoint_format="quark",
        label=label,
    )
