"""Weights from the checkpoint's own tensor list (model/checkpoint_map.py, memory/weights.py weight_tensors).

Two kinds of checks:
- the catalog's models: a checkpoint written from the formula's own tensors (named, unfused and packed as each
  format stores them: tests/checkpoint_headers.py) gives the formula's bytes at every TP / PP / EP;
- hand-checked bytes for a tiny Llama's headers per quantization method, the layout of each tensor as the
  quantizer saves it and as vLLM 0.33's create_weights / process_weights_after_loading keeps it on the GPU.
Header files here are headers only (8-byte size, JSON table): the data region is never written.
"""

from __future__ import annotations

import json
import struct
from dataclasses import replace
from math import prod
from pathlib import Path
from typing import Any

import pytest

from recommender.memory.mxfp4 import Mxfp4Layout, mxfp4_layout
from recommender.memory.weights import Parallel, tensor_bytes, weight_bytes_per_gpu
from recommender.model.checkpoint_map import checkpoint_inventory
from recommender.model.spec import CheckpointTensor
from recommender.model.tensors import model_tensors
from recommender.sources.resolve import resolve_model
from tests.checkpoint_headers import formula_checkpoint

from .conftest import invoke

PARALLEL = (Parallel(1), Parallel(2), Parallel(4), Parallel(8), Parallel(2, 2), Parallel(4, expert_parallel=True))
MODELS = (
    "meta-llama/Llama-3.1-8B-Instruct",
    "Qwen/Qwen2.5-7B-Instruct",  # q/k/v biases
    "Qwen/Qwen2.5-7B-Instruct-AWQ",
    "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4",
    "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8",
    "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8",
    "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8",
    "nvidia/Qwen3-32B-NVFP4",
    "mistralai/Mixtral-8x7B-v0.1",  # per-expert tensors stacked by vLLM
    "deepseek-ai/DeepSeek-V2-Lite",  # MLA, shared experts
    "Qwen/Qwen1.5-MoE-A2.7B",  # shared expert gate
    "openai/gpt-oss-20b",  # MXFP4 blocks, sinks, expert biases
    "nvidia/Nemotron-H-56B-Base-8K",  # Mamba2 under backbone.layers
    "Qwen/Qwen3.5-27B",  # gated DeltaNet
    "nvidia/Qwen3.6-27B-NVFP4",  # ModelOpt mixed precision by layer and module kind (linear_attn is a mixer)
    "microsoft/phi-2",  # parallel block, LayerNorm biases, lm_head bias
    "google/gemma-3-4b-it",  # vision tower
    "google/gemma-4-26B-A4B",  # MoE router scales, V from K
    "Qwen/Qwen2-Audio-7B-Instruct",  # audio tower and projector whole on every rank
)


@pytest.mark.parametrize("model", MODELS)
def test_the_formulas_own_checkpoint_gives_the_formulas_bytes(model: str) -> None:
    spec = resolve_model(model)
    read = replace(spec, checkpoint_tensors=formula_checkpoint(spec))
    inventory = checkpoint_inventory(read)
    assert inventory.usable and inventory.unknown == () and inventory.dropped == ()
    assert spec.params is not None and inventory.params == spec.params.total
    layouts = [None]
    if spec.quant is not None and spec.quant.method == "mxfp4":
        layouts += [mxfp4_layout("nvidia", (9, 0), (0, 33)), mxfp4_layout("nvidia", (8, 0), (0, 33))]
    for par in PARALLEL:
        for layout in layouts:
            formula, tensors = (
                weight_bytes_per_gpu(s, par, dtype_bytes=2, quant=s.quant, mxfp4=layout) for s in (spec, read)
            )
            assert tensors == pytest.approx(formula, rel=2e-4), (par, layout)


# --- a tiny Llama's headers, hand-checked per quantization method ------------------------------------------------

TINY: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_attention_heads": 4,  # head_dim 64
    "num_key_value_heads": 2,  # k/v: 128 rows
    "num_hidden_layers": 2,
    "vocab_size": 1024,
    "max_position_embeddings": 128,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
