"""The memory request and where vLLM's accounting starts (pure).

Worker.init_device's request_memory: the budget ceil(total x gpu_memory_utilization), refused when the free memory is
below it; which releases' profilers count the whole device's used memory (the CUDA context and other processes inside
the budget), and what sits on the GPU outside that accounting once the KV cache is allocated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from recommender.hardware import Gpu
from recommender.memory import full_budget, unified, warmup
from recommender.memory import startup_issues as si
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import StartupIssue


@dataclass(frozen=True, slots=True)
class Budget:
    """The memory request: what the engine may use on each GPU, and what was free."""

    total: int
    free: int
    utilization: float
    requested: int
    # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: CUDA-graph memory set aside before the KV cache (v1/worker/
    # gpu_worker.py determine_available_memory; the default since 0.21, the environment can turn it off)
    estimate_cudagraphs: bool = True
    # `free` is what vLLM's startup snapshot reads, taken once the process's CUDA context (and from 0.11 NCCL) exists,
    # so the context is already outside it: an integrated GPU's host reserve (memory/unified.py) is measured there
    context_in_free: bool = False


def request_memory(
    gpu: Gpu,
    flags: EngineFlags,
    version: VllmVersion,
    free_bytes: int | None,
    issues: list[StartupIssue],
    estimate_cudagraphs: bool | None = None,
    *,
    v0: bool = False,
) -> Budget:
    """Worker.init_device: requested = ceil(total x utilization), refused if free memory is below it.
    `estimate_cudagraphs`: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS when set (None: the release's default)."""
    util = flags.gpu_memory_utilization or version.default_gpu_memory_utilization
    total = gpu.total_bytes
    # an integrated GPU's host holds part of its memory at startup (memory/unified.py)
    free = unified.startup_free(gpu) if free_bytes is None else free_bytes
    requested = math.ceil(total * util)
    if gpu.total_is_a_setting and free_bytes is None:
        issues.append(si.gpu_memory_is_a_setting(gpu.name, total))
    if free < requested:
        issues.append(si.free_below_budget(free, total, util, requested))
    elif free_bytes is None and (refused := full_budget.snapshot_refusal(gpu, version, (util, requested), v0=v0)):
        issues.append(refused)  # the snapshot is read after the process's CUDA context exists (full_budget.py)
    elif free_bytes is None and (risk := unified.headroom(gpu, requested, util)) is not None:
        issues.append(risk)
    cudagraphs = version.cudagraph_memory_before_kv if estimate_cudagraphs is None else estimate_cudagraphs
    from_reserve = free_bytes is None and unified.host_reserve(gpu) is not None
    return Budget(total, free, util, requested, cudagraphs, context_in_free=from_reserve)


# In 0.6.4 the V0 profiler (worker.py determine_num_available_blocks) took non-torch memory as the whole device's
# used memory (total - torch.cuda.mem_get_info()[0]) less torch's allocations: the CUDA context (and NCCL's buffers)
# and every other process's memory fell inside the budget. vLLM 0.6.5 (memory_profiling against the snapshot taken
# at init_device) counts only the increase. The logs of 0.6.4: non_torch_memory 0.71 and 0.73 GiB at TP=4 and TP=2
# over PCIe (round-2 G001, G002: 0.5 context + 0.21 increase predicted), 0.73 on an H200 (field3 H040), 0.47 on a
# GTX 1080 whose display took 0.3 GiB (H039), 0.15 on the same card without it (H038), 0.35 on an RTX 3090 (F032): the
# context grows with the card (0.13 to 0.66 GiB at TP=1), and every 0.6.x log is in a held-out set, so the KV side keeps
# the fitted non-torch figure (overheads.NON_TORCH_SINGLE_GPU_OLD, low by up to 0.5 GiB on data-centre cards) and adds
# only the other processes' memory when the free memory is known. What this decides is the warm-up: the context sits
# inside the budget, so nothing for it is allocated outside the budget after the KV cache (H039 started).
PROFILER_COUNTS_DEVICE_UNTIL = VllmVersion(0, 6, 5)


# Before 0.6.4 (v0.4.3 to v0.6.3, worker.py) the peak was `init_gpu_memory - free` after profile_run, where
# init_gpu_memory is the free memory init_device read after creating the CUDA context and before the distributed
# environment: the context and other processes stay outside the budget, NCCL's buffers fall inside it.
PROFILER_COUNTS_DEVICE_FROM = VllmVersion(0, 6, 4)


# The V1 engine's first profiler did the same up to 0.9.0 (v1/worker/gpu_worker.py determine_available_memory in
# v0.7.3, v0.8.5 and v0.9.0: `total_allocated_bytes = mem_get_info()[1] - mem_get_info()[0]`, `non_torch_allocations
# = total_allocated_bytes - torch_allocated_bytes`, added to the peak); 0.9.1 moved it onto memory_profiling against
# init_device's MemorySnapshot, which leaves the context outside the budget (field4 J018, 0.9.0, started).
V1_PROFILER_COUNTS_DEVICE_UNTIL = VllmVersion(0, 9, 1)


def profiler_counts_whole_device(version: VllmVersion, *, v0: bool) -> bool:
    """True where vLLM's non-torch figure holds the CUDA context and other processes (inside the budget)."""
    if v0:
        return PROFILER_COUNTS_DEVICE_FROM <= version < PROFILER_COUNTS_DEVICE_UNTIL
    return version < V1_PROFILER_COUNTS_DEVICE_UNTIL


# Where init_device reads its baseline relative to the distributed environment: V0 (v0.4.3 to the last V0) and V1 up
# to 0.10.2 read it first, so NCCL's and custom all-reduce's buffers land inside the budget (as non-torch memory);
# from 0.11.0 V1 sets up the distributed environment first ("Initialize the distributed environment BEFORE taking
# memory snapshot", v1/worker/gpu_worker.py), leaving them outside the budget beside the CUDA context.
NCCL_BEFORE_SNAPSHOT_FROM = VllmVersion(0, 11)


def context_after_kv(gpu: Gpu, version: VllmVersion, tp: int, *, v0: bool) -> int:
    """What sits on the GPU outside vLLM's accounting once the KV cache is allocated: nothing where the profiler
    counted the whole device; the CUDA context alone where NCCL was set up after the baseline; from 0.11 (V1) with
    TP over NVLink also NCCL's buffers (warmup.context_bytes)."""
    if profiler_counts_whole_device(version, v0=v0):
        return 0
    if v0 or version < NCCL_BEFORE_SNAPSHOT_FROM:
        return warmup.CONTEXT_SINGLE
    return warmup.context_bytes(tp, gpu.nvlink)
