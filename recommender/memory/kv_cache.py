"""KV-cache page sizes, vLLM's KV-cache groups, and blocks per request (vllm/v1/kv_cache_interface.py,
vllm/v1/core/kv_cache_planning.py in 0.33)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from recommender.model.spec import ModelSpec
from recommender.units import cdiv

SpecKind = Literal["full", "sliding", "chunked", "mla", "mamba"]
_STATE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, None: 2}
# Sparse MLA (DeepSeek-V3.2, GLM-5): FlashMLA-sparse stores a quantized cache as fp8_ds_mla, an opaque 656-byte
# blob per token (NoPE fp8 + scales + RoPE bf16; mla_attention.py get_kv_cache_spec), whatever fp8 flavour is asked.
FP8_DS_MLA_BYTES = 656
INDEXER_QUANT_BLOCK = 128
# DeepSeek-V4's fp8_ds_mla latent: 448 NoPE fp8 + 128 RoPE (64 bf16) + 8 scale bytes a token (memory/kv_dsv4.py)
DS_MLA_TOKEN_BYTES = 584
MLA_HYBRID_BLOCK_ALIGNMENT = 128  # _align_hybrid_block_size: max(kernel block, 128) when the model uses MLA  # the indexer K cache holds head_dim fp8 bytes + 4 scale bytes per 128 (uint8 cache)


@dataclass(frozen=True, slots=True)
class LayerKv:
    """KV spec of one layer on one GPU."""

    kind: SpecKind
    page_bytes: int  # bytes of one block of this layer (padded for mamba)
    bytes_per_token: int  # 0 for mamba (state per request)
    window: int | None = None
    block_size: int | None = None  # tokens per block when unifying page sizes scaled it (None: the layout's)


@dataclass(frozen=True, slots=True)
class KvGroup:
    """A KV-cache group: up to `size` layers of one kind sharing block ids."""

    kind: SpecKind
    layers: int
    window: int | None
    block_size: int | None = None  # None: the layout's block size


@dataclass(frozen=True, slots=True)
class KvLayout:
    """The grouped layout of one GPU's KV cache."""

    block_size: int
    groups: tuple[KvGroup, ...]
    group_size: int  # layer slots per group (padding included)
    page_bytes: int  # one layer's page (uniform after unification)
    bytes_per_block: int  # group_size * page_bytes (all groups alias one pool)
    bytes_per_token: int  # full-attention-equivalent bytes per token over this GPU's attention layers
    padding_layers: int
    padding_by_kind: tuple[tuple[str, int, int], ...] = ()  # (kind, padding layers, layers of that kind)
    # MambaSpec.num_speculative_blocks: a speculative decoder's extra state blocks per request in each Mamba group
    speculative_blocks: int = 0
    # Up to 0.26, get_max_concurrency_for_kv_cache_config divides the groups' summed bytes per request by the first
    # group's page (kv_cache_utils.py: cdiv(num_layer_per_group * sum(max_memory_usage_bytes), page_size_bytes of
    # kv_cache_groups[0] * num_layer_per_group)); with groups of unequal pages (DeepSeek-V4's packing, memory/
    # kv_dsv4.py) that is not the sum of their blocks. Each group's page, aligned to `groups`, and the first group's
    # page; empty where every group's page is one size (the two formulas agree).
    group_pages: tuple[int, ...] = ()
    first_group_page: int = 0

    def blocks_per_request(self, max_model_len: int, max_in_flight_tokens: int, *, prefix_caching: bool) -> int:
        """Sum over groups of cdiv(max_memory_usage_bytes, page) for one max-length request."""
        total = 0
        for g in self.groups:
            bs = g.block_size or self.block_size
            if g.kind in ("full", "mla"):
                total += cdiv(max_model_len, bs)
            elif g.kind in ("sliding", "chunked"):
                w = g.window or max_model_len
                span = min(w - 1 + max_in_flight_tokens, max_model_len)
                total += cdiv(span, bs) + 1
            else:  # mamba: one state block (two with prefix caching's align mode), + one per draft token
                total += (2 if prefix_caching else 1) + self.speculative_blocks
        return total

    def group_blocks(self, max_model_len: int, max_in_flight_tokens: int, *, prefix_caching: bool) -> list[int]:
        """Each group's blocks for one max-length request (blocks_per_request, group by group)."""
        return [
            replace(self, groups=(g,)).blocks_per_request(
                max_model_len, max_in_flight_tokens, prefix_caching=prefix_caching
            )
            for g in self.groups
        ]

    def concurrency_blocks(self, max_model_len: int, max_in_flight_tokens: int, *, prefix_caching: bool) -> int:
        """The blocks per request "Maximum concurrency" divides the pool by: the sum over groups (0.27+:
        sum of cdiv(max_memory_usage_bytes, page_size_bytes)), or up to 0.26 the groups' bytes in pages of the
        first group (group_pages)."""
        if not self.group_pages or not self.first_group_page:
            return self.blocks_per_request(max_model_len, max_in_flight_tokens, prefix_caching=prefix_caching)
        blocks = self.group_blocks(max_model_len, max_in_flight_tokens, prefix_caching=prefix_caching)
        return cdiv(sum(b * page for b, page in zip(blocks, self.group_pages, strict=True)), self.first_group_page)


