"""A vGPU type's framebuffer: memory the VM's guest holds before vLLM starts (pure).

Where vLLM's profiler counts the whole device's used memory as its own non-torch memory (V0 0.6.4; V1 up to 0.9.0:
memory/request.py profiler_counts_whole_device), whatever is in use on the GPU when vLLM starts comes off the KV
cache. On a bare card that is the CUDA context (0.44 GiB on an RTX A6000 at 0.6.4, field4 J008); on an NVIDIA vGPU
type the one log read (field4 J007: an A40-48Q, vLLM 0.6.4.post1, vllm-project/vllm#11230) printed 4.09 GiB of
non-torch memory, about 3.6 GiB more, which NVIDIA documents only as the type's framebuffer reservation
(NVML nvmlVgpuTypeGetFbReservation, "the static framebuffer reservation of the vGPU type"), with no figure per
type. The same reporter's flags started on 0.6.3.post1, which measured from its own start (`init_gpu_memory -
free`), as the version rule says. So on those releases, without a stated free memory (--free-memory-gib), a vGPU
plan whose KV memory holds one request by less than that 3.6 GiB is "at risk": one log, a stated uncertainty.
"""

from __future__ import annotations

from recommender.hardware import Gpu
from recommender.memory.explanation import StageBudget
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.units import GiB

HELD = int(3.6 * GiB)  # J007: 4.09 GiB of non-torch memory less a bare card's ~0.44-0.5


def held_margin(gpu: Gpu, stage: StageBudget, need: int, *, counts_whole_device: bool) -> StartupIssue | None:
    """At risk when a vGPU's KV memory holds one request (`need` bytes) by less than HELD on a release whose profiler
    counts the whole device."""
    if not gpu.vgpu or not counts_whole_device or stage.available_kv - need >= HELD:
        return None
    return StartupIssue(
        IssueKind.VGPU_HELD_MARGIN,
        f"at risk: {gpu.name} is a vGPU type, whose guest holds framebuffer before vLLM starts (3.6 GiB more than a "
        f"bare card in the one log read, an A40-48Q), and this release counts it against the KV cache: one request "
        f"needs {need / GiB:.2f} GiB of the {stage.available_kv / GiB:.2f} GiB predicted; "
        "pass --free-memory-gib as nvidia-smi shows it in the VM",
        needed_bytes=need,
        available_bytes=stage.available_kv,
    )
