"""Step 7, the warm-up after the KV cache is allocated (pure): the memory picture on the last stage's GPU (sampler
warm-up, CUDA-graph capture, DeepGEMM's kernel warm-up, the CUDA context outside vLLM's accounting) built from
memory/warmup.py's terms, and its verdict: a crash when it does not fit, a warning when it is too close to call.
"""

from __future__ import annotations

from collections.abc import Sequence

from recommender.hardware import Gpu
from recommender.memory import full_budget, nccl_graphs, overheads, warmup
from recommender.memory import startup_issues as si
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.explanation import StageBudget
from recommender.memory.precision import Precision
from recommender.memory.profile_run import capture_lists, engine_passes
from recommender.memory.request import Budget, context_after_kv, profiler_counts_whole_device
from recommender.memory.scheduler import SchedulerLimits
from recommender.memory.startup_issues import StartupIssue
from recommender.model.spec import ModelSpec


def deep_gemm_warmup(
    model: ModelSpec,
    gpu: Gpu,
    setup: tuple[Precision, SchedulerLimits, Budget],
    flags: EngineFlags,
    version: VllmVersion,
) -> int:
    """memory/warmup.py deep_gemm_warmup_bytes where vLLM runs it: an FP8 128 x 128 block-quantized MoE on Hopper or
    Blackwell from 0.11; one GPU holds E / (TP x DP) experts with expert parallelism, else all E at I / TP."""
    quant, moe, cc = setup[0].quant, model.moe, gpu.cc_major_minor
    if moe is None or quant is None or quant.method != "fp8" or quant.block != (128, 128):
        return 0
    if cc is None or cc[0] not in (9, 10) or (version.major, version.minor) < warmup.DEEP_GEMM_DEFAULT_FROM:
        return 0
    tp, dp, ep = flags.tensor_parallel_size, flags.data_parallel_size, flags.enable_expert_parallel
    return warmup.deep_gemm_warmup_bytes(
        tokens=dp * setup[1].max_num_batched_tokens,
        top_k=moe.top_k,
        local_experts=moe.num_experts // (tp * dp) if ep else moe.num_experts,
        hidden=model.hidden_size,
        intermediate=moe.expert_intermediate if ep else moe.expert_intermediate // tp,
    )


def post_allocation(
    model: ModelSpec,
    gpu: Gpu,
    stages: Sequence[StageBudget],
    setup: tuple[Precision, SchedulerLimits, Budget],
    version: VllmVersion,
    flags: EngineFlags,
    *,
    v0: bool = False,
) -> warmup.PostAllocation:
    """The memory picture after the KV cache is allocated, on the last stage's GPU (memory/warmup.py). The V0
    engine only captured CUDA graphs then (worker.py _warm_up_model): no sampler warm-up."""
    precision, limits, budget = setup
    last, tp = stages[-1], flags.tensor_parallel_size
    graphs, _ = engine_passes(model, gpu, flags, limits, version, v0=v0)
    pool = 0 if graphs == 0 else warmup.captured_pool_bytes(layers_on_gpu=last.layers, graphs=graphs)
    rows = min(limits.max_num_seqs, limits.max_num_batched_tokens)
    v = (version.major, version.minor)
    sampler = warmup.sampler_warmup_bytes(
        rows,
        model.vocab_size,
        overheads.SAMPLER_BYTES_PER_LOGIT_OLD,
        old_sampler=v < overheads.SAMPLER_CHANGED_IN and not flags.flashinfer_sampler,
    )
    whole_device = profiler_counts_whole_device(version, v0=v0)
    return warmup.PostAllocation(
        rows=rows,
        sampler=0 if v0 or model.pooling else sampler,  # no sampler warm-up on the pooling runner
        cudagraphs=warmup.cudagraphs_after_kv(last.cudagraph, estimate_before_kv=budget.estimate_cudagraphs, pool=pool),
        context=0 if budget.context_in_free else context_after_kv(gpu, version, tp, v0=v0),
        # other processes' memory lies outside the budget but is not free (inside it where the profiler counted it)
        outside_budget=(budget.total if whole_device else budget.free) - budget.requested,
        freed_activation=last.activation_peak,
        reserve=warmup.MXFP4_TRITON_RESERVE if precision.mxfp4_triton else 0,
        kernels=0 if v0 else deep_gemm_warmup(model, gpu, setup, flags, version),
    )


def warmup_headroom(post: warmup.PostAllocation, utilization: float, issues: list[StartupIssue]) -> None:
    """The sampler warm-up after the KV cache: a crash if it cannot fit, a warning when it is too close to call."""
    sampler, context = post.sampler > 0, post.context > 0
    if post.shortfall > 0:
        issues.append(si.warmup_oom(post.rows, post.need, post.room, sampler=sampler, context=context))
    elif post.shortfall > -warmup.WARMUP_UNCERTAINTY:
        issues.append(si.warmup_headroom(utilization, post.room, post.need, sampler=sampler, context=context))
        if (risk := full_budget.nothing_outside(post, utilization)) is not None:
            issues.append(risk)


def warmups(
    model: ModelSpec,
    gpu: Gpu,
    flags: EngineFlags,
    stages: Sequence[StageBudget],
    setup: tuple[Precision, SchedulerLimits, Budget],
    version: VllmVersion,
    issues: list[StartupIssue],
    *,
    v0: bool,
) -> warmup.PostAllocation | None:
    """Step 7 when vLLM profiled (not with --kv-cache-memory-bytes): the post-allocation picture, and its verdict
    when vLLM gets that far (an error before it, such as no memory for the cache blocks, ends the startup first)."""
    if flags.kv_cache_memory_bytes is not None:
        return None
    post = post_allocation(model, gpu, stages, setup, version, flags, v0=v0)
    if not any(issue.fatal for issue in issues):
        warmup_headroom(post, setup[2].utilization, issues)
        risk = nccl_graphs.nccl_graph_margin(
            post, gpu, flags.tensor_parallel_size, enforce_eager=flags.enforce_eager, utilization=setup[2].utilization
        )
        graphs = engine_passes(model, gpu, flags, setup[1], version, v0=v0)[0]
        full = capture_lists(model, gpu, flags, setup[1], version, v0=v0)[1]
        note = nccl_graphs.nccl_graph_note(
            post,
            gpu,
            flags.tensor_parallel_size,
            enforce_eager=flags.enforce_eager,
            graphs=graphs + (len(full) if full else 0),
            layers=stages[-1].layers,
        )
        issues += [i for i in (risk, note) if i is not None]
    return post
