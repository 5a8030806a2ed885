"""Frozen description of a model's architecture (what vLLM builds), independent of where it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

LayerKind = Literal["full", "sliding", "chunked", "mla", "linear_attention", "mamba", "cross", "none"]
"""Token mixer of one decoder layer. `none`: a layer without attention (e.g. an MLP-only Nemotron-H layer);
`cross`: cross-attention to the image encoder's states (Llama-3.2-Vision)."""

NormKind = Literal["rms", "layer", "layer_nobias"]
"""RMSNorm (a weight), LayerNorm (weight and bias), or LayerNorm without bias (DBRX)."""

MlpKind = Literal["dense", "moe", "none"]


@dataclass(frozen=True, slots=True)
class MoeSpec:
    """Routed experts (and optional shared experts) of an MoE layer."""

    num_experts: int
    top_k: int
    expert_intermediate: int
    shared_intermediate: int = 0  # total width of the shared expert(s), 0 if none
    gated: bool = True  # SwiGLU-style gate+up (2 x I) vs a single up projection (relu2)
    expert_bias: bool = False  # gpt-oss: biases on expert projections
    router_bias: bool = False
    shared_gate: bool = False  # Qwen2-MoE style sigmoid gate on the shared expert (H -> 1)
    extra_norms: int = 0  # Gemma-4: three more RMSNorms on layers with the MoE block
    latent_size: int = 0  # Nemotron-3 Super/Ultra: experts run in a latent width (H -> latent -> H projections)
    score_correction_bias: bool = False  # DeepSeek-style e_score_correction_bias (one per expert)
    router_scales: bool = False  # Gemma-4: per-dimension input scale (H) and per-expert output scale (E)


@dataclass(frozen=True, slots=True)
class IndexerSpec:
    """DeepSeek sparse attention's lightning indexer (DeepSeek-V3.2, GLM-5): its own K cache and projections on
    the layers in `layers` (vllm/models/deepseek_v32/attention.py DeepseekV32Indexer)."""

    n_heads: int
    head_dim: int
    topk: int
    layers: frozenset[int]


@dataclass(frozen=True, slots=True)
class MlaSpec:
    """Multi-head latent attention (DeepSeek V2/V3, Kimi-K2), sparse with an indexer (DeepSeek-V3.2, GLM-5)."""

    kv_lora_rank: int
    q_lora_rank: int | None
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    indexer: IndexerSpec | None = None
    # The head size of a per-head K and V cache kept instead of the latent, else 0. MiniCPM3 (vllm minicpm3.py
    # MiniCPM3Attention): MLA projections, but a plain Attention(num_heads, qk_head_dim, num_kv_heads=num_heads)
    # whose K is nope+rope and whose V is padded to qk_head_dim, so every head caches K and V of that size.
    per_head_cache: int = 0


@dataclass(frozen=True, slots=True)
class CompressedAttentionSpec:
    """DeepSeek-V4's compressed sparse attention (vllm/models/deepseek_v4/attention.py DeepseekV4Attention): every
    layer keeps a sliding window of head_dim-wide latents; a layer of ratio 4 (C4) or 128 (C128) also keeps one
    compressed latent per `ratio` tokens and its compressor's running state; C4 layers add the lightning indexer's
    compressed K cache and its compressor state. `ratios[i]` is layer i's ratio (1: the window alone)."""

    ratios: tuple[int, ...]
    head_dim: int  # the latent (512)
    window: int  # sliding_window (128)
    index_head_dim: int  # the indexer's K width (128)
    mtp_layers: int = 0  # num_nextn_predict_layers: window-only layers a speculative MTP drafter adds
    q_lora_rank: int = 0  # fused_wqa_wkv's query part, wq_b's input
    o_lora_rank: int = 0  # grouped output LoRA: wo_a (o_groups x o_lora_rank wide), wo_b
    o_groups: int = 1
    index_n_heads: int = 0  # the indexer's query heads (wq_b, weights_proj)
    index_topk: int = 0  # compressed positions each query attends (topk_indices_buffer width)
    hc_mult: int = 0  # hyper-connections: hc_mult residual streams mixed per layer (hc_attn_fn, hc_ffn_fn)
    hash_layers: int = 0  # num_hash_layers: the first MoE layers route by a token-id table (tid2eid)


