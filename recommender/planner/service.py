"""Plan by latency and throughput: the configurations that meet TTFT / TPOT / ITL targets at a load, ranked by
output tokens per second per GPU (or cost per token), on the fewest GPUs that meet them (pure).

For every engine the memory planner accepts (weights x KV dtype x TP x PP, expert parallelism and DP + EP for MoE)
and every replica count and `--max-num-batched-tokens` choice that fits the GPU budget, the closed-form estimate
screens; the replay of vLLM's scheduler refines the best few and decides. With a load (`concurrency` users in a
closed loop or a Poisson `request_rate`), an option is feasible when the replayed percentile of each target is
met; without one, each option serves the most users its targets allow (its capacity). Without a GPU count the
search grows the budget 1, 2, 4, 8 GPUs (one node) and stops at the first that meets the targets.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from recommender.errors import InfeasibleError, InputError
from recommender.memory.budget import explain, gpu_refusal
from recommender.memory.engine import VllmVersion
from recommender.memory.startup_issues import IssueKind
from recommender.model.spec import ModelSpec
from recommender.perf.closed_form import estimate
from recommender.perf.costs import EngineCosts
from recommender.perf.load import Load
from recommender.perf.metrics import PerfResult, Stats
from recommender.perf.params import PerfParams
from recommender.perf.predict import costs_for, predict_engine
from recommender.planner.evaluation import evaluate_candidate
from recommender.planner.ranking import weights_too_big
from recommender.planner.space import candidates, kv_dtypes, weight_options
from recommender.planner.types import Evaluation, Hardware, SearchPolicy, Target, Verdict

Percentile = Literal["p50", "p90", "p99"]
PERCENTILES: tuple[Percentile, ...] = ("p50", "p90", "p99")
ServiceObjective = Literal["max-throughput", "min-cost", "min-gpus"]
SERVICE_OBJECTIVES: tuple[ServiceObjective, ...] = ("max-throughput", "min-cost", "min-gpus")
DEFAULT_POLICY = SearchPolicy()
GPU_BUDGETS = (1, 2, 4, 8)  # without a GPU count: one node, smallest first
BATCHED_TOKENS = (2048, 8192, 16384)  # --max-num-batched-tokens tried besides vLLM's default
REFINE = 5  # options the replay checks per GPU budget
# The closed form gives means; a percentile target is screened against the mean times these (then replayed).
_SCREEN = {"p50": 1.1, "p90": 1.3, "p99": 1.6}
SEATS = "seats"  # the miss of an engine that cannot start with max_num_seqs >= its users (vLLM would queue them)


@dataclass(frozen=True, slots=True)
class Miss:
    """One target an option does not meet, and by how much."""

    metric: str  # ttft | tpot | itl, or SEATS: users per engine (predicted) above the max_num_seqs it starts with
    percentile: str
    predicted_ms: float
    target_ms: float

    def describe(self) -> str:
        """'TPOT p90 61 ms > 50 ms (+22%)'."""
        if self.metric == SEATS:
            return f"{self.predicted_ms:,.0f} users per engine > --max-num-seqs {self.target_ms:,.0f} (the most it starts with)"
        over = self.predicted_ms / self.target_ms - 1
        return (
            f"{self.metric.upper()} {self.percentile} {self.predicted_ms:,.0f} ms > {self.target_ms:,.0f} ms "
            f"({over:+,.0%})"
        )


@dataclass(frozen=True, slots=True)
class ServiceTarget:
    """Lengths, the load (users or a request rate, or neither: find the capacity) and the latency targets."""

    input_len: int
    output_len: int
    concurrency: int | None = None
    request_rate: float | None = None
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    itl_ms: float | None = None
    percentile: Percentile = "p90"
    dataset: str = "random"

    def validate(self) -> None:
        """One-line errors (exit 2) for targets that are not targets."""
        if self.input_len < 1 or self.output_len < 1:
            raise InputError("--input-len and --output-len must be at least 1 token")
        if self.concurrency is not None and self.concurrency < 1:
            raise InputError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.request_rate is not None and not self.request_rate > 0:
            raise InputError(f"--request-rate must be positive, got {self.request_rate}")
        if self.concurrency is not None and self.request_rate is not None:
            raise InputError("give the load as --concurrency N (users) or --request-rate R, not both")
        for name, value in (("--ttft-ms", self.ttft_ms), ("--tpot-ms", self.tpot_ms), ("--itl-ms", self.itl_ms)):
            if value is not None and not value > 0:
                raise InputError(f"{name} must be positive, got {value}")
        if self.percentile not in PERCENTILES:
            raise InputError(f"--slo-percentile {self.percentile!r}: choose from {', '.join(PERCENTILES)}")

    @property
    def has_load(self) -> bool:
        """A load is given (otherwise each option is judged at its capacity)."""
        return self.concurrency is not None or self.request_rate is not None

    def targets(self) -> tuple[tuple[str, float], ...]:
        """(metric, target ms) for each target given."""
        pairs = (("ttft", self.ttft_ms), ("tpot", self.tpot_ms), ("itl", self.itl_ms))
        return tuple((m, v) for m, v in pairs if v is not None)

    def load(self, concurrency: int | None = None) -> Load:
        """The benchmark load the options are judged at (a concurrency overrides the target's)."""
        users = concurrency or self.concurrency
        if users is not None:
            # Steady state: the first wave of users (all sent at once by a benchmark client) is not counted.
            prompts = min(1000, max(100, 5 * users))
            warm = min(users, prompts // 2)
            return Load(
                self.input_len, self.output_len, prompts, max_concurrency=users, dataset=self.dataset, warmup=warm
            )
        rate = self.request_rate or 1.0
        prompts = min(1000, max(100, round(rate * 120)))
        return Load(self.input_len, self.output_len, prompts, request_rate=rate, dataset=self.dataset)

    def misses(self, r: PerfResult, *, screen: bool = False) -> tuple[Miss, ...]:
        """The targets `r` misses (`screen`: judged on closed-form means with a percentile allowance)."""
        out = []
        stats: dict[str, Stats] = {"ttft": r.ttft, "tpot": r.tpot, "itl": r.itl}
        for metric, goal in self.targets():
            value = stats[metric].mean / _SCREEN[self.percentile] if screen else stats[metric].at(self.percentile)
            if value > goal:
                out.append(Miss(metric, self.percentile, value, goal))
        return tuple(out)

    def describe(self) -> str:
        """'64 users, 2,000 in / 500 out, TTFT p90 <= 2,000 ms, TPOT p90 <= 50 ms'."""
        load = (
            f"{self.concurrency:,} users"
            if self.concurrency is not None
            else f"{self.request_rate:g} req/s"
            if self.request_rate is not None
            else "the most users"
        )
        goals = ", ".join(f"{m.upper()} {self.percentile} <= {v:,.0f} ms" for m, v in self.targets())
        return f"{load}, {self.input_len:,} in / {self.output_len:,} out" + (f", {goals}" if goals else "")


@dataclass(frozen=True, slots=True)
class ServiceOption:
    """One configuration judged at a load: the engine, how many replicas, and what the benchmark would report."""

    evaluation: Evaluation  # the engine (candidate, flags, startup prediction)
    replicas: int
    load: Load  # the load the figures are for
    result: PerfResult
    misses: tuple[Miss, ...]
    method: str  # "replay" or "closed-form"

    @property
    def gpus(self) -> int:
        """GPUs of all replicas."""
        return self.evaluation.explanation.gpus * self.replicas

    @property
    def feasible(self) -> bool:
        """Every target met."""
        return not self.misses

    @property
    def per_gpu(self) -> float:
        """Output tokens/s per GPU."""
        return self.result.output_throughput / self.gpus

    def describe(self) -> str:
        """'TP=2 PP=1, bfloat16, KV auto x 2 replicas, max-num-batched-tokens 8192'."""
        reps = f" x {self.replicas} replicas" if self.replicas > 1 else ""
        dp = self.evaluation.flags.data_parallel_size
        dp_text = f", DP={dp}" if dp > 1 else ""
        return (
            f"{self.evaluation.candidate.describe()}{dp_text}{reps}, --max-num-batched-tokens "
            f"{self.evaluation.explanation.max_num_batched_tokens}"
        )


@dataclass(frozen=True, slots=True)
class ServicePlan:
    """The chosen option, runners-up that also meet the targets, and why the rest was rejected."""

    model: ModelSpec
    target: ServiceTarget
    hardware: Hardware  # the GPU budget the plan was found within
    version: VllmVersion
    objective: ServiceObjective
    gpu_hour_cost: float | None
    best: ServiceOption
    alternatives: tuple[ServiceOption, ...]
    rejected: tuple[str, ...]
    searched: int

    def cost_per_million(self, option: ServiceOption) -> float | None:
        """Dollars per million output tokens at the option's throughput (with --gpu-hour-cost)."""
        if self.gpu_hour_cost is None or option.result.output_throughput <= 0:
            return None
        return option.gpus * self.gpu_hour_cost / (option.result.output_throughput * 3600) * 1e6

    def steady_state_note(self) -> str:
        """A closed loop's latencies are judged in steady state: said, since `perf` and `vllm bench serve` count
        the first wave (all sent at once, it queues behind its own prompts: its TTFT can be several times the rest's)."""
        warmup = self.best.load.warmup
        if not warmup:
            return ""
        return (
            f"latencies in steady state, the first {warmup:,} requests (the users' first wave) left out, which "
            "`vllm-plan perf` and `vllm bench serve` count"
        )

    def max_len_note(self) -> str:
        """Why --max-model-len is what it is, and what vLLM does past it."""
        t = self.target
        return (
            f"--max-model-len {self.best.evaluation.explanation.max_model_len:,} = {t.input_len:,} in + "
            f"{t.output_len:,} out: vLLM refuses a longer prompt and stops an output at the limit (for longer "
            "requests, raise it and re-run `vllm-plan perf` on the command)"
        )

    def queueing_note(self) -> str:
        """When the users are more than the KV cache holds at full length: they queue, which the replay counted,
        and `check --concurrency N` (N requests held at once) would fail the plan, while `check plan.yaml` warns."""
        best, users = self.best, self.best.load.max_concurrency
        length = self.target.input_len + self.target.output_len
        held = best.evaluation.explanation.concurrency_for(length) * best.replicas
        if users is None or held >= users:
            return ""
        return (
            f"KV cache: holds {held:,.1f} requests of {length:,} tokens at once for {users:,} users; the rest wait "
            "for blocks or are preempted (counted above). `check` on this plan passes with a warning saying so; "
            f"`check --concurrency {users}` asks for all {users:,} held at once and fails it."
        )


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
        raise InputError(f"no weights option matches --quantization {policy.only_quantization}")
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


# Weight precision ranks (planner/space.py precision_of) at or below this are near-lossless: 16-bit, FP8 and 8-bit
# integer weights. 4-bit weights (AWQ/GPTQ int4, NVFP4, W4A16) cost quality the user did not ask to trade, so a
# throughput or cost objective takes them only when no 8/16-bit option meets the targets (`--quantization awq`
# or a 4-bit checkpoint as the model still plans them directly).
NEAR_LOSSLESS_RANK = 2


def precision_tier(o: ServiceOption) -> int:
    """0 for 16-bit / FP8 / 8-bit weights, 1 for 4-bit weights."""
    return 0 if o.evaluation.candidate.weights.precision_rank <= NEAR_LOSSLESS_RANK else 1


def ranking_key(objective: ServiceObjective) -> Callable[[ServiceOption], tuple[float, ...]]:
    """Smaller is better: feasibility, then the objective, then GPUs, precision and TTFT. Throughput and cost
    compare options of the same precision tier first (see NEAR_LOSSLESS_RANK)."""

    def key(o: ServiceOption) -> tuple[float, ...]:
        rank = o.evaluation.candidate.precision_rank
        if objective == "min-gpus":
            return (len(o.misses), o.gpus, -o.per_gpu, rank, o.result.ttft.mean)
        return (len(o.misses), precision_tier(o), -o.per_gpu, o.gpus, rank, o.result.ttft.mean)

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
    largest = hw if fixed_gpus else Hardware(hw.gpu, gpus_per_node=GPU_BUDGETS[-1], free_bytes=hw.free_bytes)
    engines, rejected = _engines(model, variants, largest, target, version, policy)
    budgets = [hw.total_gpus] if fixed_gpus else [g for g in GPU_BUDGETS if g <= largest.total_gpus]
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
