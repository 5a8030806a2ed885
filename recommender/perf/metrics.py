"""Summaries of a replayed run under the names `vllm bench serve --save-result` writes (pure).

Definitions follow vllm/benchmarks/serve.py `calculate_metrics`: TTFT from sending to the first token, TPOT =
(latency - TTFT) / (output tokens - 1) per request with more than one token, ITL over every gap between tokens,
E2EL = latency; percentiles as numpy's (linear interpolation); throughputs over the benchmark's duration.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from recommender.perf.replay import Timeline

BOUNDS = ("bandwidth", "compute", "overhead", "communication", "kv-capacity", "max-num-seqs", "arrival-rate")
"""What limits a run: a part of the step time, the KV pool or the --max-num-seqs slots (requests queue), or the
client's request rate (the engine keeps up with it)."""


@dataclass(frozen=True, slots=True)
class Stats:
    """mean / median / p99 / std of one latency, in milliseconds (plus p90 for SLO checks)."""

    mean: float
    median: float
    p90: float
    p99: float
    std: float

    def at(self, percentile: str) -> float:
        """'p50' | 'p90' | 'p99' | 'mean'."""
        return {"p50": self.median, "p90": self.p90, "p99": self.p99, "mean": self.mean}[percentile]


@dataclass(frozen=True, slots=True)
class PerfResult:
    """What `vllm bench serve` would report for one engine (or replicas) under one load, and what bounds it."""

    completed: int
    duration_s: float
    total_input_tokens: int
    total_output_tokens: int
    request_throughput: float
    output_throughput: float
    total_token_throughput: float
    ttft: Stats
    tpot: Stats
    itl: Stats
    e2el: Stats
    gpus: int
    bound: str
    shares: tuple[tuple[str, float], ...]  # fraction of engine time by what limited it
    preemptions: int
    peak_running: int
    method: str = "replay"  # or "closed-form"

    @property
    def output_throughput_per_gpu(self) -> float:
        """Output tokens/s per GPU."""
        return self.output_throughput / self.gpus if self.gpus else 0.0

    @property
    def output_tokens_per_s_per_user(self) -> float:
        """What one user sees while decoding: 1000 / mean TPOT."""
        return 1000.0 / self.tpot.mean if self.tpot.mean > 0 else 0.0

    def bench_json(self) -> dict[str, float | int | str]:
        """The keys `vllm bench serve --save-result` writes, plus per-GPU/per-user rates and the bound."""
        out: dict[str, float | int | str] = {
            "completed": self.completed,
            "duration": round(self.duration_s, 3),
            "total_input_tokens": self.total_input_tokens,
            "total_output_tokens": self.total_output_tokens,
            "request_throughput": round(self.request_throughput, 4),
            "output_throughput": round(self.output_throughput, 2),
            "total_token_throughput": round(self.total_token_throughput, 2),
        }
        for name, st in (("ttft", self.ttft), ("tpot", self.tpot), ("itl", self.itl), ("e2el", self.e2el)):
            out[f"mean_{name}_ms"] = round(st.mean, 2)
            out[f"median_{name}_ms"] = round(st.median, 2)
            out[f"std_{name}_ms"] = round(st.std, 2)
            out[f"p90_{name}_ms"] = round(st.p90, 2)
            out[f"p99_{name}_ms"] = round(st.p99, 2)
        out["output_throughput_per_gpu"] = round(self.output_throughput_per_gpu, 2)
        out["output_tokens_per_s_per_user"] = round(self.output_tokens_per_s_per_user, 2)
        out["gpus"] = self.gpus
        out["bound"] = self.bound
        out["preemptions"] = self.preemptions
        out["method"] = self.method
        return out


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """numpy.percentile's default (linear) on an already sorted sequence."""
    n = len(sorted_values)
    if n == 0:
        return 0.0
    pos = (n - 1) * p / 100
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def stats_ms(values: Sequence[float]) -> Stats:
    """Stats of values given in seconds, reported in milliseconds."""
    if not values:
        return Stats(0.0, 0.0, 0.0, 0.0, 0.0)
    xs = sorted(v * 1000 for v in values)
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    return Stats(mean, percentile(xs, 50), percentile(xs, 90), percentile(xs, 99), math.sqrt(var))


