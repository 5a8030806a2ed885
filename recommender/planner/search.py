"""plan(): search the launch configurations, keep the feasible ones, rank them, explain the rest (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from recommender.errors import InfeasibleError, InputError
from recommender.memory.engine import VllmVersion
from recommender.model.spec import ModelSpec
from recommender.planner.evaluation import evaluate_candidate, filled
from recommender.planner.ranking import nearest, ranking_key
from recommender.planner.space import candidates, gpu_budgets, kv_dtypes, no_option_matches, weight_options
from recommender.planner.types import NEAR_LOSSLESS_RANK, Evaluation, Hardware, PlanResult, SearchPolicy, Target

DEFAULT_POLICY = SearchPolicy()


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
    policy: SearchPolicy = DEFAULT_POLICY,
) -> PlanResult:
    """Search weights x KV dtype x TP x PP (+ replicas), return the best feasible plan or raise InfeasibleError."""
    validate_target(target, model)
    if hw.gpus_per_node < 1 or hw.nodes < 1:
        raise InputError("--gpus-per-node and --nodes must be at least 1")
    options = weight_options(
        model, variants, hw.gpu, allow_quantization=policy.allow_quantization, only=policy.only_quantization
    )
    if not options:
        raise InputError(
            no_option_matches(
                policy.only_quantization or "", model, variants, hw.gpu, allow_quantization=policy.allow_quantization
            )
        )
    space = candidates(options, model, hw, kv_dtypes(hw.gpu, allow_fp8=policy.allow_fp8_kv))
    results = [evaluate_candidate(c, target, hw, version) for c in space]
    feasible = [e for e in results if isinstance(e, Evaluation) and e.feasible]
    if policy.objective == "max-concurrency":  # the most requests vLLM runs, not only N: max_num_seqs up to the KV
        feasible = [filled(e, target, hw, version) for e in feasible]
    feasible.sort(key=ranking_key(policy.objective, target))
    rejected = tuple(e for e in results if not e.feasible)
    if not feasible:
        raise InfeasibleError(nearest(results, target, hw, version))
    best = feasible[0]
    fewer = next((e for e in feasible if e.gpus < best.gpus), None)
    longer = _longer_context(feasible, best, target) if policy.objective in TIERED else None
    return PlanResult(
        target,
        hw,
        version,
        policy,
        best,
        tuple(feasible[1 : 1 + policy.alternatives]),
        rejected,
        len(space),
        fewer if policy.objective in TIERED else None,
        longer,
    )


def _longer_context(feasible: Sequence[Evaluation], best: Evaluation, target: Target) -> Evaluation | None:
    """With N alone, the longest-context option on more GPUs than `best` with weights as precise as `best`'s (quality
    is not traded unasked), when it serves at least twice `best`'s context: what the GPUs the fewest-GPUs rule
    leaves idle would buy."""
    if target.context is not None:
        return None
    rank = best.candidate.precision_rank
    more = [
        e
        for e in feasible
        if e.gpus > best.gpus and e.candidate.precision_rank <= rank and e.max_model_len >= 2 * best.max_model_len
    ]
    return min(more, key=ranking_key("max-context", target)) if more else None


TIERED = ("min-gpus", "quality")  # objectives that put precision before GPUs (min-gpus by tier, quality by rank)


def _settled(result: PlanResult, ranks: set[int]) -> bool:
    """More GPUs cannot give this objective a better plan: the best is of the best precision the search holds
    (min-gpus: a near-lossless tier when one was searched; quality: the best rank), or precision does not lead."""
    weights = result.best.candidate.weights
    if result.policy.objective == "min-gpus":
        return weights.tier == 0 or min(ranks) > NEAR_LOSSLESS_RANK
    if result.policy.objective == "quality":
        return weights.precision_rank == min(ranks)
    return True


def plan_fewest_gpus(
    model: ModelSpec,
    variants: Sequence[ModelSpec],
    hw: Hardware,
    target: Target,
    *,
    version: VllmVersion,
    policy: SearchPolicy = DEFAULT_POLICY,
) -> PlanResult:
    """Without a GPU count: the plan on the fewest of 1, 2, 4, 8 GPUs (one node; one GPU on a single-GPU system such
    as a DGX Spark, where a second is another node, --nodes) that serve the target at the objective's precision.
    When only 4-bit weights serve it on fewer GPUs, the plan names them (PlanResult.fewer_gpus); when no budget
    serves it at that precision, the plan is the fewest-GPU one found."""
    options = weight_options(
        model, variants, hw.gpu, allow_quantization=policy.allow_quantization, only=policy.only_quantization
    )
    ranks = {o.precision_rank for o in options} or {0}
    first: PlanResult | None = None
    last: InfeasibleError | None = None
    for n in gpu_budgets(hw.gpu):
        try:
            result = plan(model, variants, replace(hw, gpus_per_node=n), target, version=version, policy=policy)
        except InfeasibleError as exc:
            last = exc
            continue
        if _settled(result, ranks):
            return result if first is None or result.fewer_gpus else replace(result, fewer_gpus=first.best)
        first = first or result
    if first is not None:
        return first
    assert last is not None
    raise last
