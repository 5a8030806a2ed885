"""A replay of vLLM's scheduler over one run of `vllm bench serve` (pure, deterministic).

Follows vllm/v1/core/sched/scheduler.py (0.33) `schedule()`: every step first serves the RUNNING requests in
order (a decode takes one token of the `--max-num-batched-tokens` budget, an unfinished prompt the rest as a
chunk), then admits WAITING requests first-come-first-served while budget, `--max-num-seqs` and free KV blocks
allow (the whole prompt must fit: `scheduler_reserve_full_isl`). When a decode needs a block and none is free,
the last running request is preempted (its blocks freed, recomputed later from the front of the queue). A run
whose prompts are all in the prefix cache (`Requests.cached`: an earlier run sent them to the same server) admits
each with its cached whole blocks computed, as KVCacheManager.get_computed_blocks does.

The V0 engine (vLLM before 0.8, or VLLM_USE_V1=0) without chunked prefill follows vllm/core/scheduler.py (0.6)
`_schedule_default` instead (`EngineCosts.v0_prefill_first`): while a waiting prompt can be admitted whole (token
budget, --max-num-seqs counting the running requests, free blocks above a 1% watermark), the step prefills the
waiting prompts alone and the running decodes wait; otherwise every running request decodes. The decodes' progress
counts the steps that ran them (`d`), not all steps (`s`). V0 with chunked prefill schedules running requests first,
as V1 does, and is replayed as V1.

Decode-only stretches between events (a request finishing or arriving, the pool running out) are summed in closed
form: their step time grows linearly with the context, so one iteration covers many steps. So are the steps that
give one long prompt the whole token budget beside the same decodes (a small --max-num-batched-tokens), each such
stretch ending before its step time grows by 20%. A run of 1,000 requests costs a few thousand iterations.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass

from recommender.perf.costs import EngineCosts
from recommender.perf.frontend import Frontend
from recommender.perf.load import Requests
from recommender.perf.step import (
    Parts,
    StepTime,
    batch_parts,
    decode_fixed_parts,
    decode_parts,
    interpolate_parts,
    steps_to_reach,
)
from recommender.units import cdiv

MAX_ITERATIONS = 5_000_000
V0_WATERMARK = 0.01  # V0's BlockSpaceManager keeps this share of the blocks free when admitting a prompt
STRETCH_SPREAD = 1.2  # a chunk stretch ends before its step time grows past this factor of its first step's


@dataclass(frozen=True, slots=True)
class Timeline:
    """What the client of a replayed run would have measured, plus what bounded the engine."""

    send: tuple[float, ...]  # when each request was sent (after any client-side concurrency cap)
    first_token: tuple[float, ...]
    finish: tuple[float, ...]
    prompt: tuple[int, ...]
    output: tuple[int, ...]
    itl: tuple[tuple[float, float, float], ...]  # (first step, last step, decode tokens) per stretch
    busy: StepTime  # summed step times by bound
    steps: int
    preemptions: int
    peak_running: int
    kv_blocked: float  # seconds with a request waiting for KV blocks
    seqs_blocked: float  # seconds with a request waiting for a --max-num-seqs slot


class _Engine:
    """Mutable replay state; one instance per run."""

    def __init__(self, c: EngineCosts, reqs: Requests, cap: int | None) -> None:
        self.c = c
        self.r = reqs
        n = len(reqs.prompt)
        self.n = n
        self.cap = cap if cap is not None else n
        pool = c.pool
        self.total_blocks = float(pool.num_blocks)
        longest = max(p + o for p, o in zip(reqs.prompt, reqs.output, strict=True))
        # A sliding-window group keeps only the blocks the window spans (SlidingWindowManager frees the ones that
        # fall out of it): cdiv(window - 1, block) + 1 per request, at most the pool's per-request cap.
        wbs = pool.window_bs
        steady = min(pool.window_blocks, cdiv(max(c.window - 1, 1), wbs) + 1) if c.window else 0
        steady = steady or pool.window_blocks
        self.win_grows = pool.window_groups and longest <= steady * wbs
        self.grow_groups = pool.full_groups + (pool.window_groups if self.win_grows else 0)
        # blocks per token of the groups that grow: each group counts in its own block size (vLLM scales a group's
        # block size up when it unifies page sizes, e.g. Gemma 4's 512-wide global layers hold 32 tokens a block)
        self.rate = pool.full_groups / pool.full_bs + (pool.window_groups / wbs if self.win_grows else 0.0)
        self.fixed_blocks = pool.state_groups + (0 if self.win_grows else pool.window_groups * steady)
        self.used = 0.0
        self.t = 0.0
        self.s = 0  # engine steps
        self.d = 0  # steps that ran the decodes (every step but V0's prefill-only ones): the decode clock
        # V0: [seconds waited, decodes] of the decodes that prefill-only steps kept waiting since their last token
        self.waits: list[list[float]] = []
        self.send = [math.nan] * n
        self.first = [math.nan] * n
        self.finish = [math.nan] * n
        self.generated = [0] * n
        self.need = [0] * n  # tokens to prefill at (re)admission
        self.computed = [0] * n
        self.s0 = [0] * n
        self.g0 = [0] * n
        self.version = [0] * n
        self.decoding: set[int] = set()
        self.a_sum = 0.0  # sum over decodes of (prompt + g0 - s0): context = a_sum + n_dec * s
        self.heap: list[tuple[int, int, int]] = []
        self.running: dict[int, None] = {}
        self.partial: dict[int, None] = {}
        self.waiting: deque[int] = deque()
        self.front = Frontend(c.request_overhead, c.request_latency)
        self.next_send = 0
        self.inflight = 0
        self.itl: list[tuple[float, float, float]] = []
        self.busy = [0.0, 0.0, 0.0, 0.0, 0.0]
        self.preemptions = 0
        self.peak = 0
        self.kv_blocked = 0.0
        self.seqs_blocked = 0.0
        self.fixed: dict[int, tuple[float, float, float]] = {}  # decode steps' context-free parts, by batch size

    # --- KV blocks ---------------------------------------------------------------------------------------
    def blocks(self, tokens: float) -> float:
        """Blocks one request of `tokens` holds (continuous: half a block of rounding per group)."""
        if tokens <= 0:
            return 0.0
        return tokens * self.rate + 0.5 * self.grow_groups + self.fixed_blocks

    def more_blocks(self, before: float, take: float) -> float:
        """Blocks a request holding `before` tokens needs for `take` more (`blocks` is linear past zero)."""
        return take * self.rate if before > 0 else self.blocks(take)

    # --- client ------------------------------------------------------------------------------------------
    def dispatch(self, now: float) -> None:
        """Send requests while the client's concurrency cap allows; the API server admits them (frontend.py)."""
        arrival = self.r.arrival
        while self.next_send < self.n and self.inflight < self.cap:
            i = self.next_send
            sent = max(arrival[i], now)
            self.send[i] = sent
            self.front.arrive(sent, i)
            self.need[i] = self.r.prompt[i]
            self.next_send += 1
            self.inflight += 1

    def admit_entered(self) -> None:
        self.waiting.extend(self.front.entered(self.t))

    # --- decode set --------------------------------------------------------------------------------------
    def start_decoding(self, i: int) -> None:
        """Request i sampled a token at the end of step self.s."""
        self.generated[i] += 1
        if math.isnan(self.first[i]):
            self.first[i] = self.t
        if self.generated[i] >= self.r.output[i]:
            self.complete(i)
            return
        self.s0[i], self.g0[i] = self.d, self.generated[i]
        self.decoding.add(i)
        self.a_sum += self.r.prompt[i] + self.g0[i] - self.d
        self.version[i] += 1
        heapq.heappush(self.heap, (self.d + self.r.output[i] - self.g0[i], i, self.version[i]))

    def stop_decoding(self, i: int) -> int:
        """Remove i from the decode set; returns the tokens it holds."""
        self.decoding.discard(i)
        gen = self.g0[i] + self.d - self.s0[i]
        self.generated[i] = gen
        self.a_sum -= self.r.prompt[i] + self.g0[i] - self.s0[i]
        self.version[i] += 1
        return self.r.prompt[i] + gen

    def complete(self, i: int) -> None:
        tokens = self.stop_decoding(i) if i in self.decoding else self.r.prompt[i] + self.generated[i]
        self.generated[i] = self.r.output[i]
        self.finish[i] = self.t
        self.used -= self.blocks(tokens)
        del self.running[i]
        self.inflight -= 1
        self.dispatch(self.t)

    def preempt_last(self) -> bool:
        """Preempt the most recently admitted running request (vLLM's FCFS victim); False if none is left."""
        if not self.running:
            return False
        i = next(reversed(self.running))
        del self.running[i]
        if i in self.decoding:
            tokens = self.stop_decoding(i)
        else:
            tokens = self.computed[i]
            self.partial.pop(i, None)
        self.used -= self.blocks(tokens)
        self.need[i] = self.r.prompt[i] + self.generated[i]  # recomputed from scratch when re-admitted
        self.computed[i] = 0
        self.waiting.appendleft(i)
        self.preemptions += 1
        return True

    def finish_due(self) -> None:
        heap = self.heap
        while heap and heap[0][0] <= self.d:
            _, i, ver = heapq.heappop(heap)
            if ver == self.version[i] and i in self.decoding:
                self.complete(i)

    # --- one scheduling decision -------------------------------------------------------------------------
    def make_room(self, n_dec: int) -> int:
        """Preempt until this step's decodes have the blocks they grow into; returns the decodes left."""
        while n_dec and self.total_blocks - self.used < n_dec * self.rate:
            if not self.preempt_last():
                break
            n_dec = len(self.decoding)
        return n_dec

    def schedule_prefills(self, budget: int, n_dec: int, admit: bool) -> list[tuple[int, int]]:
        """Chunks of running prompts, then (`admit`) admissions from the queue: [(request, tokens)]."""
        chunks: list[tuple[int, int]] = []
        free = self.total_blocks - self.used - n_dec * self.rate
        for i in self.partial:
            if budget <= 0:
                break
            before = self.computed[i]
            take = min(self.need[i] - before, budget)
            chunks.append((i, take))
            budget -= take
            free -= self.more_blocks(before, take)
        max_seqs = self.c.max_num_seqs
        while admit and budget > 0 and self.waiting and len(self.running) < max_seqs:
            i = self.waiting[0]
            if self.blocks(self.need[i]) > free:  # the whole prompt must fit (scheduler_reserve_full_isl)
                break
            self.waiting.popleft()
            self.running[i] = None
            self.partial[i] = None
            hit = self.cache_hit(i)
            self.computed[i] = hit
            self.used += self.blocks(hit)
            take = min(self.need[i] - hit, budget)
            chunks.append((i, take))
            budget -= take
            free -= self.blocks(hit + take)
        return chunks

    def cache_hit(self, i: int) -> int:
        """Prompt tokens a newly admitted request finds in the prefix cache (`Requests.cached`): whole blocks, at
        most the prompt less one token (KVCacheManager.get_computed_blocks sets max_cache_hit_length to
        request.num_tokens - 1: the last token is recomputed for its logits; v1/core/kv_cache_manager.py). A
        preempted request re-admitted later computes everything again."""
        if not self.r.cached or self.generated[i]:
            return 0
        bs = self.c.pool.full_bs
        return (self.need[i] - 1) // bs * bs

    def prefill_step(self, n_dec: int, chunks: list[tuple[int, int]]) -> None:
        """One step with prompt chunks (and every decode); its end samples the prompts it completes."""
        c = self.c
        tokens = prefix = pairs = wpairs = 0.0
        done: list[int] = []
        w = c.window
        for i, take in chunks:
            before = self.computed[i]
            tokens += take
            prefix += before
            pairs += take * before + take * (take + 1) / 2
            if w:
                wpairs += take * min(w, before + (take + 1) / 2)
            self.used += self.more_blocks(before, take)
            self.computed[i] = before + take
            if before + take >= self.need[i]:
                done.append(i)
        ctx = self.a_sum + n_dec * self.d
        st = batch_parts(c, n_dec, ctx, tokens, prefix, pairs, wpairs, len(chunks), n_dec + len(done))
        self.used += n_dec * self.rate
        self.advance(st, st, 1, n_dec)
        for i in done:
            del self.partial[i]
            self.start_decoding(i)
        self.finish_due()

    def chunk_stretch(self, n_dec: int, chunks: list[tuple[int, int]]) -> bool:
        """Steps that each give one running prompt the whole token budget beside the same decodes (a long prompt
        chunked by a small --max-num-batched-tokens), summed in closed form up to the next event like a decode
        stretch; False (nothing done) when this step is not the first of at least two such steps."""
        if len(chunks) != 1:
            return False
        i, take = chunks[0]
        before = self.computed[i]
        if before <= 0 or take < self.c.max_num_batched_tokens - n_dec:
            return False
        k = (self.need[i] - before - 1) // take  # steps after which the prompt is still unfinished
        self.drop_stale()
        if self.heap:
            k = min(k, self.heap[0][0] - self.d)
        grow = self.more_blocks(before, take) + n_dec * self.rate
        if grow > 0:
            k = min(k, int((self.total_blocks - self.used) / grow))
        if k < 2:
            return False
        first = self.chunk_parts(n_dec, before, take, 0)
        last = self.chunk_parts(n_dec, before, take, k - 1)
        if last[0] > STRETCH_SPREAD * first[0]:  # keep each stretch's step times within 20% (ITL percentiles)
            k = max(2, 1 + int((k - 1) * (STRETCH_SPREAD - 1) * first[0] / (last[0] - first[0])))
            last = self.chunk_parts(n_dec, before, take, k - 1)
        self.computed[i] = before + k * take
        self.used += k * grow
        self.advance(first, last, k, n_dec)
        self.finish_due()
        return True

    def chunk_parts(self, n_dec: int, before: int, take: int, j: int) -> Parts:
        """The j-th step of a chunk stretch: `take` more prompt tokens after `before + j * take`, beside the decodes."""
        prefix = before + j * take
        w = self.c.window
        wpairs = take * min(w, prefix + (take + 1) / 2) if w else 0.0
        pairs = take * prefix + take * (take + 1) / 2
        ctx = self.a_sum + n_dec * (self.d + j)
        return batch_parts(self.c, n_dec, ctx, take, prefix, pairs, wpairs, 1, n_dec)

    def advance(self, first: Parts, last: Parts, k: int, n_dec: int) -> None:
        """Account k steps whose times go linearly from `first` to `last`."""
        half = k / 2
        b = self.busy
        total = half * (first[0] + last[0])
        b[0] += total
        b[1] += half * (first[1] + last[1])
        b[2] += half * (first[2] + last[2])
        b[3] += half * (first[3] + last[3])
        b[4] += half * (first[4] + last[4])
        if self.waiting:
            head = self.waiting[0]
            if len(self.running) >= self.c.max_num_seqs:
                self.seqs_blocked += total
            elif self.blocks(self.need[head]) > self.total_blocks - self.used:
                self.kv_blocked += total
        if n_dec:
            self.record_itl(first, last, k, n_dec)
            self.d += k
        elif self.decoding:  # a V0 prefill-only step: the running decodes wait through it
            joined = len(self.decoding) - sum(w[1] for w in self.waits)  # those whose first token came since
            if joined > 0:
                self.waits.append([0.0, joined])
            for w in self.waits:
                w[0] += total
        self.t += total
        self.s += k
        if len(self.running) > self.peak:
            self.peak = len(self.running)

    def record_itl(self, first: Parts, last: Parts, k: int, n_dec: int) -> None:
        """Inter-token latencies of k decode steps; after V0 prefill-only steps the decodes that waited through them
        see the wait in their next token's latency."""
        plain = float(k * n_dec)
        for wait, count in self.waits:
            waited = min(count, plain - (k - 1) * n_dec)  # at most the first step's tokens (preemption)
            if waited > 0:
                self.itl.append((first[0] + wait, first[0] + wait, waited))
                plain -= waited
        self.waits.clear()
        if plain > 0:
            self.itl.append((first[0], last[0], plain))

    def drop_stale(self) -> None:
        heap = self.heap
        while heap and (heap[0][2] != self.version[heap[0][1]] or heap[0][1] not in self.decoding):
            heapq.heappop(heap)

    def decode_stretch(self, n_dec: int) -> None:
        """Decode-only steps up to the next event, summed in closed form."""
        self.drop_stale()
        k = self.heap[0][0] - self.d if self.heap else 1
        growth = n_dec * self.rate
        if growth > 0:
            k = min(k, max(1, int((self.total_blocks - self.used) / growth)))
        k = max(1, k)
        ctx0 = self.a_sum + n_dec * self.d
        fixed = self.fixed.get(n_dec)
        if fixed is None:
            fixed = self.fixed[n_dec] = decode_fixed_parts(self.c, n_dec)
        first, last = decode_parts(self.c, n_dec, ctx0, ctx0 + n_dec * (k - 1), fixed)
        entry = self.front.next_entry()
        if not self.waiting and entry is not None and k > 1:
            j = steps_to_reach(first[0], (last[0] - first[0]) / (k - 1), entry - self.t)
            if j < k:
                last = interpolate_parts(first, last, (j - 1) / (k - 1))
                k = j
        self.used += growth * k
        self.advance(first, last, k, n_dec)
        self.finish_due()

    # --- V0 without chunked prefill (vllm/core/scheduler.py _schedule_default, 0.4-0.7) -------------------------
    def v0_prefills(self) -> list[tuple[int, int]]:
        """Whole waiting prompts, first come first served, while the token budget, --max-num-seqs (counting the
        running requests) and the free blocks less the 1% watermark allow: [(request, tokens)]."""
        # Without chunked prefill V0 refuses to start when --max-num-batched-tokens < --max-model-len
        # (SchedulerConfig._verify_args), so every prompt fits one step: the budget is at least the context.
        budget = max(self.c.max_num_batched_tokens, self.c.max_model_len)
        free = self.total_blocks * (1 - V0_WATERMARK) - self.used
        chunks: list[tuple[int, int]] = []
        while self.waiting and len(self.running) < self.c.max_num_seqs:
            i = self.waiting[0]
            need = self.need[i]
            if need > budget or self.blocks(need) > free:  # BlockSpaceManager.can_allocate: LATER
                break
            self.waiting.popleft()
            self.running[i] = None
            self.partial[i] = None
            self.computed[i] = 0
            chunks.append((i, need))
            budget -= need
            free -= self.blocks(need)
        return chunks

    def wait_for_arrival(self) -> None:
        """Nothing can run: move the clock to the next request's arrival."""
        entry = self.front.next_entry()
        if entry is None:  # a prompt the empty pool cannot hold: vLLM refuses it at startup; never reached
            raise RuntimeError("replay stalled: a waiting request can never be admitted")
        self.t = max(self.t, entry)

    def v0_step(self) -> None:
        """One V0 scheduling decision: a prefill-only step when a waiting prompt can be admitted (the running
        decodes wait), else every running request decodes (preempting the latest when blocks run out)."""
        chunks = self.v0_prefills() if self.waiting else []
        if chunks:
            self.prefill_step(0, chunks)
            return
        n_dec = self.make_room(len(self.decoding))
        if n_dec:
            self.decode_stretch(n_dec)
        else:
            self.wait_for_arrival()

    def run(self) -> None:
        """Replay the whole run."""
        self.dispatch(0.0)
        c = self.c
        for _ in range(MAX_ITERATIONS):
            if self.next_send >= self.n and self.inflight == 0:
                return
            self.admit_entered()
            if not self.running and not self.waiting:
                self.wait_for_arrival()
                continue
            if c.v0_prefill_first:
                self.v0_step()
                continue
            before = self.preemptions
            n_dec = self.make_room(len(self.decoding))
            chunks = (
                self.schedule_prefills(c.max_num_batched_tokens - n_dec, n_dec, self.preemptions == before)
                if self.waiting or self.partial
                else []
            )
            if chunks:
                if not self.chunk_stretch(n_dec, chunks):
                    self.prefill_step(n_dec, chunks)
            elif n_dec:
                self.decode_stretch(n_dec)
            else:
                self.wait_for_arrival()
        raise RuntimeError("replay did not finish")

    def timeline(self) -> Timeline:
        b = self.busy
        return Timeline(
            send=tuple(self.send),
            first_token=tuple(self.first),
            finish=tuple(self.finish),
            prompt=self.r.prompt,
            output=self.r.output,
            itl=tuple(self.itl),
            busy=StepTime(b[0], b[1], b[2], b[3], b[4]),
            steps=self.s,
            preemptions=self.preemptions,
            peak_running=self.peak,
            kv_blocked=self.kv_blocked,
            seqs_blocked=self.seqs_blocked,
        )


def replay(costs: EngineCosts, requests: Requests, max_concurrency: int | None) -> Timeline:
    """Replay one benchmark run of `requests` against one engine."""
    engine = _Engine(costs, requests, max_concurrency)
    engine.run()
    return engine.timeline()
