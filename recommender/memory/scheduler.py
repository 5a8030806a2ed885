"""Step 3 of vLLM's startup: the scheduler limits (max_model_len, max_num_seqs, max_num_batched_tokens) as the
engine of each release resolves them."""

from __future__ import annotations

from dataclasses import dataclass, replace

from recommender.hardware import Gpu
from recommender.memory import no_kv
from recommender.memory import startup_issues as si
from recommender.memory.engine import EngineFlags, VllmVersion, batch_defaults
from recommender.memory.startup_issues import StartupIssue
from recommender.model.spec import ModelSpec


@dataclass(frozen=True, slots=True)
class SchedulerLimits:
    """max_model_len (before auto-fit), max_num_seqs and max_num_batched_tokens as the engine resolves them."""

    max_model_len: int
    auto_fit: bool
    max_num_seqs: int
    max_num_batched_tokens: int


def scheduler_limits(
    model: ModelSpec,
    flags: EngineFlags,
    gpu: Gpu,
    version: VllmVersion,
    issues: list[StartupIssue],
    *,
    v0: bool = False,
) -> SchedulerLimits:
    """ModelConfig's max_model_len check and SchedulerConfig's defaults (arg_utils.py get_batch_defaults)."""
    max_len = flags.max_model_len if flags.max_model_len is not None else model.max_model_len
    auto_fit = max_len == -1
    if auto_fit:
        max_len = model.max_model_len
    elif max_len > model.max_model_len:
        issues.append(si.max_len_above_model(max_len, model.max_model_len, model.max_len_key))
    if model.encoder_only and flags.enable_chunked_prefill is None:  # unsupported: off by default (memory/no_kv.py)
        flags = replace(flags, enable_chunked_prefill=False)
    elif model.encoder_only and flags.enable_chunked_prefill:
        issues.append(no_kv.chunked_prefill_forced())
    if v0:
        tokens = v0_batched_tokens(model, flags, max_len, version)
        limits = SchedulerLimits(max_len, auto_fit, flags.max_num_seqs or 256, tokens)
    else:
        limits = v1_limits(flags, gpu, version, max_len, auto_fit)
    chunked = flags.enable_chunked_prefill
    if chunked is None and v0:
        chunked = v0_chunked_by_default(model, flags, max_len, version)
    if chunked is False and not auto_fit and limits.max_num_batched_tokens < max_len:
        issues.append(si.batched_below_max_len(limits.max_num_batched_tokens, max_len))
    if limits.max_num_batched_tokens < limits.max_num_seqs:
        issues.append(si.batched_below_seqs(limits.max_num_batched_tokens, limits.max_num_seqs))
    return limits


# The V1 engine's default token budget is capped at max_num_seqs x max_model_len ("Ensure max_num_batched_tokens does
# not exceed model limit") in engine/arg_utils.py from v0.11.1. Before it the cap sat in SchedulerConfig.__post_init__
# under `if self.max_num_batched_tokens is None`, which V1 never reached: arg_utils (_set_default_args_v1 to 0.10,
# _set_default_args to 0.11.0) had already set the usage context's default (v0.8.5, v0.10.0, v0.11.0 config).
V1_BUDGET_CAPPED_FROM = VllmVersion(0, 11, 1)


def v1_limits(flags: EngineFlags, gpu: Gpu, version: VllmVersion, max_len: int, auto_fit: bool) -> SchedulerLimits:
    """The V1 engine's defaults; without chunked prefill the default token budget covers the context
    (arg_utils.py: `max(model_config.max_model_len, self.max_num_batched_tokens)` when chunked prefill is off)."""
    seqs_default, tokens_default = batch_defaults(
        gpu, version, llm_class=flags.llm_class, engine_context=flags.engine_context
    )
    max_tokens = flags.max_num_batched_tokens or tokens_default
    max_seqs = flags.max_num_seqs or seqs_default
    if flags.max_num_batched_tokens is None:
        if version >= V1_BUDGET_CAPPED_FROM:
            max_tokens = min(max_tokens, max_seqs * max_len)
        if flags.enable_chunked_prefill is False:
            max_tokens = max(max_tokens, max_len)
    if flags.max_num_seqs is None:
        max_seqs = min(max_seqs, max_tokens)
    return SchedulerLimits(max_len, auto_fit, max_seqs, max_tokens)


# V0 (before 0.8) SchedulerConfig: without chunked prefill the profiling run prefills max(max_model_len, 2048)
# tokens in one step; chunked prefill is switched on by default only above 32K for text models without a sliding
# window (arg_utils.py "Chunked prefill is enabled by default for models with max_model_len > 32K"), and then
# schedules 512 tokens a step (2048 from 0.7); multimodal models keep at least 5120 (_MULTIMODAL_MODEL_MAX_NUM_
# BATCHED_TOKENS). The logs show the one-step profile: Qwen2.5-7B at max_model_len 32768 on vLLM 0.6.3 leaves
# 64,400 tokens of KV on an RTX 4090 (field record F042) where a 2048-token profile would leave 152,800.
# That default came with vLLM 0.5.3 (vllm-project/vllm#6666, arg_utils.py create_engine_config "use_long_context");
# before it V0 profiled max_model_len tokens in one step whatever the length (field4 J006: deepseek-coder-6.7b at its
# 65,536-token context on 2 x T4, ~0.4.3, 507 blocks). Until 0.6.1 prefix caching switched the default off (the
# condition listed `not self.enable_prefix_caching`; 0.6.1 dropped it).
V0_LONG_CONTEXT = 32768
V0_CHUNKED_BY_DEFAULT_FROM = VllmVersion(0, 5, 3)
V0_CHUNKED_WITH_PREFIX_CACHING_FROM = VllmVersion(0, 6, 1)


def v0_chunked_by_default(model: ModelSpec, flags: EngineFlags, max_len: int, version: VllmVersion) -> bool:
    """Whether the V0 engine switches chunked prefill on by itself for this model and length."""
    if version < V0_CHUNKED_BY_DEFAULT_FROM or max_len <= V0_LONG_CONTEXT:
        return False
    if flags.enable_prefix_caching and version < V0_CHUNKED_WITH_PREFIX_CACHING_FROM:
        return False
    return not model.multimodal and model.sliding_window is None


def v0_batched_tokens(model: ModelSpec, flags: EngineFlags, max_len: int, version: VllmVersion) -> int:
    """max_num_batched_tokens the V0 engine profiles with (--enable-chunked-prefill / --no-... when given, else the
    release's default)."""
    if flags.max_num_batched_tokens is not None:
        return flags.max_num_batched_tokens
    chunked = flags.enable_chunked_prefill
    if chunked is None:
        chunked = v0_chunked_by_default(model, flags, max_len, version)
    tokens = (2048 if version >= VllmVersion(0, 7) else 512) if chunked else max(max_len, 2048)
    return max(tokens, 5120) if model.multimodal else tokens
