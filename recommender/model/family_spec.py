"""The `Family` record (how one architecture lays out a decoder layer beyond what its config says) and the blocks
several table entries share (`recommender.model.families` keys them by model_type).

Sources: the vLLM 0.33 file named in each block (`vllm/model_executor/models/...`), or transformers' config class
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
    dbrx_keys,
    falcon_keys,
    glm4_moe_keys,
    gpt2_keys,
    internlm2_keys,
    mpt_keys,
    neox_keys,
    opt_keys,
    phi_keys,
    starcoder2_keys,
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

GPT2_ALIASES = (
    ("hidden_size", "n_embd"),
    ("num_hidden_layers", "n_layer"),
    ("num_attention_heads", "n_head"),
    ("intermediate_size", "n_inner"),
    ("max_position_embeddings", "n_positions"),
)
BLOOM_ALIASES = (("hidden_size", "n_embed"), ("num_hidden_layers", "n_layer"), ("num_attention_heads", "n_head"))

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
QWEN2 = Family("Qwen2", "vllm/model_executor/models/qwen2.py", qkv_bias=True)
QK_NORM = Family("Qwen3-style decoder (q/k norms)", "vllm/model_executor/models/qwen3.py", qk_norm=True)
GEMMA = Family("Gemma", "vllm/model_executor/models/gemma.py", tie_default=True)
GEMMA_SANDWICH = Family(
    "Gemma 2/3 (four norms a layer)", "vllm/model_executor/models/gemma2.py", norms_per_layer=4, tie_default=True
)
GEMMA3 = Family("Gemma 3", "vllm/model_executor/models/gemma3.py", norms_per_layer=4, tie_default=True, qk_norm=True)
NEMOTRON_H = Family("Nemotron-H hybrid", "vllm/model_executor/models/nemotron_h.py", norms_per_layer=1, score_bias=True)
INTERNLM2 = Family("InternLM2", "vllm/model_executor/models/internlm2.py", adapt=internlm2_keys)
GLM4_MOE = Family("GLM-4.5/4.6/4.7 MoE", "vllm/model_executor/models/glm4_moe.py", score_bias=True, adapt=glm4_moe_keys)
GPT2 = Family(
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
    aliases=GPT2_ALIASES,
)
# GPT-BigCode keeps GPT-2's block and key names (the shared adapter reads its multi_query key)
GPT_BIGCODE = replace(
    GPT2, name="GPT-BigCode (StarCoder)", source="transformers GPTBigCodeForCausalLM (vLLM's Transformers backend)"
)
GPTJ = Family(
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
    aliases=GPT2_ALIASES,
)
NEOX = Family(
    "GPT-NeoX / Pythia",
    "transformers GPTNeoXForCausalLM (vLLM's Transformers backend)",
    gated_mlp=False,
    norm="layer",
    parallel_block=True,
    adapt=neox_keys,
)
PHI = Family(
    "Phi-1.5 / Phi-2",
    "transformers PhiForCausalLM (vLLM's Transformers backend)",
    gated_mlp=False,
    norm="layer",
    norms_per_layer=1,
    parallel_block=True,
    lm_head_bias=True,
    adapt=phi_keys,
)
# Persimmon (PersimmonForCausalLM, vllm/model_executor/models/persimmon.py, served until 0.25.0): sequential
# LayerNorm blocks (input_layernorm, post_attention_layernorm, final_layernorm, weight and bias), a fused biased
# query_key_value and a biased dense, LayerNorm q/k over head_dim when qk_layernorm, a biased relu2 MLP
# dense_h_to_4h -> dense_4h_to_h, an untied bias-free lm_head (PersimmonConfig ties nothing by default).
PERSIMMON = Family(
    "Persimmon",
    "vllm/model_executor/models/persimmon.py (to 0.25.0)",
    gated_mlp=False,
    norm="layer",
    adapt=phi_keys,
)
STARCODER2 = Family(
    "StarCoder2",
    "transformers Starcoder2ForCausalLM (vLLM's Transformers backend)",
    gated_mlp=False,
    norm="layer",
    tie_default=True,
    adapt=starcoder2_keys,
)
FALCON = Family(
    "Falcon",
    "vllm/model_executor/models/falcon.py",
    gated_mlp=False,
    norm="layer",
    tie_default=True,
    adapt=falcon_keys,
    aliases=(("hidden_size", "n_embed"), ("num_hidden_layers", "n_layer"), ("num_attention_heads", "n_head")),
)
OPT = Family(
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
BLOOM = Family(
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
    aliases=BLOOM_ALIASES,
)
MPT = Family(
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
CHATGLM = Family("ChatGLM / GLM-4 (0414 and earlier)", "vllm/model_executor/models/chatglm.py", adapt=chatglm_keys)
DBRX = Family("DBRX", "vllm/model_executor/models/dbrx.py", norm="layer_nobias", adapt=dbrx_keys)
JAMBA = Family("Jamba (Mamba1 + attention + MoE)", "vllm/model_executor/models/jamba.py")
MAMBA = Family("Mamba (attention-free)", "vllm/model_executor/models/mamba.py", norms_per_layer=1, tie_default=True)
