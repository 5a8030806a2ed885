"""Put the terms together exactly as vLLM's startup does, and say whether it starts.

`explain(model, gpu, flags, version)` follows vLLM's startup order, one named step each: precision (dtype,
quantization, KV dtype; memory/precision.py), scheduler limits (max_model_len, max_num_seqs, max_num_batched_tokens;
memory/scheduler.py), the parallel checks, the memory request (Worker.init_device's request_memory; memory/request.py),
the per-stage budget (load_model, determine_available_memory; memory/stage_budgets.py, its profiling run in
memory/profile_run.py), KV admission (get_kv_cache_configs, min over workers, and _check_enough_kv_cache_memory) and
the capacity line (update_kv_cache_capacity), both in memory/admission.py, and the warm-up headroom left after the KV
cache is allocated (memory/post_allocation.py). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from recommender.hardware import Gpu
from recommender.memory import dsv4_profile, mamba_seqs, no_kv, vgpu, warmup
from recommender.memory import startup_issues as si
from recommender.memory.admission import capacity, kv_admission
from recommender.memory.architecture_support import architecture_issues
from recommender.memory.engine import EngineFlags, VllmVersion, runs_v0_engine
from recommender.memory.explanation import Explanation as Explanation  # re-exported: callers import it from here
from recommender.memory.explanation import StageBudget as StageBudget
from recommender.memory.post_allocation import warmups
from recommender.memory.precision import Precision, gpu_checks, resolve_precision
from recommender.memory.profile_run import capture_lists, engine_passes, graph_count
from recommender.memory.request import Budget, context_after_kv, profiler_counts_whole_device, request_memory
from recommender.memory.scheduler import SchedulerLimits, scheduler_limits
from recommender.memory.stage_budgets import fixed_kv_allocation, stage_budgets
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.model.pooling import as_pooling
from recommender.model.spec import ModelSpec
from recommender.model.tensors import padded_vocab


def model_checks(model: ModelSpec, version: VllmVersion, issues: list[StartupIssue]) -> None:
    """An architecture the target release does not serve yet or no longer; estimates the architecture table marks
    approximate."""
    issues += architecture_issues(model.first_release, version)
    if model.served_until and version > VllmVersion.parse(model.served_until):
        issues.append(si.architecture_removed(model.architecture, model.served_until))
    issues += [si.note(IssueKind.APPROXIMATE_MODEL, reason) for reason in model.approximate]


# --- step 2: parallel checks ----------------------------------------------------------------------------------


def parallel_checks(model: ModelSpec, tp: int, pp: int, issues: list[StartupIssue]) -> None:
    """vLLM's divisibility checks for tensor / pipeline parallelism, with its messages."""
    if model.num_heads % tp:
        issues.append(si.tp_heads(model.num_heads, tp))
    if tp > 1 and padded_vocab(model.vocab_size) % tp:
        issues.append(si.tp_vocab(padded_vocab(model.vocab_size), tp))
    if pp > model.num_layers:
        issues.append(si.pp_layers(model.num_layers, pp))
    latent_mla = model.mla is not None and not model.mla.per_head_cache
    latent = latent_mla or model.compressed_attention is not None  # one latent, replicated by design
    if not latent and 0 < model.num_kv_heads < tp:
        if tp % model.num_kv_heads:
            issues.append(si.tp_kv_heads(model.num_kv_heads, tp))
        else:
            issues.append(si.kv_heads_replicated(model.num_kv_heads, tp))


# vLLM 0.33 picks each attention layer's backend when the model is built, with a --block-size given as it is
# (v1/attention/selector.py; update_block_size_for_backend chooses one only when none was given), and every CUDA
# backend's kernel block is a multiple of 16 tokens (v1/attention/backends/*.py get_supported_kernel_block_sizes:
# FlashAttention, Triton and FlexAttention MultipleOf(16), FlashInfer 16/32/64, FlashMLA 64, CUTLASS MLA 128, ...):
# any other size leaves no backend and vLLM exits. Releases 0.8.5-0.14.0 refuse such a size already at parsing
# (profiles/vllm-flags.yaml choices); the releases between were not read, so the rule starts at 0.33.
CUDA_KERNEL_BLOCK = 16
BLOCK_SIZE_RULE_FROM = VllmVersion(0, 33)


