"""Quantized weight bytes hand-checked from the parameters vLLM allocates, on a tiny Llama-style config.

One decoder layer of the config below holds these linear weights (rows x cols = out x in features):
q 256x256, k 128x256, v 128x256, o 256x256, gate 512x256, up 512x256, down 256x512. vLLM fuses q/k/v into
qkv_proj and gate/up into gate_up_proj; the figures below are per fused module, as vLLM's create_weights
allocates them, and the memory model's tensor inventory (q, k and v apart, gate_up as one tensor) must sum to them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind
from recommender.memory.weights import Parallel, _matches, tensor_bytes
from recommender.model.spec import ModelSpec
from recommender.model.tensor import Tensor
from recommender.model.tensors import model_tensors
from recommender.sources.resolve import resolve_model

from .conftest import invoke

TINY = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 2,
    "vocab_size": 1024,
    "max_position_embeddings": 128,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
LINEAR_ELEMENTS = 256 * 256 + 2 * 128 * 256 + 256 * 256 + 2 * 512 * 256 + 256 * 512  # 589,824 per layer
# The inventory's tensors making up each vLLM module (gate_up_proj is one tensor there already).
FUSED = {
    "qkv_proj": ("q_proj", "k_proj", "v_proj"),
    "o_proj": ("o_proj",),
    "gate_up_proj": ("gate_up_proj",),
    "down_proj": ("down_proj",),
}


def _model(tmp_path: Path, quantization_config: dict[str, Any] | None = None, **hf_quant: Any) -> ModelSpec:
    config = dict(TINY, quantization_config=quantization_config) if quantization_config else TINY
    (tmp_path / "config.json").write_text(json.dumps(config))
    if hf_quant:
        (tmp_path / "hf_quant_config.json").write_text(json.dumps(hf_quant))
    return resolve_model(str(tmp_path))


def _per_module(spec: ModelSpec, layer: int) -> dict[str, int]:
    """Bytes of the layer's linear weights on one GPU, summed per vLLM module (qkv_proj, o_proj, ...)."""
    tensors: list[Tensor] = [t for t in model_tensors(spec) if t.layer == layer and t.linear]
    by_name = {t.module.rsplit(".", 1)[-1]: tensor_bytes(spec, t, Parallel(), 2, spec.quant) for t in tensors}
    assert sorted(by_name) == sorted(n for names in FUSED.values() for n in names)
    return {fused: sum(by_name[n] for n in names) for fused, names in FUSED.items()}


def _lm_head_bytes(spec: ModelSpec, tp: int = 1) -> int:
    (head,) = [t for t in model_tensors(spec) if t.module == "lm_head"]
    return tensor_bytes(spec, head, Parallel(tp=tp), 2, spec.quant)


def test_unquantized_baseline(tmp_path: Path) -> None:
    spec = _model(tmp_path)
    assert sum(_per_module(spec, 0).values()) == 2 * LINEAR_ELEMENTS
    assert _lm_head_bytes(spec) == 1024 * 256 * 2


# NVFP4 (modelopt.py KNvfp4Static + KNvfp4Dynamic.create_weights): `weight` [out, in/2] uint8, `weight_scale`
# [out, in/16] float8_e4m3fn, `weight_scale_2` and `input_scale` one float32 per fused partition.
NVFP4 = {
    "qkv_proj": 512 * 128 + 512 * 16 + 3 * 4 + 3 * 4,  # 73,752
    "o_proj": 256 * 128 + 256 * 16 + 4 + 4,  # 36,872
    "gate_up_proj": 1024 * 128 + 1024 * 16 + 2 * 4 + 2 * 4,  # 147,472
    "down_proj": 256 * 256 + 256 * 32 + 4 + 4,  # 73,736
}
# ModelOpt FP8 (KFp8StaticTensor): `weight` [out, in] float8, `weight_scale` and `input_scale` per partition.
FP8_STATIC = {"qkv_proj": 512 * 256 + 3 * 4 + 3 * 4, "o_proj": 256 * 256 + 4 + 4}


