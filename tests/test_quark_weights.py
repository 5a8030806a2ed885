"""AMD Quark (`quant_method: quark`) and whole-model ModelOpt MXFP8 checkpoints: the declaration read, and the bytes
hand-checked from the parameters vLLM's schemes allocate, on the tiny Llama of test_quantized_weights.

One decoder layer holds (rows x cols = out x in): q 256x256, k 128x256, v 128x256, o 256x256, gate_up 1024x256,
down 256x512. vLLM fuses q/k/v into qkv_proj [512, 256]; the inventory keeps gate_up as one tensor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recommender.errors import ModelConfigError, UnsupportedArchitectureError
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.weights import Parallel, tensor_bytes
from recommender.model.quant import parse_quant, resolve_quant
from recommender.model.quark import layer_scheme
from recommender.model.spec import ModelSpec
from recommender.model.tensors import model_tensors
from recommender.sources.resolve import resolve_model

from .catalog_support import H100
from .test_quantized_weights import TINY

FP8 = {"dtype": "fp8_e4m3", "qscheme": "per_tensor", "is_dynamic": False, "symmetric": True}
MX = {"dtype": "fp4", "qscheme": "per_group", "group_size": 32, "scale_format": "e8m0", "ch_axis": -1}
KV = {"dtype": "fp8_e4m3", "qscheme": "per_tensor", "is_dynamic": False}


def quark(weight: Any, inputs: Any, *, exclude: list[str] | None = None, kv: bool = False) -> dict[str, Any]:
    """A Quark quantization_config as AMD's exports write it (export block, global config, exclude list)."""
    layer = {p: {"weight": weight, "input_tensors": inputs, "output_tensors": KV} for p in ("*k_proj", "*v_proj")}
    return {
        "quant_method": "quark",
        "export": {"kv_cache_group": ["*k_proj", "*v_proj"] if kv else [], "pack_method": "reorder"},
        "global_quant_config": {"weight": weight, "input_tensors": inputs, "output_tensors": None, "bias": None},
        "layer_quant_config": layer if kv else {},
        "layer_type_quant_config": {},
        "exclude": exclude if exclude is not None else ["lm_head"],
    }


def _model(tmp_path: Path, qc: dict[str, Any]) -> ModelSpec:
    (tmp_path / "config.json").write_text(json.dumps(dict(TINY, quantization_config=qc)))
    return resolve_model(str(tmp_path))


def _layer(spec: ModelSpec, layer: int) -> dict[str, int]:
    """Bytes of the layer's linears on one GPU by the inventory's tensor name (q, k, v apart)."""
    return {
        t.module.rsplit(".", 1)[-1]: tensor_bytes(spec, t, Parallel(), 2, spec.quant)
        for t in model_tensors(spec)
        if t.layer == layer and t.linear
    }


def test_quark_fp8_kv_per_tensor_static(tmp_path: Path) -> None:
    # amd/*-FP8-KV (QuarkW8A8Fp8, per_tensor weights, static per_tensor inputs): float8 `weight` [out, in], one
    # float32 `weight_scale` and one `input_scale` per logical partition. qkv_proj: 512 x 256 = 131,072 + 3 x 4 + 3 x 4
    # = 131,096; o_proj 65,536 + 8 = 65,544; down 131,072 + 8 = 131,080; gate_up [1024, 256] is one inventory tensor,
    # so one partition's two scales (8 B) are not counted: 262,144 + 8 = 262,152 (vLLM 262,160).
    spec = _model(tmp_path, quark(FP8, FP8, kv=True))
    q = spec.quant
    assert q is not None and (q.method, q.bits, q.group_size, q.checkpoint_format) == ("fp8", 8, 0, "quark")
    assert q.static_input_scales and q.keep_unquantized == ("lm_head",)
    got = _layer(spec, 0)
    assert got["q_proj"] + got["k_proj"] + got["v_proj"] == 131_096
    assert (got["o_proj"], got["gate_up_proj"], got["down_proj"]) == (65_544, 262_152, 131_080)
    # the KV group ships scales but `--kv-cache-dtype auto` stays bfloat16 (vLLM resolves auto from ModelOpt's
    # kv_cache_quant_algo only), so the cache is 16-bit unless fp8 is asked for
    assert not q.kv_cache_fp8 and "FP8 KV scales" in q.label
    auto = explain(spec, H100, EngineFlags(max_model_len=128), VllmVersion(0, 33)).kv_bytes_per_token
    fp8 = explain(spec, H100, EngineFlags(max_model_len=128, kv_cache_dtype="fp8"), VllmVersion(0, 33))
    assert auto == 2 * fp8.kv_bytes_per_token == 2 * 2 * 2 * 64 * 2  # K and V, 2 KV heads x 64, 2 layers, 2 bytes


