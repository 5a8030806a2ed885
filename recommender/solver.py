"""plan(): search the launch configurations, keep the feasible ones, rank them, explain the rest (pure)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from recommender.errors import InfeasibleError, InputError
from recommender.memory.engine import VllmVersion
from recommender.model.spec import ModelSpec
from recommender.search import (
    Evaluation,
    Hardware,
    Target,
    candidates,
    evaluate,
    kv_dtypes,
    weight_options,
)

Objective = Literal["min-gpus", "quality", "max-concurrency", "max-context"]
OBJECTIVES: tuple[Objective, ...] = ("min-gpus", "quality", "max-concurrency", "max-context")


@dataclass(frozen=True, slots=True)
class SearchPolicy:
    """What the search may change."""

    objective: Objective = "min-gpus"
    allow_quantization: bool = True
    only_quantization: str | None = None
    allow_fp8_kv: bool = True
    alternatives: int = 5


@dataclass(frozen=True, slots=True)
class PlanResult:
    """The chosen configuration, the runners-up, and why everything else was rejected."""

    target: Target
    hardware: Hardware
    version: VllmVersion
    policy: SearchPolicy
    best: Evaluation
    alternatives: tuple[Evaluation, ...]
    rejected: tuple[Evaluation, ...]
    searched: int


def _headroom(e: Evaluation, target: Target) -> float:
    need = target.concurrency or 1
    return e.concurrency / need


def _key(objective: Objective, target: Target) -> Callable[[Evaluation], tuple[float, ...]]:
    def key(e: Evaluation) -> tuple[float, ...]:
        q = e.candidate.quality
        h = -_headroom(e, target)
        length = -e.max_model_len
        ep = 0 if e.candidate.expert_parallel else 1  # vLLM's recommendation for MoE across GPUs, on ties
        if objective == "quality":
            return (q, e.gpus, length, h, ep)
        if objective == "max-concurrency":
            return (-e.concurrency, e.gpus, q, ep)
        if objective == "max-context":
            return (length, e.gpus, q, h, ep)
        return (e.gpus, q, length, h, ep)

    return key


def validate_target(target: Target, model: ModelSpec) -> None:
    """Reject targets that are not targets (one-line errors, exit 2) before searching."""
    if target.concurrency is None and target.context is None:
        raise InputError("give a target: --concurrency N, --context S, or both")
    if target.concurrency is not None and target.concurrency < 1:
        raise InputError(f"--concurrency must be at least 1, got {target.concurrency}")
    if target.context is not None and target.context < 1:
        raise InputError(f"--context must be at least 1 token, got {target.context}")
    if target.context is not None and target.context > model.max_model_len:
        raise InfeasibleError(
            f"--context {target.context:,} exceeds {model.name}'s limit of {model.max_model_len:,} tokens "
            f"({model.max_len_key}); the longest it serves is {model.max_model_len:,}"
        )


def plan(
    model: ModelSpec,
    variants: Sequence[ModelSpec],
    hw: Hardware,
    target: Target,
    *,
    version: VllmVersion,
    policy: SearchPolicy = SearchPolicy(),
) -> PlanResult:
    """Search weights x KV dtype x TP x PP (+ replicas), return the best feasible plan or raise InfeasibleError."""
    validate_target(target, model)
    if hw.gpus_per_node < 1 or hw.nodes < 1:
        raise InputError("--gpus-per-node and --nodes must be at least 1")
    options = weight_options(
        model, variants, hw.gpu, allow_quantization=policy.allow_quantization, only=policy.only_quantization
    )
    if not options:
        raise InputError(f"no weights option matches --quantization {policy.only_quantization}")
    space = candidates(options, model, hw, kv_dtypes(hw.gpu, allow_fp8=policy.allow_fp8_kv))
    results = [evaluate(c, target, hw, version) for c in space]
    feasible = sorted((e for e in results if e.feasible), key=_key(policy.objective, target))
    rejected = tuple(e for e in results if not e.feasible)
    if not feasible:
        raise InfeasibleError(_nearest(results, target, hw))
    return PlanResult(
        target, hw, version, policy, feasible[0], tuple(feasible[1 : 1 + policy.alternatives]), rejected, len(space)
    )


def _nearest(results: Sequence[Evaluation], target: Target, hw: Hardware) -> str:
    loaded = [e for e in results if e.concurrency > 0]
    what = target.describe()
    gpus = f"{hw.total_gpus} x {hw.gpu.name}"
    if not loaded:
        smallest = min(results, key=lambda e: e.explanation.stage.weights if e.explanation.stage else 1 << 62)
        st = smallest.explanation.stage
        if st is None:
            return f"no configuration serves {what} on {gpus}"
        usable = smallest.explanation.requested_bytes - st.activation_peak - st.non_torch - st.cudagraph
        shards = st.weights * smallest.candidate.tp * smallest.candidate.pp
        at_least = -(-shards // max(usable, 1))
        return (
            f"no configuration serves {what} on {gpus}: even the smallest option ({smallest.candidate.describe()})"
            f" needs {st.weights / (1 << 30):.1f} GiB of weights per GPU, more than the "
            f"{smallest.explanation.requested_bytes / (1 << 30):.1f} GiB budget; the weights alone need at least "
            f"{at_least} such GPUs"
        )
    best = max(loaded, key=lambda e: e.concurrency)
    need = target.concurrency or 1
    per_gpu = best.concurrency / max(1, best.candidate.tp * best.candidate.pp * max(1, best.replicas or 1))
    more = (
        f"; at that rate {need} requests need about {int(-(-need // max(per_gpu, 1e-9)))} GPUs" if per_gpu > 0 else ""
    )
    return f"no configuration serves {what} on {gpus}; nearest: {best.reason}{more}"
