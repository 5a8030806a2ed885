"""DeepSeek-V4's KV cache as vLLM 0.33 lays it out: every cache layer the model registers, their pages, and the
block-outermost packing of mixed page sizes into KV-cache groups (pure).

Cache layers of one decoder layer of ratio r (vllm/models/deepseek_v4/attention.py, compressor.py and
vllm/v1/attention/backends/mla/sparse_swa.py, all with the fp8_ds_mla format that FlashMLA, FlashInfer on SM12x
and ROCm's aiter backend use; `--kv-cache-dtype auto` becomes fp8 there):
- sliding window (DeepseekV4SWACache): SlidingWindowMLASpec of 64-token blocks, 584 bytes a token (448 NoPE fp8
  + 64 RoPE bf16 + 8 scale bytes), the page padded to a multiple of 576;
- r > 1, the compressed latents (get_kv_cache_spec): MLAAttentionSpec of block_size tokens (256, the only size the
  sparse backend takes) holding block_size / r states of 584 bytes, padded to 576;
- r > 1, the compressor's running state (CompressorStateCache): SlidingWindowMLASpec of float32 states
  2 x coff x head_dim wide (coff = 2 for C4, which overlaps windows, else 1), blocks of 4 (C4) or 8 (C128) states,
  window coff x r;
- r = 4, the indexer's K cache (DeepseekV4IndexerCache): MLAAttentionSpec of block_size / 4 states of
  index_head_dim fp8 bytes + 4 scale bytes per 128 (132), padded to 576; and its compressor's state (head 128).

kv_cache_planning.py _get_packed_kv_cache_groups (the indexer backend declares block-outermost layouts) buckets
the layers into uniform types (the full-attention specs of one block size; sliding specs of one window and block
size), cuts the buckets whose page sizes repeat 1:1 into groups of `repeats_per_group` pattern repeats
(_approximate_gcd: the fewest padded repeats, at least the largest mixed-page bucket's), keeps the other buckets
whole, and every block holds the widest group's pages. A request takes, per group, cdiv(max_model_len, 256) blocks
(full) or cdiv(min(window - 1 + in-flight tokens, max_model_len), block) + 1 (sliding).

Up to 0.26 (kv_cache_utils.py of 0.23.0 to 0.26.0; 0.27.0 has the packing above) the packing differed:
_get_kv_cache_groups_uniform_groups padded every sliding layer's page to the nearest larger page of the full-MLA
group (the C4 and C128 states' 32,832 to 37,440), _get_kv_cache_config_packed made a block one slot per page size
for the most layers of that size in any group (not the widest group), and get_max_concurrency_for_kv_cache_config
priced a request's groups in pages of the first (full-MLA) group (KvLayout.concurrency_blocks). V4-Flash: 22 x 37,440
+ 21 x 8,640 + 20 x 1,728 = 1,039,680 bytes a block (0.22.0: 22 tuples of 37,440 + 8,640 + 1,728, 1,051,776); field15 W013 (0.23.0, 32.08 GiB, 262,144 tokens) then logs
8.30x, and W004 (MI355X, 191.04 GiB at 4,096 tokens) 1,041,802 tokens.

Checked against a real log: DeepSeek-V4-Pro at TP 8 on MI300X, 16,384 batched tokens twice in flight, max_model_len
1,048,576: 17,434 blocks of 1,435,968 bytes = 23.32 GiB "KV cache is needed" (field4 J027, vLLM issue 53961).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from recommender.memory.kv_cache import DS_MLA_TOKEN_BYTES, KvGroup, KvLayout
from recommender.model.spec import CompressedAttentionSpec
from recommender.units import cdiv

DS_MLA_ALIGNMENT = 576  # every V4 page is padded to a multiple of 576 bytes with fp8_ds_mla
SWA_BLOCK = 64  # DeepseekV4SWACache's block_size
V4_BLOCK = 256  # DeepseekV4SparseMLABackend / DeepseekV4IndexerBackend kernel block sizes: [256]
STATE_BLOCK = {4: 4, 128: 8}  # CompressorStateCache block_size by ratio
STATE_BYTES = 4  # compressor states are float32
INDEXER_QUANT_BLOCK = 128  # fp8 indexer K: head_dim fp8 bytes + one float32 scale per 128


@dataclass(frozen=True, slots=True)
class CacheLayer:
    """One KV-cache layer vLLM registers: its block (tokens), window (None: full attention) and padded page."""

    block: int
    window: int | None
    page: int


def _padded(nbytes: int) -> int:
    return cdiv(nbytes, DS_MLA_ALIGNMENT) * DS_MLA_ALIGNMENT


def _state(ratio: int, head_dim: int) -> CacheLayer:
    """CompressorStateCache: kv and score states of coff x head_dim each, float32, sliding over coff x ratio."""
    coff = 2 if ratio == 4 else 1
    block = STATE_BLOCK[ratio]
    return CacheLayer(block, coff * ratio, _padded(block * 2 * coff * head_dim * STATE_BYTES))


def cache_layers(c: CompressedAttentionSpec, ratio: int, *, block_size: int = V4_BLOCK) -> list[CacheLayer]:
    """The cache layers one decoder layer of this ratio registers."""
    out = [CacheLayer(SWA_BLOCK, c.window, _padded(SWA_BLOCK * DS_MLA_TOKEN_BYTES))]
    if ratio > 1:
        out.append(CacheLayer(block_size, None, _padded(block_size // ratio * DS_MLA_TOKEN_BYTES)))
        out.append(_state(ratio, c.head_dim))
    if ratio == 4:
        index_bytes = c.index_head_dim + c.index_head_dim // INDEXER_QUANT_BLOCK * 4
        out.append(CacheLayer(block_size, None, _padded(block_size // 4 * index_bytes)))
        out.append(_state(4, c.index_head_dim))
    return out


def approximate_gcd(values: list[int], lower_bound: int) -> int:
    """kv_cache_planning.py _approximate_gcd: the chunk d >= lower_bound with the least total upward padding of the
    values to multiples of d (ties: the larger d)."""
    best_d, best_pad = lower_bound, -1
    for d in range(max(1, lower_bound), max(values) + 1):
        pad = sum((d - x % d) % d for x in values)
        if best_pad < 0 or pad <= best_pad:
            best_d, best_pad = d, pad
    return best_d


Member = tuple[int, int]  # (decoder layer, page bytes) of one cache layer in a group
Key = tuple[int, int | None]  # (block, window): the uniform type


def _buckets(entries: list[tuple[int, CacheLayer]]) -> dict[Key, dict[int, list[int]]]:
    """Uniform-type buckets (full specs of one block size; sliding specs of one window and block size), each as its
    page sizes and, per page size, the decoder layers holding one (in layer order)."""
    buckets: dict[Key, dict[int, list[int]]] = {}
    for i, x in entries:
        buckets.setdefault((x.block, x.window), {}).setdefault(x.page, []).append(i)
    return buckets


def _repeats_per_group(counts: list[Counter[int]], balanced: list[bool]) -> int | None:
    """Pattern repeats per group: the least-padding chunk of the balanced buckets' repeats, at least the largest
    mixed-page bucket's (None when no balanced bucket mixes page sizes: nothing needs packing)."""
    mixed = [max(b.values()) for b, ok in zip(counts, balanced, strict=True) if ok and len(b) > 1]
    if not mixed:
        return None
    return approximate_gcd([max(b.values()) for b, ok in zip(counts, balanced, strict=True) if ok], max(mixed))


