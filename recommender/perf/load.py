"""The load, as `vllm bench serve` takes it, and the requests it sends (pure, seeded, deterministic).

`--max-concurrency N` is a closed loop (a new request as soon as one finishes); `--request-rate R` sends Poisson
arrivals (gamma with `burstiness`); `--request-rate inf` (the default) sends all `--num-prompts` at once. Clients of
vLLM 0.10.0 and later (`vllm bench serve`, benchmarks/benchmark_serving.py; vllm-project/vllm#21108) rescale the
summed gamma delays so the last request is sent at exactly num_prompts / rate (`rescaled_arrivals`); earlier ones
send each request one draw after the previous.
Lengths: the random dataset sends fixed lengths (`--random-range-ratio 0`); unless the client is known, a small
seeded jitter stands in for early end-of-sequence and timing noise so requests do not run in lockstep. When it is
known (`jitter=0`, `max_output`: the requested max_tokens without --ignore-eos), prompts are exact and outputs reach
the requested length or stop at a constant per-token EOS rate matching their mean: a closed loop of such requests
runs in waves, as the real one does (each wave's prompts arrive together and queue behind each other's prefill). ShareGPT-like data has long-tailed
lengths: log-normal around the given means, clipped as `vllm bench serve` filters ShareGPT (4..1024 prompt
tokens, 2048 in total).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import lru_cache

from recommender.errors import InputError

MAX_PROMPTS = 100_000  # a replay of more (from --num-prompts or a result file) is not bounded in time (~5 s)
MAX_LENGTH = 1 << 30  # tokens per request

DATASETS = ("random", "sharegpt")
DEFAULT_JITTER = 0.05  # stands in for early EOS and timing noise where the client is not known
SHAREGPT_SIGMA = 1.0  # log-normal spread of ShareGPT prompt and completion lengths
SHAREGPT_MAX_PROMPT = 1024
SHAREGPT_MAX_TOTAL = 2048


@dataclass(frozen=True, slots=True)
class Load:
    """What the benchmark client sends. `request_rate` None or inf: every prompt at once (unless capped)."""

    input_len: float
    output_len: float
    num_prompts: int = 1000
    max_concurrency: int | None = None
    request_rate: float | None = None  # requests/s; None = inf
    burstiness: float = 1.0
    dataset: str = "random"
    jitter: float = DEFAULT_JITTER  # relative spread of fixed lengths
    seed: int = 0
    warmup: int = 0  # first requests left out of the latency statistics (a steady-state view; the bench keeps all)
    max_output: float | None = None  # random dataset: the requested max_tokens when outputs may end earlier at EOS
    rescaled_arrivals: bool = False  # the client stretches its gamma delays to span num_prompts / rate (0.10.0+)
    # every prompt is already in the server's prefix cache (a run re-sending an earlier run's seeded prompts to a
    # server with prefix caching on): each computes only the tokens past its last full cached block (replay.py)
    cached_prompts: bool = False

    def validate(self) -> None:
        """One-line errors for values `vllm bench serve` would refuse."""
        if not self.input_len >= 1 or not self.output_len >= 1:
            raise InputError("--input-len and --output-len must be at least 1")
        if self.num_prompts < 1:
            raise InputError(f"--num-prompts must be at least 1, got {self.num_prompts}")
        if self.num_prompts > MAX_PROMPTS:
            raise InputError(
                f"--num-prompts {self.num_prompts:,} is more than the {MAX_PROMPTS:,} prompts a replay runs in bounded "
                "time"
            )
        if not self.input_len <= MAX_LENGTH or not self.output_len <= MAX_LENGTH:
            raise InputError(f"--input-len and --output-len must be at most {MAX_LENGTH:,} tokens")
        if self.max_concurrency is not None and self.max_concurrency < 1:
            raise InputError(f"--max-concurrency must be at least 1, got {self.max_concurrency}")
        if self.request_rate is not None and not self.request_rate > 0:
            raise InputError(f"--request-rate must be positive or inf, got {self.request_rate}")
        if not self.burstiness > 0:
            raise InputError(f"--burstiness must be positive, got {self.burstiness}")
        if self.dataset not in DATASETS:
            raise InputError(f"--dataset {self.dataset!r}: choose from {', '.join(DATASETS)}")
        if not 0 <= self.jitter < 1:
            raise InputError(f"length jitter must be in [0, 1), got {self.jitter}")
        if not 0 <= self.warmup < self.num_prompts:
            raise InputError(f"warm-up requests must be fewer than the {self.num_prompts} prompts")

    @property
    def is_burst(self) -> bool:
        """All prompts sent at once (request rate inf)."""
        return self.request_rate is None or math.isinf(self.request_rate)

    def describe(self) -> str:
        """'2,000 in / 256 out, 64 concurrent, 1,000 prompts' and the like."""
        rate = "all at once" if self.is_burst else f"{self.request_rate:g} req/s"
        cap = f", at most {self.max_concurrency} in flight" if self.max_concurrency else ""
        return (
            f"{self.input_len:,.0f} in / {self.output_len:,.0f} out ({self.dataset}), {self.num_prompts:,} prompts, "
            f"{rate}{cap}"
        )


@dataclass(frozen=True, slots=True)
class Requests:
    """The prompts of one run: lengths and the times the client would send them (before any concurrency cap)."""

    prompt: tuple[int, ...]
    output: tuple[int, ...]
    arrival: tuple[float, ...]
    cached: bool = False  # every prompt is in the prefix cache (Load.cached_prompts)


def _fit_lognormal(zs: list[float], mean: float, lo: int, hi: int) -> list[int]:
    """exp(mu + sigma z) clipped to [lo, hi], with mu chosen (bisection) so the clipped mean is `mean`."""
    target = min(max(mean, lo), hi)
    base = [math.exp(SHAREGPT_SIGMA * z) for z in zs]
    a, b = math.log(lo) - 8, math.log(hi) + 8
    for _ in range(28):
        mu = (a + b) / 2
        scale = math.exp(mu)
        avg = sum(min(hi, max(lo, scale * x)) for x in base) / len(base)
        a, b = (mu, b) if avg < target else (a, mu)
    scale = math.exp((a + b) / 2)
    return [min(hi, max(lo, round(scale * x))) for x in base]


def _eos_hazard(mean: float, cap: int) -> float:
    """The per-token end-of-sequence probability h whose truncated geometric length min(G, cap) has mean `mean`:
    (1 - (1 - h)^cap) / h = mean (bisection; the mean falls as h grows)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        h = (lo + hi) / 2
        m = (1 - (1 - h) ** cap) / h if h > 0 else float(cap)
        lo, hi = (h, hi) if m > mean else (lo, h)
    return (lo + hi) / 2


