"""After the KV cache is allocated: what vLLM still allocates, against what is left on the GPU (pure).

vLLM sizes the KV cache to fill the budget (total x utilization) less what profiling measured, allocates it, and
only then captures the CUDA graphs (gpu_worker.py compile_or_warm_up_model) and warms up the sampler over
min(max_num_seqs, max_num_batched_tokens) dummy requests (`_dummy_sampler_run`, "NOTE: This is called after
`capture_model` on purpose"). Those allocations must fit in what is left:

    room = (total - budget)            outside the budget
         + activation peak              measured during profiling, freed before the KV cache is allocated
         - reserve                      held by the caching allocator and unusable (see MXFP4_TRITON_RESERVE)
    need = sampler warm-up + CUDA graphs captured beyond what the budget reserved + CUDA context / NCCL setup
           (allocated before vLLM's memory snapshot, so outside its accounting but on the same GPU; none where the
           free memory is the snapshot's own reading, as an integrated GPU's host reserve is: memory/unified.py)

`need > room` is a crash ("CUDA out of memory occurred when warming up sampler ..."); within
`WARMUP_UNCERTAINTY` of it the outcome depends on the allocator, and explain warns with the margin.
"""

from __future__ import annotations

from dataclasses import dataclass

from recommender.memory.overheads import CUDAGRAPH_BASE, CUDAGRAPH_FIT_GRAPHS, CUDAGRAPH_PER_LAYER
from recommender.units import GiB

# _dummy_sampler_run (gpu_model_runner.py) on [R, vocab] logits: compute_logits returns them in the model dtype
# (2 B); Sampler.forward converts to fp32 (+4 B, the bf16 tensor is still referenced by the caller); the
# top-k/top-p sampler's softmax makes probs (+4 B) and random_sample's exponential noise q = empty_like(probs)
# (+4 B, topk_topp_sampler.py). Both gpt-oss-20b OOMs of the v0.19 sweep fail on exactly that 786 MiB
# (1,024 x 201,088 x 4 B) allocation. The profile's fitted 13.5 B per logit (overheads.py) agrees.
SAMPLER_WARMUP_BYTES_PER_LOGIT = 2 + 4 + 4 + 4
# Memory in use before vLLM's startup snapshot ("Initial free memory" in the v0.19 sweep): 0.51 GiB on every
# TP=1 H100 record (78.68 of 79.19 GiB free); 1.53-2.07 GiB with TP > 1 over NVLink (NCCL and custom
# all-reduce set up first: 77.66, 77.64, 77.18, 77.12 GiB free); 0.49 GiB at TP=4 over PCIe (C002, L40S).
CONTEXT_SINGLE = int(0.5 * GiB)
CONTEXT_TP_NVLINK = int(1.5 * GiB)
# "CUDA graph pool memory: X GiB (actual), Y GiB (estimated)" (gpu_worker.py, v0.19 sweep): the actual exceeds
# vLLM's own estimate by up to 30% (Qwen2.5-7B 0.87 vs 0.61, gpt-oss-20b 1.84 vs 1.30, 1.55 vs 1.09).
CUDAGRAPH_OVER_ESTIMATE = 0.3
# From 0.21 the budget reserves vLLM's own estimate (gpu_worker.py determine_available_memory subtracts
# profile_cudagraph_memory's figure, measured by capturing the first two graphs of each mode), and the pool captured
# after the KV cache exceeds it by no more than 0.22 GiB in every 0.21+ log that prints both ("Graph capturing
# finished ... took A GiB" against the estimate, taken / estimated GiB): G010 0.11 / 0.15, G012 0.22 / 0.14, G014
# 0.11 / 0.13, G016 0.06 / 0.41, G040 0.35 / 0.13, G042 1.01 / 0.96, Q001 0.65 / 0.66, H007 0.30 (pool 0.20) / 0.35.
# The 30 % above (v0.19, where the estimate was only printed) scaled with the fit's estimate, up to 0.40 GiB.
CUDAGRAPH_EXCESS_OVER_APPLIED_ESTIMATE = int(0.22 * GiB)
# The OAI triton_kernels MXFP4 MoE path (gpt-oss on Hopper) is the one whose warm-up crashes in the logs:
# gpt-oss-20b at --gpu-memory-utilization 0.95 with 1,024 sequences on H100, v0.19.0, TP=1 and TP=2 (llm-d-planner
# sweep, openai-gpt-oss-20b--h100-80gb--tp{1,2}pp1dp1--8192.FAILED.log), while TP=2 at 0.90 starts. At the OOM the
# allocator held 1.78 / 1.62 GiB "reserved by PyTorch but unallocated" plus 0.27 GiB not attributable to the
# weights, KV cache, graph pool or sampler tensors, and the graphs took 1.84 / 1.55 GiB where this model allows
# 1.21 (its 0.93 GiB estimate for 83 graphs, plus 30%). The reserve is the larger of those sums (TP=1: 1.78 + 0.27
# + 0.63 = 2.68 GiB; TP=2: 2.23), fitted on the TP=1 record: TP=2 at 0.95 then crashes and at 0.90 starts, as
# logged. Dense and other MoE models of the same sweep started with as little as 0.56 GiB to spare (vLLM's own
# figures), so no reserve is applied to them.
MXFP4_TRITON_RESERVE = int(2.68 * GiB)
WARMUP_UNCERTAINTY = GiB  # the unexplained part above: about a gigabyte either way