# (module, out, in) of one layer's linears as checkpoints name them
LINEARS = (
    ("self_attn.q_proj", 256, 256),
    ("self_attn.k_proj", 128, 256),
    ("self_attn.v_proj", 128, 256),
    ("self_attn.o_proj", 256, 256),
    ("mlp.gate_proj", 512, 256),
    ("mlp.up_proj", 512, 256),
    ("mlp.down_proj", 256, 512),
)
ITEM = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "I64": 8, "U8": 1, "F8_E4M3": 1, "I8": 1}
# Bytes besides the layers' linears, at TP=1: embedding and lm_head [1024, 256] bf16, two RMSNorms a layer, the
# final norm, and the rotary cos/sin cache [128 positions, 64] bf16.
REST_TP1 = 2 * 1024 * 256 * 2 + 2 * 2 * 256 * 2 + 256 * 2 + 128 * 64 * 2  # 1,067,520
# At TP=2 the embedding and lm_head are vocab-parallel (512 rows each); norms and the rotary cache are whole.
REST_TP2 = 2 * 512 * 256 * 2 + 2 * 2 * 256 * 2 + 256 * 2 + 128 * 64 * 2  # 543,232


def write_checkpoint(folder: Path, config: dict[str, Any], tensors: dict[str, tuple[str, tuple[int, ...]]]) -> Path:
    """config.json and a headers-only model.safetensors (the tensors' data region is never written)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = prod(shape) * ITEM[dtype]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw)
    return folder


def tiny_checkpoint(linear: Any) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Every tensor of TINY, the layers' linears as `linear(module, out, in)` stores them."""
    out: dict[str, tuple[str, tuple[int, ...]]] = {"model.embed_tokens.weight": ("BF16", (1024, 256))}
    for i in range(2):
        p = f"model.layers.{i}."
        out |= {p + n: ("BF16", (256,)) for n in ("input_layernorm.weight", "post_attention_layernorm.weight")}
        for module, rows, cols in LINEARS:
            out |= linear(p + module, rows, cols)
    return out | {"model.norm.weight": ("BF16", (256,)), "lm_head.weight": ("BF16", (1024, 256))}


def weights(folder: Path, tp: int) -> int:
    spec = resolve_model(str(folder))
    assert checkpoint_inventory(spec).usable
    return weight_bytes_per_gpu(spec, Parallel(tp), dtype_bytes=2, quant=spec.quant)


def test_unquantized(tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path, TINY, tiny_checkpoint(lambda m, r, c: {f"{m}.weight": ("BF16", (r, c))}))
    linear = 256 * 256 + 2 * 128 * 256 + 256 * 256 + 3 * 512 * 256  # 589,824 elements a layer
    assert weights(folder, 1) == 2 * linear * 2 + REST_TP1
    # TP=2: q and o halve; k/v split by KV head (2 heads: one each); gate/up/down halve.
    assert weights(folder, 2) == 2 * linear + REST_TP2
    note = resolve_model(str(folder)).notes[-1]
    assert note == "weights counted from the checkpoint's 21 tensors (safetensors headers)"


