"""Evaluate one candidate: choose the flags a careful operator would set and judge them with `explain` (pure).

For a candidate (weights option, KV-cache dtype, TP, PP), `evaluate_candidate` picks the utilization with
warm-up headroom, max_num_seqs from the target and max_model_len from the target (or the longest that serves
it), runs `explain` on exactly those flags, and says whether the target is met and, if not, why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from recommender.errors import PlanError
from recommender.memory import mamba_seqs, unified, warmup
from recommender.memory.budget import Explanation, explain
from recommender.memory.engine import EngineFlags, VllmVersion, batch_defaults, runs_v0_engine
from recommender.memory.startup_issues import IssueKind
from recommender.planner.types import Candidate, Evaluation, Hardware, Target, Unevaluable, Verdict
from recommender.units import GiB

# Errors the planner repairs by choosing max_model_len itself; any other startup error rejects the candidate.
_LENGTH_ERRORS = frozenset({IssueKind.KV_TOO_SMALL, IssueKind.MAX_LEN_ABOVE_MODEL})
V0_DEFAULT_MAX_NUM_SEQS = 256  # the V0 engine's default max_num_seqs (engine/arg_utils.py before 0.8)


@dataclass(frozen=True, slots=True)
class _Context:
    """What every step of one candidate's evaluation shares."""

    candidate: Candidate
    target: Target
    hw: Hardware
    version: VllmVersion
    flags: EngineFlags
    probe: Explanation

    @property
    def label(self) -> str:
        return self.candidate.describe()

    @property
    def gpus_per_replica(self) -> int:
        return self.candidate.tp * self.candidate.pp

    @property
    def max_replicas(self) -> int:
        return max(1, self.hw.total_gpus // self.gpus_per_replica)

    def reject(self, reason: str, concurrency: float = 0.0, engines: int = 0) -> Evaluation:
        """A rejected candidate; `concurrency` is what `engines` replicas of it hold (0: one engine's figure)."""
        return Evaluation(
            self.candidate, self.flags, self.probe, engines, concurrency, False, f"{self.label}: {reason}"
        )


def _gpus(n: int) -> str:
    return f"{n} GPU" if n == 1 else f"{n} GPUs"


def _round_len(length: int) -> int:
    """Round a context length down to a value operators write: a multiple of 1024 (256 below 4096)."""
    step = 1024 if length >= 4096 else 256 if length >= 512 else 16
    return max(step, length // step * step) if length >= step else length


def _release_default(hw: Hardware, version: VllmVersion) -> float:
    """The release's default utilization; on an integrated GPU with no free memory given, at most what leaves its
    host the usual share (memory/unified.py)."""
    util = version.default_gpu_memory_utilization
    host = unified.max_utilization(hw.gpu) if hw.free_bytes is None else None
    return util if host is None else min(util, host)


def warmup_utilization(probe: Explanation, hw: Hardware, version: VllmVersion) -> float:
    """The highest utilization (in hundredths, at most the release's default and the free memory) at which explain
    judges the post-allocation warm-ups safe with WARMUP_UNCERTAINTY to spare (memory/warmup.py): the budget
    may take what is left once the warm-ups' need, the allocator's reserve and the margin are kept outside it,
    counting the profiling peak freed before they run. That need does not depend on the utilization, so one
    probe at any utilization gives it."""
    util = _release_default(hw, version)
    post = probe.post_allocation
    total = probe.gpu_total_bytes
    if post is not None:
        # what the warm-ups can reach: the free memory (all of the card when none is given, or when the release's
        # profiler counts other processes inside the budget), not the card's total
        reach = post.outside_budget + probe.requested_bytes
        limit = reach + post.freed_activation - post.reserve - post.need - warmup.WARMUP_UNCERTAINTY - 1
        util = min(util, math.floor(limit / total * 100) / 100)
    if hw.free_bytes is not None:
        util = min(util, math.floor(hw.free_bytes / total * 100) / 100)
    return max(0.05, util)


def _default_utilization(hw: Hardware, version: VllmVersion) -> float:
    """The release's default, below what the free memory allows (given, or an integrated GPU's host share)."""
    util = _release_default(hw, version)
    if hw.free_bytes is not None:
        util = min(util, math.floor(hw.free_bytes / hw.gpu.total_bytes * 100) / 100)
    return max(0.05, util)


def probe_flags(c: Candidate, target: Target, hw: Hardware, version: VllmVersion) -> EngineFlags:
    """The first flags tried: the target's length (or the model's), max_num_seqs from N, utilization with room."""
    model = c.weights.model
    seqs_default, tokens_default = batch_defaults(hw.gpu, version)
    need = target.concurrency or 1
    max_seqs = min(max(need, 1), seqs_default) if target.concurrency else seqs_default
    # The V0 engine derives its token budget from max_model_len and chunked prefill (at least max_model_len without
    # it): the V1 server's 2048 there is its startup error "max_num_batched_tokens ... is smaller than max_model_len".
    v0 = runs_v0_engine(version, hw.gpu, model.architecture)
    return EngineFlags(
        tensor_parallel_size=c.tp,
        pipeline_parallel_size=c.pp,
        quantization=c.weights.quantization_flag,
        enable_expert_parallel=c.expert_parallel,
        kv_cache_dtype=c.kv_cache_dtype,
        gpu_memory_utilization=_default_utilization(hw, version),
        max_model_len=min(target.context or model.max_model_len, model.max_model_len),
        max_num_seqs=max_seqs,
        max_num_batched_tokens=None if v0 else tokens_default,
    )


def _startup_rejection(ctx: _Context) -> Evaluation | None:
    """Reject what no choice of max_model_len repairs: weights that do not fit, other startup errors."""
    probe, st = ctx.probe, ctx.probe.stage
    if st.available_kv <= 0 or probe.has(IssueKind.WEIGHTS_DO_NOT_FIT):
        return ctx.reject(
            f"weights {st.weights / GiB:.1f} GiB + overheads exceed the {probe.requested_bytes / GiB:.1f} GiB "
            "budget per GPU"
        )
    hard = [i for i in probe.issues if i.fatal and i.kind not in _LENGTH_ERRORS]
    if hard:
        return ctx.reject(hard[0].message)
    limit = ctx.candidate.weights.model.max_model_len
    if ctx.target.context is not None and ctx.target.context > limit:
        return ctx.reject(f"{ctx.target.context:,} tokens exceed the model's limit of {limit:,}")
    return None


def _size_for_concurrency(ctx: _Context) -> tuple[int, int] | Evaluation:
    """N alone: the longest context at which the fewest engines hold N requests, at least `min_context`."""
    limit = ctx.candidate.weights.model.max_model_len
    need = ctx.target.concurrency or 1
    floor = min(limit, ctx.target.min_context)
    best_len, replicas = 0, 1
    for r in range(1, ctx.max_replicas + 1):
        best_len = ctx.probe.longest_len(math.ceil(need / r), limit)
        replicas = r
        if best_len >= floor:
            break
    if best_len < floor:
        held = ctx.probe.concurrency_for(floor) * ctx.max_replicas
        shorter = (
            f" ({need:,} requests fit only up to {best_len:,} tokens; --min-context lowers the floor)"
            if best_len
            else ""
        )
        return ctx.reject(
            f"{ctx.probe.stage.available_kv / GiB:.1f} GiB KV per GPU holds {held:,.0f} requests of {floor:,} tokens "
            f"on {_gpus(ctx.max_replicas * ctx.gpus_per_replica)}, below {need:,}{shorter}",
            held,
            ctx.max_replicas,
        )
    return (best_len if best_len == limit else _round_len(best_len)), replicas


def _size_for_context(ctx: _Context, length: int) -> tuple[int, int] | Evaluation:
    """S given: replicas of the engine that hold N requests of S tokens (one without N)."""
    probe, st = ctx.probe, ctx.probe.stage
    kv = st.available_kv / GiB
    per = probe.concurrency_for(length)
    if not probe.fits_one_request(length) or per < 1:
        return ctx.reject(f"{kv:.1f} GiB KV per GPU cannot hold one {length:,}-token request", per)
    need = ctx.target.concurrency or 1
    replicas = max(1, math.ceil(need / math.floor(per))) if ctx.target.concurrency else 1
    if replicas > ctx.max_replicas:
        n = ctx.max_replicas
        engines = f"{n} engines on {ctx.hw.total_gpus} GPUs hold" if n > 1 else "that is"
        return ctx.reject(
            f"weights {st.weights / GiB:.1f} GiB + overheads leave {kv:.1f} GiB KV per GPU "
            f"= {math.floor(per):,} request{'' if math.floor(per) == 1 else 's'} at {length:,} per engine; {engines} "
            f"{math.floor(per) * n:,}, below {need:,}",
            per * n,
            n,
        )
    return length, replicas


def _final_check(ctx: _Context, length: int, replicas: int) -> Evaluation:
    """Re-run `explain` on exactly the flags the plan prints."""
    seqs_default, _ = batch_defaults(ctx.hw.gpu, ctx.version)
    # With N: every replica must admit its share of the N requests at once, so --max-num-seqs is that share
    # (above the release's default when it must be: vLLM runs no more than max_num_seqs, whatever the KV holds).
    need = ctx.target.concurrency
    flags = replace(ctx.flags, max_model_len=length, data_parallel_size=1)
    while True:
        seqs = math.ceil(need / replicas) if need else ctx.flags.max_num_seqs or seqs_default
        e = _judged(ctx.candidate, ctx.target, ctx.hw, ctx.version, _with_seqs(flags, seqs), replicas)
        # Sized with the release's max_num_seqs; a larger one can take a little of the KV cache (or exceed a hybrid
        # model's Mamba state blocks): one more replica.
        more_seqs_fail = e.explanation.has(IssueKind.MAMBA_BLOCKS, IssueKind.MAMBA_BLOCKS_MARGIN)
        if e.feasible or (not e.explanation.fits and not more_seqs_fail) or not need or replicas >= ctx.max_replicas:
            return e
        replicas += 1


def _with_seqs(flags: EngineFlags, seqs: int) -> EngineFlags:
    """--max-num-seqs `seqs`, and --max-num-batched-tokens raised to it (vLLM refuses fewer tokens than seqs). A
    budget left to vLLM (the V0 engine's) stays so up to V0's default of 256 sequences, which every budget it
    derives admits; above, it is set to the larger of `seqs` and max_model_len."""
    tokens = flags.max_num_batched_tokens
    if tokens is None:
        budget = None if seqs <= V0_DEFAULT_MAX_NUM_SEQS else max(seqs, flags.max_model_len or 0)
        return replace(flags, max_num_seqs=seqs, max_num_batched_tokens=budget)
    return replace(flags, max_num_seqs=seqs, max_num_batched_tokens=max(tokens, seqs))


def _judged(
    c: Candidate, target: Target, hw: Hardware, version: VllmVersion, flags: EngineFlags, replicas: int
) -> Evaluation:
    """`explain` on `flags`; the concurrency promised is what vLLM runs at once: at most max_num_seqs per replica,
    whatever the KV cache would hold."""
    final = explain(c.weights.model, hw.gpu, flags, version, free_bytes=hw.free_bytes)
    per_replica = float(min(final.max_concurrency, final.max_num_seqs))
    total = per_replica * replicas
    ok = final.fits and not final.at_risk and total >= (target.concurrency or 1)
    figure = f"{final.max_num_seqs:,}" if per_replica == final.max_num_seqs else f"{per_replica:,.1f}"
    reason = (
        f"{c.describe()}: {figure} request{'' if figure == '1' else 's'} of {final.max_model_len:,} tokens per replica"
        f" x {replicas}"
        f"{_seqs_note(final)}"
        if ok
        else f"{c.describe()}: re-check with the chosen flags failed ({'; '.join(_failures(final)) or 'concurrency'})"
    )
    return Evaluation(c, flags, final, replicas, total, ok, reason)


def _failures(final: Explanation) -> tuple[str, ...]:
    """Why the re-check failed: vLLM's errors, else the at-risk warnings."""
    return final.errors or tuple(i.message for i in final.issues if i.kind.at_risk)


def _seqs_note(final: Explanation) -> str:
    """When --max-num-seqs, not the KV cache, is the limit: say so and what the KV cache would hold."""
    if final.no_kv_cache:
        return f" (no KV cache: one step of {final.max_num_batched_tokens:,} tokens)"
    if final.max_num_seqs >= final.max_concurrency:
        return ""
    return f" (--max-num-seqs {final.max_num_seqs:,}; the KV cache would hold {final.max_concurrency:,.1f})"


def filled(e: Evaluation, target: Target, hw: Hardware, version: VllmVersion) -> Evaluation:
    """The most requests the engine runs: --max-num-seqs raised to what its KV cache holds (for the
    max-concurrency objective; a larger max_num_seqs can shrink the KV cache a little, so that is re-checked)."""
    seqs = math.floor(e.explanation.max_concurrency)
    for _ in range(3):
        if seqs <= e.explanation.max_num_seqs:
            return e
        more = _judged(e.candidate, target, hw, version, _with_seqs(e.flags, seqs), e.replicas)
        if more.feasible and more.explanation.max_concurrency >= seqs:
            return more
        seqs = math.floor(more.explanation.max_concurrency) if more.explanation.fits else seqs - 1
    return e


def _mamba_seqs(
    c: Candidate, hw: Hardware, version: VllmVersion, flags: EngineFlags, probe: Explanation
) -> tuple[EngineFlags, Explanation]:
    """A hybrid model whose predicted pool holds fewer Mamba state blocks than max_num_seqs (or too few to spare:
    memory/mamba_seqs.py): --max-num-seqs lowered to what the pool holds with the margin. Fewer sequences take a
    smaller sampler warm-up, so the pool only grows at the lower figure."""
    if not probe.has(IssueKind.MAMBA_BLOCKS, IssueKind.MAMBA_BLOCKS_MARGIN):
        return flags, probe
    seqs = min(flags.max_num_seqs or probe.max_num_seqs, mamba_seqs.safe_max_num_seqs(probe.num_gpu_blocks))
    flags = replace(flags, max_num_seqs=seqs)
    return flags, explain(c.weights.model, hw.gpu, flags, version, free_bytes=hw.free_bytes)


def _no_kv_flags(flags: EngineFlags, length: int, seqs: int, tokens: int) -> EngineFlags:
    """A no-KV engine's flags: the length, the requests a step runs and the tokens they take (at least the length:
    without chunked prefill vLLM refuses a smaller budget)."""
    return replace(flags, max_model_len=length, max_num_seqs=seqs, max_num_batched_tokens=max(tokens, length, seqs))


def _no_kv_judged(ctx: _Context, length: int, replicas: int) -> Evaluation:
    """One no-KV configuration: with N, each replica's share of N requests of `length` tokens prefilled in one step
    (--max-num-seqs that share, --max-num-batched-tokens share x length); without N, the release's defaults."""
    seqs_default, tokens_default = batch_defaults(ctx.hw.gpu, ctx.version)
    need = ctx.target.concurrency
    seqs = math.ceil(need / replicas) if need else seqs_default
    tokens = seqs * length if need else max(tokens_default, length)
    flags = _no_kv_flags(replace(ctx.flags, data_parallel_size=1), length, seqs, tokens)
    return _judged(ctx.candidate, ctx.target, ctx.hw, ctx.version, flags, replicas)


def evaluate_no_kv(c: Candidate, target: Target, hw: Hardware, version: VllmVersion) -> Verdict:
    """A model vLLM keeps no KV cache for (memory/no_kv.py): concurrency is what one step prefills, so N requests of
    S tokens need --max-num-seqs N and --max-num-batched-tokens N x S, bounded by the warm-up's forward pass of that
    many tokens against the free memory. S given: the fewest replicas that hold N; N alone: the longest S (at least
    `min_context`, at most the model's) that one replica serves, else the fewest replicas at that floor."""
    flags = replace(probe_flags(c, target, hw, version), max_num_batched_tokens=None)  # the budget vLLM derives
    try:
        probe = explain(c.weights.model, hw.gpu, flags, version, free_bytes=hw.free_bytes)
    except PlanError as exc:
        return Unevaluable(c, flags, f"{c.describe()}: {exc}")
    ctx = _Context(c, target, hw, version, flags, probe)
    hard = [i for i in probe.issues if i.fatal and i.kind not in (*_LENGTH_ERRORS, IssueKind.NO_KV_WARMUP_OOM)]
    if hard:
        return ctx.reject(hard[0].message)
    limit = c.weights.model.max_model_len
    if target.context is not None and target.context > limit:
        return ctx.reject(f"{target.context:,} tokens exceed the model's limit of {limit:,}")
    if not target.concurrency:
        return _no_kv_most(ctx, min(target.context or limit, limit))
    if target.context is not None:
        length = min(target.context, limit)
        first = e = _no_kv_judged(ctx, length, 1)
        for r in range(2, ctx.max_replicas + 1):
            if e.feasible:
                break
            e = _no_kv_judged(ctx, length, r)
        return e if e.feasible else first
    return _no_kv_longest(ctx, limit)


def _no_kv_most(ctx: _Context, length: int) -> Evaluation:
    """S alone: the most requests of S tokens one step runs, within the release's --max-num-seqs: the largest token
    budget k x S (k <= that default) whose warm-up fits, with vLLM's own default budget as the floor."""
    seqs, _ = batch_defaults(ctx.hw.gpu, ctx.version)
    base = replace(ctx.flags, data_parallel_size=1)

    def judged(k: int) -> Evaluation:
        flags = _no_kv_flags(base, length, seqs, k * length)
        return _judged(ctx.candidate, ctx.target, ctx.hw, ctx.version, flags, 1)

    best = _no_kv_judged(ctx, length, 1)  # vLLM's defaults: max(S, the usage budget)
    lo, hi = int(best.explanation.max_concurrency), seqs + 1
    if not best.feasible or lo >= seqs:
        return best
    while hi - lo > 1:  # the warm-up grows with the budget: the largest k that fits
        mid = (lo + hi) // 2
        e = judged(mid)
        lo, hi, best = (mid, hi, e) if e.feasible else (lo, mid, best)
    return best


def _no_kv_longest(ctx: _Context, limit: int) -> Evaluation:
    """N alone: the longest length one replica serves N at (binary search on the warm-up's fit), else replicas."""
    floor = min(limit, ctx.target.min_context)
    for r in range(1, ctx.max_replicas + 1):
        top = _no_kv_judged(ctx, limit, r)
        if top.feasible:
            return top
        low = _no_kv_judged(ctx, floor, r)
        if not low.feasible:
            continue
        lo, hi, best = floor, limit, low
        while hi - lo > 1:
            mid = (lo + hi) // 2
            e = _no_kv_judged(ctx, mid, r)
            lo, hi, best = (mid, hi, e) if e.feasible else (lo, mid, best)
        rounded = _round_len(best.explanation.max_model_len)
        return best if rounded == best.explanation.max_model_len else _no_kv_judged(ctx, max(floor, rounded), r)
    return _no_kv_judged(ctx, floor, ctx.max_replicas)


def evaluate_candidate(c: Candidate, target: Target, hw: Hardware, version: VllmVersion) -> Verdict:
    """Choose flags for one candidate and judge it against the target."""
    if c.weights.model.encoder_only:
        return evaluate_no_kv(c, target, hw, version)
    flags = probe_flags(c, target, hw, version)
    try:
        probe = explain(c.weights.model, hw.gpu, flags, version, free_bytes=hw.free_bytes)
        util = warmup_utilization(probe, hw, version)
        if util != flags.gpu_memory_utilization:
            flags = replace(flags, gpu_memory_utilization=util)
            probe = explain(c.weights.model, hw.gpu, flags, version, free_bytes=hw.free_bytes)
        flags, probe = _mamba_seqs(c, hw, version, flags, probe)
    except PlanError as exc:
        return Unevaluable(c, flags, f"{c.describe()}: {exc}")
    ctx = _Context(c, target, hw, version, flags, probe)
    rejection = _startup_rejection(ctx)
    if rejection is not None:
        return rejection
    limit = c.weights.model.max_model_len
    sized = _size_for_concurrency(ctx) if target.context is None else _size_for_context(ctx, target.context or limit)
    if isinstance(sized, Evaluation):
        return sized
    return _final_check(ctx, *sized)
