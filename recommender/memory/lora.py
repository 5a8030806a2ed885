"""The LoRA slots vLLM allocates with --enable-lora (pure): per wrapped layer, stacked A and B buffers for
--max-loras adapters of --max-lora-rank, in the LoRA dtype (the model's by default), zero-filled inside load_model,
so they are part of "Model loading took" (v1/worker/gpu_model_runner.py load_model: load_lora_model runs under the
same DeviceMemoryProfiler; V0's worker/model_runner.py load_model likewise creates the LoRA manager there).

Shapes (vllm/lora/layers/base_linear.py BaseLinearLayerWithLoRA.create_lora_weights, column_parallel_linear.py,
row_parallel_linear.py; the same in vllm/lora/layers.py of 0.8): for every slice of a wrapped linear,
    lora_a_stacked [max_loras, 1, max_lora_rank, input_size on this rank]
    lora_b_stacked [max_loras, 1, output_size on this rank, max_lora_rank]
where a column-parallel layer keeps its whole input and a shard of its output, a row-parallel one the reverse. A
merged layer (qkv_proj, gate_up_proj: MergedColumnParallelLinearWithLoRA / MergedQKVParallelLinearWithLoRA) has one
A per sub-projection over the whole input, and B slices that together cover its output shard. Routed experts
(vllm/lora/layers/fused_moe.py FusedMoEWithLoRA, vllm#21229, first in 0.11.1) hold per local expert
    w13_lora_a [max_loras, experts, rank, hidden] x (2 gated, 1 not), w13_lora_b [max_loras, experts, I/tp, rank] x same,
    w2_lora_a [max_loras, experts, rank, I/tp], w2_lora_b [max_loras, experts, hidden, rank];
before that release FusedMoE had no LoRA wrapper and the experts were left alone.

Not counted: a MoE router's gate (a replicated [experts, hidden] linear: rank x (hidden + experts) per layer),
--fully-sharded-loras (shards the rank of A / the output of B further), the LoRA wrappers of the vocab
embedding and the LM head (a few MB at rank 16) and the Punica wrapper's index buffers.
"""

from __future__ import annotations

from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.weights import FUSED_SHARDS, Parallel, sharded_shape, stage_tensors
from recommender.model.spec import ModelSpec
from recommender.model.tensor import Tensor
from recommender.model.tensors import padded_vocab
from recommender.units import GiB

FUSED_MOE_LORA_FROM = VllmVersion(0, 11, 1)
# groups of decoder-layer linears vLLM wraps (the LinearBase and FusedMoE modules of a model that supports LoRA:
# lora/utils.py get_supported_lora_modules); the towers only with --enable-tower-connector-lora, not counted
_WRAPPED_GROUPS = ("attention", "mlp", "experts", "shared_experts", "mixer")


def _slices(model: ModelSpec, t: Tensor) -> int:
    """How many A buffers (sub-projections) a wrapped tensor has."""
    if t.shard == "expert_w13":
        moe = model.moe
        return 2 if moe is not None and moe.gated and t.rows == 2 * moe.expert_intermediate else 1
    leaf = t.module.removesuffix(".weight").rpartition(".")[2]
    return len(FUSED_SHARDS.get(leaf, (leaf,)))


def lora_slot_bytes(
    model: ModelSpec, par: Parallel, flags: EngineFlags, version: VllmVersion, *, dtype_bytes: int, stage: int = 0
) -> int:
    """Bytes of the LoRA A/B buffers one GPU of pipeline stage `stage` allocates (0 without --enable-lora)."""
    if not flags.enable_lora:
        return 0
    rank, loras = flags.max_lora_rank, flags.max_loras
    vocab = padded_vocab(model.vocab_size)
    elements = 0
    for t in stage_tensors(model, par, stage, skip_towers=True):
        if not t.linear or t.layer is None or t.group not in _WRAPPED_GROUPS:
            continue
        if t.shard in ("expert_w13", "expert_w2") and version < FUSED_MOE_LORA_FROM:
            continue
        rows, cols, count = sharded_shape(t, par, vocab)
        elements += count * (_slices(model, t) * rank * cols + rows * rank)
    return elements * loras * dtype_bytes


def slots_summary(flags: EngineFlags, slot_bytes: int) -> str:
    """The one line `explain` shows for the LoRA slots counted in the weights."""
    return (
        f"--enable-lora: {flags.max_loras} adapter slot(s) of rank {flags.max_lora_rank} add "
        f"{slot_bytes / GiB:.2f} GiB per GPU to the weights (LoRA A/B buffers allocated in load_model)"
    )
