"""The architecture table: per-architecture facts that config.json does not state (what vLLM's model file for the
architecture builds), keyed by model_type, and the lookup a config is read with.

`family_for(arch, model_type)` returns the entry a config is read with. The `Family` record and shared blocks live in
`recommender.model.family_spec`, the architectures refused by name in `recommender.model.family_refusals`. Each
family names its config-key adapter (`recommender.model.family_keys`). Sources: the vLLM 0.33 file named in each
entry (`vllm/model_executor/models/...`), or transformers' config class for key names.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from recommender.model.family_keys import (
    bailing_moe_keys,
    cohere2_moe_keys,
    cohere_keys,
    deepseek_v4_keys,
    ernie45_moe_keys,
    falcon_h1_keys,
    granite_hybrid_keys,
    hunyuan_v1_keys,
    kimi_linear_keys,
    lfm2_keys,
    mimo_v2_keys,
    minimax_m2_keys,
    minimax_text01_keys,
    mllama_keys,
    qwen1_keys,
    step3p5_keys,
)
from recommender.model.family_refusals import SERVED_UNTIL, refusal
from recommender.model.family_spec import (
    BERT,
    BERT_TYPES,
    BLOOM,
    CHATGLM,
    DBRX,
    FALCON,
    GEMMA,
    GEMMA3,
    GEMMA_SANDWICH,
    GLM4_MOE,
    GPT2,
    GPT2_ALIASES,
    GPT_BIGCODE,
    GPTJ,
    INTERNLM2,
    JAMBA,
    LIGHTNING_SOURCE,
    LIGHTNING_TYPES,
    LLAMA,
    MAMBA,
    MPT,
    NEMOTRON_H,
    NEOX,
    OPT,
    PERSIMMON,
    PHI,
    QK_NORM,
    QWEN2,
    STARCODER2,
    Family,
)

__all__ = [
    "BERT_TYPES",
    "FAMILIES",
    "LIGHTNING_TYPES",
    "SERVED_UNTIL",
    "TEXT_CONFIG_DEFAULTS",
    "Family",
    "family_for",
    "family_key",
    "refusal",
]

# Keyed by model_type (text config). Types not listed are read as LLAMA and marked approximate.
FAMILIES: dict[str, Family] = {
    **dict.fromkeys(
        (
            "llama",
            "mistral",
            "mixtral",
            "granite",
            "granitemoe",
            "phi3",
            "deepseek",  # DeepSeek-MoE (v1): vLLM runs DeepseekForCausalLM from deepseek_v2.py
            "deepseek_v2",
            "deepseek_v3",
            "kimi_k2",
            "kimi_k25",
            "kimi_vl",  # KimiVLForConditionalGeneration: a DeepSeek-V3 text_config (MLA, MoE) beside MoonViT (kimi_vl.py)
            "llama4",
            "llama4_text",
            "internlm3",
            "yi",
            "mistral3",
            "ministral",
            "ministral3",  # Ministral3ForCausalLM: vLLM's registry runs it as MistralForCausalLM
            "smollm3",
        ),
        LLAMA,
    ),
    # EXAONE 3.0/3.5 (ExaoneForCausalLM, vllm/model_executor/models/exaone.py): a Llama-style decoder whose remote
    # ExaoneConfig names the layer count num_layers (attribute_map num_hidden_layers -> num_layers).
    "exaone": replace(
        LLAMA,
        name="EXAONE 3.x",
        source="vllm/model_executor/models/exaone.py",
        aliases=(("num_hidden_layers", "num_layers"),),
    ),
    **dict.fromkeys(("qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "mimo"), QWEN2),
    **dict.fromkeys(
        (
            "qwen3",
            "qwen3_moe",
            "qwen3_vl",
            "qwen3_vl_moe",
            "qwen3_next",
            "qwen3_5",
            "qwen3_5_moe",
            "exaone4",  # vllm/model_executor/models/exaone4.py: q/k RMSNorm over head_dim, two norms a layer
        ),
        QK_NORM,
    ),
    "gemma": GEMMA,
    "gemma2": GEMMA_SANDWICH,
    **dict.fromkeys(("gemma3", "gemma3_text"), GEMMA3),
    **dict.fromkeys(
        ("gemma4", "gemma4_text"), replace(GEMMA3, name="Gemma 4", source="vllm/model_executor/models/gemma4.py")
    ),
    "nemotron_h": NEMOTRON_H,
    "gpt2": GPT2,
    **dict.fromkeys(BERT_TYPES, BERT),
    "gpt_bigcode": GPT_BIGCODE,
    "gptj": GPTJ,
    "gpt_neox": NEOX,
    "phi": PHI,
    "phi-msft": replace(PHI, aliases=(*GPT2_ALIASES, ("num_key_value_heads", "n_head_kv"))),
    "starcoder2": STARCODER2,
    "persimmon": PERSIMMON,
    # Fuyu (FuyuForCausalLM, vllm/model_executor/models/fuyu.py): a PersimmonForCausalLM built from the same flat config,
    # fed image patches through one biased ColumnParallelLinear (patch_size^2 x num_channels -> hidden_size) and no
    # vision tower; that projection (2700 x 4096 + 4096 for fuyu-8b, 0.1 % of the weights) and the image patches'
    # profile-run budget are not laid out, so the count is the language model's.
    "fuyu": replace(
        PERSIMMON,
        name="Fuyu (Persimmon decoder)",
        source="vllm/model_executor/models/fuyu.py",
        approximate=(
            "Fuyu's linear patch projection (vision_embed_tokens: patch_size^2 x num_channels -> hidden_size, with "
            "a bias) and its image-patch profile budget are not laid out; the Persimmon decoder is"
        ),
    ),
    **dict.fromkeys(("falcon", "RefinedWeb", "RefinedWebModel"), FALCON),
    "opt": OPT,
    "bloom": BLOOM,
    "mpt": MPT,
    "chatglm": CHATGLM,
    # Qwen (v1) QWenLMHeadModel: vllm/model_executor/models/qwen.py, served until 0.23.0 (SERVED_UNTIL below)
    "qwen": Family("Qwen (v1)", "vllm/model_executor/models/qwen.py (to 0.23.0)", qkv_bias=True, adapt=qwen1_keys),
    "dbrx": DBRX,
    "internlm2": INTERNLM2,
    **dict.fromkeys(
        ("mllama", "mllama_text_model"),
        Family("Llama-3.2-Vision (mllama)", "vllm mllama.py (to 0.10.2)", adapt=mllama_keys),
    ),
    **dict.fromkeys(
        ("deepseek_v4", "deepseek_ref"),
        Family("DeepSeek-V4 (estimated)", "vllm/models/deepseek_v4", adapt=deepseek_v4_keys),
    ),
    "falcon_h1": Family(
        "Falcon-H1 (parallel attention + Mamba2)", "vllm/model_executor/models/falcon_h1.py", adapt=falcon_h1_keys
    ),
    "granitemoehybrid": Family(
        "Granite-4.0-H (Mamba2 + attention)",
        "vllm/model_executor/models/granitemoehybrid.py",
        adapt=granite_hybrid_keys,
    ),
    **dict.fromkeys(
        ("cohere", "cohere2"),
        Family(
            "Cohere Command-R / Aya",
            "vllm/model_executor/models/commandr.py",
            norm="layer_nobias",
            norms_per_layer=1,
            parallel_block=True,
            tie_default=True,
            qk_norm_over_heads=True,
            adapt=cohere_keys,
        ),
    ),
    # Cohere2-MoE (North Mini Code): one norm before parallel attention and MoE, RMSNorm when rms_norm_eps is set
    # (make_norm), sliding-window layers per layer_types, a dense MLP prefix (mlp_layer_types / first_k_dense_replace)
    "cohere2_moe": Family(
        "Cohere2-MoE (North Mini Code)",
        "vllm/model_executor/models/cohere2_moe.py",
        norms_per_layer=1,
        parallel_block=True,
        tie_default=True,
        qk_norm_over_heads=True,
        adapt=cohere2_moe_keys,
    ),
    # OLMoE: a Llama-style MoE whose q_norm / k_norm are RMSNorms over all heads' q (and k) at once
    "olmoe": Family("OLMoE", "vllm/model_executor/models/olmoe.py", qk_norm=True, qk_norm_over_heads=True),
    # vllm/model_executor/models/olmo2.py (Olmo 2 and 3): q_norm over hidden_size, k_norm over num_kv_heads x head_dim
    **dict.fromkeys(
        ("olmo2", "olmo3"),
        Family("OLMo 2 / 3", "vllm/model_executor/models/olmo2.py", qk_norm=True, qk_norm_over_heads=True),
    ),
    "nemotron-nas": Family("Nemotron-NAS (DeciLM)", "vllm/model_executor/models/nemotron_nas.py"),
    # Nemotron-4 / Minitron (NemotronForCausalLM): up_proj + down_proj with squared ReLU (no gate), LayerNorm1P with a
    # weight and a bias (two a layer and a final one), partial rotary; q/k/v/o and MLP biases follow the config.
    "nemotron": Family(
        "Nemotron-4 / Minitron", "vllm/model_executor/models/nemotron.py", gated_mlp=False, norm="layer"
    ),
    # Baichuan / Baichuan2 (BaichuanForCausalLM, served until 0.23.0): a fused W_pack q/k/v and o_proj without biases,
    # a gated SiLU MLP and RMSNorms, laid out as a Llama decoder (ALiBi on the 13B models adds no weights; Baichuan2's
    # NormHead normalises the head at run time, same size).
    "baichuan": replace(LLAMA, name="Baichuan", source="vllm/model_executor/models/baichuan.py (to 0.23.0)"),
    # ERNIE 4.5 (Baidu): the dense Ernie4_5ForCausalLM is vLLM's LlamaForCausalLM with interleaved rotary
    # (vllm/model_executor/models/ernie45.py); the MoE keeps ERNIE's own expert keys (family_keys.ernie45_moe_keys)
    "ernie4_5": replace(LLAMA, name="ERNIE 4.5 (dense)", source="vllm/model_executor/models/ernie45.py"),
    "ernie4_5_moe": Family(
        "ERNIE 4.5 MoE", "vllm/model_executor/models/ernie45_moe.py", score_bias=True, adapt=ernie45_moe_keys
    ),
    # Ling / Ring (inclusionAI): BailingMoeForCausalLM and BailingMoeV2ForCausalLM, both model_type "bailing_moe"
    **dict.fromkeys(
        ("bailing_moe", "bailing_moe_v2"),
        Family("Bailing MoE (Ling / Ring)", "vllm/model_executor/models/bailing_moe.py", adapt=bailing_moe_keys),
    ),
    # Hunyuan-A13B (HunYuanMoEV1ForCausalLM): q/k norms per head, experts with a shared MLP on every layer
    "hunyuan_v1_moe": Family("HunYuan MoE V1", "vllm/model_executor/models/hunyuan_v1.py", adapt=hunyuan_v1_keys),
    "kimi_linear": Family(
        "Kimi-Linear (KDA + MLA)", "vllm/models/kimi_k3/nvidia/model.py", score_bias=True, adapt=kimi_linear_keys
    ),
    **dict.fromkeys(
        ("step3p5", "step3p7"),
        Family("Step-3.5", "vllm/model_executor/models/step3p5.py", qk_norm=True, adapt=step3p5_keys),
    ),
    "gpt_oss": Family("gpt-oss", "vllm/model_executor/models/gpt_oss.py", attention_sinks="all"),
    **dict.fromkeys(
        ("mimo_v2_flash", "mimo_v2"),
        Family("MiMo-V2 (hybrid SWA)", "vllm/model_executor/models/mimo_v2.py", adapt=mimo_v2_keys),
    ),
    **dict.fromkeys(
        ("minimax_m2", "minimax_m3", "minimax_m3_vl"),
        Family("MiniMax-M2/M3", "vllm/model_executor/models/minimax_m2.py", adapt=minimax_m2_keys),
    ),
    **dict.fromkeys(
        LIGHTNING_TYPES,
        Family("MiniMax-Text-01 / M1 (lightning + softmax attention)", LIGHTNING_SOURCE, adapt=minimax_text01_keys),
    ),
    # MiniCPM 1 / 2 / 4 (MiniCPMForCausalLM, vllm/model_executor/models/minicpm.py): a Llama-style decoder (bias-free
    # q/k/v/o, gated MLP, two RMSNorms a layer) whose scale_emb / scale_depth / dim_model_base scale activations only;
    # the remote MiniCPMConfig ties the embedding by default and its hub files state no model_type.
    "minicpm": replace(LLAMA, name="MiniCPM", source="vllm/model_executor/models/minicpm.py", tie_default=True),
    # MiniCPM3 (MiniCPM3ForCausalLM, vllm/model_executor/models/minicpm3.py): a Llama-style decoder whose attention
    # has DeepSeek-V2's MLA projections (q_a/q_b, kv_a_proj_with_mqa, kv_b_proj, two RMSNorms) but caches K and V
    # per head (features.PER_HEAD_MLA_TYPES); scale_emb / scale_depth / dim_model_base scale activations only. Its
    # MiniCPM3Config ties the embedding by default (tie_word_embeddings=True).
    "minicpm3": replace(
        LLAMA,
        name="MiniCPM3 (MLA projections, per-head KV cache)",
        source="vllm/model_executor/models/minicpm3.py",
        tie_default=True,
    ),
    # GLM-4.5V / 4.6V (Glm4vMoeForConditionalGeneration): vllm/model_executor/models/glm4_1v.py builds the language
    # model from text_config with architectures=["Glm4MoeForCausalLM"] when model_type is "glm4v_moe"
    **dict.fromkeys(("glm4_moe", "glm4v_moe"), GLM4_MOE),
    **dict.fromkeys(("deepseek_v32", "glm_moe_dsa"), LLAMA),  # MLA + indexer: model/features.py indexer_spec
    "glm4_moe_lite": Family(
        "GLM-4.7-Flash (MLA + GLM MoE)", "vllm/model_executor/models/glm4_moe_lite.py", score_bias=True
    ),
    # Apertus (ApertusForCausalLM, vllm/model_executor/models/apertus.py): a Llama-style decoder whose MLP is
    # up_proj -> xIELU -> down_proj (no gate; XIELU's alpha_p / alpha_n are two scalars a layer, not counted) with
    # q_norm / k_norm RMSNorms over head_dim; attention_layernorm and feedforward_layernorm, two a layer.
    "apertus": Family("Apertus", "vllm/model_executor/models/apertus.py", gated_mlp=False, qk_norm=True),
    # dots.llm1 (Dots1ForCausalLM, vllm/model_executor/models/dots1.py): DeepSeek-style MoE keys (first_k_dense_replace,
    # moe_layer_freq, n_routed_experts, n_shared_experts x moe_intermediate_size) under plain GQA attention with
    # q_norm / k_norm RMSNorms over head_dim; the gate's e_score_correction_bias only when topk_method is "noaux_tc".
    "dots1": Family("dots.llm1", "vllm/model_executor/models/dots1.py", qk_norm=True),
    # LFM2 (Lfm2ForCausalLM, vllm/model_executor/models/lfm2.py): ShortConv layers ("conv") and GQA layers with per-head
    # q/k RMSNorms, a gated MLP and two norms in every layer, the final norm (embedding_norm); Lfm2Config ties.
    "lfm2": Family(
        "LFM2 (short conv + attention)",
        "vllm/model_executor/models/lfm2.py",
        qk_norm=True,
        tie_default=True,
        adapt=lfm2_keys,
    ),
    "jamba": JAMBA,
    **dict.fromkeys(("mamba", "falcon_mamba"), MAMBA),
}

# Architectures whose config carries no (or an unreliable) model_type, keyed by `architectures[0]`.
_BY_ARCHITECTURE: dict[str, str] = {
    "GPT2LMHeadModel": "gpt2",
    "Glm4vMoeForConditionalGeneration": "glm4v_moe",  # text_config model_type spelled "Glm4vMoe_text" by some copies
    "GPTBigCodeForCausalLM": "gpt_bigcode",
    "GPTJForCausalLM": "gptj",
    "GPTNeoXForCausalLM": "gpt_neox",
    "PhiForCausalLM": "phi",
    "MixFormerSequentialForCausalLM": "phi-msft",
    "Starcoder2ForCausalLM": "starcoder2",
    "FalconForCausalLM": "falcon",
    "OPTForCausalLM": "opt",
    "BloomForCausalLM": "bloom",
    "MPTForCausalLM": "mpt",
    "MptForCausalLM": "mpt",
    "ChatGLMModel": "chatglm",
    "ChatGLMForConditionalGeneration": "chatglm",
    "DbrxForCausalLM": "dbrx",
    "DeciLMForCausalLM": "nemotron-nas",
    "JambaForCausalLM": "jamba",
    "FalconH1ForCausalLM": "falcon_h1",
    # Hunyuan-A13B's first configs say model_type "hunyuan" (also Hunyuan-Large's, a CLA model) with this architecture
    "HunYuanMoEV1ForCausalLM": "hunyuan_v1_moe",
    "GraniteMoeHybridForCausalLM": "granitemoehybrid",
    "MambaForCausalLM": "mamba",
    "MiniMaxText01ForCausalLM": "minimax_text_01",
    "MiniMaxM1ForCausalLM": "minimax_m1",
    "MiniMaxForCausalLM": "minimax_text_01",
    "FalconMambaForCausalLM": "falcon_mamba",
    # InternLM2's first hub configs (internlm2-chat-7b, -1_8b-sft at their early revisions) say model_type "internlm"
    # with InternLM2ForCausalLM, which vLLM's registry runs as vllm/model_executor/models/internlm2.py
    "InternLM2ForCausalLM": "internlm2",
    "MiniCPMForCausalLM": "minicpm",  # OpenBMB's config.json files name no model_type
}


# Sub-configs are saved as a diff against their config class (transformers' to_diff_dict), so a multimodal
# wrapper's text_config may omit what equals the class default: transformers LlamaConfig / MistralConfig /
# Qwen2Config __init__ defaults.
TEXT_CONFIG_DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": {
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "vocab_size": 32000,
        "max_position_embeddings": 2048,
    },
    "mistral": {
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 32000,
        "max_position_embeddings": 4096 * 32,
        "sliding_window": 4096,
    },
    "qwen2": {
        "hidden_size": 4096,
        "intermediate_size": 22016,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "vocab_size": 151936,
        "max_position_embeddings": 32768,
    },
}


def family_key(arch: str, model_type: str) -> str:
    """The FAMILIES key for a config: its model_type, or the type its architecture implies."""
    if model_type in FAMILIES:
        return model_type
    base = model_type.removesuffix("_text")
    if base in FAMILIES:
        return base
    return _BY_ARCHITECTURE.get(arch, model_type)


def family_for(arch: str, model_type: str) -> Family:
    """The table entry for this architecture; unknown ones get the Llama layout, marked inexact."""
    found = FAMILIES.get(family_key(arch, model_type))
    if found is not None:
        return found
    reason = (
        f"model_type {model_type!r} is not in vllm-plan's architecture table: counted as a Llama-style decoder "
        "(gated MLP, RMSNorm, no biases)"
    )
    return Family(LLAMA.name, LLAMA.source, approximate=reason)