def test_quark_fp8_per_channel_dynamic_inputs(tmp_path: Path) -> None:
    # per_channel weights: one float32 scale per output row; dynamic inputs: no input scale.
    # o_proj [256, 256]: 65,536 + 256 x 4 = 66,560.
    spec = _model(tmp_path, quark(dict(FP8, qscheme="per_channel"), dict(FP8, is_dynamic=True)))
    assert spec.quant is not None and (spec.quant.group_size, spec.quant.static_input_scales) == (-1, False)
    assert _layer(spec, 0)["o_proj"] == 66_560


def test_quark_mxfp4_every_linear_but_the_excluded(tmp_path: Path) -> None:
    # OCP MX fp4 (QuarkOCP_MX.create_weights): uint8 `weight` [out, in / 2] and uint8 e8m0 `weight_scale`
    # [out, in / 32], on every linear, not only the experts. o_proj [256, 256]: 32,768 + 2,048 = 34,816;
    # down [256, 512]: 65,536 + 4,096 = 69,632. Attention excluded by a `re:` entry (should_ignore_layer): bfloat16,
    # q [256, 256] = 131,072 bytes.
    qc = quark(MX, dict(MX, is_dynamic=True), exclude=["lm_head", "re:.*self_attn.*"])
    spec = _model(tmp_path, qc)
    q = spec.quant
    assert q is not None and (q.method, q.bits, q.group_size) == ("ocp-mx", 4, 32)
    got = _layer(spec, 0)
    assert got["down_proj"] == 69_632 and got["gate_up_proj"] == 1024 * 128 + 1024 * 8 == 139_264
    assert got["o_proj"] == got["q_proj"] == 131_072
    (tmp_path / "b").mkdir()
    unexcluded = _layer(_model(tmp_path / "b", quark(MX, None)), 0)  # W4A16 MXFP4, nothing but lm_head excluded
    assert unexcluded["o_proj"] == 34_816


def test_quark_mxfp6_packs_four_in_three_bytes(tmp_path: Path) -> None:
    # fp6_e2m3: get_packed_dim = in x 3 / 4 bytes a row. down [256, 512]: 256 x 384 + 256 x 16 = 102,400.
    spec = _model(tmp_path, quark(dict(MX, dtype="fp6_e2m3"), None))
    assert spec.quant is not None and spec.quant.bits == 6
    assert _layer(spec, 0)["down_proj"] == 102_400


def test_modelopt_mxfp8_whole_model(tmp_path: Path) -> None:
    # ModelOpt MXFP8 (ModelOptMxFp8LinearMethod): float8 [out, in] and a uint8 e8m0 scale [out, in / 32].
    # down [256, 512]: 131,072 + 256 x 16 = 135,168. Both config.json spellings vLLM reads: ModelOpt keys at the
    # top level, and MiniMax-style `quant_method: mxfp8` with ignored_layers (ModelOptMxFp8Config.from_config).
    top = {
        "quant_method": "modelopt",
        "quant_algo": "MXFP8",
        "kv_cache_quant_algo": None,
        "exclude_modules": ["lm_head"],
    }
    minimax = {"quant_method": "mxfp8", "ignored_layers": ["lm_head", "model.layers.1.mlp.down_proj"]}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = _model(tmp_path / "a", top), _model(tmp_path / "b", minimax)
    assert a.quant is not None and b.quant is not None
    assert (a.quant.method, b.quant.method) == ("mxfp8", "mxfp8")
    assert _layer(a, 0)["down_proj"] == _layer(b, 0)["down_proj"] == 135_168
    assert _layer(b, 1)["down_proj"] == 256 * 512 * 2  # ignored: bfloat16


