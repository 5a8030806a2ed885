"""Plan by latency and throughput: the configurations that meet TTFT / TPOT / ITL targets at a load, ranked by
output tokens per second per GPU (or cost per token), on the fewest GPUs that meet them (pure).

For every engine the memory planner accepts (weights x KV dtype x TP x PP, expert parallelism and DP + EP for MoE)
and every replica count and `--max-num-batched-tokens` choice that fits the GPU budget, the closed-form estimate
screens; the replay of vLLM's scheduler refines the best few and decides. With a load (`concurrency` users in a
closed loop or a Poisson `request_rate`), an option is feasible when the replayed percentile of each target is
met; without one, each option serves the most users its targets allow (its capacity). Without a GPU count the
search grows the budget 1, 2, 4, 8 GPUs (one node) and stops at the first that meets the targets.
The target, the judged options and the plan it returns are the records of planner/service_types.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from recommender.errors import InfeasibleError, InputError
from recommender.memory.budget import explain
from recommender.memory.engine import VllmVersion
from recommender.memory.precision import gpu_refusal
from recommender.memory.startup_issues import IssueKind
from recommender.model.spec import ModelSpec
from recommender.perf.closed_form import estimate
from recommender.perf.costs import EngineCosts
from recommender.perf.load import Load
from recommender.perf.params import PerfParams
from recommender.perf.predict import costs_for, predict_engine
from recommender.planner.evaluation import evaluate_candidate
from recommender.planner.ranking import weights_too_big
from recommender.planner.service_types import SEATS, Miss, ServiceObjective, ServiceOption, ServicePlan, ServiceTarget
from recommender.planner.space import candidates, gpu_budgets, kv_dtypes, no_option_matches, weight_options
from recommender.planner.types import Evaluation, Hardware, SearchPolicy, Target, Verdict

DEFAULT_POLICY = SearchPolicy()
BATCHED_TOKENS = (2048, 8192, 16384)  # --max-num-batched-tokens tried besides vLLM's default
REFINE = 5  # options the replay checks per GPU budget


def _engines(
    model: ModelSpec,
    variants: Sequence[ModelSpec],
    hw: Hardware,
    target: ServiceTarget,
    version: VllmVersion,
    policy: SearchPolicy,
) -> tuple[list[Evaluation], list[Verdict]]:
    """One engine per memory-feasible candidate (its own GPUs only), plus DP + EP engines for MoE models."""
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
    memory_target = Target(concurrency=None, context=target.input_len + target.output_len)
    engines: list[Evaluation] = []
    rejected: list[Verdict] = []
    for c in space:
        own = Hardware(hw.gpu, gpus_per_node=c.tp, nodes=c.pp, free_bytes=hw.free_bytes)
        v = evaluate_candidate(c, memory_target, own, version)
        if isinstance(v, Evaluation) and v.feasible:
            engines.append(v)
            engines += _dp_ep(v, hw, version)
        else:
            rejected.append(v)
    return engines, rejected


def _dp_ep(e: Evaluation, hw: Hardware, version: VllmVersion) -> list[Evaluation]:
    """MoE: data parallel with expert parallelism (`--data-parallel-size D --enable-expert-parallel`)."""
    c = e.candidate
    if not c.expert_parallel or c.pp != 1:
        return []
    out = []
    for dp in (2, 4, 8):
        if c.tp * dp > hw.total_gpus:
            break
        flags = replace(e.flags, data_parallel_size=dp)
        x = explain(c.weights.model, hw.gpu, flags, version, free_bytes=hw.free_bytes)
        if x.fits:
            out.append(replace(e, flags=flags, explanation=x, reason=f"{e.reason}, DP={dp}"))
    return out


def _with_batched_tokens(e: Evaluation, tokens: int, hw: Hardware, version: VllmVersion) -> Evaluation | None:
    """The engine with another --max-num-batched-tokens (re-checked: the activation peak changes)."""
    x = e.explanation
    if tokens == x.max_num_batched_tokens or tokens < x.max_num_seqs:
        return None
    flags = replace(e.flags, max_num_batched_tokens=tokens)
    checked = explain(e.candidate.weights.model, hw.gpu, flags, version, free_bytes=hw.free_bytes)
    return replace(e, flags=flags, explanation=checked) if checked.fits else None


@dataclass(frozen=True, slots=True)
class _Judge:
    """What judging an engine needs besides the engine."""

    target: ServiceTarget
    hw: Hardware
    version: VllmVersion
    params: PerfParams

    def costs(self, e: Evaluation) -> EngineCosts:
        return costs_for(e.candidate.weights.model, self.hw.gpu, e.flags, e.explanation, self.params)

    def option(
        self, e: Evaluation, costs: EngineCosts, replicas: int, users: int | None, screen: bool
    ) -> ServiceOption:
        load = self.target.load(users)
        e, costs = self.seated(e, costs, load, replicas)
        run = estimate if screen else predict_engine
        r = run(costs, load, replicas=replicas)
        misses = self.target.misses(r, screen=screen)
        x = e.explanation
        per_engine = math.ceil(load.max_concurrency / (replicas * x.dp)) if load.max_concurrency else 0
        if per_engine > x.max_num_seqs:
            misses = (Miss(SEATS, "", per_engine, x.max_num_seqs), *misses)
        return ServiceOption(e, replicas, load, r, misses, r.method)

    def seated(self, e: Evaluation, costs: EngineCosts, load: Load, replicas: int) -> tuple[Evaluation, EngineCosts]:
        """A closed loop of N users on R replicas needs --max-num-seqs of at least ceil(N / R) per engine, or vLLM
        queues the rest whatever the KV cache holds: raise it (and --max-num-batched-tokens, which vLLM wants at
        least as large) when the engine still starts with it; the figures are then for the flags printed."""
        users = load.max_concurrency
        x = e.explanation
        seqs = math.ceil(users / (replicas * x.dp)) if users is not None else 0
        if seqs <= x.max_num_seqs:
            return e, costs
        tokens = max(x.max_num_batched_tokens, seqs)
        flags = replace(e.flags, max_num_seqs=seqs, max_num_batched_tokens=tokens)
        checked = explain(e.candidate.weights.model, self.hw.gpu, flags, self.version, free_bytes=self.hw.free_bytes)
        if not checked.fits:
            return e, costs
        seated = replace(e, flags=flags, explanation=checked)
        return seated, self.costs(seated)

    def with_load(self, e: Evaluation, costs: EngineCosts, budget: int) -> ServiceOption:
        """The fewest replicas (within the budget) whose screen meets the targets at the given load."""
        most = max(1, budget // e.explanation.gpus)
        opt = self.option(e, costs, 1, None, True)
        for r in range(2, most + 1):
            if opt.feasible:
                break
            opt = self.option(e, costs, r, None, True)
        return opt

    def capacity(self, e: Evaluation, costs: EngineCosts, budget: int) -> ServiceOption:
        """Without a load: the most users per replica whose screen meets the targets, on every replica that fits."""
        replicas = max(1, budget // e.explanation.gpus)
        lo, hi = 0, costs.max_num_seqs
        if not self.target.targets():
            # No latency target to bound it: users past what the KV cache holds at full length only wait for
            # blocks (TTFT grows by the queue, output tokens/s does not), so the capacity is what the cache holds.
            held = e.explanation.concurrency_for(self.target.input_len + self.target.output_len)
            hi = max(1, min(hi, math.floor(held)))
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.option(e, costs, 1, mid, True).feasible:
                lo = mid
            else:
                hi = mid - 1
        return self.option(e, costs, replicas, max(1, lo) * replicas, True)

    def screen(self, e: Evaluation, budget: int) -> ServiceOption:
        costs = self.costs(e)
        return self.with_load(e, costs, budget) if self.target.has_load else self.capacity(e, costs, budget)


def precision_tier(o: ServiceOption) -> int:
    """0 for 16-bit / FP8 / 8-bit weights, 1 for 4-bit weights (planner/types.py NEAR_LOSSLESS_RANK)."""
    return o.evaluation.candidate.weights.tier


# Throughputs per GPU closer than this ratio are ties: the model's resolution is far coarser (its expected error is
# 10-20 %), so a 0.1 % difference from a few MiB more KV must not choose online FP8 over the publisher's checkpoint.
THROUGHPUT_RESOLUTION = 1.02


def throughput_step(per_gpu: float) -> int:
    """`per_gpu` on a log scale in steps of THROUGHPUT_RESOLUTION (equal steps are ties)."""
    return math.floor(math.log(max(per_gpu, 1e-9)) / math.log(THROUGHPUT_RESOLUTION))


def ranking_key(objective: ServiceObjective) -> Callable[[ServiceOption], tuple[float, ...]]:
    """Smaller is better: feasibility, then the objective, then GPUs, precision, where the weights come from
    (WeightOption.provenance) and TTFT. Throughput and cost compare options of the same precision tier first (see
    planner/types.py NEAR_LOSSLESS_RANK), and throughputs within THROUGHPUT_RESOLUTION as equal."""

    def key(o: ServiceOption) -> tuple[float, ...]:
        c = o.evaluation.candidate
        rank, origin = c.precision_rank, c.weights.provenance
        if objective == "min-gpus":
            return (len(o.misses), o.gpus, -throughput_step(o.per_gpu), rank, origin, o.result.ttft.mean)
        step = -throughput_step(o.per_gpu)
        return (len(o.misses), precision_tier(o), step, o.gpus, rank, origin, -o.per_gpu, o.result.ttft.mean)

    return key


def _refine(
    judge: _Judge, screened: list[ServiceOption], budget: int, key: Callable[..., tuple[float, ...]]
) -> list[ServiceOption]:
    """Replay the best screened options (and their --max-num-batched-tokens variants); the replay decides."""
    out = []
    for opt in sorted(screened, key=key)[:REFINE]:
        variants = [opt]
        for tokens in BATCHED_TOKENS:
            e = _with_batched_tokens(opt.evaluation, tokens, judge.hw, judge.version)
            if e is not None:
                variants.append(judge.screen(e, budget))
        best = min(variants, key=key)
        users = best.load.max_concurrency if not judge.target.has_load else None
        costs = judge.costs(best.evaluation)
        replicas = best.replicas
        most = max(1, budget // best.evaluation.explanation.gpus)
        replayed = judge.option(best.evaluation, costs, replicas, users, False)
        for _ in range(3):  # the replay decides: more replicas for a load, fewer users for a capacity
            if replayed.feasible:
                break
            if users is None and replicas < most:
                replicas += 1
            elif users is not None and users > replicas:
                users = max(replicas, int(users * 0.8))
            else:
                break
            replayed = judge.option(best.evaluation, costs, replicas, users, False)
        out.append(_seqs_for_users(replayed, judge))
    return out


def _seqs_for_users(o: ServiceOption, judge: _Judge) -> ServiceOption:
    """A closed loop of N users on R replicas: --max-num-seqs ceil(N / R) (re-checked with `explain`; the replay is
    unchanged, every replica already ran at most that many requests)."""
    users = o.load.max_concurrency
    if users is None or not o.feasible:
        return o
    x = o.evaluation.explanation
    seqs = math.ceil(users / (o.replicas * x.dp))
    if seqs >= x.max_num_seqs or seqs > x.max_num_batched_tokens:
        return o
    flags = replace(o.evaluation.flags, max_num_seqs=seqs)
    checked = explain(o.evaluation.candidate.weights.model, judge.hw.gpu, flags, judge.version)
    if not checked.fits:
        return o
    return replace(o, evaluation=replace(o.evaluation, flags=flags, explanation=checked))


def plan_service(
    model: ModelSpec,
    variants: Sequence[ModelSpec],
    hw: Hardware,
    target: ServiceTarget,
    *,
    version: VllmVersion,
    params: PerfParams,
    policy: SearchPolicy = DEFAULT_POLICY,
    objective: ServiceObjective = "max-throughput",
    gpu_hour_cost: float | None = None,
    fixed_gpus: bool = True,
) -> ServicePlan:
    """The best configuration for the target within `hw` (or, not `fixed_gpus`, within the fewest GPUs of one
    node that meet it); InfeasibleError naming the nearest miss otherwise."""
    target.validate()
    length = target.input_len + target.output_len
    if length > model.max_model_len:
        raise InfeasibleError(
            f"--input-len {target.input_len:,} + --output-len {target.output_len:,} = {length:,} tokens exceed "
            f"{model.name}'s limit of {model.max_model_len:,} tokens ({model.max_len_key})"
        )
    if gpu_hour_cost is not None and not gpu_hour_cost > 0:
        raise InputError(f"--gpu-hour-cost must be positive, got {gpu_hour_cost}")
    largest = hw if fixed_gpus else Hardware(hw.gpu, gpus_per_node=gpu_budgets(hw.gpu)[-1], free_bytes=hw.free_bytes)
    engines, rejected = _engines(model, variants, largest, target, version, policy)
    budgets = [hw.total_gpus] if fixed_gpus else list(gpu_budgets(hw.gpu))
    key = ranking_key(objective)
    judge = _Judge(target, largest, version, params)
    nearest: ServiceOption | None = None
    for budget in budgets:
        fitting = [e for e in engines if e.explanation.gpus <= budget]
        screened = [judge.screen(e, budget) for e in fitting]
        if not any(o.feasible for o in screened) and budget != budgets[-1]:
            continue  # nothing even estimated to meet the targets: more GPUs
        replayed = sorted(_refine(judge, screened, budget, key), key=key)
        feasible = [o for o in replayed if o.feasible]
        if replayed and (nearest is None or key(replayed[0]) < key(nearest)):
            nearest = replayed[0]
        if feasible:
            misses = [f"{o.describe()}: {'; '.join(m.describe() for m in o.misses)}" for o in replayed if o.misses]
            screen_misses = [
                f"{o.describe()}: {'; '.join(m.describe() for m in o.misses)} (estimate)" for o in screened if o.misses
            ]
            return ServicePlan(
                model,
                target,
                Hardware(hw.gpu, gpus_per_node=budget, nodes=1, free_bytes=hw.free_bytes) if not fixed_gpus else hw,
                version,
                objective,
                gpu_hour_cost,
                feasible[0],
                tuple(feasible[1:]),
                tuple([v.reason for v in rejected] + misses + screen_misses),
                len(fitting),
            )
    searched = Hardware(hw.gpu, gpus_per_node=budgets[-1] if budgets else 0, nodes=1) if not fixed_gpus else hw
    raise InfeasibleError(_nearest_message(target, searched, version, nearest, rejected))


def _nearest_message(
    target: ServiceTarget,
    hw: Hardware,
    version: VllmVersion,
    nearest: ServiceOption | None,
    rejected: list[Verdict],
) -> str:
    where = f"{hw.total_gpus} x {hw.gpu.name}"
    refusal = gpu_refusal(hw.gpu, version)
    if refusal:  # no flag helps: say why rather than name a "nearest" configuration
        return f"no configuration serves {target.describe()} on {where}: {refusal.message}"
    if nearest is not None:
        misses = "; ".join(m.describe() for m in nearest.misses)
        return f"no configuration serves {target.describe()} on {where}; nearest: {nearest.describe()} misses {misses}"
    evaluated = [v for v in rejected if isinstance(v, Evaluation)]
    if evaluated and all(_weights_do_not_fit(e) for e in evaluated):
        return weights_too_big(evaluated, target.describe(), hw)
    # The closest: the most KV cache left per GPU (an option whose weights fit, if any).
    closest = max(evaluated, key=lambda e: e.explanation.stage.available_kv, default=None)
    why = f"; closest: {closest.reason}" if closest else f"; e.g. {rejected[0].reason}" if rejected else ""
    return f"no configuration serves {target.describe()} on {where}: none fits in memory{why}"


def _weights_do_not_fit(e: Evaluation) -> bool:
    x = e.explanation
    return x.stage.available_kv <= 0 or x.has(IssueKind.WEIGHTS_DO_NOT_FIT)
