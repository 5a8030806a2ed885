"""Order the feasible evaluations by the objective, and say what comes nearest when none is feasible (pure)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from recommender.memory.engine import VllmVersion
from recommender.memory.precision import gpu_refusal
from recommender.memory.startup_issues import IssueKind
from recommender.planner.types import Evaluation, Hardware, Objective, Target, Verdict
from recommender.units import GiB


def _headroom(e: Evaluation, target: Target) -> float:
    """What the KV cache holds over what is needed (room to spare; the plan's max_num_seqs caps what runs)."""
    need = target.concurrency or 1
    return e.explanation.max_concurrency * max(1, e.replicas) / need


def ranking_key(objective: Objective, target: Target) -> Callable[[Evaluation], tuple[float, ...]]:
    """Sort key, smaller is better: the objective first, then GPUs, precision rank, context, where the weights
    come from (a checkpoint before online quantization, WeightOption.provenance) and headroom. The fewest GPUs
    (the default) compares options of the same precision tier first: 4-bit weights only when no near-lossless
    option serves the target (types.py NEAR_LOSSLESS_RANK), as the latency planner does."""

    def key(e: Evaluation) -> tuple[float, ...]:
        rank = e.candidate.precision_rank
        origin = e.candidate.weights.provenance
        h = -_headroom(e, target)
        length = -e.max_model_len
        ep = 0 if e.candidate.expert_parallel else 1  # vLLM's recommendation for MoE across GPUs, on ties
        if objective == "quality":
            return (rank, e.gpus, length, origin, h, ep)
        if objective == "max-concurrency":
            return (-e.concurrency, e.gpus, rank, origin, ep)
        if objective == "max-context":
            return (length, e.gpus, rank, origin, h, ep)
        return (e.candidate.weights.tier, e.gpus, rank, length, origin, h, ep)

    return key


def weights_too_big(evaluated: Sequence[Evaluation], what: str, hw: Hardware) -> str:
    """No option's weights fit: cite the closest (the fewest weights per GPU), how many GPUs the weights alone
    need, and the --nodes that gives them (vLLM spreads the layers over nodes with pipeline parallelism)."""
    smallest = min(evaluated, key=lambda e: e.explanation.stage.weights)
    x = smallest.explanation
    st = x.stage
    usable = x.requested_bytes - st.activation_peak - st.non_torch - st.cudagraph
    if usable <= 0:  # the overheads alone fill the budget: no GPU count leaves room for a weight
        overheads = f"{st.activation_peak / GiB:.2f} + {st.non_torch / GiB:.2f} + {st.cudagraph / GiB:.2f} GiB"
        return (
            f"no configuration serves {what} on {hw.total_gpus} x {hw.gpu.name}: its {x.requested_bytes / GiB:.2f} GiB "
            f"budget per GPU (at --gpu-memory-utilization {x.utilization:g}) does not hold vLLM's own activation peak, non-torch memory and CUDA graphs ({overheads}) "
            "beside any weights, so no number of these GPUs serves it: plan for a card with more memory"
        )
    shards = st.weights * smallest.candidate.tp * smallest.candidate.pp
    at_least = -(-shards // max(usable, 1))
    nodes = -(-at_least // hw.gpus_per_node)
    more = (
        f"; try --gpus-per-node {hw.gpus_per_node} --nodes {nodes} (pipeline parallelism across nodes)"
        if nodes > hw.nodes
        else ""
    )
    return (
        f"no configuration serves {what} on {hw.total_gpus} x {hw.gpu.name}: even the closest option "
        f"({smallest.candidate.describe()}) needs {st.weights / GiB:.1f} GiB of weights per GPU, more than the "
        f"{x.requested_bytes / GiB:.1f} GiB budget; the weights alone need at least {at_least:,} such GPUs{more}"
    )


def _weights_stop(e: Evaluation) -> bool:
    """The candidate's weights (with the overheads) leave no KV cache, or do not fit at all."""
    x = e.explanation
    return x.stage.available_kv <= 0 or x.has(IssueKind.WEIGHTS_DO_NOT_FIT)


def nearest(results: Sequence[Verdict], target: Target, hw: Hardware, version: VllmVersion) -> str:
    """The InfeasibleError message: the closest configuration and what it would take."""
    loaded = [e for e in results if e.concurrency > 0]
    what = target.describe()
    gpus = f"{hw.total_gpus} x {hw.gpu.name}"
    refusal = gpu_refusal(hw.gpu, version)
    if refusal:  # no flag helps: say why rather than name a "nearest" configuration
        return f"no configuration serves {what} on {gpus}: {refusal.message}"
    if not loaded:
        evaluated = [e for e in results if isinstance(e, Evaluation)]
        if not evaluated:
            return f"no configuration serves {what} on {gpus}"
        # blame the weights only when they are what stops every option: else the first option the search tried
        # (the fewest GPUs) says what vLLM refuses, e.g. a quantization below the GPU's compute capability
        refused = [e for e in evaluated if not _weights_stop(e)]
        if refused:
            first = min(refused, key=lambda e: e.gpus)
            return f"no configuration serves {what} on {gpus}; nearest: {first.reason}"
        return weights_too_big(evaluated, what, hw)
    best = max(loaded, key=lambda e: e.concurrency)
    need = target.concurrency or 1
    per_gpu = best.concurrency / max(1, best.candidate.tp * best.candidate.pp * max(1, best.replicas or 1))
    more = (
        f"; at that rate {need:,} requests need about {int(-(-need // max(per_gpu, 1e-9))):,} GPUs"
        if per_gpu > 0
        else ""
    )
    return f"no configuration serves {what} on {gpus}; nearest: {best.reason}{more}"