def kv_dtype_bytes(kv_cache_dtype: str, model_dtype_bytes: int) -> int:
    """`auto` is the model dtype; fp8 variants are stored as uint8."""
    if kv_cache_dtype.startswith("fp8"):
        return 1
    if kv_cache_dtype in ("float16", "bfloat16"):
        return 2
    return model_dtype_bytes


def layer_kv(
    s: ModelSpec, i: int, *, tp: int, block_size: int, kv_bytes: int, model_bytes: int, mla_as_mha: int = 0
) -> LayerKv | None:
    """The KV spec of layer i on one TP rank, or None for a layer without cache (`mla_as_mha`: an MLA model's cache
    as the per-head K and V of that head size, as vLLM kept it before MLA: see PRE_MLA_HEAD_SIZE)."""
    kind = s.layer_kinds[i]
    if not s.has_kv_cache(i) or s.encoder_only:  # KV sharing; ENCODER_ONLY attention keeps none (memory/no_kv.py)
        return None
    if s.compressed_attention is not None:
        return _compressed_kv(s, i, block_size)
    if kind in ("full", "sliding", "chunked", "cross"):  # cross: approximated per token (spec.approximate says so)
        kvh = max(1, s.kv_heads_at(i) // tp)
        per_token = kvh * (s.head_dim_at(i) + s.v_head_dim_at(i)) * kv_bytes
        window = s.sliding_window if kind == "sliding" else s.attention_chunk_size if kind == "chunked" else None
        return LayerKv("full" if kind == "cross" else kind, block_size * per_token, per_token, window)
    per_head = mla_as_mha or (s.mla.per_head_cache if s.mla is not None else 0)
    if kind == "mla" and per_head:  # the pre-MLA DeepSeek cache, or MiniCPM3's (MlaSpec.per_head_cache)
        per_token = 2 * cdiv(s.num_heads, tp) * per_head * kv_bytes
        return LayerKv("full", block_size * per_token, per_token)
    if kind == "mla":
        return _mla_kv(s, i, block_size, kv_bytes)
    if kind == "linear_attention":
        la = s.linear_attention
        assert la is not None
        if la.style == "lightning":  # linear_attention_state_shape: (heads / tp, head_dim, head_dim), model dtype
            return LayerKv("mamba", cdiv(la.num_v_heads, tp) * la.head_v_dim * la.head_k_dim * model_bytes, 0)
        conv_dim = 2 * la.num_k_heads * la.head_k_dim + la.num_v_heads * la.head_v_dim
        conv = cdiv(conv_dim, tp) * (la.conv_kernel - 1) * model_bytes
        ssm = cdiv(la.num_v_heads, tp) * la.head_v_dim * la.head_k_dim * _STATE_BYTES.get(la.state_dtype, model_bytes)
        return LayerKv("mamba", conv + ssm, 0)
    if kind == "mamba":
        return _mamba_kv(s, tp, model_bytes)
    return None


def _compressed_kv(s: ModelSpec, i: int, block_size: int) -> LayerKv:
    """DeepSeek-V4 per token (for costs; the allocation is memory/kv_dsv4.py): a window-only layer holds its window
    of latents; a compressed layer one latent per `ratio` tokens, plus the indexer's K per 4 tokens on C4 layers."""
    c = s.compressed_attention
    assert c is not None
    ratio = c.ratios[i]
    if ratio == 1:
        return LayerKv("sliding", block_size * DS_MLA_TOKEN_BYTES, DS_MLA_TOKEN_BYTES, c.window)
    index = c.index_head_dim + c.index_head_dim // INDEXER_QUANT_BLOCK * 4
    per_token = cdiv(DS_MLA_TOKEN_BYTES, ratio) + (cdiv(index, 4) if ratio == 4 else 0)
    return LayerKv("full", block_size * per_token, per_token)


def _mamba_kv(s: ModelSpec, tp: int, model_bytes: int) -> LayerKv:
    """MambaStateShapeCalculator: Mamba1 (conv + per-channel SSM) or Mamba2 (conv + per-head SSM) state; LFM2's short
    conv (short_conv_state_shape) only the conv's last conv_kernel - 1 columns, in the model dtype."""
    m = s.mamba
    assert m is not None
    if m.version == 0:
        return LayerKv("mamba", cdiv(m.intermediate, tp) * (m.conv_kernel - 1) * model_bytes, 0)
    if m.version == 1:  # mamba1_state_shape
        conv = cdiv(m.intermediate, tp) * (m.conv_kernel - 1) * model_bytes
        ssm = cdiv(m.intermediate, tp) * m.state_size * _STATE_BYTES.get(m.ssm_state_dtype, model_bytes)
        return LayerKv("mamba", conv + ssm, 0)
    groups = m.n_groups if m.n_groups % tp == 0 else tp  # extra_groups_for_head_shards pads to tp
    conv_dim = m.intermediate + 2 * groups * m.state_size
    conv = cdiv(conv_dim, tp) * (m.conv_kernel - 1) * model_bytes
    ssm = cdiv(m.num_heads, tp) * m.head_dim * m.state_size * _STATE_BYTES.get(m.ssm_state_dtype, 4)
    return LayerKv("mamba", conv + ssm, 0)


def _mla_kv(s: ModelSpec, i: int, block_size: int, kv_bytes: int) -> LayerKv:
    """MLA: one latent vector per token, identical on every TP rank; a sparse (indexer) layer adds its indexer K
    cache (DeepseekV32IndexerCache: an MLAAttentionSpec of head_dim + head_dim / 128 * 4 uint8 bytes) in the same
    KV-cache group (UniformTypeKVCacheSpecs: one page per layer, summed)."""
    assert s.mla is not None
    m = s.mla
    per_token = (m.kv_lora_rank + m.qk_rope_head_dim) * kv_bytes
    if m.indexer is not None:
        if kv_bytes == 1:
            per_token = FP8_DS_MLA_BYTES
        if i in m.indexer.layers:
            per_token += m.indexer.head_dim + m.indexer.head_dim // INDEXER_QUANT_BLOCK * 4
    return LayerKv("mla", block_size * per_token, per_token)


def _unify_page_sizes(specs: list[LayerKv], bs: int) -> list[LayerKv]:
    """kv_cache_planning.py unify_kv_cache_spec_page_size (layer-outermost layouts, the default of the FlashAttention
    and Triton backends): a layer whose page divides the largest gets a proportionally larger block; otherwise its
    page is padded. Gemma-4: full layers (2 heads of 512) get 32-token blocks beside 16-token sliding blocks."""
    largest = max(x.page_bytes for x in specs)
    out = []
    for x in specs:
        if x.page_bytes == largest:
            out.append(replace(x, block_size=bs))
        elif largest % x.page_bytes == 0:
            out.append(replace(x, page_bytes=largest, block_size=bs * (largest // x.page_bytes)))
        else:
            out.append(replace(x, page_bytes=largest, block_size=bs))
    return out


def build_layout(
    s: ModelSpec,
    layers: range,
    *,
    tp: int,
    block_size: int | None,
    kv_bytes: int,
    model_bytes: int,
    hybrid_manager: bool = True,
    mla_as_mha: int = 0,
    extra: tuple[LayerKv, ...] = (),
) -> KvLayout:
    """Group the layers of one pipeline stage as vLLM does and size one block. Without the hybrid manager (the V0
    engine: worker/cache_engine.py gives every attention layer a block of the same table) a sliding-window or
    chunked layer holds as much as a full one: gemma-3-27b on V0 logs 4097 blocks of 16 tokens for 3.88 GiB at
    TP 8, 62 full layers' worth (field record F046)."""
    bs = block_size or 16
    specs = [
        x
        for x in (
            layer_kv(s, i, tp=tp, block_size=bs, kv_bytes=kv_bytes, model_bytes=model_bytes, mla_as_mha=mla_as_mha)
            for i in layers
        )
        if x is not None
    ]
    if s.mamba_beside_attention:  # Falcon-H1: each layer also holds a Mamba2 state (its own KV-cache spec)
        specs += [_mamba_kv(s, tp, model_bytes) for _ in layers]
    specs += extra  # a speculative drafter's attention layers join the groups (memory/spec_decode.py)
    if not specs:
        return KvLayout(bs, (), 0, 0, 0, 0, 0)
    mamba = any(x.kind == "mamba" for x in specs)
    specs, bs = _align_mamba_pages(specs, bs)
    if not hybrid_manager:
        specs = [
            LayerKv("full" if x.kind in ("sliding", "chunked") else x.kind, x.page_bytes, x.bytes_per_token)
            for x in specs
        ]
    pages_differ = len({x.page_bytes for x in specs}) > 1
    if pages_differ and not mamba and len({(x.kind, x.window) for x in specs}) > 1:
        specs = _unify_page_sizes(specs, bs)
    return _grouped(specs, bs, pages_differ)


def _align_mamba_pages(specs: list[LayerKv], bs: int) -> tuple[list[LayerKv], int]:
    """Mamba states beside attention: one page size for both (the attention block grows); Mamba alone: the largest
    state is the page. Without Mamba, unchanged."""
    attn = [x for x in specs if x.kind != "mamba"]
    mamba = [x for x in specs if x.kind == "mamba"]
    if mamba and attn:
        # _align_hybrid_block_size: attention block grows until its page >= the mamba page, in steps of the
        # kernel block (at least 128 tokens next to MLA, platforms/interface.py).
        per_token = attn[0].bytes_per_token
        mamba_page = max(x.page_bytes for x in mamba)
        step = max(bs, MLA_HYBRID_BLOCK_ALIGNMENT) if attn[0].kind == "mla" else bs
        bs = step * cdiv(mamba_page, step * per_token)
        page = bs * per_token
        return [LayerKv(x.kind, page, x.bytes_per_token, x.window) for x in specs], bs
    if mamba:
        page = max(x.page_bytes for x in mamba)
        return [LayerKv("mamba", page, 0) for _ in mamba], bs
    return specs, bs


def _grouped(specs: list[LayerKv], bs: int, pages_differ: bool) -> KvLayout:
    """Layers of one kind (and window) in groups of one size, as get_kv_cache_groups forms them; the block's bytes
    are one page per group member (or, for one kind with unequal pages, the sum of the pages)."""
    page = max(x.page_bytes for x in specs)
    by_kind: dict[tuple[SpecKind, int | None], int] = {}
    for x in specs:
        by_kind[(x.kind, x.window)] = by_kind.get((x.kind, x.window), 0) + 1
    counts = list(by_kind.values())
    if len(by_kind) == 1:
        group_size = counts[0]
    else:
        lo, hi = min(counts), max(counts)
        group_size = hi if hi < 1.5 * lo else lo
    block_of = {(x.kind, x.window): x.block_size for x in specs}
    groups = [
        KvGroup(kind, min(group_size, n - j * group_size), window, block_of[(kind, window)])
        for (kind, window), n in by_kind.items()
        for j in range(cdiv(n, group_size))
    ]
    padding = len(groups) * group_size - len(specs)
    padding_kinds = tuple(
        (str(kind), cdiv(n, group_size) * group_size - n, n) for (kind, _), n in by_kind.items() if n % group_size
    )
    per_token = sum(x.bytes_per_token for x in specs)
    if len(by_kind) == 1 and pages_differ:  # UniformTypeKVCacheSpecs: one group, each layer its own page size
        total = sum(x.page_bytes for x in specs)
        return KvLayout(bs, tuple(groups), group_size, page, total, per_token, padding, padding_kinds)
    return KvLayout(bs, tuple(groups), group_size, page, group_size * page, per_token, padding, padding_kinds)
