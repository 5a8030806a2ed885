"""What a latency plan asks and answers (pure records): the target (lengths, load, TTFT / TPOT / ITL goals at a
percentile), a judged option (engine, replicas, predicted figures, the targets it misses) and the plan (the chosen
option, runners-up, what was rejected). The search that fills them is planner/service.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from recommender.errors import InputError
from recommender.memory.engine import VllmVersion
from recommender.model.spec import ModelSpec
from recommender.perf.load import Load
from recommender.perf.metrics import PerfResult, Stats
from recommender.planner.types import Evaluation, Hardware

Percentile = Literal["p50", "p90", "p99"]
PERCENTILES: tuple[Percentile, ...] = ("p50", "p90", "p99")
ServiceObjective = Literal["max-throughput", "min-cost", "min-gpus"]
SERVICE_OBJECTIVES: tuple[ServiceObjective, ...] = ("max-throughput", "min-cost", "min-gpus")
# The closed form gives means; a percentile target is screened against the mean times these (then replayed).
_SCREEN = {"p50": 1.1, "p90": 1.3, "p99": 1.6}
SEATS = "seats"  # the miss of an engine that cannot start with max_num_seqs >= its users (vLLM would queue them)


def target_ms(value: float) -> str:
    """A latency target as given: whole milliseconds with separators, a fraction as written (`--tpot-ms 0.5` read
    "<= 0 ms")."""
    return f"{value:,.0f}" if value == int(value) else f"{value:,g}"


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
            f"{self.metric.upper()} {self.percentile} {self.predicted_ms:,.0f} ms > {target_ms(self.target_ms)} ms "
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
            if self.targets()
            else "the most users the KV cache holds at once"
        )
        goals = ", ".join(f"{m.upper()} {self.percentile} <= {target_ms(v)} ms" for m, v in self.targets())
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
