"""Time of one engine step (one forward pass over the scheduled batch) from a roofline (pure).

Each part of the forward is bounded by the slower of streaming its bytes from HBM and computing its FLOPs:
the linear layers (weights once per step, FLOPs per token), the routed experts (only the experts the step's tokens
touch are read), attention (the KV of every context token is read; FLOPs per query-key pair, capped by sliding
windows), plus the TP all-reduces over the interconnect and the fixed per-step and per-sequence overheads.
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


def step_time(c: EngineCosts, b: Batch) -> StepTime:
    """The roofline time of one step of batch `b` on engine `c` (per GPU of the slowest stage)."""
    pp = c.pp
    tokens = (b.decodes + b.prefill_tokens) / pp
    seqs = (b.decodes + b.prefills) / pp
    sampled = b.sampled / pp
    mem = comp = 0.0
    # Linear layers: every weight once per step; FLOPs per token (lm_head only for the sampled rows).
    m = c.dense_bytes + (c.lm_head_bytes if sampled else 0.0)
    f = tokens * c.dense_flops + sampled * c.lm_head_flops
    t_m, t_f = m / c.bandwidth, f / c.dense_compute
    mem, comp = (mem + t_m, comp) if t_m >= t_f else (mem, comp + t_f)
    # Routed experts: the experts the step's tokens touch (all DP ranks' tokens meet in the experts).
    if c.num_experts:
        touched = expected_experts(c.num_experts, c.top_k, tokens * c.dp) / c.num_experts
        t_m = c.expert_bytes * touched / c.expert_bandwidth
        t_f = tokens * c.expert_flops / c.expert_compute
        mem, comp = (mem + t_m, comp) if t_m >= t_f else (mem, comp + t_f)
    # Attention: KV of every context token read; FLOPs per (query, key) pair; windows cap both.
    ctx = b.decode_context / pp
    prefix = b.prefill_prefix / pp
    w = c.window
    ctx_w = min(ctx, (b.decodes / pp) * w) if w else ctx
    prefix_w = min(prefix, (b.prefills / pp) * w) if w else prefix
    m = (ctx + prefix + tokens) * c.kv_full + (ctx_w + prefix_w + tokens) * c.kv_window + seqs * c.state_bytes
    f = (ctx + b.prefill_pairs / pp) * c.attn_flops_full + (ctx_w + b.prefill_window_pairs / pp) * c.attn_flops_window
    t_m, t_f = m / c.bandwidth, f / c.attention_compute
    mem, comp = (mem + t_m, comp) if t_m >= t_f else (mem, comp + t_f)
    comm = 0.0
    if c.allreduces:
        comm += c.allreduces * (c.link_latency + tokens * c.allreduce_bytes / c.link_bandwidth)
    if c.moe_exchanges:
        comm += c.moe_exchanges * (c.link_latency + tokens * c.dp * c.allreduce_bytes / c.link_bandwidth)
    gpu = mem + comp + comm + c.layer_overhead
    cpu = c.step_overhead + seqs * c.seq_overhead
    # With async scheduling the scheduler prepares step N+1 while step N runs: the slower side sets the pace.
    stage = max(gpu, cpu) if c.async_scheduling else gpu + cpu
    over = stage - mem - comp - comm
    return StepTime(stage * pp, mem * pp, comp * pp, over * pp, comm * pp)


def decode_steps(c: EngineCosts, decodes: int, first_context: float, last_context: float) -> tuple[StepTime, StepTime]:
    """The first and last step of a decode-only stretch (contexts summed over the decodes): one pass over the
    parts that do not depend on the context (the replay's hot path; the same arithmetic as `step_time`)."""
    pp = c.pp
    tokens = decodes / pp
    mem = comp = 0.0
    t_m = (c.dense_bytes + c.lm_head_bytes) / c.bandwidth
    t_f = tokens * (c.dense_flops + c.lm_head_flops) / c.dense_compute
    mem, comp = (mem + t_m, comp) if t_m >= t_f else (mem, comp + t_f)
    if c.num_experts:
        touched = expected_experts(c.num_experts, c.top_k, tokens * c.dp) / c.num_experts
        t_m = c.expert_bytes * touched / c.expert_bandwidth
        t_f = tokens * c.expert_flops / c.expert_compute
        mem, comp = (mem + t_m, comp) if t_m >= t_f else (mem, comp + t_f)
    comm = 0.0
    if c.allreduces:
        comm += c.allreduces * (c.link_latency + tokens * c.allreduce_bytes / c.link_bandwidth)
    if c.moe_exchanges:
        comm += c.moe_exchanges * (c.link_latency + tokens * c.dp * c.allreduce_bytes / c.link_bandwidth)
    cpu = c.step_overhead + tokens * c.seq_overhead
    out = []
    for context in (first_context, last_context):
        ctx = context / pp
        ctx_w = min(ctx, tokens * c.window) if c.window else ctx
        m = (ctx + tokens) * c.kv_full + (ctx_w + tokens) * c.kv_window + tokens * c.state_bytes
        f = ctx * c.attn_flops_full + ctx_w * c.attn_flops_window
        t_m, t_f = m / c.bandwidth, f / c.attention_compute
        mem2, comp2 = (mem + t_m, comp) if t_m >= t_f else (mem, comp + t_f)
        gpu = mem2 + comp2 + comm + c.layer_overhead
        stage = max(gpu, cpu) if c.async_scheduling else gpu + cpu
        over = stage - mem2 - comp2 - comm
        out.append(StepTime(stage * pp, mem2 * pp, comp2 * pp, over * pp, comm * pp))
    return out[0], out[1]
