"""Time of one engine step (one forward pass over the scheduled batch) from a roofline (pure).

Each part of the forward is bounded by the slower of streaming its bytes from HBM and computing its FLOPs:
the linear layers (weights once per step, FLOPs per token), the routed experts (only the experts the step's tokens
touch are read), attention (the KV of every context token is read; FLOPs per query-key pair, capped by sliding
windows), plus the TP all-reduces over the interconnect and the fixed per-step and per-sequence overheads.
With expert parallelism each GPU holds whole experts: the busiest GPU (more touched experts, more routed tokens
than the mean) sets the pace; with data parallelism the MoE layers also exchange the DP ranks' tokens.
Pipeline parallelism runs `pp` micro-batches, each through every stage: a token waits for all stages.
The CPU side (scheduling, input preparation, output processing) adds to the step, or overlaps it with
`--async-scheduling` (the default from vLLM 0.12, vllm-project/vllm#27614; not with pipeline parallelism).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from recommender.perf.costs import EngineCosts


@dataclass(frozen=True, slots=True)
class Batch:
    """What one step schedules. Sums are over the step's sequences; pairs count (query, key) products."""

    decodes: int = 0  # sequences generating one token
    decode_context: float = 0.0  # their summed context (tokens whose KV is read)
    prefill_tokens: int = 0  # prompt tokens computed this step (chunks)
    prefill_prefix: float = 0.0  # tokens already cached before those chunks (their KV is read)
    prefill_pairs: float = 0.0  # (query, key) pairs of the chunks over full-attention layers
    prefill_window_pairs: float = 0.0  # the same, capped by the window
    prefills: int = 0  # sequences with a chunk this step
    sampled: int = 0  # sequences sampling a token at the end of the step


@dataclass(frozen=True, slots=True)
class StepTime:
    """One step's duration and how it splits into what bounds it (seconds)."""

    total: float
    memory: float  # parts limited by HBM bandwidth
    compute: float  # parts limited by tensor-core throughput
    overhead: float  # fixed and per-sequence costs
    communication: float  # all-reduces and expert exchanges


def expected_experts(num_experts: int, top_k: int, tokens: float) -> float:
    """Expected distinct experts `tokens` routed tokens touch (uniform routing): E (1 - (1 - k/E)^T)."""
    if num_experts <= 0 or tokens <= 0:
        return 0.0
    return num_experts * (1.0 - math.pow(1.0 - top_k / num_experts, tokens))


def _roofline(mem: float, comp: float, t_mem: float, t_comp: float) -> tuple[float, float]:
    """Add one part to (memory, compute) time: it counts where it is bound."""
    return (mem + t_mem, comp) if t_mem >= t_comp else (mem, comp + t_comp)


def _busiest(mean: float, ranks: int, sd: float) -> float:
    """Expected maximum over `ranks` of a count with this mean and deviation (Gaussian approximation)."""
    if ranks <= 1 or sd <= 0:
        return mean
    return mean + math.sqrt(2 * math.log(ranks)) * sd


def _fixed_parts(c: EngineCosts, tokens: float, sampled: float) -> tuple[float, float, float]:
    """(memory, compute, communication) seconds of the parts that do not depend on the context: linear layers,
    routed experts, all-reduces and expert exchanges."""
    mem, comp = _roofline(
        0.0,
        0.0,
        (c.dense_bytes + (c.lm_head_bytes if sampled else 0.0)) / c.bandwidth,
        (tokens * c.dense_flops + sampled * c.lm_head_flops) / c.dense_compute,
    )
    if c.num_experts:
        routed = tokens * c.dp  # every DP rank's tokens meet in the experts
        touched = expected_experts(c.num_experts, c.top_k, routed) / c.num_experts
        read, work = touched, 1.0
        ranks = c.expert_ranks
        if ranks > 1:  # whole experts per GPU: the busiest GPU reads and computes more than the mean
            local = c.num_experts / ranks
            read = min(1.0, _busiest(local * touched, ranks, math.sqrt(local * touched * (1 - touched))) / local)
            pairs = routed * c.top_k / ranks
            work = _busiest(pairs, ranks, math.sqrt(pairs)) / pairs if pairs else 1.0
        mem, comp = _roofline(
            mem, comp, c.expert_bytes * read / c.expert_bandwidth, tokens * work * c.expert_flops / c.expert_compute
        )
    comm = 0.0
    if c.allreduces:
        comm += c.allreduces * (c.link_latency + tokens * c.allreduce_bytes / c.link_bandwidth)
    if c.moe_exchanges:
        comm += c.moe_exchanges * (c.link_latency + tokens * c.exchange_bytes / c.link_bandwidth)
    comm += c.norm_collectives * c.link_latency  # a few bytes a token: the collective's latency only
    return mem, comp, comm


Parts = tuple[float, float, float, float, float]  # a StepTime's fields as a plain tuple (the replay's hot path)


def _finish_parts(c: EngineCosts, mem: float, comp: float, comm: float, seqs: float) -> Parts:
    """Add the overheads; with async scheduling the scheduler prepares step N+1 while step N runs. Eager kernel
    launches (--enforce-eager) stall the GPU between short kernels (a decode step's); compute-bound kernels (a
    prefill chunk's GEMMs) run longer than the launches queued behind them, which then cost nothing.

    The per-sequence cost adds to the step as fitted on vLLM 0.10+; on V1 before 0.10 (`output_overlapped`) it runs
    beside the engine core, as V1's design puts it: the API server process detokenizes and streams step N's
    outputs (v1/engine/async_llm.py output_handler) while the core process runs step N+1, so the client sees tokens
    at the slower of the two rates (params.py seq_overhead_us says which records show it)."""
    gpu = mem + comp + comm + c.layer_overhead + max(0.0, c.eager_launch - comp)
    if c.output_overlapped:
        core = max(gpu, c.step_overhead) if c.async_scheduling else gpu + c.step_overhead
        stage = max(core, seqs * c.seq_overhead)
    else:
        cpu = c.step_overhead + seqs * c.seq_overhead
        stage = max(gpu, cpu) if c.async_scheduling else gpu + cpu
    pp = c.pp
    return (stage * pp, mem * pp, comp * pp, (stage - mem - comp - comm) * pp, comm * pp)


