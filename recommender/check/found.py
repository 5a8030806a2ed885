"""What `check` found in an input: one vLLM server definition and the deployment facts around it (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Found:
    """One vLLM server to check, as the platform would start it (variables substituted where they can be)."""

    source: str  # file name, or "<stdin>" / "<argument>"
    resource: str  # the document: "Deployment/llm/vllm-qwen", "service/vllm", "ExecStart", "command", "#2"
    argv: tuple[str, ...]  # vllm serve MODEL ... (normalised to start with "vllm", "serve")
    gpu_product: str | None = None  # a GPU name given directly (GFD product label, Helm gpuModels, ...)
    gpus_per_pod: int | None = None  # nvidia.com/gpu limit (or request) of the container
    pods_per_replica: int = 1  # LeaderWorkerSet group size
    has_shm: bool | None = None  # /dev/shm mounted from a memory-backed volume (None: not known)
    annotations: dict[str, str] = field(default_factory=dict)
    image_tag: str | None = None
    problems: tuple[str, ...] = ()  # structural problems found while reading it (failures)
    container: str = ""  # container / service / unit name
    serve_form: bool = True  # False: `python -m vllm.entrypoints.openai.api_server` arguments (--model not moved)
    node_labels: Mapping[str, str] = field(default_factory=dict)  # nodeSelector / required affinity (In, 1 value)
    gpus_total: int | None = None  # GPUs of the whole engine across pods (LeaderWorkerSet group, Ray cluster)
    gpus_at_least: bool = False  # gpus_total is a pool the engine takes from (Ray): enough is fine
    unresolved: tuple[str, ...] = ()  # variables that could not be substituted, as written ("$TP", "$(MODEL)")
    not_evaluable: str | None = None  # why this server cannot be judged at all (e.g. a TPU or Gaudi deployment)
    env: Mapping[str, str] = field(default_factory=dict)  # the container's literal environment
    free_bytes: int | None = None  # GPU memory free at startup, when a plan was made for less than the whole GPU
    files: Mapping[str, str] = field(default_factory=dict)  # mounted from the manifest's ConfigMaps: path -> text
    mig_profile: str | None = None  # the MIG profile its GPUs are slices of ("3g.40gb"), each one device to CUDA
    # the files besides `source` it was read through, as `source` runs them: the script files it runs (`./x.sh`),
    # the compose file of its `docker compose up|run` (absolute paths): a folder run reads them once (check/read_once.py)
    through: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """'file (document, container)' for messages."""
        inside = ", ".join(p for p in (self.resource, self.container) if p)
        return f"{self.source} ({inside})" if inside else self.source