def test_nvfp4_modelopt(tmp_path: Path) -> None:
    spec = _model(tmp_path, quantization={"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]})
    assert spec.quant is not None and spec.quant.method == "nvfp4"
    # gate_up_proj is one tensor in the inventory, so one partition's two float32 scales (8 B) are not counted.
    assert _per_module(spec, 0) == NVFP4 | {"gate_up_proj": NVFP4["gate_up_proj"] - 8}
    assert _lm_head_bytes(spec) == 1024 * 256 * 2  # excluded: stays bfloat16


def test_modelopt_mixed_precision_layer_by_layer(tmp_path: Path) -> None:
    # MIXED_PRECISION: layer 0's attention FP8, its MLP NVFP4; layer 1 is not listed, so it stays bfloat16
    # (ModelOptMixedPrecisionConfig._resolve_quant_algo finds no algorithm for it).
    attention = {f"model.layers.0.self_attn.{p}": {"quant_algo": "FP8"} for p in ("q_proj", "k_proj", "v_proj")}
    attention["model.layers.0.self_attn.o_proj"] = {"quant_algo": "FP8"}
    mlp = {f"model.layers.0.mlp.{p}": {"quant_algo": "NVFP4", "group_size": 16} for p in ("gate_proj", "up_proj")}
    mlp["model.layers.0.mlp.down_proj"] = {"quant_algo": "NVFP4", "group_size": 16}
    spec = _model(tmp_path, quantization={"quant_algo": "MIXED_PRECISION", "quantized_layers": attention | mlp})
    assert spec.quant is not None and spec.quant.method == "modelopt-mixed"
    first = _per_module(spec, 0)
    assert {k: first[k] for k in FP8_STATIC} == FP8_STATIC
    assert (first["gate_up_proj"], first["down_proj"]) == (NVFP4["gate_up_proj"] - 8, NVFP4["down_proj"])
    assert sum(_per_module(spec, 1).values()) == 2 * LINEAR_ELEMENTS


def test_modelopt_mixed_precision_names_each_module_and_the_head(tmp_path: Path) -> None:
    # vLLM resolves a module's algorithm by its own name or its fused shards' (ModelOptMixedPrecisionConfig.
    # _resolve_quant_algo, 0.23 / 0.24); a linear of a listed layer that is not named itself stays bfloat16
    # (UnquantizedLinearMethod), and ParallelLMHead takes the method `lm_head` names.
    qkv = {f"model.layers.0.self_attn.{p}": {"quant_algo": "FP8"} for p in ("q_proj", "k_proj", "v_proj")}
    head = {"lm_head": {"quant_algo": "W4A16_NVFP4", "group_size": 16}}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    spec = _model(tmp_path / "a", quantization={"quant_algo": "MIXED_PRECISION", "quantized_layers": qkv | head})
    first = _per_module(spec, 0)
    assert first["qkv_proj"] == FP8_STATIC["qkv_proj"]  # [512, 256] float8 + scales: 131,096
    assert first["o_proj"] == 256 * 256 * 2  # o_proj is not listed: bfloat16 [256, 256], 131,072 (was FP8)
    assert first["gate_up_proj"] == 1024 * 256 * 2 and first["down_proj"] == 256 * 512 * 2
    # W4A16 NVFP4 head [1024, 256] (ModelOptNvFp4W4A16LinearMethod.create_weights; Marlin repacks in place, same
    # bytes): weight uint8 [1024, 128] = 131,072, weight_scale float8 [1024, 16] = 16,384, float32 global scale
    # (the model's 8 B per module) -> 147,464 against 524,288 in bfloat16.
    assert _lm_head_bytes(spec) == 1024 * 128 + 1024 * 16 + 8 == 147_464
    # excluded first (is_layer_excluded before the lookup): the head listed and excluded stays bfloat16
    excluded = {"quant_algo": "MIXED_PRECISION", "quantized_layers": qkv | head, "exclude_modules": ["lm_head"]}
    assert _lm_head_bytes(_model(tmp_path / "b", quantization=excluded)) == 1024 * 256 * 2


def test_modelopt_mixed_qwen36_27b_nvfp4_by_hand() -> None:
    # nvidia/Qwen3.6-27B-NVFP4 (catalog, its config.json): hidden 5120, vocab 248,320, 48 linear-attention layers
    # (16 key heads and 48 value heads of 128) and 16 full-attention layers, MLP 17,408. quantized_layers: the
    # linear_attn in_proj_qkv / in_proj_z / out_proj and the self_attn q/k/v/o FP8, the mlp W4A16_NVFP4, lm_head
    # W4A16_NVFP4; in_proj_b / in_proj_a are not listed. Field14 U006 logs 19.78 GiB loaded (0.23.1 nightly, GB10).
    spec = resolve_model("nvidia/Qwen3.6-27B-NVFP4")
    got = {
        t.module: tensor_bytes(spec, t, Parallel(), 2, spec.quant)
        for t in model_tensors(spec)
        if t.layer == 0 or t.module == "lm_head"
    }
    # in_proj_qkvz FP8: [2 x 16 x 128 + 48 x 128 + 48 x 128, 5120] = [16,384, 5120] float8 = 83,886,080 + 8
    assert got["model.layers.0.linear_attn.in_proj_qkvz"] == 16_384 * 5120 + 8
    # in_proj_ba: [48 + 48, 5120] bfloat16 = 983,040 (not in quantized_layers; was counted FP8, 491,528)
    assert got["model.layers.0.linear_attn.in_proj_ba"] == 96 * 5120 * 2 == 983_040
    # gate_up W4A16 NVFP4: [34,816, 5120] -> 89,128,960 packed + 11,141,120 float8 scales + 8
    assert got["model.layers.0.mlp.gate_up_proj"] == 89_128_960 + 11_141_120 + 8
    # lm_head W4A16 NVFP4: [248,320, 5120] -> 635,699,200 packed + 79,462,400 scales + 8 = 715,161,608 (0.666 GiB;
    # was 2,542,796,800 in bfloat16, 2.368 GiB: the 1.70 GiB most of U006's +7.9 % came from)
    assert got["lm_head"] == 635_699_200 + 79_462_400 + 8 == 715_161_608


def test_modelopt_mixed_nemotron_h_mamba_mixer_is_fp8() -> None:
    # nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4 lists `backbone.layers.N.mixer.in_proj` / `out_proj` FP8
    # (vLLM's NemotronH mapper reads backbone. as model.; the direct lookup finds them) and lm_head W4A16_NVFP4.
    spec = resolve_model("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4")
    got = {
        t.module.rsplit(".", 1)[-1]: tensor_bytes(spec, t, Parallel(), 2, spec.quant)
        for t in model_tensors(spec)
        if (t.layer == 0 and t.linear) or t.module == "lm_head"
    }
    # Mamba-2 in_proj [2 x 4096 + 2 x 8 x 128 + 64, 2688] = [10,304, 2688] float8 + 8 (was 2 B an element)
    assert got["in_proj"] == 10_304 * 2688 + 8 == 27_697_160
    assert got["out_proj"] == 2688 * 4096 + 8  # [2688, 64 x 64] float8
    # head [131,072, 2688] NVFP4: 176,160,768 packed + 22,020,096 float8 scales + 8
    assert got["lm_head"] == 131_072 * 2688 // 2 + 131_072 * 2688 // 16 + 8 == 198_180_872


def test_modelopt_mixed_precision_experts_named_block_sparse_moe(tmp_path: Path) -> None:
    # Mixtral / MiniMax name their experts block_sparse_moe.experts.N.w1|w2|w3 (nvidia/MiniMax-M3-NVFP4); vLLM finds
    # the RoutedExperts' algorithm by that prefix (ModelOptMixedPrecisionConfig._resolve_quant_algo, step 3).
    moe = TINY | {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "num_local_experts": 4}
    (tmp_path / "config.json").write_text(json.dumps(moe | {"num_experts_per_tok": 2}))
    experts = {
        f"model.layers.0.block_sparse_moe.experts.{e}.{w}": {"quant_algo": "NVFP4", "group_size": 16}
        for e in range(4)
        for w in ("w1", "w2", "w3")
    }
    hf_quant = {"quantization": {"quant_algo": "MIXED_PRECISION", "quantized_layers": experts}}
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(hf_quant))
    spec = resolve_model(str(tmp_path))
    got = {
        (t.layer, t.module.rsplit(".", 1)[-1]): tensor_bytes(spec, t, Parallel(tp=1), 2, spec.quant)
        for t in model_tensors(spec)
        if t.group == "experts"
    }
    # NVFP4 per expert: packed 4-bit weight (n / 2), one float8 scale per 16 (n / 16), two float32 scales (8 B)
    w13, w2 = 1024 * 256, 256 * 512  # [2 x 512, 256] and [256, 512]
    assert got[(0, "w13")] == 4 * (w13 // 2 + w13 // 16 + 8) == 589_856
    assert got[(0, "w2")] == 4 * (w2 // 2 + w2 // 16 + 8) == 294_944
    assert got[(1, "w13")] == 4 * w13 * 2  # layer 1 is not listed: bfloat16


def test_modelopt_mixed_precision_mxfp8_layers(tmp_path: Path) -> None:
    # MXFP8 (ModelOptMxFp8Config; nvidia/MiniMax-M3-NVFP4's attention): float8 `weight` [out, in] and a uint8 e8m0
    # `weight_scale` [out, in / 32] (kMxfp8StaticScale, GroupShape(1, 32)); no input scale.
    attention = {f"model.layers.0.self_attn.{p}": {"quant_algo": "MXFP8"} for p in ("q_proj", "k_proj", "v_proj")}
    attention["model.layers.0.self_attn.o_proj"] = {"quant_algo": "MXFP8"}
    spec = _model(tmp_path, quantization={"quant_algo": "MIXED_PRECISION", "quantized_layers": attention})
    first = _per_module(spec, 0)
    assert (first["qkv_proj"], first["o_proj"]) == (512 * 256 + 512 * 8, 256 * 256 + 256 * 8)  # 135,168 and 67,584


@pytest.mark.parametrize(
    ("layers", "expected"),
    [
        # vLLM requires a non-empty mapping of layer names to recipes (ModelOptMixedPrecisionConfig.from_config)
        ({}, "quantized_layers: a non-empty mapping"),
        (["model.layers.0.mlp.down_proj"], "quantized_layers: a non-empty mapping"),
        ({"model.layers.0.mlp.down_proj": "NVFP4"}, "quantized_layers: a non-empty mapping"),
        # a per-layer algorithm vLLM has but whose bytes are not counted: refused by name, not counted 16-bit
        ({"model.layers.0.mlp.down_proj": {"quant_algo": "FP8_PB_WO"}}, "layer quant_algo 'FP8_PB_WO' is not modelled"),
    ],
)
def test_modelopt_mixed_precision_layers_refused(tmp_path: Path, layers: Any, expected: str) -> None:
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    hf_quant = {"quantization": {"quant_algo": "MIXED_PRECISION", "quantized_layers": layers}}
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(hf_quant))
    result = invoke(["show", str(tmp_path)], exit_code=2)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: ")
    assert expected in result.stderr


# GPTQ 4-bit g128, sym (gptq_marlin.py create_weights): `qweight` [in/8, out] int32, `scales` [in/128, out] in the
# model dtype; a symmetric checkpoint's qzeros are dropped after loading (marlin_make_empty_g_idx).
def _gptq_bytes(rows: int, cols: int) -> int:
    return cols // 8 * rows * 4 + cols // 128 * rows * 2


def test_gptq_with_a_quantized_lm_head(tmp_path: Path) -> None:
    gptq = {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False}
    (tmp_path / "plain").mkdir()
    (tmp_path / "head").mkdir()
    plain, head = _model(tmp_path / "plain", gptq), _model(tmp_path / "head", gptq | {"lm_head": True})
    assert plain.quant is not None and not plain.quant.lm_head_quantized
    assert head.quant is not None and head.quant.lm_head_quantized
    assert _per_module(plain, 0)["qkv_proj"] == _gptq_bytes(512, 256)
    # ParallelLMHead takes the GPTQ linear method when the config says lm_head: its [vocab, hidden] weight is packed.
    assert _lm_head_bytes(plain) == 1024 * 256 * 2  # 524,288
    assert _lm_head_bytes(head) == _gptq_bytes(1024, 256) == 135_168
    assert _lm_head_bytes(head, tp=2) == _gptq_bytes(512, 256)  # vocab-parallel: half the rows per rank
    gpu = resolve_gpu("l4", load_gpus())
    e_plain, e_head = (
        explain(s, gpu, EngineFlags(max_model_len=128), VllmVersion.parse("0.33")) for s in (plain, head)
    )
    assert e_plain.stage.weights - e_head.stage.weights == 524_288 - 135_168


# bitsandbytes 4-bit, pre-quantized (bitsandbytes.py create_qweight_for_4bit: `weight` [n / 2, 1] uint8 for a
# 16-bit model; the quant state kept on the GPU holds one absmax per 64-element block). With double quantization
# the checkpoint's absmax is uint8 with a nested float32 absmax per 256 blocks; bitsandbytes_loader.py
# dequantize_dq (from 0.9.2) turns it into float32 at load. Not counted: each tensor's code books (16 and 256
# float32) and offset.
BNB = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}
BLOCKS = {"qkv_proj": (1024, 512, 512), "o_proj": (1024,), "gate_up_proj": (4096,), "down_proj": (2048,)}
PACKED = {"qkv_proj": 65536, "o_proj": 32768, "gate_up_proj": 131072, "down_proj": 65536}


def test_bitsandbytes_4bit_absmax_in_float32(tmp_path: Path) -> None:
    spec = _model(tmp_path, BNB)
    assert spec.quant is not None and not spec.quant.double_quant
    assert _per_module(spec, 0) == {k: PACKED[k] + 4 * sum(b) for k, b in BLOCKS.items()}
    assert sum(_per_module(spec, 0).values()) == LINEAR_ELEMENTS // 2 + LINEAR_ELEMENTS // 64 * 4  # 331,776
    assert _lm_head_bytes(spec) == 1024 * 256 * 2


def test_bitsandbytes_double_quant_until_0_9_2(tmp_path: Path) -> None:
    spec = _model(tmp_path, BNB | {"bnb_4bit_use_double_quant": True})
    assert spec.quant is not None and spec.quant.double_quant
    nested = {k: PACKED[k] + sum(b + -(-b // 256) * 4 for b in blocks) for k, blocks in BLOCKS.items()}
    assert _per_module(spec, 0) == nested  # qkv: 32,768 + 16,384 x 2 packed, 2,048 uint8 + 4 x 4 nested float32
    # 0.9.2 dequantizes the absmax at load: 3 bytes more per block, 16 B less per 256 blocks, in both layers.
    gpu = resolve_gpu("l4", load_gpus())
    old, new = (explain(spec, gpu, EngineFlags(max_model_len=128), VllmVersion.parse(v)) for v in ("0.9.1", "0.9.2"))
    assert new.stage.weights - old.stage.weights == 2 * (4 * 9216 - sum(nested.values()) + sum(PACKED.values()))


def test_bitsandbytes_8bit(tmp_path: Path) -> None:
    # create_qweight_for_8bit: Int8Params [out, in] int8; the checkpoint's `weight.SCB`, one float32 per output row.
    spec = _model(tmp_path, {"quant_method": "bitsandbytes", "load_in_8bit": True})
    rows = {"qkv_proj": 512, "o_proj": 256, "gate_up_proj": 1024, "down_proj": 256}
    assert _per_module(spec, 0) == {k: 2 * PACKED[k] + 4 * r for k, r in rows.items()}


def test_online_bitsandbytes_is_nf4_with_double_quant(tmp_path: Path) -> None:
    """`--quantization bitsandbytes` on a 16-bit checkpoint: BitsAndBytesModelLoader._unquantized_generator
    (v0.7.3 model_loader/loader.py) runs every linear weight through quantize_4bit(quant_type="nf4",
    compress_statistics=True), so the layers hold what a pre-quantized nf4 double-quant checkpoint holds and the LM
    head stays 16-bit. By hand for the tiny model's 2 layers at 0.7.3: 16-bit linears 2 x 1,179,648 bytes; online
    2 x (294,912 packed + 9,216 uint8 absmax + 4 x 36 nested float32: qkv 4 + 2 + 2, o 4, gate_up 16, down 8
    groups of 256 blocks) = 2 x 304,272, so 1,750,752 bytes less."""
    (tmp_path / "plain").mkdir()
    (tmp_path / "bnb").mkdir()
    plain, prequantized = (
        _model(tmp_path / "plain"),
        _model(tmp_path / "bnb", BNB | {"bnb_4bit_use_double_quant": True}),
    )
    gpu, v = resolve_gpu("l4", load_gpus()), VllmVersion.parse("0.7.3")
    sixteen = explain(plain, gpu, EngineFlags(max_model_len=128), v)
    online = explain(plain, gpu, EngineFlags(max_model_len=128, quantization="bitsandbytes"), v)
    checkpoint = explain(prequantized, gpu, EngineFlags(max_model_len=128), v)
    assert online.stage.weights == checkpoint.stage.weights
    assert sixteen.stage.weights - online.stage.weights == 2 * (2 * LINEAR_ELEMENTS - 304_272) == 1_750_752


@pytest.mark.parametrize(("version", "starts"), [("0.32.0", True), ("0.33.0", False)])
def test_bitsandbytes_is_unknown_to_vllm_0_33(tmp_path: Path, version: str, starts: bool) -> None:
    spec = _model(tmp_path, BNB)
    e = explain(spec, resolve_gpu("l4", load_gpus()), EngineFlags(max_model_len=128), VllmVersion.parse(version))
    assert e.fits is starts
    if not starts:
        (issue,) = [i for i in e.issues if i.fatal]
        assert issue.kind is IssueKind.QUANTIZATION_UNKNOWN and issue.flag == "bitsandbytes"
        # config/model.py _verify_quantization's message, with 0.33's list of methods.
        assert issue.message.startswith("Unknown quantization method: bitsandbytes. Must be one of ['awq', ")


@pytest.mark.parametrize(
    ("module", "ignore", "kept"),
    [
        # Every entry names the whole module (or a parent): the order of the list does not matter, and a name is
        # not a prefix match ('gate' is the MoE router, not gate_proj; layers.1 is not layers.10).
        ("model.layers.1.mlp.gate_proj", ("model.layers.1.mlp.gate", "lm_head"), False),
        ("model.layers.1.mlp.gate_proj", ("lm_head", "model.layers.1.mlp.gate"), False),
        ("model.layers.10.mlp.down_proj", ("model.layers.1", "lm_head"), False),
        ("model.layers.1.mlp.down_proj", ("model.layers.1", "lm_head"), True),
        # A fused module is kept when all its checkpoint shards are (vLLM's is_layer_skipped with the model's
        # packed_modules_mapping); compressed-tensors `re:` entries match from the start of the name.
        ("model.layers.0.self_attn.qkv_proj", tuple(f"re:.*\\.self_attn\\.{x}_proj$" for x in "qkv"), True),
        ("model.layers.0.self_attn.qkv_proj", ("model.layers.0.self_attn.q_proj",), False),
        ("model.layers.0.mlp.gate_up_proj", ("model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj"), True),
        ("model.layers.3.self_attn.o_proj", ("re:.*self_attn",), True),
        # A multimodal checkpoint's ignore list names the text model under its prefix: Llama 4's FP8 build
        # (language_model.model.layers.N..., language_model.lm_head), Qwen3.5's (model.language_model.layers.N...);
        # the tensor inventory names a text model's modules, a checkpoint header keeps the prefix.
        (
            "model.layers.0.self_attn.qkv_proj",
            tuple(f"language_model.model.layers.0.self_attn.{x}_proj" for x in "qkv"),
            True,
        ),
        ("lm_head", ("language_model.lm_head",), True),
        ("model.layers.0.linear_attn.in_proj_a", ("model.language_model.layers.0.linear_attn.in_proj_a",), True),
        (
            "model.language_model.layers.0.linear_attn.in_proj_a",
            ("model.language_model.layers.0.linear_attn.in_proj_a",),
            True,
        ),
        ("model.layers.1.linear_attn.in_proj_a", ("model.language_model.layers.0.linear_attn.in_proj_a",), False),
        ("model.visual.blocks.0.attn.qkv", ("model.language_model.layers.0.linear_attn.in_proj_a",), False),
    ],
)
def test_ignore_lists_match_whole_module_names(module: str, ignore: tuple[str, ...], kept: bool) -> None:
    assert _matches(module, ignore) is kept


def test_bitsandbytes_skip_modules_stay_16_bit(tmp_path: Path) -> None:
    """llm_int8_skip_modules (unsloth's dynamic 4-bit re-uploads list whole sub-modules there): a module is skipped
    when an entry is one component of its path ("lm_head") or a leading part of it ("model.layers.1.mlp"),
    bitsandbytes.py is_layer_skipped_bnb."""
    spec = _model(tmp_path, BNB | {"llm_int8_skip_modules": ["lm_head", "model.layers.1.mlp"]})
    quantized = {k: PACKED[k] + 4 * sum(b) for k, b in BLOCKS.items()}
    assert _per_module(spec, 0) == quantized
    second = _per_module(spec, 1)
    assert (second["gate_up_proj"], second["down_proj"]) == (4 * PACKED["gate_up_proj"], 4 * PACKED["down_proj"])
    assert (second["qkv_proj"], second["o_proj"]) == (quantized["qkv_proj"], quantized["o_proj"])


@pytest.mark.parametrize(
    ("quantization_config", "expected"),
    [
        # vLLM's integer kernels divide the input dimension by the group size (awq.py / gptq.py create_weights)
        ({"quant_method": "awq", "bits": 4, "group_size": 0}, "group_size must be -1 (per channel) or positive, got 0"),
        ({"quant_method": "gptq", "bits": 4, "group_size": -7}, "group_size must be -1 (per channel) or positive"),
        ({"quant_method": "auto-round", "bits": 4, "group_size": 0}, "group_size must be -1 (per channel) or positive"),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"g": {"weights": {"num_bits": 4, "strategy": "group", "group_size": "128"}}},
            },
            "config_groups.weights.group_size must be an integer, got '128'",
        ),
    ],
)
def test_a_group_size_vllm_cannot_load_is_refused_in_one_line(
    tmp_path: Path, quantization_config: dict[str, Any], expected: str
) -> None:
    (tmp_path / "config.json").write_text(json.dumps(dict(TINY, quantization_config=quantization_config)))
    result = invoke(["explain", str(tmp_path), "--gpu", "h100"], exit_code=2)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and expected in result.stderr
