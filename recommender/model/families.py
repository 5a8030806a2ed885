"""Per-architecture facts that config.json does not state, in one table (what vLLM's model file for the
architecture builds), and the architectures refused by name.

`family_for(arch, model_type)` returns the entry a config is read with; `refusal(arch, model_type)` the reason an
architecture is not planned. Each family names its config-key adapter (`recommender.model.family_keys`).
Sources: the vLLM 0.33 file named in each entry (`vllm/model_executor/models/...`), or transformers' config class
for key names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from recommender.model.family_keys import (
    Adapted,
    bloom_keys,
    chatglm_keys,
    cohere2_moe_keys,
    cohere_keys,
    dbrx_keys,
    deepseek_v4_keys,
    ernie45_moe_keys,
    falcon_h1_keys,
    falcon_keys,
    glm4_moe_keys,
    gpt2_keys,
    granite_hybrid_keys,
    hunyuan_v1_keys,
    internlm2_keys,
    kimi_linear_keys,
    mimo_v2_keys,
    minimax_m2_keys,
    minimax_text01_keys,
    mllama_keys,
    mpt_keys,
    neox_keys,
    opt_keys,
    phi_keys,
    qwen1_keys,
    starcoder2_keys,
    step3p5_keys,
)
from recommender.model.spec import NormKind

Adapter = Callable[[Mapping[str, Any]], Adapted]


@dataclass(frozen=True, slots=True)
class Family:
    """How one architecture family lays out a decoder layer beyond what its config says."""

    name: str
    source: str  # the vLLM model file (or transformers class) the facts come from
    gated_mlp: bool = True  # gate+up (SwiGLU-style) vs a plain fc1/fc2 (c_fc/c_proj, dense_h_to_4h) MLP
    norm: NormKind = "rms"
    norms_per_layer: int = 2
    parallel_block: bool = False
    qkv_bias: bool | None = None  # None: the config's attention_bias
    o_bias: bool | None = None  # None: False
    mlp_bias: bool | None = None  # None: the config's mlp_bias
    lm_head_bias: bool = False
    embedding_norm: bool = False
    learned_positions: bool = False
    tie_default: bool = False  # tie_word_embeddings when the config omits it (transformers' config default)
    qk_norm: bool = False
    score_bias: bool | None = None  # MoE e_score_correction_bias; None: when topk_method is "noaux_tc"
    qk_norm_over_heads: bool = False
    attention_sinks: Literal["none", "all", "sliding"] = "none"
    final_norm: bool = True
    position_offset: int = 0  # learned position rows beyond max_position_embeddings (OPT: 2)
    adapt: Adapter | None = None  # family keys -> common keys, and entries that depend on the config
    approximate: str = ""  # non-empty: counted with a generic formula, for this reason
    aliases: tuple[tuple[str, str], ...] = field(default=())  # (common key, family key) renames


# MiniMax-Text-01 / M1: lightning attention layers (model/features.py lightning_attention_spec reads them).
LIGHTNING_TYPES = ("minimax_text_01", "minimax_m1")
LIGHTNING_SOURCE = "vllm minimax_text_01.py (to 0.23.0); 0.33 layers/mamba/linear/minimax_linear_attn.py"

_GPT2_ALIASES = (
    ("hidden_size", "n_embd"),
    ("num_hidden_layers", "n_layer"),
    ("num_attention_heads", "n_head"),
    ("intermediate_size", "n_inner"),
    ("max_position_embeddings", "n_positions"),
)
_BLOOM_ALIASES = (("hidden_size", "n_embed"), ("num_hidden_layers", "n_layer"), ("num_attention_heads", "n_head"))

LLAMA = Family("Llama-style decoder", "vllm/model_executor/models/llama.py")
# BERT-style encoders (vllm bert.py BertEmbedding/BertLayer, roberta.py RobertaEmbedding): post-LayerNorm layers
# (attention output and MLP output), biases on every linear, a GELU fc MLP, learned absolute positions and token
# types beside the word embeddings, a LayerNorm over the embeddings and none at the end. Served only for pooling.
BERT = Family(
    "BERT-style encoder",
    "vllm/model_executor/models/bert.py, roberta.py",
    gated_mlp=False,
    norm="layer",
    qkv_bias=True,
    o_bias=True,
    mlp_bias=True,
    embedding_norm=True,
    learned_positions=True,
    final_norm=False,
)
BERT_TYPES = ("bert", "roberta", "xlm-roberta")
_QWEN2 = Family("Qwen2", "vllm/model_executor/models/qwen2.py", qkv_bias=True)
_QK_NORM = Family("Qwen3-style decoder (q/k norms)", "vllm/model_executor/models/qwen3.py", qk_norm=True)
_GEMMA = Family("Gemma", "vllm/model_executor/models/gemma.py", tie_default=True)
_GEMMA_SANDWICH = Family(
    "Gemma 2/3 (four norms a layer)", "vllm/model_executor/models/gemma2.py", norms_per_layer=4, tie_default=True
)
_GEMMA3 = Family("Gemma 3", "vllm/model_executor/models/gemma3.py", norms_per_layer=4, tie_default=True, qk_norm=True)
_NEMOTRON_H = Family(
    "Nemotron-H hybrid", "vllm/model_executor/models/nemotron_h.py", norms_per_layer=1, score_bias=True
)
_INTERNLM2 = Family("InternLM2", "vllm/model_executor/models/internlm2.py", adapt=internlm2_keys)
_GLM4_MOE = Family(
    "GLM-4.5/4.6/4.7 MoE", "vllm/model_executor/models/glm4_moe.py", score_bias=True, adapt=glm4_moe_keys
)
_GPT2 = Family(
    "GPT-2",
    "vllm/model_executor/models/gpt2.py",
    gated_mlp=False,
    norm="layer",
    qkv_bias=True,
    o_bias=True,
    mlp_bias=True,
    learned_positions=True,
    tie_default=True,
    adapt=gpt2_keys,
    aliases=_GPT2_ALIASES,
)
# GPT-BigCode keeps GPT-2's block and key names (the shared adapter reads its multi_query key)
_GPT_BIGCODE = replace(
    _GPT2, name="GPT-BigCode (StarCoder)", source="transformers GPTBigCodeForCausalLM (vLLM's Transformers backend)"
)
_GPTJ = Family(
    "GPT-J",
    "vllm/model_executor/models/gpt_j.py",
    gated_mlp=False,
    norm="layer",
    norms_per_layer=1,
    parallel_block=True,
    qkv_bias=False,
    o_bias=False,
    mlp_bias=True,
    lm_head_bias=True,
    adapt=gpt2_keys,
    aliases=_GPT2_ALIASES,
)
_NEOX = Family(
    "GPT-NeoX / Pythia",
    "transformers GPTNeoXForCausalLM (vLLM's Transformers backend)",
    gated_mlp=False,
    norm="layer",
    parallel_block=True,
    adapt=neox_keys,
)
_PHI = Family(
    "Phi-1.5 / Phi-2",
    "transformers PhiForCausalLM (vLLM's Transformers backend)",
    gated_mlp=False,
    norm="layer",
    norms_per_layer=1,
    parallel_block=True,
    lm_head_bias=True,
    adapt=phi_keys,
)
_STARCODER2 = Family(
    "StarCoder2",
    "transformers Starcoder2ForCausalLM (vLLM's Transformers backend)",
    gated_mlp=False,
    norm="layer",
    tie_default=True,
    adapt=starcoder2_keys,
)
_FALCON = Family(
    "Falcon",
    "vllm/model_executor/models/falcon.py",
    gated_mlp=False,
    norm="layer",
    tie_default=True,
    adapt=falcon_keys,
    aliases=(("hidden_size", "n_embed"), ("num_hidden_layers", "n_layer"), ("num_attention_heads", "n_head")),
)
_OPT = Family(
    "OPT",
    "vllm/model_executor/models/opt.py",
    gated_mlp=False,
    norm="layer",
    learned_positions=True,
    position_offset=2,  # OPTLearnedPositionalEmbedding
    tie_default=True,
    adapt=opt_keys,
    aliases=(("intermediate_size", "ffn_dim"),),
)
_BLOOM = Family(
    "BLOOM",
    "vllm/model_executor/models/bloom.py",
    gated_mlp=False,
    norm="layer",
    qkv_bias=True,
    o_bias=True,
    mlp_bias=True,
    embedding_norm=True,
    tie_default=True,
    adapt=bloom_keys,
    aliases=_BLOOM_ALIASES,
)
_MPT = Family(
    "MPT",
    "vllm/model_executor/models/mpt.py (to 0.28.0)",
    gated_mlp=False,
    norm="layer",
    tie_default=True,  # MPTForCausalLM asserts tie_word_embeddings: lm_head is transformer.wte
    adapt=mpt_keys,
    aliases=(
        ("hidden_size", "d_model"),
        ("num_hidden_layers", "n_layers"),
        ("num_attention_heads", "n_heads"),
        ("max_position_embeddings", "max_seq_len"),
    ),
)
_CHATGLM = Family("ChatGLM / GLM-4 (0414 and earlier)", "vllm/model_executor/models/chatglm.py", adapt=chatglm_keys)
_DBRX = Family("DBRX", "vllm/model_executor/models/dbrx.py", norm="layer_nobias", adapt=dbrx_keys)
_JAMBA = Family("Jamba (Mamba1 + attention + MoE)", "vllm/model_executor/models/jamba.py")
_MAMBA = Family("Mamba (attention-free)", "vllm/model_executor/models/mamba.py", norms_per_layer=1, tie_default=True)

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
    **dict.fromkeys(("qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "mimo"), _QWEN2),
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
        _QK_NORM,
    ),
    "gemma": _GEMMA,
    "gemma2": _GEMMA_SANDWICH,
    **dict.fromkeys(("gemma3", "gemma3_text"), _GEMMA3),
    **dict.fromkeys(
        ("gemma4", "gemma4_text"), replace(_GEMMA3, name="Gemma 4", source="vllm/model_executor/models/gemma4.py")
    ),
    "nemotron_h": _NEMOTRON_H,
    "gpt2": _GPT2,
    **dict.fromkeys(BERT_TYPES, BERT),
    "gpt_bigcode": _GPT_BIGCODE,
    "gptj": _GPTJ,
    "gpt_neox": _NEOX,
    "phi": _PHI,
    "phi-msft": replace(_PHI, aliases=(*_GPT2_ALIASES, ("num_key_value_heads", "n_head_kv"))),
    "starcoder2": _STARCODER2,
    **dict.fromkeys(("falcon", "RefinedWeb", "RefinedWebModel"), _FALCON),
    "opt": _OPT,
    "bloom": _BLOOM,
    "mpt": _MPT,
    "chatglm": _CHATGLM,
    # Qwen (v1) QWenLMHeadModel: vllm/model_executor/models/qwen.py, served until 0.23.0 (SERVED_UNTIL below)
    "qwen": Family("Qwen (v1)", "vllm/model_executor/models/qwen.py (to 0.23.0)", qkv_bias=True, adapt=qwen1_keys),
    "dbrx": _DBRX,
    "internlm2": _INTERNLM2,
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
    **dict.fromkeys(("glm4_moe", "glm4v_moe"), _GLM4_MOE),
    **dict.fromkeys(("deepseek_v32", "glm_moe_dsa"), LLAMA),  # MLA + indexer: model/features.py indexer_spec
    "glm4_moe_lite": Family(
        "GLM-4.7-Flash (MLA + GLM MoE)", "vllm/model_executor/models/glm4_moe_lite.py", score_bias=True
    ),
    "jamba": _JAMBA,
    **dict.fromkeys(("mamba", "falcon_mamba"), _MAMBA),
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


# --- Architectures refused by name -----------------------------------------------------------------------------

_ENCODER_ONLY_TYPES = frozenset(
    {
        "distilbert",
        "electra",
        "deberta",
        "deberta-v2",
        "modernbert",
        "nomic_bert",
        "albert",
        "mpnet",
        "camembert",
        "new",
        "xlm-roberta-xl",
        "ernie",
    }
)
_ENCODER_DECODER_TYPES = frozenset({"t5", "mt5", "umt5", "bart", "mbart", "pegasus", "marian", "whisper", "m2m_100"})
_TASK_HEADS = ("ForTokenClassification", "ForMaskedLM", "ForQuestionAnswering")


def _task_head(arch: str) -> str:
    return next(h for h in _TASK_HEADS if arch.endswith(h)).removeprefix("For")


# vllm/model_executor/models/registry.py _PREVIOUSLY_SUPPORTED_MODELS (0.33.0): the last release that served them.
SERVED_UNTIL: dict[str, str] = {
    "MotifForCausalLM": "0.10.2",
    "Phi3SmallForCausalLM": "0.9.2",
    "Phi4FlashForCausalLM": "0.10.2",
    "Phi4MultimodalForCausalLM": "0.12.0",
    "DonutForConditionalGeneration": "0.10.2",
    "MllamaForConditionalGeneration": "0.10.2",
    "BambaForCausalLM": "0.23.0",
    "MiniMaxForCausalLM": "0.23.0",
    "MiniMaxText01ForCausalLM": "0.23.0",
    "MiniMaxM1ForCausalLM": "0.23.0",
    "BaiChuanForCausalLM": "0.23.0",
    "BaichuanForCausalLM": "0.23.0",
    "QWenLMHeadModel": "0.23.0",
    "InternLMForCausalLM": "0.23.0",
    "XverseForCausalLM": "0.23.0",
    "AquilaForCausalLM": "0.24.0",
    "Grok1ForCausalLM": "0.24.0",
    "PersimmonForCausalLM": "0.25.0",
    "Plamo2ForCausalLM": "0.26.0",
    "ArcticForCausalLM": "0.28.0",
    "MPTForCausalLM": "0.28.0",
    "MptForCausalLM": "0.28.0",
    "RWForCausalLM": "0.28.0",
    "StableLMEpochForCausalLM": "0.28.0",
}


def refusal(arch: str, model_type: str) -> str | None:
    """Why vllm-plan does not plan this architecture (a decoder served for generation is planned), or None."""
    if model_type in _ENCODER_ONLY_TYPES:
        return (
            f"{arch} (model_type {model_type!r}) is an encoder-only model vllm-plan does not lay out: it plans the "
            f"BERT / RoBERTa / XLM-RoBERTa encoders ({', '.join(BERT_TYPES)}) and decoder-based embedders"
        )
    if arch.endswith(_TASK_HEADS):
        return (
            f"{arch} (model_type {model_type!r}) has a {_task_head(arch)} head vllm-plan does not lay out: it plans "
            "the base models (*Model) and *ForSequenceClassification rerankers and classifiers"
        )
    if model_type in _ENCODER_DECODER_TYPES:
        return (
            f"{arch} (model_type {model_type!r}) is an encoder-decoder model: vLLM 0.33 serves none in-tree except "
            "Whisper, whose encoder cache vllm-plan does not model"
        )
    return None
