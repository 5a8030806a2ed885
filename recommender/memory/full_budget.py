"""A budget of (nearly) the whole device: what vLLM's startup does at --gpu-memory-utilization 1.0 (pure).

From 0.9.1 the V1 worker (v1/worker/gpu_worker.py init_device; v1/worker/utils.py request_memory in 0.33) takes a
MemorySnapshot once the device is set and compares its free memory with ceil(total x utilization), refusing with
"Free memory on device ... is less than desired GPU memory utilization". cudaMemGetInfo reports that free memory
after the process's own CUDA context was created, so it is below the total by at least the context: at 1.0 that
release always refuses, and so does any utilization whose share outside the budget is smaller than the context.
The smallest context read in the records is 0.13 GiB (field3 H038, a GTX 1080 at 0.6.4: initial_memory_usage 0.37
GiB after 0.2389 GiB of weights); 0.51 GiB on an H100 (the v0.19 sweep's "Initial free memory 78.68 of 79.19
GiB"). The check takes `CONTEXT_FLOOR`, below both, so it refuses only what vLLM must refuse. Integrated devices
are left to memory/unified.py, whose measured host reserve already holds it.

Before 0.9.1 (the V0 engine, and V1 up to 0.9.0) nothing is checked: at 1.0 the KV cache is sized to the whole
device, so everything allocated after it (CUDA graphs, the context's share where the profiler left it outside,
the sampler warm-up) comes out of the activation peak the profiling run freed, and from nothing else. That peak is
the least certain figure of the profile (vision encoders' passes are not all modelled, ENCODER_NOT_COUNTED), and an
allocation larger than it has no other room: field5 K001 (MiniCPM-V-2_6 at 1.0 on an A10, ~0.6.3) ran out of memory
with 3.47 GiB free after the KV cache where the model leaves a 0.03 GiB margin. At utilization below 1.0 the room
also holds the share outside the budget, which the model knows exactly (field3 H029 started at 0.90 with a 0.02
GiB margin), so only a budget that leaves nothing outside is called "at risk" when its margin is within the warm-up
uncertainty. Where the release's profiler leaves the CUDA context outside its accounting (memory/request.py
context_after_kv), the context sits in that share: a share no larger than the context leaves the same nothing, and
the same rule applies (field8 N003: gemma-3-27b AWQ on V0 0.8.3 at 0.98 of a 21.99 GiB card, 0.44 GiB outside for a
~0.5 GiB context, ran out of memory in capture_end with a 0.92 GiB margin predicted).
"""

from __future__ import annotations

from recommender.hardware import Gpu
from recommender.memory import startup_issues as si
from recommender.memory import warmup
from recommender.memory.engine import VllmVersion
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.units import MiB, format_gib

SNAPSHOT_CHECK_FROM = VllmVersion(0, 9, 1)
CONTEXT_FLOOR = 128 * MiB


def snapshot_refusal(gpu: Gpu, version: VllmVersion, budget: tuple[float, int], *, v0: bool) -> StartupIssue | None:
    """vLLM's own refusal when the free memory its snapshot reads on an idle discrete card (the total less the
    process's CUDA context) is below the requested `budget` (utilization, bytes), on the releases that check it. A
    free memory the user states is taken as the snapshot's (what vLLM's error prints), not reduced again."""
    utilization, requested = budget
    if v0 or version < SNAPSHOT_CHECK_FROM or gpu.unified_memory:
        return None
    seen = gpu.total_bytes - CONTEXT_FLOOR
    return si.free_below_budget(seen, gpu.total_bytes, utilization, requested) if seen < requested else None


def nothing_outside(post: warmup.PostAllocation, utilization: float) -> StartupIssue | None:
    """At risk when the budget leaves nothing outside it (or no more than the CUDA context that sits there) and the
    post-KV allocations' margin is within the warm-up uncertainty (a shortfall is already a crash)."""
    margin = post.room - post.need
    if post.outside_budget > post.context or not 0 <= margin < warmup.WARMUP_UNCERTAINTY:
        return None
    whole = (
        "sizes the KV cache to the whole device"
        if post.outside_budget <= 0
        else f"leaves {format_gib(post.outside_budget):.2f} GiB outside the budget, no more than the "
        f"~{format_gib(post.context):.2f} GiB CUDA context held there"
    )
    return StartupIssue(
        IssueKind.WHOLE_DEVICE_MARGIN,
        f"at risk: --gpu-memory-utilization {utilization} {whole}, so what vLLM allocates after the KV cache "
        f"(~{format_gib(post.need):.2f} GiB) rests on the ~{format_gib(post.freed_activation):.2f} GiB activation "
        "peak the profiling run freed, the least certain figure of the profile: a margin of "
        f"{format_gib(margin):.2f} GiB; lower --gpu-memory-utilization",
        needed_bytes=post.need,
        available_bytes=post.room,
    )