# model_executor/warmup/deep_gemm_warmup.py (kernel_warmup, from 0.10.1; VLLM_USE_DEEP_GEMM on by default from
# 0.11.0, on Hopper and Blackwell when the deep_gemm package is installed): before the graphs are captured, each
# FP8 block-quantized (128 x 128) MoE layer's grouped GEMM runs over MAX_M rows = round_up(M x top_k + local experts
# x 127, 128), M = min(DP x max_num_batched_tokens, VLLM_FUSED_MOE_CHUNK_SIZE 32,768), with a1q (MAX_M x k fp8),
# its scales (MAX_M x k / 128 float32) and out (MAX_M x n bf16), for w13 (n = 2 I, k = H) and then w2 (n = H, k = I).
# Those blocks are freed into the allocator's cache before the graphs and the sampler, which reuse them.
DEEP_GEMM_BLOCK_M = 128
FUSED_MOE_CHUNK_SIZE = 32 * 1024
DEEP_GEMM_DEFAULT_FROM = (0, 11)


def deep_gemm_warmup_bytes(*, tokens: int, top_k: int, local_experts: int, hidden: int, intermediate: int) -> int:
    """The larger of the two grouped-GEMM warm-ups' buffers on one GPU (`intermediate`: one expert's width there)."""
    block = DEEP_GEMM_BLOCK_M
    m = min(tokens, FUSED_MOE_CHUNK_SIZE)
    rows = -(-(m * top_k + local_experts * (block - 1)) // block) * block

    def one(n: int, k: int) -> int:
        return rows * k + rows * (k // block) * 4 + rows * n * 2

    return max(one(2 * intermediate, hidden), one(hidden, intermediate)) + rows * 4  # and the int32 expert ids


def sampler_warmup_bytes(rows: int, vocab: int, per_logit_old: float, *, old_sampler: bool) -> int:
    """The sampler warm-up's peak over `rows` dummy requests (`old_sampler`: a release whose sampler held more fp32
    copies, overheads.SAMPLER_CHANGED_IN, at `per_logit_old` bytes per logit)."""
    per = per_logit_old if old_sampler else SAMPLER_WARMUP_BYTES_PER_LOGIT
    return int(per * rows * vocab)


def context_bytes(tp: int, nvlink: bool) -> int:
    """Memory in use before vLLM's snapshot: the CUDA context, and with TP > 1 over NVLink the NCCL setup."""
    return CONTEXT_TP_NVLINK if tp > 1 and nvlink else CONTEXT_SINGLE


def captured_pool_bytes(*, layers_on_gpu: int, graphs: int) -> int:
    """The graph pool a capture list of `graphs` sizes takes (before the 30 % over vLLM's estimate): the fitted
    first capture plus the per-layer part in proportion to the graphs after the first, the structure of vLLM's own
    estimate ("first-capture + (graphs - 1) x per graph"). overheads.cudagraph_bytes keeps the first capture's share of
    the per-layer part (the KV side, CUDAGRAPH-FINDINGS.md); the pool captured after the KV cache scales it all: 5 graphs
    of a 94-layer model are not 1.84 GiB (field4 J040 started with 2.38 GiB outside the budget; the logs show 0.14
    GiB at max_num_seqs 1, G013, and 0.38 at 128, G017, against 1.14 and 1.05 with the floor)."""
    scale = max(0, graphs - 1) / (CUDAGRAPH_FIT_GRAPHS - 1)
    return CUDAGRAPH_BASE + int(CUDAGRAPH_PER_LAYER * layers_on_gpu * scale)


def cudagraphs_after_kv(estimate: int, *, estimate_before_kv: bool, pool: int | None = None) -> int:
    """Graph memory captured beyond what the budget reserved: all of the pool before 0.21 (`pool`, else the
    estimate), the excess over the estimate after (30 % of it, at most CUDAGRAPH_EXCESS_OVER_APPLIED_ESTIMATE)."""
    if estimate_before_kv:
        return min(int(estimate * CUDAGRAPH_OVER_ESTIMATE), CUDAGRAPH_EXCESS_OVER_APPLIED_ESTIMATE)
    return int((estimate if pool is None else pool) * (1 + CUDAGRAPH_OVER_ESTIMATE))


@dataclass(frozen=True, slots=True)
class PostAllocation:
    """The memory picture once the KV cache is allocated, on the GPU that runs the sampler (last PP stage)."""

    rows: int  # dummy requests of the sampler warm-up
    sampler: int
    cudagraphs: int
    context: int
    outside_budget: int
    freed_activation: int
    reserve: int
    kernels: int = 0  # the DeepGEMM warm-up: run first, freed into the cache the sampler then reuses

    @property
    def need(self) -> int:
        """Bytes allocated after the KV cache, at the peak."""
        return max(self.kernels, self.sampler + self.cudagraphs) + self.context

    @property
    def room(self) -> int:
        """Bytes they can use."""
        return self.outside_budget + self.freed_activation - self.reserve

    @property
    def shortfall(self) -> int:
        """need - room: positive is a crash, within WARMUP_UNCERTAINTY below zero is a coin toss."""
        return self.need - self.room