@dataclass(frozen=True, slots=True)
class LinearAttentionSpec:
    """Gated DeltaNet (Qwen3-Next / Qwen3.5), Kimi delta attention (Kimi-Linear) or MiniMax lightning attention
    (MiniMax-Text-01 / M1: no conv, num_heads x head_dim square states) recurrent layers."""

    num_k_heads: int
    num_v_heads: int
    head_k_dim: int
    head_v_dim: int
    conv_kernel: int
    state_dtype: str | None = None  # mamba_ssm_dtype from the config (Qwen3.5: float32)
    style: Literal["gdn", "kda", "lightning"] = "gdn"  # gated DeltaNet, Kimi delta attention, MiniMax lightning


@dataclass(frozen=True, slots=True)
class MambaSpec:
    """Mamba2 mixer (Nemotron-H, Granite-4-H, Bamba)."""

    num_heads: int
    head_dim: int
    state_size: int
    n_groups: int
    conv_kernel: int
    intermediate: int
    ssm_state_dtype: str | None = None  # NemotronH: float32 unless set
    version: int = (
        2  # 1: Mamba1 selective scan (Jamba, Falcon-Mamba): per-channel state, x_proj/dt_proj; 0: LFM2 short conv
    )
    dt_rank: int = 0  # Mamba1 only
    conv_bias: bool = True
    proj_bias: bool = False  # in_proj / out_proj biases
    inner_norms: bool = False  # Jamba: RMSNorms on dt, B and C
    gated_norm: bool = True  # Mamba2's RMSNormGated over the inner width (Falcon-H1: mamba_rms_norm)


@dataclass(frozen=True, slots=True)
class VisionSpec:
    """A ViT-style vision encoder (SigLIP, Qwen-VL) and its projector into the language model."""

    depth: int
    hidden: int
    intermediate: int
    patch_params: int  # patch embedding weights (channels x patch area x temporal x hidden)
    positions: int  # learned position embeddings
    projector_in: int
    projector_hidden: int  # 0: a single projection projector_in -> text hidden
    out_hidden: int
    # vit: LayerNorm, biased qkv/fc1/fc2; gemma4: RMSNorm, gated MLP; qwen2_5: RMSNorm, biased gated MLP;
    # glm4v: RMSNorm, bias-free qkv and gated MLP, a downsampling conv and a gated merger (GLM-4.1V / 4.5V)
    style: Literal["vit", "gemma4", "mllama", "qwen2_5", "glm4v"] = "vit"
    global_depth: int = 0  # mllama: gated global layers after the local ones
    tiles: int = 0  # mllama: max_num_tiles
    aspect_ratios: int = 0  # mllama: supported aspect ratios (tile-embedding rows = this + 1)
    head_dim: int = 0  # gemma4: q/k norms of this width
    merger_norm: int = 0  # parameters of the merger's norm (Qwen3-VL / Qwen3.5: LayerNorm over the ViT width)
    deepstack: int = 0  # Qwen3-VL deepstack_visual_indexes: extra mergers, each normed over the merged width
    # parameters each "vit" block holds beyond its biased qkv/proj/fc1/fc2 and two LayerNorms (InternViT: the ls1 / ls2
    # layer scales and q/k norms, less the biases RMSNorms or a bias-free qkv do not have)
    block_extra: int = 0


@dataclass(frozen=True, slots=True)
class AudioSpec:
    """An audio encoder and its linear projector into the LM: Whisper-style (transformers Qwen2AudioEncoder) or
    Gemma-4's conformer (transformers Gemma4AudioModel, style "gemma4")."""

    layers: int  # encoder_layers / num_hidden_layers
    hidden: int  # d_model / hidden_size
    ffn: int  # encoder_ffn_dim (gemma4: 4 x hidden, fixed in transformers)
    mel_bins: int  # num_mel_bins: conv1's input channels (gemma4: 0, the subsampling convs take 1 channel)
    positions: int  # max_source_positions: the learned position table (gemma4: 0, relative positions)
    out_hidden: int  # the language model's hidden size (multi_modal_projector / embed_audio output)
    style: Literal["whisper", "gemma4"] = "whisper"
    heads: int = 0  # gemma4: num_attention_heads (per_dim_scale is one head wide)
    conv_channels: tuple[int, int] = (0, 0)  # gemma4: subsampling_conv_channels
    conv_kernel: int = 0  # gemma4: the light conv's depthwise kernel (conv_kernel_size)
    out_proj: int = 0  # gemma4: output_proj_dims, the encoder's output width (embed_audio's input)