def test_quark_matches_any_quantization_flag_of_its_family(tmp_path: Path) -> None:
    spec = _model(tmp_path, quark(FP8, FP8))
    assert resolve_quant(spec, "quark") is spec.quant


def test_quark_layer_quant_config_gives_attention_its_own_scheme(tmp_path: Path) -> None:
    # AMD's "-AttnFP8" / mixed exports: MXFP4 globally, `*self_attn*` FP8 per-channel (ptpc_fp8). vLLM takes the
    # first matching layer_quant_config pattern (fnmatch), a fused qkv_proj by its shards (_find_matched_config).
    # q [256, 256] per-channel FP8: 65,536 + 256 x 4 = 66,560; k / v [128, 256]: 32,768 + 512 = 33,280 each;
    # o_proj 66,560; gate_up_proj stays MXFP4: 1024 x 128 + 1024 x 8 = 139,264; down 256 x 256 + 256 x 16 = 69,632.
    qc = quark(MX, dict(MX, is_dynamic=True))
    ptpc = {
        "weight": dict(FP8, qscheme="per_channel"),
        "input_tensors": dict(FP8, qscheme="per_channel", is_dynamic=True),
    }
    qc["layer_quant_config"] = {"*self_attn*": ptpc}
    spec = _model(tmp_path, qc)
    q = spec.quant
    assert q is not None and q.method == "ocp-mx" and "fp8-channel by layer_quant_config" in q.label
    got = _layer(spec, 0)
    assert (got["q_proj"], got["k_proj"], got["v_proj"], got["o_proj"]) == (66_560, 33_280, 33_280, 66_560)
    assert (got["gate_up_proj"], got["down_proj"]) == (139_264, 69_632)


def test_quark_layer_scheme_lookup_follows_vllm() -> None:
    mixed = (("*mlp.experts*", "ocp-mx4"), ("model.layers.0.mlp.down_proj", "fp8-channel"), ("*gate_proj", "int8"))
    # routed experts: the FusedMoE prefix (model.layers.3.mlp.experts) is what vLLM matches
    assert layer_scheme(mixed, "model.layers.3.mlp.experts.w13", (), experts=True) == "ocp-mx4"
    # a pattern without `*` is matched as `name in pattern`: the exact name, not another layer's
    assert layer_scheme(mixed, "model.layers.0.mlp.down_proj", (), experts=False) == "fp8-channel"
    assert layer_scheme(mixed, "model.layers.1.mlp.down_proj", (), experts=False) is None
    # a fused module by its first shard
    assert layer_scheme(mixed, "model.layers.1.mlp.gate_up_proj", ("gate_proj", "up_proj"), experts=False) == "int8"


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"export": None}, ModelConfigError, "export key"),
        (
            {"global_quant_config": {"weight": dict(FP8, dtype="int4", qscheme="per_group")}},
            UnsupportedArchitectureError,
            "No quark",
        ),
        ({"global_quant_config": {"weight": FP8, "input_tensors": None}}, UnsupportedArchitectureError, "No quark"),
        ({"export": {"kv_cache_group": ["*k_proj"]}}, ModelConfigError, "kv_cache_group"),
    ],
)
def test_quark_configs_vllm_refuses(change: dict[str, Any], error: type[Exception], message: str) -> None:
    qc = quark(FP8, FP8) | change
    with pytest.raises(error, match=message):
        parse_quant(qc)


def test_quark_kv_cache_other_than_fp8_per_tensor_is_refused() -> None:
    qc = quark(FP8, FP8, kv=True)
    qc["layer_quant_config"]["*k_proj"]["output_tensors"] = dict(KV, qscheme="per_channel")
    qc["layer_quant_config"]["*v_proj"]["output_tensors"] = dict(KV, qscheme="per_channel")
    with pytest.raises(UnsupportedArchitectureError, match="only fp8_e4m3 per_tensor"):
        parse_quant(qc)
