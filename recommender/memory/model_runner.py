"""Which model runner vLLM builds (V1's GPUModelRunner or Model Runner V2, v1/worker/gpu/) (pure).

Where V2 runs. VllmConfig (config/vllm.py of the 0.28.0 wheel) picks V2 when `_is_default_v2_model_runner_model`
holds and `_get_v2_model_runner_unsupported_features` lists nothing. The first: runner_type "generate" (not a pooling
model); not attention-free; a hybrid model (Mamba / linear-attention layers beside attention, ModelConfig.is_hybrid)
only if its architecture is in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES; a dense model always, an MoE one only if listed.
V2 became that default for dense models in 0.25.0 (#44443) and for every generating model in 0.29 (read in the 0.30.0
and 0.33.0 wheels, benchmarks/data/calibration/KV-ERRORS.md 'memfix2'). Of the unsupported features only the drafter
is a flag the planner reads: an n-gram drafter, or any method other than eagle / eagle3 / mtp / dflash / dspark (a
separate draft model, suffix decoding, Medusa, MLP speculator, a custom class), keeps V1.
"""

from __future__ import annotations

from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.spec_decode import ATTENTION_KINDS
from recommender.model.spec import ModelSpec

V2_EVERY_MODEL_FROM = VllmVersion(0, 29)  # V2 the default for every generating model
# config/vllm.py DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES of the 0.28.0 wheel (the MoE and hybrid ones V2 runs before 0.29)
DEFAULT_V2_ARCHITECTURES = frozenset(
    {
        "DeepseekV2ForCausalLM",
        "DeepseekV4ForCausalLM",
        "GraniteMoeForCausalLM",
        "InklingForCausalLM",
        "InklingForConditionalGeneration",
        "KimiK3ForConditionalGeneration",
        "LongcatFlashNgramForCausalLM",
        "Qwen2MoeForCausalLM",
    }
)
# _get_v2_model_runner_unsupported_features: the speculative methods V2 runs
V2_DRAFT_METHODS = ("eagle", "eagle3", "mtp", "dflash", "dspark")


def runs_v2(model: ModelSpec, flags: EngineFlags, version: VllmVersion) -> bool:
    """Whether vLLM builds Model Runner V2 for this model and launch (0.25+; the rules above)."""
    if version < VllmVersion(0, 25) or model.pooling or flags.pooling_runner():
        return False
    spec = flags.speculative()
    if spec is not None and spec.method not in V2_DRAFT_METHODS:
        return False
    if version >= V2_EVERY_MODEL_FROM:
        return True
    kinds = set(model.layer_kinds)
    attention = bool(kinds.intersection(ATTENTION_KINDS)) or model.compressed_attention is not None
    listed = model.architecture in DEFAULT_V2_ARCHITECTURES
    hybrid = attention and bool(kinds & {"mamba", "linear_attention"})
    if not attention or (hybrid and not listed):
        return False
    return listed or not model.is_moe
