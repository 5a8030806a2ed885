"""Startup of a model vLLM keeps no KV cache for: encoder-only attention (BERT, RoBERTa, XLM-RoBERTa embedders and
rerankers, a decoder whose config says is_causal false). Pure.

What vLLM 0.33 does for them, in order:
- config/model.py `attn_type` is "encoder_only" (a CLS-pooling architecture, or is_causal false), so
  `is_chunked_prefill_supported` is False: engine/arg_utils.py leaves chunked prefill off and defaults
  max_num_batched_tokens to max(max_model_len, the usage default) (then min(max_num_seqs x max_model_len, that));
  config/scheduler.py `verify_max_model_len` refuses a smaller budget set by hand. Each request is prefilled whole
  in one step, so a step holds min(max_num_seqs, max_num_batched_tokens // length) requests of `length` tokens.
- Worker.init_device still refuses free memory below ceil(total x gpu_memory_utilization).
- The model's attention layers register no KV-cache spec (Attention.get_kv_cache_spec skips ENCODER_ONLY), so
  v1/engine/core.py `_initialize_kv_caches` sees `has_kv_cache` false: no profiling run, no "Available KV cache
  memory", no "GPU KV cache size" or "Maximum concurrency" line; the available memory is 0 and no block is
  allocated (gpu_model_runner.py may_add_encoder_only_layers_to_kv_cache_config adds a group that holds none).
- gpu_worker.py compile_or_warm_up_model then runs the model at the compile range's end (max_num_batched_tokens
  tokens), captures its CUDA graphs (PIECEWISE: config/vllm.py "Pooling models do not support full cudagraphs")
  and runs the pooler over max_num_seqs dummy requests. Nothing bounds these by the utilization: they take what
  the GPU has free, and a shortfall is torch's out-of-memory error there.
"""

from __future__ import annotations

from dataclasses import dataclass

from recommender.memory import startup_issues as si
from recommender.memory import warmup
from recommender.memory.engine import V0_ONLY_ENCODERS, V1_ENCODERS_FROM
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.units import format_gib

# The first release that runs these models without a KV cache: v0.10.1, where bert.py / roberta.py drop
# SupportsV0Only (they ran on the V0 engine, which profiled and allocated a KV cache for every attention layer) and
# qwen2.py / llama.py read is_causal (before, gte-Qwen2 ran causal, with Qwen2's KV cache). The engine choice and
# the set of those BERT-style classes are memory/engine.py's (V1_ENCODERS_FROM, V0_ONLY_ENCODERS).
NO_KV_FROM = V1_ENCODERS_FROM


@dataclass(frozen=True, slots=True)
class NoKvPeak:
    """The memory of the warm-up on one GPU: what stays (weights, non-torch), what the warm-up adds (the forward pass
    at max_num_batched_tokens tokens, the CUDA-graph pool, the CUDA context) and what the GPU had free."""

    weights: int
    non_torch: int
    activation: int
    cudagraphs: int
    context: int
    free: int

    @property
    def need(self) -> int:
        return self.weights + self.non_torch + self.activation + self.cudagraphs + self.context

    @property
    def margin(self) -> int:
        """free - need: negative is an out-of-memory error at the warm-up."""
        return self.free - self.need


def per_step(max_num_seqs: int, max_num_batched_tokens: int, length: int) -> int:
    """Requests of `length` tokens one step prefills (no chunked prefill: a prompt is scheduled whole)."""
    if length <= 0 or length > max_num_batched_tokens:
        return 0
    return min(max_num_seqs, max_num_batched_tokens // length)


def check_peak(peak: NoKvPeak, max_num_batched_tokens: int, issues: list[StartupIssue]) -> None:
    """The warm-up's verdict: a crash when it needs more than is free, at risk within the model's ~1 GiB."""
    if peak.margin < 0:
        issues.append(encoder_warmup_oom(peak, max_num_batched_tokens))
    elif peak.margin < warmup.WARMUP_UNCERTAINTY:
        issues.append(encoder_warmup_margin(peak, max_num_batched_tokens))


def _parts(peak: NoKvPeak) -> str:
    return (
        f"weights {format_gib(peak.weights):.2f} + non-torch {format_gib(peak.non_torch):.2f} + forward pass "
        f"{format_gib(peak.activation):.2f} + CUDA graphs {format_gib(peak.cudagraphs):.2f} + CUDA context "
        f"{format_gib(peak.context):.2f} GiB"
    )


def encoder_warmup_oom(peak: NoKvPeak, tokens: int) -> StartupIssue:
    """torch's out-of-memory error in compile_or_warm_up_model's dummy run of max_num_batched_tokens tokens."""
    return StartupIssue(
        IssueKind.NO_KV_WARMUP_OOM,
        f"torch.OutOfMemoryError: CUDA out of memory while warming up the model with {tokens:,} tokens "
        f"(Predicted: {_parts(peak)} = {format_gib(peak.need):.2f} GiB, above the {format_gib(peak.free):.2f} GiB "
        "free; lower --max-num-batched-tokens, or --max-model-len with it)",
        needed_bytes=peak.need,
        available_bytes=peak.free,
        requested=tokens,
    )


def encoder_warmup_margin(peak: NoKvPeak, tokens: int) -> StartupIssue:
    """The warm-up fits with less than the model's uncertainty to spare."""
    return StartupIssue(
        IssueKind.NO_KV_WARMUP_MARGIN,
        f"the warm-up of {tokens:,} tokens needs ~{format_gib(peak.need):.2f} GiB ({_parts(peak)}) of the "
        f"{format_gib(peak.free):.2f} GiB free, a margin of {format_gib(peak.margin):.2f} GiB, within the model's "
        "~1 GiB uncertainty: startup may run out of memory",
        needed_bytes=peak.need,
        available_bytes=peak.free,
        requested=tokens,
    )


def no_kv_note(max_num_seqs: int, max_num_batched_tokens: int, max_model_len: int) -> StartupIssue:
    """What bounds concurrency when there is no KV cache."""
    n = per_step(max_num_seqs, max_num_batched_tokens, max_model_len)
    return si.note(
        IssueKind.NO_KV_CACHE,
        "encoder-only attention: vLLM allocates no KV cache and runs no profiling pass (no 'GPU KV cache size' "
        f"line); a step prefills whole requests, at most {max_num_seqs:,} (--max-num-seqs) and "
        f"{max_num_batched_tokens:,} tokens (--max-num-batched-tokens, no chunked prefill): {n:,} of "
        f"{max_model_len:,} tokens at once",
    )


def chunked_prefill_forced() -> StartupIssue:
    """engine/arg_utils.py _set_default_chunked_prefill_and_prefix_caching_args, --enable-chunked-prefill given."""
    return si.note(
        IssueKind.NO_KV_CHUNKED_PREFILL,
        "This model does not officially support chunked prefill. Enabling this manually may cause the engine to "
        "crash or produce incorrect outputs.",
    )


def old_release_note(version: str, architecture: str) -> StartupIssue:
    """Before 0.10.1 vLLM kept a KV cache for these models (memory/no_kv.py NO_KV_FROM): planned that way."""
    how = (
        "on the V0 engine (SupportsV0Only), which profiles and allocates a KV cache for every attention layer"
        if architecture in V0_ONLY_ENCODERS
        else "with causal attention and its KV cache (is_causal is read from 0.10.1)"
    )
    return si.note(IssueKind.NO_KV_CACHE, f"vLLM {version} serves {architecture} {how}: planned with that KV cache")
