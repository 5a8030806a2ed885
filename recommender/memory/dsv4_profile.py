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
  float32 (_max_decode_logits_rows);
- then a transient VLLM_SPARSE_INDEXER_MAX_LOGITS_MB (512 MiB) tensor on top.
"""

from __future__ import annotations

from recommender.model.spec import ModelSpec
from recommender.units import MiB, cdiv

PREFILL_CHUNK_SIZE = 4  # DeepseekV4Attention.PREFILL_CHUNK_SIZE
BF16, INT32, FP32 = 2, 4, 4
INDEXER_SCALE_BYTES = 4  # one float32 scale per 128-wide fp8 key
RADIX_TOPK_WORKSPACE = 1 * MiB  # indexer_topk.py RADIX_TOPK_WORKSPACE_SIZE
INDEXER_MAX_LOGITS = 512 * MiB  # envs.VLLM_SPARSE_INDEXER_MAX_LOGITS_MB default
PREFILL_BUFFER_ROWS = 576 * 2 // 132  # get_max_prefill_buffer_size: 8 index rows per FlashMLA workspace row
LONG_CONTEXT = 256 * 1024  # sparse_mla_prefill_workspace_factor: 5 up to here, 2 above


def _round_up(x: int, multiple: int) -> int:
    return cdiv(x, multiple) * multiple


def workspace_bytes(
    s: ModelSpec, *, max_model_len: int, max_num_batched_tokens: int, max_num_seqs: int, rocm: bool
) -> int:
    """The profiling pass's sparse-attention workspace and transient indexer logits on one GPU (0 for other models)."""
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
        requests.append(min(t, max_num_seqs) * (length // 4) * FP32)
    return max(requests) + INDEXER_MAX_LOGITS