@dataclass(frozen=True, slots=True)
class QuantSpec:
    """Weight quantization as declared by the checkpoint (or requested online).

    `method`: fp8 | gptq | awq | int8 | nvfp4 | mxfp4 (experts only) | ocp-mx (Quark MXFP4 / MXFP6, every
    linear) | mxfp8 | modelopt-mixed | bitsandbytes | experts_int8.
    `bits`: bits per quantized weight; `group_size`: elements sharing one scale (-1 = per channel,
    0 = per tensor); `block`: 2-D block scales (DeepSeek FP8 128x128).
    """

    method: str
    bits: int
    group_size: int = 0
    block: tuple[int, int] | None = None
    has_zero_points: bool = False
    lm_head_quantized: bool = False
    keep_unquantized: tuple[str, ...] = ()  # module-name patterns left in 16 bit
    kv_cache_fp8: bool = False  # checkpoint declares an FP8 KV cache (vLLM then defaults to fp8)
    static_input_scales: bool = False
    mixed: tuple[tuple[str, str], ...] = ()  # ModelOpt MIXED_PRECISION: (module pattern, algo)
    double_quant: bool = False  # bitsandbytes: absmax stored 8-bit with a nested float32 absmax per 256 blocks
    expert_method: str | None = None  # routed experts stored in another format (DeepSeek-V4 expert_dtype fp4: mxfp4)
    checkpoint_format: str = (
        ""  # the quant_method the checkpoint declares ("compressed-tensors", "auto-round"); "" online
    )
    label: str = ""  # short human label: "AWQ 4-bit g128", "FP8 block 128x128"


@dataclass(frozen=True, slots=True)
class ParamCounts:
    """Exact parameter counts per tensor group (logical, unsharded, before quantization)."""

    embedding: int
    attention: int
    mlp: int
    experts: int
    shared_experts: int
    router: int
    mixer: int  # Mamba / linear-attention layers
    norms: int
    lm_head: int
    vision: int = 0  # vision / audio encoder + projector (multimodal checkpoints)

    @property
    def total(self) -> int:
        """Total parameters as a checkpoint counts them (tied lm_head counted once)."""
        return (
            self.embedding
            + self.attention
            + self.mlp
            + self.experts
            + self.shared_experts
            + self.router
            + self.mixer
            + self.norms
            + self.lm_head
            + self.vision
        )


