"""What `explain` returns: the per-stage budget and the startup figures and verdict of one configuration."""

from __future__ import annotations

from dataclasses import dataclass

from recommender.memory.kv_cache import KvLayout
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.memory.warmup import PostAllocation


@dataclass(frozen=True, slots=True)
class StageBudget:
    """The per-GPU budget of one pipeline stage (every TP rank of a stage is alike)."""

    stage: int
    layers: int
    weights: int
    activation_peak: int
    non_torch: int
    cudagraph: int
    available_kv: int
    layout: KvLayout
    num_blocks: int

    def blocks_per_request(self, length: int, in_flight: int, prefix_caching: bool) -> int:
        """Blocks one request of `length` tokens takes across the KV-cache groups (0 without groups)."""
        if not self.layout.groups:
            return 0
        return self.layout.blocks_per_request(length, in_flight, prefix_caching=prefix_caching)

    def admits(self, length: int, in_flight: int, prefix_caching: bool) -> bool:
        """vLLM's admission check for one request of `length` tokens (the null block excluded)."""
        block = self.layout.bytes_per_block
        if not block or self.available_kv <= 0:
            return False
        return block * self.blocks_per_request(length, in_flight, prefix_caching) <= self.available_kv - block

    def concurrency_blocks(self, length: int, in_flight: int, prefix_caching: bool) -> int:
        """The blocks per request vLLM's max-concurrency formula divides the pool by (KvLayout.concurrency_blocks)."""
        if not self.layout.groups:
            return 0
        return self.layout.concurrency_blocks(length, in_flight, prefix_caching=prefix_caching)

    def concurrency(self, length: int, in_flight: int, prefix_caching: bool) -> float:
        """Requests of `length` tokens the KV pool holds (vLLM's max-concurrency formula)."""
        bpr = self.concurrency_blocks(length, in_flight, prefix_caching)
        return self.num_blocks / bpr if bpr else 0.0

    def longest_len(self, upper: int, in_flight: int, prefix_caching: bool, requests: int = 1) -> int:
        """The largest length <= upper at which one request is admitted and `requests` are held; 0 if none.

        The one length search: vLLM's "estimated maximum model length" and auto-fit (requests = 1), the
        planner's longest context for N requests, and check's "lower --max-model-len to" fix.
        """
        lo, hi = 0, upper
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.admits(mid, in_flight, prefix_caching) and (
                self.concurrency(mid, in_flight, prefix_caching) >= requests
            ):
                lo = mid
            else:
                hi = mid - 1
        return lo


@dataclass(frozen=True, slots=True)
class Explanation:
    """What vLLM would compute and print at startup for one model x GPU x flags."""

    model: str
    gpu: str
    vllm_version: str
    gpu_total_bytes: int
    free_bytes: int
    utilization: float
    requested_bytes: int
    weight_dtype: str
    quantization: str
    kv_cache_dtype: str
    tp: int
    pp: int
    dp: int
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    stage: StageBudget  # the tightest pipeline stage (fewest blocks), the one vLLM's min over workers picks
    stages: tuple[StageBudget, ...]
    num_gpu_blocks: int
    kv_cache_tokens: int
    max_concurrency: float
    blocks_per_request: int
    in_flight_tokens: int = 0
    prefix_caching: bool = False
    issues: tuple[StartupIssue, ...] = ()
    post_allocation: PostAllocation | None = None  # after the KV cache: the warm-ups and what is left for them
    # --kv-cache-memory-bytes: the KV cache vLLM allocates without profiling (requested_bytes is then this size,
    # not ceil(total x utilization))
    kv_cache_memory_bytes: int | None = None
    # encoder-only attention (memory/no_kv.py): no KV cache; a step prefills whole requests within max_num_seqs and
    # max_num_batched_tokens, and max_concurrency is what one step holds of max_model_len tokens
    no_kv_cache: bool = False
    # the CUDA-graph capture lists the estimate used (memory/profile_run.py capture_lists): the PIECEWISE (or the
    # mode's only) list's length and the FULL decode list's (0: none); V0's decode list in the first
    capture_sizes: int = 0
    decode_capture_sizes: int = 0

    @property
    def fits(self) -> bool:
        """vLLM starts: no fatal issue."""
        return not any(i.fatal for i in self.issues)

    @property
    def at_risk(self) -> bool:
        """vLLM may or may not start: no fatal issue, but a margin inside the model's uncertainty (IssueKind.at_risk)."""
        return self.fits and any(i.kind.at_risk for i in self.issues)

    @property
    def errors(self) -> tuple[str, ...]:
        """The fatal issues' messages, in vLLM's order (what `explain` prints)."""
        return tuple(i.message for i in self.issues if i.fatal)

    @property
    def warnings(self) -> tuple[str, ...]:
        """The other issues' messages."""
        return tuple(i.message for i in self.issues if not i.fatal)

    @property
    def error_kinds(self) -> tuple[IssueKind, ...]:
        """The kinds of the fatal issues, in order."""
        return tuple(i.kind for i in self.issues if i.fatal)

    def issue(self, kind: IssueKind) -> StartupIssue | None:
        """The first issue of this kind, if any."""
        return next((i for i in self.issues if i.kind is kind), None)

    def has(self, *kinds: IssueKind) -> bool:
        """True if any issue is of one of these kinds."""
        return any(i.kind in kinds for i in self.issues)

    def concurrency_for(self, length: int) -> float:
        """Requests of `length` tokens the predicted KV pool holds (vLLM's max-concurrency formula); without a KV
        cache, the requests of `length` tokens one step's token budget holds."""
        if self.no_kv_cache:
            return float(self.max_num_batched_tokens // length) if length > 0 else 0.0
        return self.stage.concurrency(length, self.in_flight_tokens, self.prefix_caching)

    def longest_len(self, need: int, limit: int | None = None) -> int:
        """The largest max_model_len (<= limit) at which one request fits and `need` requests are held; 0 if none."""
        upper = self.max_model_len if limit is None else limit
        if self.no_kv_cache:
            return min(upper, self.max_num_batched_tokens // max(1, need))
        return self.stage.longest_len(upper, self.in_flight_tokens, self.prefix_caching, requests=need)

    def fits_one_request(self, length: int) -> bool:
        """vLLM's admission check for one request of `length` tokens (the null block excluded); without a KV cache,
        whether the prompt fits one step (no chunked prefill)."""
        if self.no_kv_cache:
            return 0 < length <= self.max_num_batched_tokens
        return self.stage.admits(length, self.in_flight_tokens, self.prefix_caching)

    @property
    def block_size(self) -> int:
        """Block size after backend / hybrid alignment."""
        return self.stage.layout.block_size

    @property
    def kv_bytes_per_token(self) -> int:
        """KV bytes per token on one GPU, over its attention layers."""
        return self.stage.layout.bytes_per_token

    @property
    def gpus(self) -> int:
        """GPUs this engine (all its replicas) occupies."""
        return self.tp * self.pp * self.dp