def weighted_stats_ms(segments: Sequence[tuple[float, float, float]]) -> Stats:
    """Stats of step durations weighted by the tokens they delivered; each stretch spreads linearly from its first
    step to its last. Mean and deviation are exact for that spread; percentiles place each stretch's weight at the
    middles of its two halves (off by at most a quarter of one stretch's range)."""
    total = sum(w for _, _, w in segments)
    if not total:
        return Stats(0.0, 0.0, 0.0, 0.0, 0.0)
    mean = sum(w * (a + b) for a, b, w in segments) / (2 * total)
    second = sum(w * (a * a + a * b + b * b) for a, b, w in segments) / (3 * total)
    points = [(a, w) for a, b, w in segments if a == b]
    points += [(0.75 * a + 0.25 * b, w / 2) for a, b, w in segments if a != b]
    points += [(0.25 * a + 0.75 * b, w / 2) for a, b, w in segments if a != b]
    points.sort()
    cumulative = list(itertools.accumulate(w for _, w in points))
    last = len(points) - 1

    def at(p: float) -> float:
        return points[min(last, bisect.bisect_left(cumulative, cumulative[-1] * p / 100))][0]

    sd = math.sqrt(max(0.0, second - mean * mean))
    return Stats(mean * 1000, at(50) * 1000, at(90) * 1000, at(99) * 1000, sd * 1000)


def _keeps_up(tl: Timeline, duration: float, offered_rate: float) -> bool:
    """The engine serves requests as fast as the client sends them: the run delivers 90% of the offered rate, or
    it ends within 1.5 median request latencies after the last request went out (a short run's tail; the
    client of vLLM 0.10+ sends the last request at exactly num_prompts / rate)."""
    if len(tl.send) / duration >= 0.9 * offered_rate:
        return True
    latencies = sorted(f - s for f, s in zip(tl.finish, tl.send, strict=True))
    return max(tl.finish) - max(tl.send) <= 1.5 * latencies[len(latencies) // 2]  # a growing queue: ~2x


def _bound(tl: Timeline, duration: float, offered_rate: float | None) -> tuple[str, tuple[tuple[str, float], ...]]:
    busy = tl.busy
    parts = (
        ("bandwidth", busy.memory),
        ("compute", busy.compute),
        ("overhead", busy.overhead),
        ("communication", busy.communication),
    )
    total = busy.total or 1.0
    shares = tuple((name, round(v / total, 3)) for name, v in parts)
    if tl.preemptions or tl.kv_blocked > 0.2 * duration:
        return "kv-capacity", shares
    if tl.seqs_blocked > 0.2 * duration:
        return "max-num-seqs", shares
    if offered_rate is not None and _keeps_up(tl, duration, offered_rate):
        return "arrival-rate", shares  # the engine keeps up: the client's rate sets the throughput
    return max(parts, key=lambda kv: kv[1])[0], shares


def summarize(
    tl: Timeline, *, gpus: int, replicas: int = 1, offered_rate: float | None = None, warmup: int = 0
) -> PerfResult:
    """A PerfResult from one replica's timeline; `replicas` identical replicas multiply the throughputs.

    `offered_rate`: the client's request rate to this replica (None: a burst or a closed loop). `warmup`: the
    first requests sent are left out of the latency statistics (not of the throughputs)."""
    n = len(tl.send)
    order = sorted(range(n), key=lambda i: tl.send[i])[warmup:]
    ttft = [tl.first_token[i] - tl.send[i] for i in order]
    e2el = [tl.finish[i] - tl.send[i] for i in order]
    tpot = [(tl.finish[i] - tl.first_token[i]) / (tl.output[i] - 1) for i in order if tl.output[i] > 1]
    start = min(0.0, *tl.send)  # the client's clock starts before its first request (sent at 0 or a delay later)
    duration = max(tl.finish) - start
    out_tokens = sum(tl.output)
    in_tokens = sum(tl.prompt)
    bound, shares = _bound(tl, duration, offered_rate)
    return PerfResult(
        completed=n * replicas,
        duration_s=duration,
        total_input_tokens=in_tokens * replicas,
        total_output_tokens=out_tokens * replicas,
        request_throughput=n * replicas / duration,
        output_throughput=out_tokens * replicas / duration,
        total_token_throughput=(in_tokens + out_tokens) * replicas / duration,
        ttft=stats_ms(ttft),
        tpot=stats_ms(tpot),
        itl=weighted_stats_ms(tl.itl),
        e2el=stats_ms(e2el),
        gpus=gpus * replicas,
        bound=bound,
        shares=shares,
        preemptions=tl.preemptions * replicas,
        peak_running=tl.peak_running,
    )