@dataclass(frozen=True, slots=True)
class CheckpointTensor:
    """One tensor as a safetensors header lists it (local shards, or the hub's headers read by range requests)."""

    name: str
    dtype: str  # safetensors dtype: BF16, F16, F32, F8_E4M3, I32, U8, F4, ...
    shape: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class FirstRelease:
    """The first vLLM release whose model registry names an architecture (or, for a variant, whose model code
    builds the layers `config_key` asks for): `first` when pinned, else the bracket (`after`: the newest release
    known without it; `by`: a release known to have it)."""

    architecture: str
    first: str | None
    after: str | None
    by: str | None
    source: str
    config_key: str | None = None  # a variant: the config.json key whose layers the architecture's code gained later
    base: FirstRelease | None = None  # a variant: the architecture's own row (decides for releases before it)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """Everything the memory model needs about one model."""

    name: str
    architecture: str
    model_type: str
    dtype: str  # checkpoint torch dtype: bfloat16 | float16 | float32
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int
    intermediate_size: int
    vocab_size: int
    max_model_len: int  # derived maximum context (vLLM's _get_and_verify_max_len)
    max_len_key: str  # which config key gave it, for the error text
    tie_word_embeddings: bool
    layer_kinds: tuple[LayerKind, ...]
    mlp_kinds: tuple[MlpKind, ...]
    sliding_window: int | None = None
    attention_chunk_size: int | None = None
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    gated_mlp: bool = True
    qk_norm: bool = False
    qk_norm_over_heads: bool = False  # MiniMax-M2 qk_norm_type "per_layer": one norm over all heads' q (and k)
    norms_per_layer: int = 2
    norms_follow_blocks: bool = False  # DeciLM: one norm before attention and one before the MLP, where present
    norm_kind: NormKind = "rms"
    final_norm: bool = True
    embedding_norm: bool = False  # BLOOM: a LayerNorm right after the token embedding
    learned_positions: int = 0  # rows of a learned absolute position table (GPT-2, OPT)
    lm_head_bias: bool = False  # phi-2, GPT-J
    parallel_block: bool = False  # attention and MLP read the same normed input (GPT-J, GPT-NeoX, Falcon, phi-2)
    layer_kv_heads: tuple[int, ...] = ()  # per-layer KV heads where layers differ (Gemma-4 full layers, DeciLM)
    layer_head_dim: tuple[int, ...] = ()  # per-layer head size where layers differ (Gemma-4 global_head_dim)
    layer_intermediate: tuple[int, ...] = ()  # per-layer dense MLP width where layers differ (DeciLM, Gemma-4 E)
    k_eq_v: bool = False  # Gemma-4: full-attention layers ship K only; vLLM loads it into the K and V slots
    kv_shared_from: int | None = None  # first layer reusing an earlier layer's KV (Gemma-4 E models): no cache
    per_layer_input: int = 0  # Gemma-4 E models: per-layer embedding width (vocab x layers x this table)
    per_layer_vocab: int = 0
    embedding_rows: int = 0  # token-embedding rows when they exceed vocab_size (mllama: 8 image tokens); 0: vocab
    layer_scalar: bool = False  # Gemma-4: one learned scalar a layer
    mamba_beside_attention: bool = False  # Falcon-H1: every layer runs attention and a Mamba2 mixer in parallel
    attention_sinks: Literal["none", "all", "sliding"] = "none"  # per-head sink logits (gpt-oss; MiMo-V2 SWA)
    attn_output_gate: bool = False  # Qwen3-Next/3.5: q_proj also emits a gate (2 x q width)
    rotary_dim: int = 0
    rope_max_position: int = 0
    rope_mrope: bool = False  # an MRotaryEmbedding (rope parameters with mrope_section): its cache is enlarged
    moe: MoeSpec | None = None
    mla: MlaSpec | None = None
    compressed_attention: CompressedAttentionSpec | None = None
    linear_attention: LinearAttentionSpec | None = None
    mamba: MambaSpec | None = None
    quant: QuantSpec | None = None
    multimodal: bool = False
    vision: VisionSpec | None = None
    audio: AudioSpec | None = None
    params: ParamCounts | None = None
    published_params: int | None = None
    checkpoint_bytes: int | None = None  # from safetensors headers of a local checkpoint
    checkpoint_dtypes: tuple[tuple[str, int], ...] = ()
    checkpoint_tensors: tuple[CheckpointTensor, ...] = ()  # every tensor of the checkpoint, when headers were read
    source: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    family: str = ""  # the per-architecture entry the config was read with (model/families.py)
    approximate: tuple[str, ...] = ()  # why the figures are estimates (architecture not modelled exactly)
    served_until: str | None = None  # the last vLLM release that served this architecture (registry.py)
    # num_nextn_predict_layers (DeepSeek, GLM, MiMo...) / mtp_num_hidden_layers (Qwen3.5): MTP layers in the checkpoint,
    # loaded only with speculative decoding (memory/spec_decode.py)
    mtp_layers: int = 0
    first_release: FirstRelease | None = None  # the first vLLM release that can load it (profiles/architectures.yaml)
    pooling: bool = False  # vLLM's pooling runner (embeddings): no LM head, no sampler (model/pooling.py)
    # every attention layer bidirectional (vLLM's EncoderOnlyAttention, AttentionType.ENCODER_ONLY: BERT-style encoders,
    # a decoder whose config says is_causal false): vLLM keeps no KV cache for it (model/pooling.py)
    encoder_only: bool = False
    token_types: int = 0  # BERT token_type_embeddings rows (type_vocab_size)
    classifier_labels: int = 0  # a sequence-classification head's outputs (rerankers, classifiers); 0: none

    def kv_heads_at(self, layer: int) -> int:
        """KV heads of one layer's attention."""
        return self.layer_kv_heads[layer] if self.layer_kv_heads else self.num_kv_heads

    def head_dim_at(self, layer: int) -> int:
        """Head size (K and Q) of one layer's attention."""
        return self.layer_head_dim[layer] if self.layer_head_dim else self.head_dim

    def v_head_dim_at(self, layer: int) -> int:
        """V head size of one layer's attention (a V size of its own, as MiMo-V2's 128 beside 192, holds everywhere)."""
        if self.layer_head_dim and self.v_head_dim == self.head_dim:
            return self.layer_head_dim[layer]
        return self.v_head_dim

    def intermediate_at(self, layer: int) -> int:
        """Dense MLP width of one layer."""
        return self.layer_intermediate[layer] if self.layer_intermediate else self.intermediate_size

    def has_kv_cache(self, layer: int) -> bool:
        """False for layers that read another layer's KV (KV sharing)."""
        return self.kv_shared_from is None or layer < self.kv_shared_from

    @property
    def is_moe(self) -> bool:
        """True when at least one layer routes to experts."""
        return self.moe is not None and "moe" in self.mlp_kinds

    @property
    def attention_kinds(self) -> tuple[str, ...]:
        """Distinct token-mixer kinds, in first-seen order."""
        return tuple(dict.fromkeys(self.layer_kinds))

    @property
    def is_hybrid(self) -> bool:
        """More than one KV-cache kind (sliding + full, mamba + attention...)."""
        return len(set(self.layer_kinds) - {"none"}) > 1