def step_time(c: EngineCosts, b: Batch) -> StepTime:
    """The roofline time of one step of batch `b` on engine `c` (per GPU of the slowest stage)."""
    return StepTime(*step_parts(c, b))


def step_parts(c: EngineCosts, b: Batch) -> Parts:
    """`step_time` as plain `Parts` (total, memory, compute, overhead, communication)."""
    return batch_parts(
        c,
        b.decodes,
        b.decode_context,
        b.prefill_tokens,
        b.prefill_prefix,
        b.prefill_pairs,
        b.prefill_window_pairs,
        b.prefills,
        b.sampled,
    )


def batch_parts(
    c: EngineCosts,
    decodes: int,
    decode_context: float,
    prefill_tokens: float,
    prefill_prefix: float,
    prefill_pairs: float,
    prefill_window_pairs: float,
    prefills: int,
    sampled: int,
) -> Parts:
    """`step_parts` of a batch given field by field (the replay's prefill steps: no Batch built per step)."""
    pp = c.pp
    tokens = (decodes + prefill_tokens) / pp
    seqs = (decodes + prefills) / pp
    mem, comp, comm = _fixed_parts(c, tokens, sampled / pp)
    # Attention: KV of every context token read; FLOPs per (query, key) pair; windows cap both.
    ctx = decode_context / pp
    prefix = prefill_prefix / pp
    w = c.window
    ctx_w = min(ctx, (decodes / pp) * w) if w else ctx
    prefix_w = min(prefix, (prefills / pp) * w) if w else prefix
    m = (ctx + prefix + tokens) * c.kv_full + (ctx_w + prefix_w + tokens) * c.kv_window + seqs * c.state_bytes
    f = ctx * c.attn_flops_full + prefill_pairs / pp * c.attn_flops_prefill
    f += (ctx_w + prefill_window_pairs / pp) * c.attn_flops_window
    mem, comp = _roofline(mem, comp, m / c.bandwidth, f / c.attention_compute)
    return _finish_parts(c, mem, comp, comm, seqs)


def decode_fixed_parts(c: EngineCosts, decodes: int) -> tuple[float, float, float]:
    """The context-independent (memory, compute, communication) seconds of a decode-only step."""
    tokens = decodes / c.pp
    return _fixed_parts(c, tokens, tokens)


def decode_parts(
    c: EngineCosts, decodes: int, first_context: float, last_context: float, fixed: tuple[float, float, float]
) -> tuple[Parts, Parts]:
    """The first and last step of a decode-only stretch (contexts summed over the decodes) as `Parts`, from the
    context-free parts `fixed` = `decode_fixed_parts(c, decodes)` (the same arithmetic as `step_time`)."""
    pp = c.pp
    tokens = decodes / pp
    mem0, comp0, comm = fixed
    window = c.window
    bw, ac = c.bandwidth, c.attention_compute
    kv_full, kv_window, fl_full, fl_window = c.kv_full, c.kv_window, c.attn_flops_full, c.attn_flops_window
    fixed_bytes = tokens * (kv_full + kv_window + c.state_bytes)
    out = []
    for context in (first_context, last_context):
        ctx = context / pp
        ctx_w = min(ctx, tokens * window) if window else ctx
        t_mem = (fixed_bytes + ctx * kv_full + ctx_w * kv_window) / bw
        t_comp = (ctx * fl_full + ctx_w * fl_window) / ac
        if t_mem >= t_comp:
            out.append(_finish_parts(c, mem0 + t_mem, comp0, comm, tokens))
        else:
            out.append(_finish_parts(c, mem0, comp0 + t_comp, comm, tokens))
    return out[0], out[1]


def decode_steps(
    c: EngineCosts,
    decodes: int,
    first_context: float,
    last_context: float,
    fixed: tuple[float, float, float] | None = None,
) -> tuple[StepTime, StepTime]:
    """The first and last step of a decode-only stretch (contexts summed over the decodes): one pass over the
    parts that do not depend on the context. `fixed`: `decode_fixed_parts(c, decodes)` when the caller keeps them."""
    parts = fixed if fixed is not None else decode_fixed_parts(c, decodes)
    first, last = decode_parts(c, decodes, first_context, last_context, parts)
    return StepTime(*first), StepTime(*last)


def interpolate_parts(a: Parts, b: Parts, q: float) -> Parts:
    """The step a fraction q of the way from a to b (step times are linear in the context within a stretch)."""
    return (
        a[0] + (b[0] - a[0]) * q,
        a[1] + (b[1] - a[1]) * q,
        a[2] + (b[2] - a[2]) * q,
        a[3] + (b[3] - a[3]) * q,
        a[4] + (b[4] - a[4]) * q,
    )


def steps_to_reach(a: float, b: float, dt: float) -> int:
    """Smallest j >= 1 with j*a + b*j*(j-1)/2 >= dt (step times a, a+b, a+2b, ...)."""
    if dt <= a:
        return 1
    if b <= 1e-15:
        return max(1, math.ceil(dt / a))
    # b/2 j^2 + (a - b/2) j - dt = 0
    p = a - b / 2
    j = (-p + math.sqrt(p * p + 2 * b * dt)) / b
    return max(1, math.ceil(j - 1e-9))