def block_size_checks(
    model: ModelSpec, gpu: Gpu, flags: EngineFlags, version: VllmVersion, issues: list[StartupIssue]
) -> None:
    """A --block-size no CUDA attention backend of the release takes (an attention-free model selects none)."""
    bs = flags.block_size
    if bs is None or bs % CUDA_KERNEL_BLOCK == 0 or gpu.vendor != "nvidia" or version < BLOCK_SIZE_RULE_FROM:
        return
    if any(kind not in ("mamba", "linear_attention", "none") for kind in model.layer_kinds):
        issues.append(si.block_size_unsupported(bs, CUDA_KERNEL_BLOCK))


# --- explain: the steps in order --------------------------------------------------------------------------------


def request_shape(
    model: ModelSpec, flags: EngineFlags, limits: SchedulerLimits, pp: int, version: VllmVersion
) -> tuple[int, bool]:
    """(tokens in flight beyond a sliding window, prefix caching on) for the blocks one request takes. For a model
    with Mamba-style state, "on" means vLLM's mamba_cache_mode "align": two state blocks a request, not one."""
    in_flight = limits.max_num_batched_tokens * ((pp + 1) if version.sliding_window_counts_in_flight_batches else 1)
    if not model.is_hybrid:
        return in_flight, bool(flags.enable_prefix_caching)
    if not any(kind in ("mamba", "linear_attention") for kind in model.layer_kinds):
        return in_flight, False
    enabled = flags.enable_prefix_caching
    if enabled is None:
        enabled = version.hybrid_prefix_caching_by_default
    return in_flight, enabled and version.mamba_align_with_prefix_caching


def mamba_align_checks(
    model: ModelSpec, worst: StageBudget, limits: SchedulerLimits, prefix_caching: bool, issues: list[StartupIssue]
) -> None:
    """In Mamba cache "align" mode (prefix caching on a model with Mamba-style state: request_shape) vLLM asserts the
    attention block, which _align_hybrid_block_size grew to the Mamba page, fits one step's token budget
    (config/vllm.py: `assert block_size <= self.scheduler_config.max_num_batched_tokens`). field18 Z010:
    Qwen3.5-122B-A10B-GPTQ-Int4, block 2,096 against the default 2,048, refused; Z011 with 4,096 started."""
    mamba = any(kind in ("mamba", "linear_attention") for kind in model.layer_kinds)
    if prefix_caching and model.is_hybrid and mamba and worst.layout.block_size > limits.max_num_batched_tokens:
        issues.append(si.mamba_align_block(worst.layout.block_size, limits.max_num_batched_tokens))


def pool_checks(
    target: tuple[ModelSpec, Gpu, int | None],
    worst: StageBudget,
    admitted: tuple[SchedulerLimits, int, int, bool],
    flags: EngineFlags,
    version: VllmVersion,
    issues: list[StartupIssue],
    *,
    v0: bool,
) -> None:
    """initialize_kv_cache, once the KV cache is sized and admitted: a hybrid model's pool must hold a Mamba state
    block per decode sequence before the graphs are captured (memory/mamba_seqs.py); DeepSeek-V4 before 0.33 keeps
    a margin for the releases' unread accounting (memory/dsv4_profile.py release_margin), and so does a vGPU type
    where the profiler counts the whole device (memory/vgpu.py). `target`: the model, the GPU and the free memory
    the user stated; `admitted`: the limits, the admitted max_model_len, its blocks per request and prefix caching."""
    if any(issue.fatal for issue in issues):
        return
    model, gpu, free = target
    limits, max_len, bpr, prefix_caching = admitted
    found = [mamba_seqs.mamba_blocks_check(worst, limits.max_num_seqs, flags, version, v0=v0)]
    if free is None:
        need = bpr * worst.layout.bytes_per_block
        whole = profiler_counts_whole_device(version, v0=v0)
        found.append(vgpu.held_margin(gpu, worst, need, counts_whole_device=whole))
    if model.compressed_attention is not None:
        found.append(
            dsv4_profile.release_margin(worst, max_len, limits.max_num_batched_tokens, prefix_caching, version)
        )
    issues += [issue for issue in found if issue is not None]