def _gptq(module: str, rows: int, cols: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    """AutoGPTQ 4-bit g128: qweight [in/8, out] int32, qzeros [in/128, out/8] int32, scales [in/128, out] fp16,
    g_idx [in] int32."""
    return {
        f"{module}.qweight": ("I32", (cols // 8, rows)),
        f"{module}.qzeros": ("I32", (cols // 128, rows // 8)),
        f"{module}.scales": ("F16", (cols // 128, rows)),
        f"{module}.g_idx": ("I32", (cols,)),
    }


def test_gptq_4bit_symmetric(tmp_path: Path) -> None:
    config = TINY | {
        "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False}
    }
    folder = write_checkpoint(tmp_path, config, tiny_checkpoint(_gptq))
    # gptq_marlin keeps qweight (re-packed, same size: out x in / 2 bytes) and the scales (groups x out x 2 B);
    # a symmetric checkpoint's qzeros and g_idx without act-order become empty tensors (marlin_make_empty_g_idx).
    packed = (256 * 256 + 2 * 128 * 256 + 256 * 256 + 3 * 512 * 256) // 2  # 294,912
    scales = (2 * 256 + 2 * 128 + 2 * 128 + 2 * 256 + 2 * 512 + 2 * 512 + 4 * 256) * 2  # 9,216
    assert weights(folder, 1) == 2 * (packed + scales) + REST_TP1
    # TP=2: q 128 rows, k/v 64 rows (one KV head), o 128 input columns = one group of 128, gate/up 256 rows,
    # down 256 input columns = two groups.
    scales_tp2 = (2 * 128 + 2 * 64 + 2 * 64 + 1 * 256 + 2 * 256 + 2 * 256 + 2 * 256) * 2  # 4,608
    assert weights(folder, 2) == 2 * (packed // 2 + scales_tp2) + REST_TP2


def _awq(module: str, rows: int, cols: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    """AutoAWQ 4-bit g128 (GEMM): qweight [in, out/8] int32, qzeros [in/128, out/8] int32, scales [in/128, out]."""
    return {
        f"{module}.qweight": ("I32", (cols, rows // 8)),
        f"{module}.qzeros": ("I32", (cols // 128, rows // 8)),
        f"{module}.scales": ("F16", (cols // 128, rows)),
    }


def test_awq_4bit_with_zero_points(tmp_path: Path) -> None:
    config = TINY | {"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}}
    folder = write_checkpoint(tmp_path, config, tiny_checkpoint(_awq))
    # awq_marlin keeps qweight, scales and the zero points (groups x out / 2 bytes).
    packed = (256 * 256 + 2 * 128 * 256 + 256 * 256 + 3 * 512 * 256) // 2
    groups_x_out = 2 * 256 + 2 * 128 + 2 * 128 + 2 * 256 + 2 * 512 + 2 * 512 + 4 * 256  # 4,608
    assert weights(folder, 1) == 2 * (packed + groups_x_out * 2 + groups_x_out // 2) + REST_TP1


def _fp8_block(module: str, rows: int, cols: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    """FP8 128x128 blocks (DeepSeek-V3 / Qwen3-FP8): weight [out, in] e4m3, weight_scale_inv [out/128, in/128] f32."""
    return {
        f"{module}.weight": ("F8_E4M3", (rows, cols)),
        f"{module}.weight_scale_inv": ("F32", (-(-rows // 128), -(-cols // 128))),
    }


def test_fp8_block(tmp_path: Path) -> None:
    config = TINY | {
        "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
    }
    folder = write_checkpoint(tmp_path, config, tiny_checkpoint(_fp8_block))
    elements = 256 * 256 + 2 * 128 * 256 + 256 * 256 + 3 * 512 * 256
    blocks = 2 * 2 + 1 * 2 + 1 * 2 + 2 * 2 + 4 * 2 + 4 * 2 + 2 * 4  # 36 float32 scales a layer
    assert weights(folder, 1) == 2 * (elements + 4 * blocks) + REST_TP1


def _nvfp4(module: str, rows: int, cols: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    """ModelOpt NVFP4: weight [out, in/2] uint8, weight_scale [out, in/16] e4m3, weight_scale_2 and input_scale
    float32 scalars."""
    return {
        f"{module}.weight": ("U8", (rows, cols // 2)),
        f"{module}.weight_scale": ("F8_E4M3", (rows, cols // 16)),
        f"{module}.weight_scale_2": ("F32", ()),
        f"{module}.input_scale": ("F32", ()),
    }


def test_nvfp4_modelopt(tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path, TINY, tiny_checkpoint(_nvfp4))
    quant = {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]}
    (folder / "hf_quant_config.json").write_text(json.dumps({"quantization": quant}))
    elements = 256 * 256 + 2 * 128 * 256 + 256 * 256 + 3 * 512 * 256
    # values n/2, e4m3 scales n/16, and the two float32 scalars of each of the 7 linears
    assert weights(folder, 1) == 2 * (elements // 2 + elements // 16 + 7 * 8) + REST_TP1


def _w4a16(module: str, rows: int, cols: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    """compressed-tensors pack-quantized W4A16 g128: weight_packed [out, in/8] int32, weight_scale [out, in/128]
    bf16, weight_shape [2] int64."""
    return {
        f"{module}.weight_packed": ("I32", (rows, cols // 8)),
        f"{module}.weight_scale": ("BF16", (rows, cols // 128)),
        f"{module}.weight_shape": ("I64", (2,)),
    }


def test_compressed_tensors_w4a16(tmp_path: Path) -> None:
    group = {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128}}
    config = TINY | {
        "quantization_config": {
            "quant_method": "compressed-tensors",
            "format": "pack-quantized",
            "config_groups": {"group_0": group},
            "ignore": ["lm_head"],
        }
    }
    folder = write_checkpoint(tmp_path, config, tiny_checkpoint(_w4a16))
    packed = (256 * 256 + 2 * 128 * 256 + 256 * 256 + 3 * 512 * 256) // 2
    groups_x_out = 2 * 256 + 2 * 128 + 2 * 128 + 2 * 256 + 2 * 512 + 2 * 512 + 4 * 256
    assert weights(folder, 1) == 2 * (packed + groups_x_out * 2) + REST_TP1


# --- what the loader skips, what is not understood, where the formula takes over ---------------------------------


def _plain(module: str, rows: int, cols: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    return {f"{module}.weight": ("BF16", (rows, cols))}


def test_tensors_vllm_does_not_load_are_not_counted(tmp_path: Path) -> None:
    base = write_checkpoint(tmp_path / "base", TINY, tiny_checkpoint(_plain))
    extra = tiny_checkpoint(_plain) | {
        "model.layers.2.self_attn.q_proj.weight": ("BF16", (256, 256)),  # an MTP layer past num_hidden_layers
        "model.layers.0.self_attn.rotary_emb.inv_freq": ("F32", (32,)),
    }
    more = write_checkpoint(tmp_path / "more", TINY, extra)
    assert weights(more, 1) == weights(base, 1)
    assert resolve_model(str(more)).notes[-1] == (
        "weights counted from the checkpoint's 23 tensors (safetensors headers); vLLM does not load 2 of them "
        "(model.layers.2.self_attn.q_proj.weight, model.layers.0.self_attn.rotary_emb.inv_freq)"
    )
    tied = write_checkpoint(tmp_path / "tied", TINY | {"tie_word_embeddings": True}, tiny_checkpoint(_plain))
    assert weights(tied, 1) == weights(base, 1) - 1024 * 256 * 2  # the tied lm_head is the embedding


def test_unknown_tensors_are_counted_whole_or_hand_back_to_the_formula(tmp_path: Path) -> None:
    base = write_checkpoint(tmp_path / "base", TINY, tiny_checkpoint(_plain))
    small = tiny_checkpoint(_plain) | {"model.layers.1.mlp.mystery": ("BF16", (64, 64))}  # 0.2% of the bytes
    folder = write_checkpoint(tmp_path / "small", TINY, small)
    assert weights(folder, 2) == weights(base, 2) + 64 * 64 * 2  # whole on every GPU
    assert (
        "1 of unknown role counted whole on every GPU (model.layers.1.mlp.mystery)"
        in resolve_model(str(folder)).notes[-1]
    )
    large = tiny_checkpoint(_plain) | {"model.layers.1.mlp.mystery": ("BF16", (256, 256))}
    spec = resolve_model(str(write_checkpoint(tmp_path / "large", TINY, large)))
    assert not checkpoint_inventory(spec).usable
    # 65,536 bf16 elements beside the 1,705,216 of the model: 3.7% of the bytes
    assert (
        spec.notes[-1] == "weights from the architecture formula: 1 tensor (3.7% of the checkpoint) with no known role"
    )
    assert weight_bytes_per_gpu(spec, Parallel(1), dtype_bytes=2, quant=None) == weights(base, 1)
    # The headers' parameter count disagrees with the formula's by more than 1%: a warning explain prints.
    assert spec.approximate == (
        "the safetensors headers hold 1,770,752 parameters, the architecture formula 1,705,216 (-3.7%)",
    )


def test_bitsandbytes_headers_hand_back_to_the_formula(tmp_path: Path) -> None:
    def bnb(module: str, rows: int, cols: int) -> dict[str, tuple[str, tuple[int, ...]]]:
        blocks = rows * cols // 64
        return {
            f"{module}.weight": ("U8", (rows * cols // 2, 1)),
            f"{module}.weight.absmax": ("F32", (blocks,)),
            f"{module}.weight.quant_map": ("F32", (16,)),
            f"{module}.weight.quant_state.bitsandbytes__nf4": ("U8", (100,)),
        }

    config = TINY | {"quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True}}
    spec = resolve_model(str(write_checkpoint(tmp_path, config, tiny_checkpoint(bnb))))
    assert spec.notes[-1].startswith("weights from the architecture formula: bitsandbytes stores its weights flat")
    formula = replace(spec, checkpoint_tensors=())
    assert weight_bytes_per_gpu(spec, Parallel(1), dtype_bytes=2, quant=spec.quant) == weight_bytes_per_gpu(
        formula, Parallel(1), dtype_bytes=2, quant=spec.quant
    )


def test_a_vision_tower_the_formula_does_not_know_is_counted(tmp_path: Path) -> None:
    base = write_checkpoint(tmp_path / "base", TINY, tiny_checkpoint(_plain))
    tower = tiny_checkpoint(_plain) | {
        "visual.blocks.0.attn.qkv.weight": ("BF16", (384, 128)),  # column parallel
        "visual.blocks.0.attn.proj.weight": ("BF16", (128, 128)),  # row parallel
        "visual.blocks.0.norm1.weight": ("BF16", (128,)),
    }
    folder = write_checkpoint(tmp_path / "tower", TINY, tower)
    assert weights(folder, 1) == weights(base, 1) + (384 * 128 + 128 * 128 + 128) * 2
    assert weights(folder, 2) == weights(base, 2) + (192 * 128 + 128 * 64 + 128) * 2


def test_gpt_oss_expert_w2_bias_is_whole_on_every_gpu() -> None:
    # unquantized_fused_moe_method.py create_weights: w2_bias [experts, hidden] on every rank (the row-parallel
    # down projection adds it once after the all-reduce); w13_bias [experts, 2 x intermediate / TP] is split.
    spec = resolve_model("openai/gpt-oss-20b")
    biases = {
        t.module.rsplit(".", 1)[-1]: t for t in model_tensors(spec) if t.layer == 0 and t.module.endswith("_bias")
    }
    for tp in (1, 2, 4):
        assert tensor_bytes(spec, biases["w2_bias"], Parallel(tp), 2, None) == 32 * 2880 * 2
        assert tensor_bytes(spec, biases["w13_bias"], Parallel(tp), 2, None) == 32 * 2 * 2880 // tp * 2


def test_explain_says_where_the_weights_come_from_and_warns_on_the_count(tmp_path: Path) -> None:
    large = tiny_checkpoint(_plain) | {"model.layers.1.mlp.mystery": ("BF16", (256, 256))}
    folder = str(write_checkpoint(tmp_path / "large", TINY, large))
    out = invoke(["explain", folder, "--gpu", "l4", "--max-model-len", "128"]).stdout
    assert "note: weights from the architecture formula: 1 tensor (3.7% of the checkpoint) with no known role" in out
    warning = "the safetensors headers hold 1,770,752 parameters, the architecture formula 1,705,216 (-3.7%)"
    assert f"warning: {warning}" in out
    doc = json.loads(invoke(["explain", folder, "--gpu", "l4", "--max-model-len", "128", "--format", "json"]).stdout)
    assert warning in doc["warnings"] and warning in doc["approximate"]


@pytest.mark.parametrize("shape", [["a"], [-4, 2], [1.5], [True], [2**50], "256", [1] * 9], ids=lambda v: repr(v)[:20])
def test_a_malformed_header_shape_is_bad_input(tmp_path: Path, shape: object) -> None:
    header = json.dumps({"model.norm.weight": {"dtype": "BF16", "shape": shape, "data_offsets": [0, 512]}}).encode()
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    r = invoke(["explain", str(tmp_path), "--gpu", "l4"], 2)
    assert r.stderr.count("\n") == 1 and "'model.norm.weight' has a malformed shape" in r.stderr


def test_gpt2_causal_mask_buffers_are_dropped(tmp_path: Path) -> None:
    # gpt2.py load_weights maps ".attn.bias" and ".attn.masked_bias" to None ("c_attn.bias" is a real bias).
    buffers = {"model.layers.0.attn.bias": ("BF16", (1, 1, 128, 128)), "model.layers.0.attn.masked_bias": ("F32", ())}
    spec = resolve_model(str(write_checkpoint(tmp_path, TINY, tiny_checkpoint(_plain) | buffers)))
    assert checkpoint_inventory(spec).dropped == ("model.layers.0.attn.bias", "model.layers.0.attn.masked_bias")


def test_mxfp4_experts_as_gpt_oss_stores_them() -> None:
    """gpt-oss-20b's layer-0 experts as its checkpoint stores them: gate_up_proj_blocks [32, 5760, 90, 16] and
    down_proj_blocks [32, 2880, 90, 16] uint8 (two e2m1 values a byte, 32 a block), their e8m0 scales
    [32, rows, 90] and bfloat16 biases [32, rows]."""
    spec = resolve_model("openai/gpt-oss-20b")
    p = "model.layers.0.mlp.experts"
    experts = (
        CheckpointTensor(f"{p}.gate_up_proj_blocks", "U8", (32, 5760, 90, 16)),
        CheckpointTensor(f"{p}.gate_up_proj_scales", "U8", (32, 5760, 90)),
        CheckpointTensor(f"{p}.gate_up_proj_bias", "BF16", (32, 5760)),
        CheckpointTensor(f"{p}.down_proj_blocks", "U8", (32, 2880, 90, 16)),
        CheckpointTensor(f"{p}.down_proj_scales", "U8", (32, 2880, 90)),
        CheckpointTensor(f"{p}.down_proj_bias", "BF16", (32, 2880)),
    )
    read = replace(spec, checkpoint_tensors=experts)
    tensors = [t for t in checkpoint_inventory(read).tensors if t.group == "experts"]
    assert sorted(t.module.rsplit(".", 1)[-1] for t in tensors) == ["w13", "w13_bias", "w2", "w2_bias"]

    def total(layout: Mxfp4Layout | None, tp: int = 1) -> int:
        return sum(tensor_bytes(read, t, Parallel(tp), 2, spec.quant, layout) for t in tensors)

    # As stored (no backend layout): values n/2, one scale byte per 32 values, bf16 biases.
    stored = 32 * (5760 * 2880 // 2 + 5760 * 90 + 5760 * 2) + 32 * (2880 * 2880 // 2 + 2880 * 90 + 2880 * 2)
    assert total(None) == stored
    # Marlin (A100, vLLM 0.33): hidden 2880 -> 3072 (multiple of 256), intermediate 2880 -> 2944 (of 128),
    # biases stay bf16; at TP=2 the intermediate is split first (1440 -> 1536) and w2's bias stays whole.
    marlin = mxfp4_layout("nvidia", (8, 0), (0, 33))
    w13 = 32 * (5888 * 3072 // 2 + 5888 * 96 + 5888 * 2)
    w2 = 32 * (3072 * 2944 // 2 + 3072 * 92 + 3072 * 2)
    assert total(marlin) == w13 + w2
    w13_tp2 = 32 * (3072 * 3072 // 2 + 3072 * 96 + 3072 * 2)
    w2_tp2 = 32 * (3072 * 1536 // 2 + 3072 * 48 + 3072 * 2)
    assert total(marlin, 2) == w13_tp2 + w2_tp2