def _cut(pages: dict[int, list[int]], n: int) -> list[list[Member]]:
    """A bucket cut into n groups of pattern repeats (repeat r: the r-th layer of each page size; group g holds
    repeats g, g + n, ...); one group is the whole bucket."""
    if n == 1:
        return [[(i, page) for page, layers in pages.items() for i in layers]]
    repeats = list(zip(*pages.values(), strict=False))
    return [[(i, page) for rep in repeats[g::n] for page, i in zip(pages, rep, strict=True)] for g in range(n)]


def packed_groups(entries: list[tuple[int, CacheLayer]]) -> list[tuple[CacheLayer, list[Member]]]:
    """_get_packed_kv_cache_groups over the whole model: (a cache layer of the group's type, its members) per group.
    Without a repeat pattern, sliding buckets are state buckets, split to the states the widest block holds."""
    keyed: dict[Key, CacheLayer] = {(x.block, x.window): x for _, x in entries}
    buckets = _buckets(entries)
    counts = [Counter({page: len(layers) for page, layers in b.items()}) for b in buckets.values()]
    balanced = [len(set(b.values())) == 1 for b in counts]
    repeats = _repeats_per_group(counts, balanced)
    splits = [cdiv(max(b.values()), repeats) if ok and repeats else 1 for b, ok in zip(counts, balanced, strict=True)]
    state = [repeats is None and keyed[k].window is not None for k in buckets]
    anchor = max(
        sum(cdiv(k, sum(b.values()) if st else n) * page for page, k in b.items())
        for b, n, st in zip(counts, splits, state, strict=True)
    )
    groups = []
    for key, b, n, st in zip(buckets, counts, splits, state, strict=True):
        if st:
            n = max(n, cdiv(sum(b.values()), max(anchor // next(iter(b)), 1)))
        groups += [(keyed[key], members) for members in _cut(buckets[key], n)]
    return groups


def _slot_packing(groups: list[tuple[CacheLayer, list[Member]]], *, tuples: bool) -> tuple[int, list[int], int]:
    """Up to 0.26: (bytes per block, each group's page, the full-MLA group's page) with the sliding layers' pages
    padded to the nearest larger full-MLA page and a block holding, per page size, the most layers of that size in
    any group (_bucket_layers_by_page_size); `tuples` (0.22.0's _get_kv_cache_config_packed): the most layers of
    one size in any group times one of each full-MLA page size (V4-Flash: 22 x 47,808 = 1,051,776)."""
    full = [m for x, m in groups if x.window is None]
    sizes = sorted({page for m in full for _, page in m})

    def padded(page: int, sliding: bool) -> int:
        return min((s for s in sizes if s >= page), default=page) if sliding else page

    pages = [[padded(page, x.window is not None) for _, page in m] for x, m in groups]
    slots: dict[int, int] = {}
    for group in pages:
        for size, n in Counter(group).items():
            slots[size] = max(slots.get(size, 0), n)
    first = sum(pages[[x.window for x, _ in groups].index(None)]) if full else 0
    stride = max(slots.values()) * sum(sizes) if tuples and sizes else sum(size * n for size, n in slots.items())
    return stride, [sum(g) for g in pages], first


def dsv4_layout(
    c: CompressedAttentionSpec,
    layers: range,
    *,
    block_size: int = V4_BLOCK,
    mtp: int = 0,
    slot_packing: bool = False,
    tuple_blocks: bool = False,
) -> KvLayout:
    """The KV-cache layout of one pipeline stage: the whole model's packed groups (get_global_kv_cache_groups)
    projected onto the stage's layers (_project_kv_cache_groups_to_worker: a group keeps its place, and its blocks
    per request, even with none of its layers here); a block holds the stage's widest group. `mtp`: a speculative
    MTP drafter's layers on this (the last) stage, window-only (memory/spec_decode.py); `slot_packing`: the packing
    of the releases up to 0.26 (_slot_packing), `tuple_blocks` its 0.22 block."""
    ratios = (*c.ratios, *(1,) * mtp)
    layers = range(layers.start, layers.stop + mtp) if mtp else layers
    entries = [(i, x) for i in range(len(ratios)) for x in cache_layers(c, ratios[i], block_size=block_size)]
    groups = [(x, [(i, page) for i, page in members if i in layers]) for x, members in packed_groups(entries)]
    here = [x for i, x in entries if i in layers]
    full_bytes = sum(x.page for x in here if x.window is None)
    layout = KvLayout(
        block_size=block_size,
        groups=tuple(KvGroup("mla" if x.window is None else "sliding", len(m), x.window, x.block) for x, m in groups),
        group_size=max(len(m) for _, m in groups),
        page_bytes=max(x.page for x in here),
        bytes_per_block=max(sum(page for _, page in m) for _, m in groups),
        bytes_per_token=cdiv(full_bytes, block_size),
        padding_layers=0,
    )
    if not slot_packing:
        return layout
    stride, pages, first = _slot_packing(groups, tuples=tuple_blocks)
    return replace(layout, bytes_per_block=stride, group_pages=tuple(pages), first_group_page=first)