def no_kv_explanation(
    model: ModelSpec,
    gpu: Gpu,
    flags: EngineFlags,
    version: VllmVersion,
    setup: tuple[Precision, SchedulerLimits, Budget],
    stages: Sequence[StageBudget],
    issues: list[StartupIssue],
    *,
    v0: bool,
) -> Explanation:
    """Steps 5-7 for encoder-only attention (memory/no_kv.py): no KV admission, no capacity line; the warm-up at
    max_num_batched_tokens tokens, the CUDA-graph capture and the CUDA context against the free memory, on the GPU
    that needs the most."""
    precision, limits, budget = setup
    graphs, _ = engine_passes(model, gpu, flags, limits, version, v0=v0)
    context = 0 if budget.context_in_free else context_after_kv(gpu, version, flags.tensor_parallel_size, v0=v0)

    def pool(st: StageBudget) -> int:
        return 0 if graphs == 0 else warmup.captured_pool_bytes(layers_on_gpu=st.layers, graphs=graphs)

    def peak(st: StageBudget) -> no_kv.NoKvPeak:
        return no_kv.NoKvPeak(st.weights, st.non_torch, st.activation_peak, st.cudagraph, context, budget.free)

    # no KV memory and no blocks; the graphs are the pool the warm-up captures
    stages = tuple(replace(st, available_kv=0, num_blocks=0, cudagraph=pool(st)) for st in stages)
    worst = min(stages, key=lambda st: peak(st).margin)
    if not any(issue.fatal for issue in issues):
        no_kv.check_peak(peak(worst), limits.max_num_batched_tokens, issues)
    issues.append(no_kv.no_kv_note(limits.max_num_seqs, limits.max_num_batched_tokens, limits.max_model_len))
    return Explanation(
        model=model.name,
        gpu=gpu.name,
        vllm_version=str(version),
        gpu_total_bytes=budget.total,
        free_bytes=budget.free,
        utilization=budget.utilization,
        requested_bytes=budget.requested,
        kv_cache_memory_bytes=flags.kv_cache_memory_bytes,
        weight_dtype=precision.dtype,
        quantization=precision.quant.label if precision.quant else "none",
        kv_cache_dtype=precision.kv_cache_dtype,
        tp=flags.tensor_parallel_size,
        pp=len(stages),
        dp=flags.data_parallel_size,
        max_model_len=limits.max_model_len,
        max_num_seqs=limits.max_num_seqs,
        max_num_batched_tokens=limits.max_num_batched_tokens,
        stage=worst,
        stages=tuple(stages),
        num_gpu_blocks=0,
        kv_cache_tokens=0,
        max_concurrency=float(limits.max_num_batched_tokens // max(1, limits.max_model_len)),
        blocks_per_request=0,
        issues=tuple(issues),
        no_kv_cache=True,
    )


def tightest(stages: Sequence[StageBudget]) -> StageBudget:
    """The stage with the fewest blocks: vLLM takes the minimum over workers."""
    return min(stages, key=lambda st: (st.num_blocks, st.available_kv))


# long: vLLM's startup steps in order, one call each, then the Explanation's thirty fields
def explain(
    model: ModelSpec,
    gpu: Gpu,
    flags: EngineFlags,
    version: VllmVersion,
    *,
    free_bytes: int | None = None,
    estimate_cudagraphs: bool | None = None,
    draft: ModelSpec | None = None,
) -> Explanation:
    """Predict vLLM's startup figures and verdict for one configuration (per GPU, worst pipeline stage); `draft`: the
    model --speculative-config names; `estimate_cudagraphs`: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS when set."""
    flags.validate()
    if flags.pooling_runner():  # --runner pooling / --convert embed: the pooling runner loads no LM head
        model = as_pooling(model, f"--runner {flags.runner} --convert {flags.convert}")
    issues: list[StartupIssue] = []
    if model.encoder_only and version < no_kv.NO_KV_FROM:
        issues.append(no_kv.old_release_note(str(version), model.architecture))
        model = replace(model, encoder_only=False)  # a KV cache as the release kept one
    tp, pp, dp = flags.tensor_parallel_size, flags.pipeline_parallel_size, flags.data_parallel_size
    gpu_checks(gpu, version, issues)
    precision = resolve_precision(model, flags, gpu, version, issues)
    model_checks(model, version, issues)
    parallel_checks(model, tp, pp, issues)
    block_size_checks(model, gpu, flags, version, issues)
    pp = min(pp, model.num_layers)
    v0 = runs_v0_engine(version, gpu, model.architecture, flags.use_v1)
    limits = scheduler_limits(model, flags, gpu, version, issues, v0=v0)
    budget = request_memory(gpu, flags, version, free_bytes, issues, estimate_cudagraphs, v0=v0)
    stages = stage_budgets(model, gpu, flags, version, (precision, limits, budget), issues, v0=v0, draft=draft)
    fixed_kv_allocation(stages, budget, flags, issues)
    if model.encoder_only:  # no KV cache, no profiling run: the warm-up against free memory (memory/no_kv.py)
        return no_kv_explanation(model, gpu, flags, version, (precision, limits, budget), stages, issues, v0=v0)
    worst = tightest(stages)
    in_flight, prefix_caching = request_shape(model, flags, limits, pp, version)
    mamba_align_checks(model, worst, limits, prefix_caching, issues)
    max_len = kv_admission(stages, worst, version, limits, in_flight, prefix_caching, issues)
    bpr = worst.blocks_per_request(max_len, in_flight, prefix_caching)
    conc_bpr = worst.concurrency_blocks(max_len, in_flight, prefix_caching)
    tokens, concurrency = capacity(worst, max_len, conc_bpr, version, issues, v0=v0)
    pool_checks((model, gpu, free_bytes), worst, (limits, max_len, bpr, prefix_caching), flags, version, issues, v0=v0)
    post = warmups(model, gpu, flags, stages, (precision, limits, budget), version, issues, v0=v0)
    graphs = graph_count(model, gpu, flags, limits, version, v0=v0)
    decode = capture_lists(model, gpu, flags, limits, version, v0=v0)[1]
    return Explanation(
        model=model.name,
        gpu=gpu.name,
        vllm_version=str(version),
        gpu_total_bytes=budget.total,
        free_bytes=budget.free,
        utilization=budget.utilization,
        requested_bytes=budget.requested if flags.kv_cache_memory_bytes is None else flags.kv_cache_memory_bytes,
        kv_cache_memory_bytes=flags.kv_cache_memory_bytes,
        weight_dtype=precision.dtype,
        quantization=precision.quant.label if precision.quant else "none",
        kv_cache_dtype=precision.kv_cache_dtype,
        tp=tp,
        pp=pp,
        dp=dp,
        max_model_len=max_len,
        max_num_seqs=limits.max_num_seqs,
        max_num_batched_tokens=limits.max_num_batched_tokens,
        stage=worst,
        stages=stages,
        num_gpu_blocks=worst.num_blocks,
        kv_cache_tokens=tokens,
        max_concurrency=concurrency,
        blocks_per_request=bpr,
        in_flight_tokens=in_flight,
        prefix_caching=prefix_caching,
        issues=tuple(issues),
        post_allocation=post,
        capture_sizes=graphs,
        decode_capture_sizes=len(decode or ()),
    )
