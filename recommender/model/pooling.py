"""Which models vLLM runs with the pooling runner (embeddings, rewards) rather than for generation, and what that
changes in what it loads. Pure.

vLLM 0.33 config/model.py `_get_default_runner_type` (`--runner auto`): a repository with a sentence-transformers
`modules.json` is pooling whatever its architecture (get_pooling_config); else a registered architecture keeps its
registry role; else the architecture name's suffix decides (`_SUFFIX_TO_DEFAULTS`: ForCausalLM,
ForConditionalGeneration, ChatModel, LMHeadModel generate; EmbeddingModel, ForTextEncoding, ForRewardModeling,
RewardModel and any other `*Model` pool). The `*Model` names the registry keeps for generation are listed below.

Encoder-only models (BERT, RoBERTa, XLM-RoBERTa, and decoders whose config says is_causal false) run every
attention layer as ENCODER_ONLY: vLLM keeps no KV cache for them, skips the profiling run (v1/engine/core.py
_initialize_kv_caches: `has_kv_cache` false leaves determine_available_memory uncalled), and runs them without
chunked prefill (config/model.py is_chunked_prefill_supported), so each request is prefilled whole in one step of at
most max_num_batched_tokens tokens (memory/no_kv.py).

A pooling model allocates no LM head: adapters.py `_create_pooling_model_cls` builds the model under
`no_init_weights(..., targets=(LogitsProcessor, ParallelLMHead))` (earlier releases deleted `lm_head` and
`logits_processor` after building), and its profiling pass runs the pooler over the hidden states instead of the
sampler over [requests, vocab] logits (gpu_model_runner.py profile_run: `_dummy_pooler_run`), and there is no
sampler warm-up after the KV cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from recommender.model.spec import ModelSpec

_GENERATE_SUFFIXES = ("ForCausalLM", "ForConditionalGeneration", "ChatModel", "LMHeadModel")
_POOLING_SUFFIXES = (
    "EmbeddingModel",
    "ForTextEncoding",
    "ForSequenceClassification",
    "ClassificationModel",
    "ForRewardModeling",
    "RewardModel",
    "Model",
)
# registry.py _TEXT_GENERATION_MODELS / _MULTIMODAL_MODELS entries (0.33) whose names end in "Model"
# (AquilaModel: _TEXT_GENERATION_MODELS ran it as llama.py's LlamaForCausalLM until 0.24.0, family_refusals.SERVED_UNTIL)
REGISTERED_GENERATIVE_MODELS = frozenset(
    {"AquilaModel", "ChatGLMModel", "MiDashengLMModel", "MossAudioModel", "Qwen2_5OmniModel", "UltravoxModel"}
)


def pooling_by_architecture(arch: str) -> bool:
    """`--runner auto` resolves to pooling for this architecture name alone (no modules.json needed)."""
    if arch in REGISTERED_GENERATIVE_MODELS or arch.endswith(_GENERATE_SUFFIXES):
        return False
    return arch.endswith(_POOLING_SUFFIXES)


def headless_checkpoint(arch: str) -> bool:
    """A `*Model` checkpoint (MistralModel, Qwen2Model...) saves the backbone alone: no lm_head tensor."""
    return pooling_by_architecture(arch)


# vLLM 0.33 files that build EncoderOnlyAttention when the config says is_causal false (llama.py, qwen2.py, qwen3.py,
# gemma3.py, deepseek_v2.py: `if getattr(config, "is_causal", True)` ... else AttentionType.ENCODER_ONLY)
IS_CAUSAL_READ_BY = frozenset(
    {"llama", "mistral", "qwen2", "qwen3", "gemma3", "gemma3_text", "deepseek_v2", "deepseek_v3"}
)


def bidirectional_decoder(config: Mapping[str, Any], model_type: str) -> bool:
    """is_causal false (gte-Qwen2-*-instruct) in a family whose vLLM file reads it: every attention layer is
    ENCODER_ONLY, which keeps no KV cache (Attention.get_kv_cache_spec skips it; gpu_model_runner.py
    may_add_encoder_only_layers_to_kv_cache_config gives it a group the allocator does not size)."""
    return config.get("is_causal") is False and model_type in IS_CAUSAL_READ_BY


def as_pooling(spec: ModelSpec, why: str) -> ModelSpec:
    """The model as the pooling runner loads it (`why`: what makes vLLM pick that runner)."""
    if spec.pooling:
        return spec
    return replace(spec, pooling=True, notes=(*spec.notes, f"served with the pooling runner ({why}): no LM head"))
