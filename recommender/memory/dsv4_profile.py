"""What DeepSeek-V4's profiling pass reserves beyond a generic decoder's activations (vLLM 0.33, pure).

The dummy forward (attn_metadata is None) claims the shared workspace (v1/worker/workspace.py: one scratch buffer
sized to the largest single get_simultaneous request, kept after profiling) for what the real prefill and decode
will need at max_model_len:
- sparse MLA (models/deepseek_v4/nvidia/flashmla.py forward_mqa, CUDA): PREFILL_CHUNK_SIZE (4) x M x head_dim bf16
  with M = cdiv(max_model_len, ratio) + window + max_num_batched_tokens (largest on the C4 layers), and the combined
  top-k indices, max_num_batched_tokens x round_up(index_topk + window, 128) int32, and the lengths; ROCm's aiter
  prefill reads the caches in place and asks for none (amd/rocm.py);
- the indexer's K gather (model_executor/layers/sparse_attn_indexer.py, v1/attention/ops/rocm_aiter_mla_sparse.py):
  T x (index_head_dim fp8 + 4 scale bytes), T = max_model_len x (1152 // 132) x factor // 4 (indexer.py
  get_max_prefill_buffer_size; factor 5 up to 256K tokens, else 2: config/vllm.py), with the radix top-k's 1 MiB;
  on ROCm (gfx942/gfx950) also the decode logits, min(max_num_batched_tokens, max_num_seqs) x max_model_len / 4
  float32 (_max_decode_logits_rows). That bound is 0.33's fix of "the loose bound" max_num_batched_tokens, which
  "at the model's full context ... asks for tens of TiB"; its release is not known, so before 0.33 the rows are
  max_num_batched_tokens (field4 J027, V4-Pro at TP 8 on MI300X at ~0.27: 16 GiB at 16,384 batched tokens and
  1,048,576 tokens, where it failed, 8 GiB at the 8,192 with which the same command started);
- then a transient VLLM_SPARSE_INDEXER_MAX_LOGITS_MB (512 MiB) tensor on top.
"""

from __future__ import annotations

from recommender.memory.engine import VllmVersion
from recommender.memory.explanation import StageBudget
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.model.spec import ModelSpec
from recommender.units import GiB, MiB, cdiv

PREFILL_CHUNK_SIZE = 4  # DeepseekV4Attention.PREFILL_CHUNK_SIZE
BF16, INT32, FP32 = 2, 4, 4
INDEXER_SCALE_BYTES = 4  # one float32 scale per 128-wide fp8 key
RADIX_TOPK_WORKSPACE = 1 * MiB  # indexer_topk.py RADIX_TOPK_WORKSPACE_SIZE
INDEXER_MAX_LOGITS = 512 * MiB  # envs.VLLM_SPARSE_INDEXER_MAX_LOGITS_MB default
PREFILL_BUFFER_ROWS = 576 * 2 // 132  # get_max_prefill_buffer_size: 8 index rows per FlashMLA workspace row
LONG_CONTEXT = 256 * 1024  # sparse_mla_prefill_workspace_factor: 5 up to here, 2 above
ROCM_DECODE_ROWS_BOUNDED_FROM = VllmVersion(0, 33)  # _max_decode_logits_rows bounded by max_num_seqs


def _round_up(x: int, multiple: int) -> int:
    return cdiv(x, multiple) * multiple


def workspace_bytes(
    s: ModelSpec,
    *,
    max_model_len: int,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    rocm: bool,
    decode_rows_bounded: bool = True,
) -> int:
    """The profiling pass's sparse-attention workspace and transient indexer logits on one GPU (0 for other models).
    `decode_rows_bounded`: ROCm's decode-logits rows are bounded by max_num_seqs (0.33), else max_num_batched_tokens."""
    c = s.compressed_attention
    if c is None:
        return 0
    t, length = max_num_batched_tokens, max_model_len
    requests = [0]
    ratios = [r for r in c.ratios if r > 1]
    if ratios and not rocm:
        rows = cdiv(length, min(ratios)) + c.window + t
        topk = _round_up(c.index_topk + c.window, 128)
        requests.append(PREFILL_CHUNK_SIZE * rows * c.head_dim * BF16 + t * topk * INT32 + t * INT32)
    if 4 not in c.ratios:
        return max(requests)
    factor = 5 if length <= LONG_CONTEXT else 2
    gathered = length * PREFILL_BUFFER_ROWS * factor // 4
    requests.append(gathered * (c.index_head_dim + INDEXER_SCALE_BYTES) + RADIX_TOPK_WORKSPACE)
    if rocm:
        requests.append((min(t, max_num_seqs) if decode_rows_bounded else t) * (length // 4) * FP32)
    return max(requests) + INDEXER_MAX_LOGITS


# The releases before 0.33 are not read here, and their V4 logs use more memory than 0.33's accounting leaves (with the
# MXFP4 experts): V4-Flash on 2 x GH200 at ~0.22 (field4 J026) logged 5.44 GiB of KV where 9.99 is predicted, and
# needed 6.66 GiB for one 30,000-token request, what 0.33's groups hold with two batches in flight (16,384 tokens,
# which memory/engine.py counts only from 0.24); on 2 x H20 at 0.26 (J025) 7.01 where 9.16 is predicted (1.6 GiB of
# it the MTP module, not modelled). So before 0.33 a V4 plan whose KV memory, less the largest excess logged (4.55
# GiB, rounded up to 5), does not hold one request with two batches in flight is "at risk", not a fit.
ACCOUNTED_FROM = VllmVersion(0, 33)
RELEASE_EXCESS = 5 * GiB


def release_margin(
    stage: StageBudget, max_len: int, max_num_batched_tokens: int, prefix_caching: bool, version: VllmVersion
) -> StartupIssue | None:
    """At risk before 0.33 when the KV memory holds one request (two batches in flight) by less than RELEASE_EXCESS."""
    block = stage.layout.bytes_per_block
    if version >= ACCOUNTED_FROM or not block or stage.available_kv <= 0:
        return None
    need = stage.blocks_per_request(max_len, 2 * max_num_batched_tokens, prefix_caching) * block
    if stage.available_kv - need >= RELEASE_EXCESS:
        return None
    return StartupIssue(
        IssueKind.DSV4_RELEASE_MARGIN,
        f"at risk: DeepSeek-V4 on vLLM {version} (before 0.33, whose accounting this is): one {max_len:,}-token "
        f"request with two batches in flight needs {need / GiB:.2f} GiB of the {stage.available_kv / GiB:.2f} GiB "
        f"of KV memory, a margin under the {RELEASE_EXCESS / GiB:.0f} GiB by which earlier releases' logs exceed it",
        needed_bytes=need,
        available_bytes=stage.available_kv,
        max_len=max_len,
    )
