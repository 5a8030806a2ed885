"""Integrated GPUs, whose memory is the host's: what vLLM sees free at startup (pure).

vLLM 0.33's startup snapshot (utils/mem_utils.py MemorySnapshot.measure) takes the free memory of an integrated
device (`torch.cuda.get_device_properties().is_integrated`: DGX Spark's GB10, Jetson) from
`psutil.virtual_memory().available`, not from cudaMemGetInfo, while the total stays CUDA's ("/121.69 GiB" on a
GB10). Worker.init_device then refuses to start when that free memory is below ceil(total x utilization)
(v1/worker/utils.py request_memory, "Free memory on device ... is less than desired GPU memory utilization"). The
operating system, the container runtime and whatever else runs on the machine live in the same memory, so on such a
device the free memory at startup is the total less what they hold, and the default utilization (0.92 from 0.21)
asks for more than is there.

What a DGX Spark (GB10, 121.69 GiB to CUDA) holds outside vLLM at startup, from public reports:
- conselara.dev's GB10 reference (notes/dgx-spark-gb10-hardware-reference): "Never set --gpu-memory-utilization
  above 0.90. In practice, 0.85-0.87 is the safe range": at least 12.2 GiB held, often 15.8 GiB or more;
- vllm-project/recipes#632 (field5 K017/K018): Nemotron-3-Super NVFP4 on one Spark fails at startup at 0.92 (more
  than 9.7 GiB held) and starts at 0.85; field2 G041 passes the check at 0.89 (at most 13.4 GiB held there), G040 and
  J045 start at 0.85;
- MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#47: 101.3-102.2 GiB free of 121.69 at every fresh boot of two headless
  Sparks with the page cache dropped (19.5-20.4 GiB held), so 0.87 never passed there.
So the free memory is taken as the total less `reserve` (12 GiB: the 0.90 ceiling, inside the 9.7-13.4 GiB the two
records bracket), an error below it as vLLM's; and a budget that leaves less than `safe` (16 GiB: above 0.87, the
top of the range reported safe, which failed on the MiaAI machines) is "at risk", with the margin. A free memory the
user states (--free-memory-gib) replaces both. Other integrated devices (Jetson) have no reserve measured here.
The records' figures are vLLM's own startup check ("Free memory on cuda:0 ...", field6 L009/L010), read after the
process's CUDA context (and NCCL) existed, so the reserve holds the context: it is not allocated again after the KV
cache (memory/request.py Budget.context_in_free).

The same snapshot sizes the KV cache. memory_profiling (utils/mem_utils.py) takes non-torch memory as the snapshot's
used memory (total - free) less torch's reserved memory, and on an integrated device `free` is the host's available
memory (psutil from 0.11.1; before it torch.cuda.mem_get_info, which there is the kernel's MemFree: VERDICT-MISSES.md
P001). So whatever the host gains between init_device's snapshot and the end of the profiling run (the engine
process's own host allocations while it loads, compiles and profiles, and any other process) is charged to non-torch
memory and taken from the KV cache, where a discrete card's snapshot never sees host memory. The DGX Spark logs that
print their available KV hold 1.0 to 3.2 GiB more non-KV memory than the discrete-card terms leave, and the more the
larger the weights one GPU loads (KV-ERRORS.md 'unified', the gap with the discrete terms alone): Qwen3-0.6B 1.02
GiB (field14 U016, 1.12 GiB of weights, 0.27.1), gpt-oss-20b 1.75 (field2 G015, 13.7), Gemma-4-26B NVFP4 2.12 (G040,
15.9), Qwen3.6-35B-A3B NVFP4 3.02 (field10 Q017, 21.9), Qwen3.6-35B-A3B BF16 at TP 2 3.19 (field14 U002, 32.9 per
node). `profile_growth` is `floor` plus `per_weight` of the stage's weights: 1.0 GiB + 7 % of them, the least-squares
line through those five (intercept 1.01 GiB, slope 0.074; U016 alone set the old 1.0 GiB floor). What in the host
grows with the weights is not in vLLM's source (its loader reads safetensors through mmap, whose page cache psutil
counts as available); the records that do not follow the line are explained apart: 0.11.0's MemFree counts the
checkpoint's page cache (P001 / R013), a second engine beside X005, U011's patched build, MTP drafters and hybrid
activations (W003, U006 / U007). How much a boot shows also depends on whether its checkpoint read and compile were
cold (NVIDIA/xr-ai#462, eugr/spark-vllm-docker#286). Jetson has no figure here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from recommender.hardware import Gpu
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.units import GiB, format_gib


@dataclass(frozen=True, slots=True)
class HostReserve:
    """Memory an integrated GPU's host holds at vLLM's startup: at least `reserve`, often up to `safe`; and by the end
    of the profiling run `floor` plus `per_weight` of the weights one GPU loads more, which vLLM charges to non-torch
    memory."""

    reserve: int
    safe: int
    floor: int
    per_weight: float


RESERVES = {"gb10": HostReserve(reserve=12 * GiB, safe=16 * GiB, floor=1 * GiB, per_weight=0.07)}


def host_reserve(gpu: Gpu) -> HostReserve | None:
    """The measured reserve of an integrated GPU whose memory is the host's (LPDDR shared with the CPU), if any."""
    if not gpu.unified_memory or "LPDDR" not in gpu.memory_type.upper():
        return None
    return RESERVES.get(gpu.key)


def startup_free(gpu: Gpu) -> int:
    """The free memory vLLM's snapshot reads when the user states none: all of a discrete card, an integrated
    device's total less what its host holds."""
    held = host_reserve(gpu)
    return gpu.total_bytes - (held.reserve if held else 0)


def profile_growth(gpu: Gpu, weights: int) -> int:
    """Host memory vLLM's profile of an integrated device charges to non-torch memory beside `weights` bytes loaded
    on the GPU (0 for a discrete card)."""
    held = host_reserve(gpu)
    return held.floor + int(held.per_weight * weights) if held else 0


def max_utilization(gpu: Gpu) -> float | None:
    """The highest utilization (hundredths) that leaves the host its `safe` share, for a device with a reserve."""
    held = host_reserve(gpu)
    if held is None:
        return None
    return math.floor((gpu.total_bytes - held.safe) / gpu.total_bytes * 100) / 100


def headroom(gpu: Gpu, requested: int, utilization: float) -> StartupIssue | None:
    """The at-risk warning when the budget passes the startup check but leaves the host less than its `safe` share."""
    held = host_reserve(gpu)
    if held is None or gpu.total_bytes - requested >= held.safe:
        return None
    left = gpu.total_bytes - requested
    return StartupIssue(
        IssueKind.UNIFIED_MEMORY_HEADROOM,
        f"at risk: --gpu-memory-utilization {utilization} asks for {format_gib(requested)} GiB of the "
        f"{gpu.name}'s {format_gib(gpu.total_bytes)} GiB of unified memory, leaving {format_gib(left)} GiB for the "
        f"operating system and everything else on the machine; vLLM takes the free memory at startup from the "
        f"host's available memory and refuses to start below its budget. Hosts have been seen holding "
        f"{format_gib(held.reserve):.0f}-20 GiB at startup: --gpu-memory-utilization {max_utilization(gpu)} "
        "or lower leaves the usual share (or give --free-memory-gib to check against the machine's own figure)",
        needed_bytes=requested,
        available_bytes=left,
    )
