"""What a `check` run produces and what it knows besides its inputs (pure records): a verdict per server, the
findings behind it with their fixes, and the context the run judges in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from recommender.check.evaluate import CheckResult, Slo
from recommender.check.found import Found
from recommender.hardware import Gpu
from recommender.memory.engine import VllmVersion
from recommender.model.spec import ModelSpec
from recommender.serve_args import ConfigReader
from recommender.vllm_flags import FlagTable

PASS, FAIL, NOT_EVALUATED = "pass", "fail", "not-evaluated"
# More GPUs than the engine uses: vLLM starts and serves on the first ones, so this is a warning, not a failure.
IDLE_GPUS = "gpu-idle"


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason a server fails, with the change that fixes that reason."""

    kind: str  # structure | argument | flag-version | gpu-count | gpu-idle | shm | startup | at-risk (check.evaluate)
    message: str
    fix: str | None = None


@dataclass(frozen=True, slots=True)
class ServerResult:
    """The verdict for one server: `status` is pass, fail or not-evaluated (`reasons` say why not)."""

    found: Found
    status: str
    model: str
    gpu: str | None
    vllm_version: str
    findings: tuple[Finding, ...] = ()
    reasons: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    memory: CheckResult | None = None
    engine: Mapping[str, object] = field(default_factory=dict)  # what was read: model, TP, PP, lengths, dtypes

    @property
    def suggestions(self) -> tuple[str, ...]:
        fixes = [f.fix for f in self.findings if f.fix]
        return tuple(dict.fromkeys([*fixes, *(self.memory.suggestions if self.memory else ())]))


@dataclass(frozen=True, slots=True)
class Context:
    """What the run knows besides the inputs."""

    table: FlagTable
    resolve_model: Callable[[str], ModelSpec]
    gpu_for: Callable[[Found], Gpu | None]  # raises UnknownGpuError naming what was not understood
    version: VllmVersion
    version_explicit: bool
    slo: Slo
    read_config: ConfigReader | None = None
    # the tag of an image whose vLLM release is not known (lmcache/vllm-openai:v0.3.14 is LMCache's version,
    # vllm/vllm-openai:gptoss a special build): flags judged by release are then not judged
    unknown_release: str | None = None
    # what the result says of the GPU a file names (a bare `a100` judged on the smaller card: check/gpu_sizes.py)
    gpu_note: Callable[[Found], str | None] | None = None
