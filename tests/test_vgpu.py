"""A vGPU type's framebuffer held before vLLM starts (memory/vgpu.py): at risk where the release counts it."""

from __future__ import annotations

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind
from recommender.sources.resolve import resolve_model
from recommender.units import GiB

QWEN72_INT4 = resolve_model("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4")
FLAGS = EngineFlags(gpu_memory_utilization=0.95, max_model_len=8192, enforce_eager=True)


def test_a_vgpu_type_is_marked_and_its_board_is_not() -> None:
    assert resolve_gpu("NVIDIA A40-48Q", load_gpus()).vgpu
    assert not resolve_gpu("a40", load_gpus()).vgpu


def test_a_vgpu_on_a_release_that_counts_the_whole_device_is_at_risk() -> None:
    """field4 J007's launch (Qwen2.5-72B-GPTQ-Int4 on an A40-48Q, 0.95, 8,192 tokens, eager, vLLM 0.6.4.post1; it
    logged 0.39 GiB of KV and failed): 5.17 GiB of KV predicted on the type's 48 GiB (4.92 on the 47.74 the log
    printed); one 8,192-token request takes 512 blocks of 16 x 80 layers x 2 x 8 heads x 128 x 2 B = 5,242,880 bytes,
    2.50 GiB, leaving 2.67 GiB, under the 3.6 GiB the one vGPU log held: at risk. On 0.6.3 (which measured from its own start; the reporter's same flags started), with the free
    memory stated, or on the bare A40, no such warning."""
    vgpu = resolve_gpu("NVIDIA A40-48Q", load_gpus())
    e = explain(QWEN72_INT4, vgpu, FLAGS, VllmVersion.parse("0.6.4.post1"))
    issue = e.issue(IssueKind.VGPU_HELD_MARGIN)
    assert issue is not None and e.at_risk
    assert issue.needed_bytes == 512 * 5_242_880
    assert round((e.stage.available_kv - 512 * 5_242_880) / GiB, 2) == 2.67
    assert not explain(QWEN72_INT4, vgpu, FLAGS, VllmVersion.parse("0.6.3.post1")).has(IssueKind.VGPU_HELD_MARGIN)
    stated = explain(QWEN72_INT4, vgpu, FLAGS, VllmVersion.parse("0.6.4.post1"), free_bytes=int(47 * GiB))
    assert not stated.has(IssueKind.VGPU_HELD_MARGIN)
    a40 = resolve_gpu("a40", load_gpus())
    assert not explain(QWEN72_INT4, a40, FLAGS, VllmVersion.parse("0.6.4.post1")).has(IssueKind.VGPU_HELD_MARGIN)
