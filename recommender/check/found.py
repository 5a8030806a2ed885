"""What `check` found in an input: one vLLM server definition and the deployment facts around it (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Found:
    """One vLLM server to check."""

    source: str  # file name, or "<stdin>" / "<argument>"
    resource: str  # e.g. "Deployment/llm/vllm-qwen", "service vllm", "ExecStart"
    argv: tuple[str, ...]  # vllm serve MODEL ... (normalised to start with "vllm", "serve")
    gpu_product: str | None = None  # nvidia.com/gpu.product from a selector or affinity
    gpus_per_pod: int | None = None  # nvidia.com/gpu limit (or request)
    pods_per_replica: int = 1  # LeaderWorkerSet group size
    has_shm: bool | None = None  # /dev/shm mounted from a memory-backed volume (None: not a pod spec)
    annotations: dict[str, str] = field(default_factory=dict)
    image_tag: str | None = None
    problems: tuple[str, ...] = ()  # structural problems found while reading it
