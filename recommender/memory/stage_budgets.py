"""The per-stage budget (pure): load_model and determine_available_memory on one GPU of every pipeline stage, i.e.
weights (with a speculative drafter's on the last stage), the profiling run's peak, non-torch memory and CUDA
graphs against the request, the KV memory left and the KV-cache layout of the stage's layers; and the check of a
fixed --kv-cache-memory-bytes allocation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from recommender.hardware import Gpu
from recommender.memory import lora, mla_absorption, overheads, spec_decode, unified
from recommender.memory import startup_issues as si
from recommender.memory.encoder_profile import towers_data_parallel
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.explanation import StageBudget
from recommender.memory.kv_cache import KvLayout, LayerKv, build_layout
from recommender.memory.kv_dsv4 import dsv4_layout
from recommender.memory.precision import Precision, tower_modalities
from recommender.memory.profile_run import activation_bytes, engine_passes, graph_estimate
from recommender.memory.request import Budget, profiler_counts_whole_device
from recommender.memory.scheduler import SchedulerLimits
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.memory.weights import Parallel, pp_layer_ranges, rotary_caches_on_stage, weight_bytes_per_gpu
from recommender.model.spec import ModelSpec, QuantSpec
from recommender.units import GiB

# Before vLLM 0.7.1 (config.py ModelConfig.use_mla, vllm#12601) DeepSeek-V2/V3 kept no latent cache: their attention
# was Attention(num_local_heads, head_size, num_kv_heads=num_local_heads), i.e. per-head K and V on each TP rank, of
# 256 up to 0.6.6 (q/k/v padded, deepseek_v2.py and deepseek_v3.py of v0.4.3-v0.6.6, "TODO, support head_size 192") and
# of qk_head_dim = nope + rope (192) in 0.7.0 (v padded to it). 0.7.1 and 0.7.2 keep that path for a checkpoint
# quantized other than fp8 / compressed-tensors (use_mla: "MLA is not supported with %s quantization. Disabling
# MLA."); from 0.7.3 use_mla is is_deepseek_mla alone.
MLA_CACHE_FROM = VllmVersion(0, 7, 1)
PRE_MLA_HEAD_SIZE = 256
UNPADDED_HEAD_FROM = VllmVersion(0, 7, 0)
MLA_FOR_ANY_QUANT_FROM = VllmVersion(0, 7, 3)
_PRE_MLA_ARCHITECTURES = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM")


def pre_mla_head_size(model: ModelSpec, version: VllmVersion, quant: QuantSpec | None = None) -> int:
    """The head size of the per-head cache an MLA model kept where vLLM did not cache the latent, else 0 (`quant`:
    the weights' quantization as vLLM resolved it)."""
    m = model.mla
    if m is None or model.architecture not in _PRE_MLA_ARCHITECTURES:
        return 0
    mla_off = quant is not None and quant.method != "fp8" and version < MLA_FOR_ANY_QUANT_FROM
    if version >= MLA_CACHE_FROM and not mla_off:
        return 0
    return PRE_MLA_HEAD_SIZE if version < UNPADDED_HEAD_FROM else m.qk_nope_head_dim + m.qk_rope_head_dim


def stage_layout(
    model: ModelSpec,
    layers: range,
    flags: EngineFlags,
    precision: Precision,
    *,
    v0: bool,
    mla_as_mha: int = 0,
    drafter: tuple[tuple[LayerKv, ...], int] = ((), 0),
    version: VllmVersion | None = None,
) -> KvLayout:
    """The KV-cache layout of one stage's layers (V0 had no hybrid manager: every layer holds a full block);
    `drafter`: a speculative drafter's layers on this stage and its extra Mamba blocks (memory/spec_decode.py);
    `version`: the release whose DeepSeek-V4 packing applies (None: 0.27+'s; memory/kv_dsv4.py)."""
    if model.compressed_attention is not None:  # DeepSeek-V4: its own cache layers, packed (memory/kv_dsv4.py)
        c, mtp = model.compressed_attention, len(drafter[0])
        slots, tuples = (version.dsv4_slot_packing, version.dsv4_tuple_blocks) if version else (False, False)
        return dsv4_layout(c, layers, mtp=mtp, slot_packing=slots, tuple_blocks=tuples)
    tp = flags.tensor_parallel_size
    kv, dtype = precision.kv_bytes, precision.dtype_bytes
    layout = build_layout(
        model,
        layers,
        tp=tp,
        block_size=flags.block_size,
        kv_bytes=kv,
        model_bytes=dtype,
        hybrid_manager=not v0,
        mla_as_mha=mla_as_mha,
        extra=drafter[0],
    )
    return replace(layout, speculative_blocks=drafter[1]) if drafter[1] else layout


def speculative_drafter(
    model: ModelSpec,
    flags: EngineFlags,
    precision: Precision,
    version: VllmVersion,
    issues: list[StartupIssue],
    *,
    draft: ModelSpec | None,
    v0: bool,
) -> tuple[spec_decode.Drafter, int]:
    """The speculative drafter on the last stage's GPUs and the extra Mamba blocks per request it makes vLLM keep
    (memory/spec_decode.py); an empty drafter without --speculative-config."""
    tp = flags.tensor_parallel_size
    par = Parallel(tp=tp, dp=flags.data_parallel_size, expert_parallel=flags.enable_expert_parallel)
    shape = spec_decode.KvShape(tp, flags.block_size or 16, precision.kv_bytes, precision.dtype_bytes)
    drafter = spec_decode.drafter_of(model, flags.speculative(), par, shape, precision.quant, draft)
    if drafter is None:
        return spec_decode.Drafter("", 0), 0
    if drafter.missing:
        issues.append(si.note(IssueKind.APPROXIMATE_MODEL, f"speculative decoding: {drafter.missing}"))
    blocks = spec_decode.mamba_speculative_blocks(drafter, (version.major, version.minor, version.patch), v0=v0)
    if summary := spec_decode.drafter_summary(drafter, blocks):
        issues.append(StartupIssue(IssueKind.SPECULATIVE_DRAFTER, summary, needed_bytes=drafter.weight_bytes))
    return drafter, blocks


def lora_slots(
    model: ModelSpec,
    par: Parallel,
    flags: EngineFlags,
    version: VllmVersion,
    dtype_and_stage: tuple[int, int],
    issues: list[StartupIssue],
) -> int:
    """The --enable-lora buffers one GPU of the stage allocates in load_model (memory/lora.py), noted once."""
    dtype_bytes, stage = dtype_and_stage
    slots = lora.lora_slot_bytes(model, par, flags, version, dtype_bytes=dtype_bytes, stage=stage)
    if slots and stage == 0:
        issues.append(StartupIssue(IssueKind.LORA_SLOTS, lora.slots_summary(flags, slots), needed_bytes=slots))
    return slots


def stage_budgets(
    model: ModelSpec,
    gpu: Gpu,
    flags: EngineFlags,
    version: VllmVersion,
    setup: tuple[Precision, SchedulerLimits, Budget],
    issues: list[StartupIssue],
    *,
    v0: bool = False,
    draft: ModelSpec | None = None,
) -> tuple[StageBudget, ...]:
    """load_model + determine_available_memory for every pipeline stage; the KV layout of its layers (`draft`: the
    speculative draft model's spec when --speculative-config names one the catalog holds)."""
    precision, limits, budget = setup
    tp, pp = flags.tensor_parallel_size, min(flags.pipeline_parallel_size, model.num_layers)
    par = Parallel(tp=tp, pp=pp, dp=flags.data_parallel_size, expert_parallel=flags.enable_expert_parallel)
    v = (version.major, version.minor)
    graphs, encoder = engine_passes(model, gpu, flags, limits, version, v0=v0)
    drafter = speculative_drafter(model, flags, precision, version, issues, draft=draft, v0=v0)
    absorbed = mla_absorption.absorbed_bytes_per_layer(
        model, precision.quant, tp=tp, version=version, dtype_bytes=precision.dtype_bytes, v0=v0
    )
    stages: list[StageBudget] = []
    for k, layers in enumerate(pp_layer_ranges(model.num_layers, pp)):
        w = weight_bytes_per_gpu(
            model,
            par,
            dtype_bytes=precision.dtype_bytes,
            quant=precision.quant,
            stage=k,
            cpu_offload_bytes=int(flags.cpu_offload_gb * GiB),
            mxfp4=precision.mxfp4,
            skip_towers=flags.towers_skipped(version, tower_modalities(model)),
            rotary_caches=rotary_caches_on_stage(model, (version.major, version.minor, version.patch), len(layers)),
            towers_replicated=towers_data_parallel(model, flags),
            layer_extra=absorbed,
        )
        on_stage = drafter[0] if k == pp - 1 else spec_decode.Drafter("", 0)  # the drafter runs beside the last
        w += on_stage.weight_bytes + lora_slots(model, par, flags, version, (precision.dtype_bytes, k), issues)
        act = activation_bytes(model, gpu, flags, (precision, limits), version, encoder, stage=(k, pp), v0=v0)
        if not v0:  # the V1 proposer's per-token buffers, allocated before the profiling run
            act += spec_decode.proposer_buffer_bytes(on_stage, limits.max_num_batched_tokens, precision.dtype_bytes)
        nt = overheads.non_torch_bytes(tp=tp, nvlink=gpu.nvlink, version=v, multicast=gpu.nvswitch_multicast, v0=v0)
        nt += unified.profile_growth(gpu, w)  # the host's growth on an integrated device (memory/unified.py)
        if profiler_counts_whole_device(version, v0=v0):
            nt += budget.total - budget.free  # other processes' memory (the context: see PROFILER_COUNTS_DEVICE_UNTIL)
        cg = graph_estimate(model, gpu, (flags, limits), version, len(layers), graphs=graphs, v0=v0)
        reserved = w + act + nt + (cg if budget.estimate_cudagraphs else 0)  # graphs where profiled (0.21+)
        avail = budget.requested - reserved if flags.kv_cache_memory_bytes is None else flags.kv_cache_memory_bytes
        mla_as_mha = pre_mla_head_size(model, version, precision.quant)
        extra = (on_stage.kv_layers, drafter[1])
        kv_model = spec_decode.with_draft_state(model, drafter[1])  # conv states hold the draft tokens too
        layout = stage_layout(
            kv_model, layers, flags, precision, v0=v0, mla_as_mha=mla_as_mha, drafter=extra, version=version
        )
        blocks = max(0, avail) // layout.bytes_per_block if layout.bytes_per_block else 0
        stages.append(StageBudget(k, len(layers), w, act, nt, cg, avail, layout, blocks))
        if w > budget.free:
            issues.append(si.weights_do_not_fit(w, budget.free))
    return tuple(stages)


def fixed_kv_allocation(
    stages: Sequence[StageBudget], budget: Budget, flags: EngineFlags, issues: list[StartupIssue]
) -> None:
    """--kv-cache-memory-bytes: vLLM skips profiling and allocates that KV cache as one tensor after loading the
    weights; on a GPU where it does not fit beside the weights and the non-torch memory, torch raises CUDA OOM
    (the profiling pass's activations are cached blocks torch frees before it gives up). Nothing without the flag."""
    if flags.kv_cache_memory_bytes is None or any(i.kind is IssueKind.WEIGHTS_DO_NOT_FIT for i in issues):
        return
    for st in stages:
        kv = st.num_blocks * st.layout.bytes_per_block
        room = budget.free - st.weights - st.non_torch
        if kv > room:
            issues.append(si.kv_allocation_oom(kv, budget.total, room))
            return
