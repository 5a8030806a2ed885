"""Checkpoint tensor lists written from the architecture formula's own tensors, the way the quantizers save them
(names as transformers / AutoGPTQ / AutoAWQ / ModelOpt / llm-compressor store them, packed shapes and dtypes), so
that the tensor-list path can be checked against the formula on the catalog's models."""

from __future__ import annotations

from recommender.memory.weights import _matches
from recommender.model.spec import CheckpointTensor, ModelSpec, QuantSpec
from recommender.model.tensor import Tensor
from recommender.model.tensors import model_tensors

BARE = ("sinks", "dt_bias", "A_log", "D", "layer_scalar", "e_score_correction_bias")
Entry = tuple[str, str, tuple[int, ...]]


def quantized_entries(module: str, rows: int, cols: int, q: QuantSpec) -> list[Entry]:
    """One quantized linear as its format stores it."""
    if q.method in ("gptq", "awq"):
        pack = 32 // q.bits
        groups = 1 if q.group_size <= 0 else -(-cols // q.group_size)
        if q.method == "gptq":
            return [
                (f"{module}.qweight", "I32", (cols // pack, rows)),
                (f"{module}.qzeros", "I32", (groups, rows // pack)),
                (f"{module}.scales", "F16", (groups, rows)),
                (f"{module}.g_idx", "I32", (cols,)),
            ]
        return [
            (f"{module}.qweight", "I32", (cols, rows // pack)),
            (f"{module}.qzeros", "I32", (groups, rows // pack)),
            (f"{module}.scales", "F16", (groups, rows)),
        ]
    if q.method == "nvfp4":
        return [
            (f"{module}.weight", "U8", (rows, cols // 2)),
            (f"{module}.weight_scale", "F8_E4M3", (rows, cols // 16)),
            (f"{module}.weight_scale_2", "F32", ()),
            (f"{module}.input_scale", "F32", ()),
        ]
    if q.block:
        scale = (-(-rows // q.block[0]), -(-cols // q.block[1]))
        return [(f"{module}.weight", "F8_E4M3", (rows, cols)), (f"{module}.weight_scale_inv", "F32", scale)]
    return [(f"{module}.weight", "F8_E4M3", (rows, cols)), (f"{module}.weight_scale", "F32", ())]


def _linear(module: str, rows: int, cols: int, t: Tensor, s: ModelSpec) -> list[Entry]:
    q = s.quant
    quantized = q is not None and t.linear and not _matches(module, q.keep_unquantized) and q.method != "mxfp4"
    if q is not None and quantized:
        return quantized_entries(module, rows, cols, q)
    return [(f"{module}.weight", "BF16", (rows, cols) if cols > 1 else (rows,))]


def _experts(t: Tensor, s: ModelSpec) -> list[Entry]:
    prefix, kind = t.module.rsplit(".", 1)
    if s.quant is not None and s.quant.method == "mxfp4":  # gpt-oss: stacked blocks / scales / bias
        name = {"w13": "gate_up_proj", "w2": "down_proj", "w13_bias": "gate_up_proj", "w2_bias": "down_proj"}[kind]
        if kind.endswith("bias"):
            return [(f"{prefix}.{name}_bias", "BF16", (t.count, t.rows))]
        return [
            (f"{prefix}.{name}_blocks", "U8", (t.count, t.rows, t.cols // 32, 16)),
            (f"{prefix}.{name}_scales", "U8", (t.count, t.rows, t.cols // 32)),
        ]
    out: list[Entry] = []
    for e in range(t.count):
        if kind == "w13":
            half = t.rows // 2 if s.moe is not None and s.moe.gated else t.rows
            for leaf in ("gate_proj", "up_proj") if half != t.rows else ("up_proj",):
                out += _linear(f"{prefix}.{e}.{leaf}", half, t.cols, t, s)
        elif kind == "w2":
            out += _linear(f"{prefix}.{e}.down_proj", t.rows, t.cols, t, s)
        else:
            out.append((f"{prefix}.{e}.{'down_proj' if kind == 'w2_bias' else 'up_proj'}.bias", "BF16", (t.rows,)))
    return out


def _internal(t: Tensor, s: ModelSpec) -> list[Entry] | None:
    """The formula's merged bookkeeping tensors (Gemma-4) under the names checkpoints use."""
    base, _, leaf = t.module.rpartition(".")
    if leaf == "qkvo":
        return [(f"{base}.{p}_proj.weight", "BF16", (t.rows // 4, t.cols)) for p in "qkvo"]
    if leaf == "gate_up" and t.group == "vision":
        return [(f"{base}.{p}_proj.weight", "BF16", (t.rows // 2, t.cols)) for p in ("gate", "up")]
    if leaf == "down" and t.group == "vision":
        return [(f"{base}.down_proj.weight", "BF16", (t.rows, t.cols))]
    if t.module.endswith("router.scales") and s.moe is not None:
        experts = s.moe.num_experts
        return [(f"{base}.scale", "BF16", (t.rows - experts,)), (f"{base}.per_expert_scale", "BF16", (experts,))]
    return None


def _entries(t: Tensor, s: ModelSpec) -> list[Entry]:
    leaf = t.module.rsplit(".", 1)[-1]
    if (internal := _internal(t, s)) is not None:
        return internal
    if t.group == "experts" and leaf in ("w13", "w2", "w13_bias", "w2_bias"):
        return _experts(t, s)
    if leaf == "bias":
        return [(t.module, "BF16", (t.rows * t.cols,))]
    if leaf in BARE or t.module.endswith(".weight"):
        return [(t.module, "F32" if leaf == "A_log" else "BF16", (t.rows, t.cols) if t.cols > 1 else (t.rows,))]
    if leaf == "gate_up_proj" and s.gated_mlp:
        base = t.module.removesuffix(".gate_up_proj")
        half = t.rows // 2
        return _linear(f"{base}.gate_proj", half, t.cols, t, s) + _linear(f"{base}.up_proj", half, t.cols, t, s)
    return _linear(t.module, t.rows, t.cols, t, s)


def formula_checkpoint(s: ModelSpec) -> tuple[CheckpointTensor, ...]:
    """Every tensor the formula says the checkpoint ships, named and packed as the checkpoint's format stores it."""
    out: list[CheckpointTensor] = []
    for t in model_tensors(s):
        if t.in_checkpoint:
            out += [CheckpointTensor(name, dtype, shape) for name, dtype, shape in _entries(t, s)]
    return tuple(out)
