"""The catalog's `variants:` lists: recommend searches them as the base model's own weights in another precision, so
each must be a bundled quantized checkpoint with the base model's architecture."""

from __future__ import annotations

import re
from typing import Any

import pytest

from recommender.catalog import load_gpus, load_model, load_models
from recommender.gpu_names import resolve_gpu
from recommender.planner.space import weight_options
from recommender.sources.resolve import resolve_model

# The keys that size weights and KV cache. intermediate_size is left out: Qwen's own 72B AWQ/GPTQ releases pad the
# MLP from 29,568 to 29,696 so that it splits into 128-groups at TP 8 (their config.json files, bundled here).
_EXPERT_KEYS = ("num_experts", "num_local_experts", "n_routed_experts")


def architecture(config: dict[str, Any]) -> dict[str, Any]:
    """Hidden size, layers, heads, KV heads, head size, vocabulary and routed experts of a config (the language
    model's, for a multimodal config with a text_config)."""
    c = config.get("text_config") or config
    hidden, heads = c.get("hidden_size"), c.get("num_attention_heads")
    return {
        "hidden_size": hidden,
        "num_hidden_layers": c.get("num_hidden_layers"),
        "num_attention_heads": heads,
        "num_key_value_heads": c.get("num_key_value_heads", heads),
        "head_dim": c.get("head_dim") or (hidden // heads if hidden and heads else None),
        "vocab_size": c.get("vocab_size"),
        "experts": next((c[k] for k in _EXPERT_KEYS if c.get(k) is not None), None),
    }


def architecture_differences(base: dict[str, Any], variant: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    a, b = architecture(base), architecture(variant)
    return {k: (a[k], b[k]) for k in a if a[k] != b[k]}


def test_every_variant_is_its_base_in_another_precision() -> None:
    listed = 0
    for m in load_models().values():
        assert len(set(m.variants)) == len(m.variants), f"{m.id}: a variant listed twice"
        for v in m.variants:
            entry = load_model(v)
            assert entry is not None, f"{m.id} lists {v}, which is not bundled"
            # another precision of the same weights: a quantized checkpoint, or (amd/MiniMax-M2.7-BF16) the BF16
            # release of a model published in FP8
            other_precision = resolve_model(v).quant is not None or resolve_model(m.id).quant is not None
            assert entry.id != m.id and other_precision, f"{m.id}: {v} is not its weights in another precision"
            # the same model class and config type: nvidia/MiniMax-M3-NVFP4 is MiniMaxM3SparseForConditionalGeneration
            # (minimax_m3_vl, a vision tower), the catalog's MiniMax-M3 the text-only MiniMaxM3ForCausalLM
            same = ("architectures", "model_type")
            assert [m.config.get(k) for k in same] == [entry.config.get(k) for k in same], f"{m.id} -> {v}: {same}"
            diff = architecture_differences(m.config, entry.config)
            assert diff == {}, f"{m.id} -> {v}: architecture differs {diff}"
            listed += 1
    assert listed >= 160


# A release name's fine-tune marker: an instruction/chat model's checkpoint is another model than its pretrained base.
TUNED = re.compile(r"(?i)(?:^|[-_.])(instruct|chat|it)(?:$|[-_.])")


def tuned_of_base(base_id: str, variant_id: str) -> bool:
    """A pretrained base's variant that is the quantization of its instruction/chat release."""
    return bool(TUNED.search(variant_id.split("/", 1)[1])) and not TUNED.search(base_id.split("/", 1)[1])


def test_a_base_model_lists_no_instruct_checkpoint() -> None:
    """recommend --model Qwen/Qwen2.5-7B must not answer `vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ`: the same
    architecture, other weights. (Qwen2.5-7B, Qwen2.5-32B and Meta-Llama-3.1-8B listed their Instruct releases'
    quantizations, which their Instruct entries list.)"""
    wrong = [(m.id, v) for m in load_models().values() for v in m.variants if tuned_of_base(m.id, v)]
    assert wrong == []
    assert tuned_of_base("Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B-Instruct-AWQ")
    assert tuned_of_base("meta-llama/Llama-2-7b-hf", "TheBloke/Llama-2-7B-Chat-AWQ")
    assert not tuned_of_base("meta-llama/Llama-3.1-8B-Instruct", "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8")
    assert not tuned_of_base("google/gemma-3-27b-it", "gaunernst/gemma-3-27b-it-int4-awq")
    assert not tuned_of_base("zai-org/GLM-5", "nvidia/GLM-5-NVFP4")


def test_the_architecture_check_catches_a_different_model() -> None:
    base = load_model("meta-llama/Llama-3.1-70B-Instruct")
    other = load_model("meta-llama/Llama-3.1-8B-Instruct")
    assert base is not None and other is not None
    diff = architecture_differences(base.config, other.config)
    assert diff["hidden_size"] == (8192, 4096) and diff["num_hidden_layers"] == (80, 32)
    # a head_dim written out equals the one vLLM derives from hidden_size / heads (8192 / 64 = 128)
    assert architecture_differences(base.config, {**base.config, "head_dim": 128}) == {}
    assert architecture_differences(base.config, {**base.config, "num_key_value_heads": 16}) == {
        "num_key_value_heads": (8, 16)
    }


@pytest.mark.parametrize(
    ("base", "variant", "provenance"),
    [
        ("zai-org/GLM-5", "zai-org/GLM-5-FP8", 0),  # the publisher's own FP8 release
        ("zai-org/GLM-5", "nvidia/GLM-5-NVFP4", 1),  # another publisher's checkpoint
        ("meta-llama/Llama-3.1-70B-Instruct", "RedHatAI/Meta-Llama-3.1-70B-Instruct-quantized.w8a8", 1),
        ("deepseek-ai/DeepSeek-V3.1", "nvidia/DeepSeek-V3.1-NVFP4", 1),
        # left out until 4-bit no longer ranked before fewer GPUs (planner/types.py NEAR_LOSSLESS_RANK)
        ("meta-llama/Llama-3.1-70B-Instruct", "RedHatAI/Meta-Llama-3.1-70B-Instruct-quantized.w4a16", 1),
        ("meta-llama/Llama-3.1-70B-Instruct", "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", 1),
        ("deepseek-ai/DeepSeek-R1", "nvidia/DeepSeek-R1-FP4", 1),
    ],
)
def test_recommend_searches_the_added_variants(base: str, variant: str, provenance: int) -> None:
    entry = load_model(base)
    assert entry is not None and variant in entry.variants
    gpu = resolve_gpu("b200", load_gpus())
    options = weight_options(resolve_model(base), [resolve_model(v) for v in entry.variants], gpu)
    found = [o for o in options if o.model.name == variant]
    assert len(found) == 1 and found[0].provenance == provenance


def test_fp8_releases_are_variants_of_their_base_entries() -> None:
    """recommend searches a base entry's variants: the bundled FP8 releases of Llama-3.3-70B and GLM-4.5-Air are
    listed, each naming its base back."""
    for base_id, variant in (
        ("meta-llama/Llama-3.3-70B-Instruct", "nvidia/Llama-3.3-70B-Instruct-FP8"),
        ("zai-org/GLM-4.5-Air", "zai-org/GLM-4.5-Air-FP8"),
    ):
        base, entry = load_model(base_id), load_model(variant)
        assert base is not None and entry is not None
        assert variant in base.variants and entry.base_model == base_id
