"""A closed-form estimate of a run, to screen many configurations before the replay refines the finalists (pure).

Steady state of one engine: N requests in flight (the client's concurrency, capped by --max-num-seqs and by the
requests the KV pool holds at their average length). Each step decodes N tokens and, averaged over a request's
life, prefills N x input / output prompt tokens; TPOT is that average step. TTFT is the fixed request latency,
half a step of waiting, and the prompt's chunks. A request rate sets N by Little's law (N = rate x latency); a
rate above what N slots sustain, or a burst larger than N, queues: the queue's mean wait is added to TTFT.
Same step-time model and constants as the replay; within ~15% of it on the loads the tests check.
"""

from __future__ import annotations

import math

from recommender.perf.costs import EngineCosts
from recommender.perf.load import Load
from recommender.perf.metrics import PerfResult, Stats
from recommender.perf.step import Batch, StepTime, decode_steps, step_time


def _capacity(c: EngineCosts, prompt: float, output: float) -> float:
    """Requests of this length the KV pool holds at their average context (and the --max-num-seqs cap)."""
    pool = c.pool
    tokens = prompt + output / 2
    per_request = pool.full_groups * (tokens / pool.full_bs + 0.5) + pool.state_groups
    per_request += pool.window_groups * (tokens / pool.window_bs + 0.5)
    by_kv = pool.num_blocks / per_request if per_request > 0 else float(c.max_num_seqs)
    return max(1.0, min(float(c.max_num_seqs), by_kv))


def _steps(
    c: EngineCosts, n: float, prompt: float, output: float, together: float = 1.0
) -> tuple[StepTime, float, float]:
    """(the mean step, TPOT, TTFT without queueing) with n requests in flight.

    Decode steps of n tokens; every request's prompt is computed in chunks next to n - 1 decodes, and in steady
    state n / output prompts start per step, so TPOT is the decode step plus that share of the chunks' extra time.
    `together` prompts arrive at once (a closed loop and a burst start in waves: fixed lengths keep them in step;
    Poisson arrivals come one by one): the mean one waits for half of the others' chunks before its own, and the
    API server admits them together once it has done the work of all of them (frontend.py).
    """
    decodes = max(1, round(n))
    ctx = n * (prompt + output / 2)
    dec, _ = decode_steps(c, decodes, ctx, ctx)
    room = max(1.0, c.max_num_batched_tokens - n)
    chunks = math.ceil(prompt / room)

    def with_chunk(chunk: float) -> StepTime:
        return step_time(
            c,
            Batch(
                decodes=decodes - 1,
                decode_context=max(0.0, n - 1) * (prompt + output / 2),
                prefill_tokens=round(chunk),
                prefill_pairs=chunk * (chunk + 1) / 2,
                prefill_window_pairs=chunk * min(c.window or chunk, (chunk + 1) / 2),
                prefills=max(1, round(chunk / prompt)),
                sampled=decodes,
            ),
        )

    mixed = with_chunk(min(prompt, room))
    extra = chunks * max(0.0, mixed.total - dec.total)
    # In steady state prompts are computed between other requests' decodes: TPOT pays for them.
    tpot = dec.total + n / max(output, 1.0) * extra
    ahead = max(0.0, together - 1) / 2 * prompt  # prompt tokens of the same wave computed before this one's
    steps = math.ceil((ahead + prompt) / room)
    prefill = steps * (with_chunk(room).total if ahead else mixed.total)
    # the API server admits prompts that arrive together round robin: all of them after the whole wave's work
    ttft = c.request_latency + together * c.request_overhead + tpot / 2 + prefill
    return dec, tpot, ttft


def _stats(value_s: float) -> Stats:
    ms = value_s * 1000
    return Stats(ms, ms, ms, ms, 0.0)


def estimate(c: EngineCosts, load: Load, *, replicas: int = 1) -> PerfResult:
    """The closed-form estimate of `load` against engine `c` (DP ranks and `replicas` split the load evenly)."""
    dp = c.dp * replicas
    prompt, output = load.input_len, load.output_len
    prompts = max(1.0, load.num_prompts / dp)
    cap = _capacity(c, prompt, output)
    offered = prompts if load.max_concurrency is None else min(prompts, load.max_concurrency / dp)
    n = max(1.0, min(cap, offered))
    rate = None if load.is_burst or load.request_rate is None else load.request_rate / dp
    # A burst starts as one wave (fixed lengths keep it in step); a closed loop and Poisson arrivals spread out.
    together = n if rate is None and load.max_concurrency is None else 1.0
    _, tpot, ttft = _steps(c, n, prompt, output, together)
    e2el = ttft + (output - 1) * tpot
    served = n / e2el  # the most requests per second n slots complete
    queue = 0.0
    if rate is not None and rate < served:
        for _ in range(30):  # Little's law: n = rate x latency(n)
            n = max(1.0, min(n, rate * e2el))
            _, tpot, ttft = _steps(c, n, prompt, output)
            e2el = ttft + (output - 1) * tpot
        served = rate
    elif rate is not None:  # more offered than served: the queue grows over the run
        queue = prompts / 2 * (1 / served - 1 / rate)
    elif offered > n:  # a burst (or a client cap) larger than the slots: waves
        queue = (offered - n) / served / 2
    dec, _, _ = _steps(c, n, prompt, output)
    duration = max(prompts / served, e2el)
    out_tokens = prompts * output * dp
    parts = (("bandwidth", dec.memory), ("compute", dec.compute), ("overhead", dec.overhead))
    shares = tuple(
        (name, round(v / dec.total, 3) if dec.total else 0.0)
        for name, v in (*parts, ("communication", dec.communication))
    )
    bound = max(shares, key=lambda kv: kv[1])[0]
    if cap < offered:
        bound = "max-num-seqs" if cap >= c.max_num_seqs else "kv-capacity"
    elif rate is not None and not queue:
        bound = "arrival-rate"
    return PerfResult(
        completed=round(prompts) * dp,
        duration_s=duration,
        total_input_tokens=round(prompts * prompt) * dp,
        total_output_tokens=round(out_tokens),
        request_throughput=prompts * dp / duration,
        output_throughput=out_tokens / duration,
        total_token_throughput=prompts * (prompt + output) * dp / duration,
        ttft=_stats(ttft + queue),
        tpot=_stats(tpot),
        itl=_stats(tpot),
        e2el=_stats(e2el + queue),
        gpus=c.tp * c.pp * dp,
        bound=bound,
        shares=shares,
        preemptions=0,
        peak_running=round(n),
        method="closed-form",
    )