def _eos_lengths(rng: random.Random, n: int, mean: float, cap: int) -> list[int]:
    """Outputs of a client asking for `cap` tokens without --ignore-eos, ending early at a constant per-token EOS
    rate so that their mean is `mean`: most reach `cap` exactly (no spread), the rest end at a geometric length."""
    h = _eos_hazard(max(1.0, mean), cap)
    if h <= 0:
        return [cap] * n
    log_keep = math.log1p(-h) if h < 1 else -math.inf
    return [min(cap, max(1, math.ceil(math.log1p(-rng.random()) / log_keep))) for _ in range(n)]


def _lengths(load: Load, rng: random.Random, max_len: int) -> tuple[list[int], list[int]]:
    n = load.num_prompts
    if load.dataset == "sharegpt":
        prompts = _fit_lognormal([rng.gauss(0, 1) for _ in range(n)], load.input_len, 4, SHAREGPT_MAX_PROMPT)
        outputs = _fit_lognormal([rng.gauss(0, 1) for _ in range(n)], load.output_len, 1, SHAREGPT_MAX_TOTAL // 2)
    else:
        j = load.jitter
        prompts = [max(1, round(load.input_len * (1 + rng.uniform(-j, j)))) for _ in range(n)]
        cap = load.max_output
        if cap is not None and cap > load.output_len + 0.5:
            outputs = _eos_lengths(rng, n, load.output_len, round(cap))
        else:
            outputs = [max(1, round(load.output_len * (1 + rng.uniform(-j, j)))) for _ in range(n)]
    prompts = [min(p, max_len - 1) for p in prompts]
    outputs = [max(1, min(o, max_len - p)) for p, o in zip(prompts, outputs, strict=True)]
    return prompts, outputs


@lru_cache(maxsize=256)
def make_requests(load: Load, max_model_len: int) -> Requests:
    """The run's requests, deterministic for a given seed; lengths clipped to fit `max_model_len`."""
    rng = random.Random(load.seed)
    prompts, outputs = _lengths(load, rng, max_model_len)
    return Requests(tuple(prompts), tuple(outputs), _arrivals(load, rng), load.cached_prompts)


def _arrivals(load: Load, rng: random.Random) -> tuple[float, ...]:
    """Send times (s). Before vLLM 0.10.0 the client sends request 0 at once and each next one a gamma draw later;
    from 0.10.0 (vllm/benchmarks/serve.py get_request, #21108) request i waits the sum of i + 1 draws, all rescaled
    so the last is sent at num_prompts / rate from the benchmark's start."""
    n = load.num_prompts
    if load.is_burst:
        return (0.0,) * n
    assert load.request_rate is not None
    theta = 1.0 / (load.request_rate * load.burstiness)
    if load.rescaled_arrivals:
        sums: list[float] = []
        t = 0.0
        for _ in range(n):
            t += rng.gammavariate(load.burstiness, theta)
            sums.append(t)
        factor = n / load.request_rate / t if t > 0 else 1.0
        return tuple(x * factor for x in sums)
    arrivals: list[float] = []
    t = 0.0
    for _ in range(n):
        arrivals.append(t)
        t += rng.gammavariate(load.burstiness, theta)
    return tuple(arrivals)
