"""Hand-checked numbers for each memory term, vLLM's grouping and its startup errors."""

from __future__ import annotations

import pytest

from recommender.catalog import load_gpus
from recommender.errors import FlagError
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.kv_cache import build_layout
from recommender.memory.scheduler import v0_batched_tokens
from recommender.memory.startup_issues import IssueKind
from recommender.memory.weights import Parallel, pp_layer_ranges, weight_bytes_per_gpu
from recommender.sources.resolve import resolve_model
from recommender.units import GiB, MiB, parse_human_int

V033 = VllmVersion.parse("0.33.0")
H100 = resolve_gpu("h100", load_gpus())


def _layout(model: str, tp: int = 1, kv_bytes: int = 2):
    s = resolve_model(model)
    return build_layout(s, range(s.num_layers), tp=tp, block_size=None, kv_bytes=kv_bytes, model_bytes=2)


def test_llama_8b_bf16_weights() -> None:
    # 8,030,261,248 params x 2 B + rotary cos/sin cache 131,072 x 128 x 2 B = 14.99 GiB ("Model loading took").
    s = resolve_model("meta-llama/Llama-3.1-8B-Instruct")
    w = weight_bytes_per_gpu(s, Parallel(), dtype_bytes=2, quant=None)
    assert w == 8_030_261_248 * 2 + 131_072 * 128 * 2
    assert round(w / GiB, 2) == 14.99
    # TP=2: embeddings and every linear halve, norms replicate: 7.51 GiB in the v0.19 log (C029).
    assert round(weight_bytes_per_gpu(s, Parallel(tp=2), dtype_bytes=2, quant=None) / GiB, 2) == 7.51


def test_quantized_weights_match_logs() -> None:
    w8a8 = resolve_model("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8")
    assert w8a8.quant is not None
    b = weight_bytes_per_gpu(w8a8, Parallel(), dtype_bytes=2, quant=w8a8.quant)
    assert abs(b / GiB - 8.49) / 8.49 < 0.01  # calibration C051
    awq = resolve_model("Qwen/Qwen2.5-7B-Instruct-AWQ")
    b = weight_bytes_per_gpu(awq, Parallel(), dtype_bytes=2, quant=awq.quant)
    assert abs(b / GiB - 5.29) / 5.29 < 0.03  # calibration C000


def test_per_token_kv_bytes() -> None:
    assert _layout("Qwen/Qwen2.5-7B-Instruct").bytes_per_token == 57_344  # 28 x 4 x 128 x 2 x 2
    assert _layout("deepseek-ai/DeepSeek-R1").bytes_per_token == 70_272  # 61 x 576 x 2 (MLA latent)
    assert _layout("deepseek-ai/DeepSeek-R1", tp=8).bytes_per_token == 70_272  # replicated on every TP rank
    assert _layout("meta-llama/Llama-3.1-8B-Instruct", kv_bytes=1).bytes_per_token == 65_536  # fp8 halves
    # TP above the KV-head count replicates heads: Qwen2.5-7B has 4 KV heads, TP=8 keeps 1 head per rank.
    assert _layout("Qwen/Qwen2.5-7B-Instruct", tp=8).bytes_per_token == 57_344 // 4


def test_sliding_window_groups_gemma2() -> None:
    # gemma-2-27b: 46 layers alternating sliding/full -> 2 groups of 23; at 8192 a request needs
    # 512 full blocks + (cdiv(min(4095 + in-flight, 8192), 16) + 1) sliding blocks = 512 + 513 (vLLM 0.19, C014).
    # gemma-3-27b: 10 full + 52 sliding layers in groups of 10 -> vLLM's "Add 8 padding layers, may waste at most
    # 15.38% KV cache memory" (spec 2.4).
    g3 = resolve_model("google/gemma-3-27b-it")
    e = explain(g3, H100, EngineFlags(max_model_len=8192), V033)
    assert "Add 8 padding layers, may waste at most 15.38% KV cache memory" in e.warnings
    lay = _layout("google/gemma-2-27b")
    assert [g.kind for g in lay.groups] == ["sliding", "full"] and lay.group_size == 23
    assert lay.blocks_per_request(8192, 8192, prefix_caching=False) == 1025
    # gpt-oss-20b: window 128 -> sliding layers hold cdiv(127 + 2048, 16) + 1 = 137 blocks at 32k.
    oss = _layout("openai/gpt-oss-20b")
    assert oss.blocks_per_request(32768, 2048, prefix_caching=False) == 2048 + 137


def test_hybrid_gdn_block_alignment() -> None:
    # Qwen3.5-35B-A3B: GDN state (conv 8192 x 3 x 2 + ssm 32 x 128 x 128 x 4 B fp32) sets the attention block.
    lay = _layout("Qwen/Qwen3.5-35B-A3B")
    assert lay.block_size % 16 == 0 and lay.block_size > 16
    assert {g.kind for g in lay.groups} == {"mamba", "full"}


def test_gated_deltanet_state_and_block_alignment() -> None:
    # Qwen3-Next-80B (spec 2.5 worked example): conv 8192 x 3 x 2 B + ssm 32 x 128 x 128 x 2 B = 1,097,728 B per
    # layer; the attention page per token is 2 KV heads x 256 x 2 x 2 B = 2,048 B, so the block grows to
    # 16 x cdiv(1,097,728, 16 x 2,048) = 544 tokens (the C001 log: "attention block size 544").
    s = resolve_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    lay = build_layout(s, range(s.num_layers), tp=1, block_size=None, kv_bytes=2, model_bytes=2)
    assert lay.block_size == 544 and lay.page_bytes == 544 * 2048
    assert lay.group_size == 12 and [g.kind for g in lay.groups].count("mamba") == 3  # 36 GDN : 12 attention


def test_mamba2_state_nemotron_h() -> None:
    # Nemotron-3-Nano: conv (4096 + 2 x 8 x 128) x 3 x 2 B = 36,864 B; ssm 64 heads x 64 x 128 x 4 B (fp32,
    # mamba_ssm_cache_dtype) = 2,097,152 B; attention 2 KV heads x 128 x 2 x 2 B = 1,024 B per token, so the
    # block is 16 x cdiv(2,134,016, 16 x 1,024) = 2,096 tokens.
    s = resolve_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    lay = build_layout(s, range(s.num_layers), tp=1, block_size=None, kv_bytes=2, model_bytes=2)
    assert lay.block_size == 2096 and lay.page_bytes == 2096 * 1024
    assert {g.kind for g in lay.groups} == {"mamba", "full"}


def test_fixed_kv_budget_is_exact() -> None:
    # --kv-cache-memory-bytes skips profiling: blocks = bytes // (16 x 147,456) for Qwen3-8B; the oracle in
    # shared/tools computes 2730 blocks, 43,680 tokens, 5.33x at 8192 for 6 GiB.
    s = resolve_model("Qwen/Qwen3-8B")
    e = explain(s, H100, EngineFlags(kv_cache_memory_bytes=6 * GiB, max_model_len=8192), V033)
    assert (e.num_gpu_blocks, e.kv_cache_tokens, round(e.max_concurrency, 2)) == (2730, 43_680, 5.33)


def test_budget_uses_ceil_of_total_times_utilization() -> None:
    e = explain(resolve_model("Qwen/Qwen3-8B"), H100, EngineFlags(max_model_len=4096), V033)
    assert e.utilization == 0.92 and e.requested_bytes == -(-H100.total_bytes * 92 // 100)
    old = explain(resolve_model("Qwen/Qwen3-8B"), H100, EngineFlags(max_model_len=4096), VllmVersion.parse("0.19"))
    assert old.utilization == 0.9


def test_v0_engine_accounting() -> None:
    # Before 0.8 (V0): GPU KV cache size = num_gpu_blocks x block_size; concurrency = that / max_model_len.
    e = explain(
        resolve_model("Qwen/Qwen3-8B"),
        H100,
        EngineFlags(kv_cache_memory_bytes=6 * GiB, max_model_len=8192),
        VllmVersion.parse("0.6.3"),
    )
    assert (e.num_gpu_blocks, e.kv_cache_tokens) == (2730, 2730 * 16)
    assert e.max_concurrency == 2730 * 16 / 8192
    with pytest.raises(FlagError, match=r"0\.4 to 0\.33"):
        VllmVersion.parse("0.3.0")


def test_pipeline_layer_split() -> None:
    assert [len(r) for r in pp_layer_ranges(61, 4)] == [15, 15, 16, 15]  # remainder before the last rank
    assert [len(r) for r in pp_layer_ranges(32, 2)] == [16, 16]


def test_startup_errors_use_vllm_text() -> None:
    llama = resolve_model("meta-llama/Llama-3.1-8B-Instruct")
    e = explain(llama, H100, EngineFlags(tensor_parallel_size=3), V033)
    assert "Total number of attention heads (32) must be divisible by tensor parallel size (3)." in e.errors
    e = explain(llama, H100, EngineFlags(max_model_len=200_000), V033)
    assert any(m.startswith("User-specified max_model_len (200000) is greater than") for m in e.errors)
    rtx = resolve_gpu("rtx3090", load_gpus())
    e = explain(
        resolve_model("Qwen/Qwen2.5-7B-Instruct"),
        rtx,
        EngineFlags(gpu_memory_utilization=0.7, max_model_len=32768),
        V033,
    )
    assert not e.fits
    assert any("To serve at least one request with the model's max seq len (32768)" in m for m in e.errors)
    assert any("estimated maximum model length is" in m for m in e.errors)
    # vLLM 0.33 prints sizes with format_gib (round to 2 places): "16.0 GiB", as the oracle in shared/tools shows.
    e = explain(llama, H100, EngineFlags(kv_cache_memory_bytes=1 << 30, max_model_len=131072), V033)
    assert e.errors == (
        "To serve at least one request with the model's max seq len (131072), (16.0 GiB KV cache is needed, which "
        "is larger than the available KV cache memory (1.0 GiB). Based on the available memory, the estimated "
        "maximum model length is 8176. Try increasing `gpu_memory_utilization` (which also controls CPU memory on "
        "the CPU backend) or decreasing `max_model_len` when initializing the engine. See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
    )
    e = explain(llama, H100, EngineFlags(gpu_memory_utilization=0.9), V033, free_bytes=40 * GiB)
    assert any(m.startswith("Free memory on device cuda:0 (40.0/79.19 GiB) on startup is less than") for m in e.errors)


@pytest.mark.parametrize(
    "flags",
    [
        EngineFlags(gpu_memory_utilization=0),
        EngineFlags(gpu_memory_utilization=1.5),
        EngineFlags(max_model_len=-5),
        EngineFlags(kv_cache_dtype="int3"),
        EngineFlags(tensor_parallel_size=0),
    ],
)
def test_bad_flags_are_rejected(flags: EngineFlags) -> None:
    with pytest.raises(FlagError):
        explain(resolve_model("Qwen/Qwen3-8B"), H100, flags, V033)


def test_human_readable_lengths() -> None:
    assert parse_human_int("32k") == 32_000 and parse_human_int("32K") == 32_768


def test_startup_issues_carry_their_kind_and_the_numbers_a_fix_needs() -> None:
    llama = resolve_model("meta-llama/Llama-3.1-8B-Instruct")
    e = explain(llama, H100, EngineFlags(tensor_parallel_size=3), V033)
    heads = e.issue(IssueKind.TP_HEADS)
    assert heads is not None and (heads.count, heads.parallel) == (32, 3) and heads.fatal
    e = explain(llama, H100, EngineFlags(max_model_len=200_000), V033)
    assert e.error_kinds == (IssueKind.MAX_LEN_ABOVE_MODEL,)
    above = e.issue(IssueKind.MAX_LEN_ABOVE_MODEL)
    assert above is not None and (above.requested, above.max_len) == (200_000, 131_072)
    # 1 GiB of KV at 131,072 tokens: Llama-3.1-8B keeps 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B
    # per token, so one request needs 131,072 x 131,072 B = 16 GiB; vLLM checks against 1 GiB less one block
    # (16 tokens = 2 MiB), which holds (1 GiB - 2 MiB) / 131,072 B = 8,176 tokens: its estimated maximum length.
    e = explain(llama, H100, EngineFlags(kv_cache_memory_bytes=GiB, max_model_len=131_072), V033)
    kv = e.issue(IssueKind.KV_TOO_SMALL)
    assert kv is not None and e.error_kinds == (IssueKind.KV_TOO_SMALL,)
    assert (kv.needed_bytes, kv.available_bytes, kv.max_len, kv.requested) == (16 * GiB, GiB - 2 * MiB, 8176, 131_072)
    e = explain(llama, H100, EngineFlags(gpu_memory_utilization=0.9), V033, free_bytes=40 * GiB)
    free = e.issue(IssueKind.FREE_BELOW_BUDGET)
    assert free is not None and free.available_bytes == 40 * GiB
    assert free.needed_bytes == -(-H100.total_bytes * 9 // 10) == e.requested_bytes
    # Warnings have kinds too, and never make a configuration fail.
    e = explain(resolve_model("google/gemma-3-27b-it"), H100, EngineFlags(max_model_len=8192), V033)
    pad = e.issue(IssueKind.PADDING_LAYERS)
    assert pad is not None and pad.count == 8 and not pad.fatal and e.fits


def test_no_warmup_verdict_after_a_startup_that_ends_before_it() -> None:
    """Qwen2.5-7B on a T4 at its 32k default: no memory for the cache blocks (the weights alone take 14.2 of the
    13.6 GiB budget), so vLLM never reaches the post-KV warm-ups; their margin is not reported beside the error
    (it was: '~1.76 GiB left for ~1.23 GiB', contradicting the failure). With room for the KV cache it is judged."""
    from recommender.sources.resolve import resolve_model

    model = resolve_model("Qwen/Qwen2.5-7B-Instruct")
    gpus = {g.key: g for g in load_gpus()}
    e = explain(model, gpus["t4"], EngineFlags(), VllmVersion.parse("0.33.0"))
    assert e.has(IssueKind.NO_CACHE_MEMORY) and not e.has(IssueKind.WARMUP_OOM, IssueKind.WARMUP_HEADROOM)
    assert e.post_allocation is not None  # the picture is still computed, only not judged
    ok = explain(model, gpus["l4"], EngineFlags(gpu_memory_utilization=0.95), VllmVersion.parse("0.33.0"))
    assert not ok.has(IssueKind.NO_CACHE_MEMORY) and ok.has(IssueKind.WARMUP_OOM, IssueKind.WARMUP_HEADROOM)


def test_v0_long_context_chunked_prefill_by_release() -> None:
    """V0 switched chunked prefill on by itself above 32K from 0.5.3 (vllm#6666), profiling 512 tokens (2,048 from
    0.7); before 0.6.1 prefix caching kept it off; before 0.5.3 the profile prefilled max_model_len in one step.
    deepseek-coder-6.7b (65,536 tokens: 16,384 x linear rope factor 4), field4 J006 on ~0.4.3."""
    model = resolve_model("deepseek-ai/deepseek-coder-6.7b-instruct")
    plain, cached = EngineFlags(), EngineFlags(enable_prefix_caching=True)
    tokens = {
        (v, f is cached): v0_batched_tokens(model, f, 65_536, VllmVersion.parse(v))
        for v in ("0.4.3", "0.5.2", "0.5.3", "0.6.0", "0.6.1", "0.7.0")
        for f in (plain, cached)
    }
    assert tokens == {
        ("0.4.3", False): 65_536, ("0.4.3", True): 65_536,
        ("0.5.2", False): 65_536, ("0.5.2", True): 65_536,
        ("0.5.3", False): 512, ("0.5.3", True): 65_536,
        ("0.6.0", False): 512, ("0.6.0", True): 65_536,
        ("0.6.1", False): 512, ("0.6.1", True): 512,
        ("0.7.0", False): 2048, ("0.7.0", True): 2048,
    }  # fmt: skip
    assert v0_batched_tokens(model, plain, 32_768, VllmVersion.parse("0.6.1")) == 32_768  # not above 32K


def test_deepseek_v4_cache_layers_by_hand() -> None:
    """DeepSeek-V4-Flash's cache layers (head_dim 512, window 128, indexer head 128; fp8_ds_mla, 576-byte pages):
    window 64 x 584 = 37,376 -> 37,440; C4 latents 256 / 4 x 584 = 37,376 -> 37,440; C128 latents 2 x 584 = 1,168
    -> 1,728; C4 compressor state 4 states x 2 x 2 x 512 x 4 B = 32,768 -> 32,832 (window 2 x 4 = 8); C128 state
    8 x 2 x 512 x 4 = 32,768 -> 32,832 (window 128); indexer K 64 x (128 + 4) = 8,448 -> 8,640; indexer state
    4 x 2 x 2 x 128 x 4 = 8,192 -> 8,640 (window 8)."""
    from recommender.memory.kv_dsv4 import CacheLayer, cache_layers

    c = resolve_model("deepseek-ai/DeepSeek-V4-Flash").compressed_attention
    assert c is not None
    assert (c.ratios[:4], c.ratios[-2:], len(c.ratios)) == ((1, 1, 4, 128), (128, 4), 43)
    assert cache_layers(c, 1) == [CacheLayer(64, 128, 37_440)]
    assert cache_layers(c, 4) == [
        CacheLayer(64, 128, 37_440),
        CacheLayer(256, None, 37_440),
        CacheLayer(4, 8, 32_832),
        CacheLayer(256, None, 8_640),
        CacheLayer(4, 8, 8_640),
    ]
    assert cache_layers(c, 128) == [
        CacheLayer(64, 128, 37_440),
        CacheLayer(256, None, 1_728),
        CacheLayer(8, 128, 32_832),
    ]


def test_deepseek_v4_packed_groups_by_hand() -> None:
    """Flash (2 window-only, 21 C4, 20 C128 layers): buckets window 43 x 37,440; full (256-token blocks) 21 x 37,440 +
    20 x 1,728 + 21 x 8,640 (counts differ: kept whole); C4 states 21 x 32,832 + 21 x 8,640 (balanced, mixed: at
    least 21 repeats a group); C128 states 20 x 32,832. _approximate_gcd([43, 21, 20], >= 21) = 22 (padding 1 + 1 +
    2): the window bucket splits in two (22 + 21 layers). Widest group: the full one, 786,240 + 34,560 + 181,440 =
    1,002,240 bytes a block. At 912,128 tokens with 16,384 in flight a request takes 2 x (cdiv(16,511, 64) + 1) +
    3,563 + (cdiv(16,391, 4) + 1) + (cdiv(16,511, 8) + 1) = 518 + 3,563 + 4,099 + 2,065 = 10,245 blocks."""
    from recommender.memory.kv_dsv4 import approximate_gcd, dsv4_layout

    assert approximate_gcd([43, 21, 20], 21) == 22
    s = resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    assert s.compressed_attention is not None
    layout = dsv4_layout(s.compressed_attention, range(s.num_layers))
    assert layout.bytes_per_block == 1_002_240
    assert sorted((g.kind, g.layers, g.window, g.block_size) for g in layout.groups) == [
        ("mla", 62, None, 256),
        ("sliding", 20, 128, 8),
        ("sliding", 21, 128, 64),
        ("sliding", 22, 128, 64),
        ("sliding", 42, 8, 4),
    ]
    assert layout.blocks_per_request(912_128, 16_384, prefix_caching=False) == 10_245


def test_deepseek_v4_pro_kv_needed_matches_log() -> None:
    """DeepSeek-V4-Pro (1 C128-only pair at the start: 30 C4, 31 C128 layers) at TP 8 on MI300X, default
    1,048,576 tokens, 16,384 batched tokens twice in flight: repeats _approximate_gcd([61, 30, 31], >= 30) = 31; the
    widest group is the full one, 30 x 37,440 + 31 x 1,728 + 30 x 8,640 = 1,435,968 bytes; a request takes
    2 x (cdiv(32,895, 64) + 1) + 4,096 + (cdiv(32,775, 4) + 1) + (cdiv(32,895, 8) + 1) = 1,030 + 4,096 + 8,195 + 4,113
    = 17,434 blocks = 23.32 GiB, vLLM's "23.32 GiB KV cache is needed" (field4 J027, vLLM issue 53961)."""
    from recommender.memory.kv_dsv4 import dsv4_layout

    s = resolve_model("deepseek-ai/DeepSeek-V4-Pro")
    assert s.compressed_attention is not None
    layout = dsv4_layout(s.compressed_attention, range(s.num_layers))
    assert layout.bytes_per_block == 1_435_968
    blocks = layout.blocks_per_request(1_048_576, 32_768, prefix_caching=False)
    assert blocks == 17_434
    assert round(blocks * layout.bytes_per_block / GiB, 2) == 23.32


def test_deepseek_v4_profiling_workspace_by_hand() -> None:
    """V4-Flash at 912,128 tokens, 8,192 batched (field4 J025's shape). CUDA: the sparse MLA gather, 4 x (cdiv(912,128,
    4) + 128 + 8,192) x 512 x 2 = 968,097,792, plus the top-k indices 8,192 x round_up(512 + 128, 128) x 4 =
    20,971,520 and lengths 32,768: 989,102,080, larger than the indexer gather (factor 2 above 256K: 912,128 x 8 x 2
    // 4 = 3,648,512 rows x 132 + 1 MiB = 482,652,160); plus the 512 MiB logits: 1,525,972,992. ROCm (aiter reads the
    caches in place): the indexer gather and the decode logits, min(8,192, 256) x 228,032 x 4 = 233,504,768: the
    gather is larger, 482,652,160 + 536,870,912."""
    from recommender.memory.dsv4_profile import workspace_bytes

    s = resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    shape = {"max_model_len": 912_128, "max_num_batched_tokens": 8_192, "max_num_seqs": 256}
    assert workspace_bytes(s, **shape, rocm=False) == 1_525_972_992
    assert workspace_bytes(s, **shape, rocm=True) == 482_652_160 + 536_870_912
    assert workspace_bytes(resolve_model("deepseek-ai/DeepSeek-V3"), **shape, rocm=False) == 0


def test_deepseek_v4_experts_are_mxfp4_in_every_release() -> None:
    """expert_dtype fp4: each expert's shard at TP 2 holds w13 2 x 1024 x 4096 and w2 4096 x 1024 = 12,582,912
    weights, MXFP4 at 17/32 byte (values + one e8m0 scale per 32) = 6,684,672 bytes, where the FP8 block reading
    holds 12,582,912 + (16 x 32 + 32 x 8) x 4 scale bytes = 12,585,984: 5,901,312 less per expert, x 256 x 43 layers
    = 64,961,642,496 bytes. The releases before 0.33 load the same FP4 experts (field4 J025 started on 2 x H20 at
    0.26, where the FP8 reading is 134.69 GiB per 95 GiB card)."""
    from dataclasses import replace

    s = resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    assert s.quant is not None and s.quant.expert_method == "mxfp4"
    mxfp4 = weight_bytes_per_gpu(s, Parallel(tp=2), dtype_bytes=2, quant=s.quant)
    fp8 = weight_bytes_per_gpu(s, Parallel(tp=2), dtype_bytes=2, quant=replace(s.quant, expert_method=None))
    assert fp8 - mxfp4 == 64_961_642_496
    flags = EngineFlags(tensor_parallel_size=2)
    h200 = resolve_gpu("h200", load_gpus())
    assert explain(s, h200, flags, V033).stage.weights == mxfp4
    assert explain(s, h200, flags, V033).kv_cache_dtype == "fp8"  # fp8_ds_mla: auto becomes fp8
    assert explain(s, h200, flags, VllmVersion.parse("0.26.0")).stage.weights == mxfp4


def test_deepseek_v4_experts_on_rocm_before_0_33_take_the_256_alignment() -> None:
    """V4-Pro at TP 8 on MI300X: 3072 / 8 = 384 intermediate channels per partition, which 0.33 aligns to 128 (no
    padding) and the generic ROCm round-up to 256 pads to 512. Per expert w13 2 x 512 x 7168 + w2 7168 x 512 =
    11,010,048 MXFP4 weights (17/32 byte: 5,849,088 bytes) against 8,257,536 (4,386,816): 1,462,272 bytes more,
    x 384 experts x 61 layers = 34,252,259,328 bytes per GPU."""
    s = resolve_model("deepseek-ai/DeepSeek-V4-Pro")
    mi300x = resolve_gpu("mi300x", load_gpus())
    flags = EngineFlags(tensor_parallel_size=8)
    before, after = (explain(s, mi300x, flags, VllmVersion.parse(v)).stage.weights for v in ("0.27.0", "0.33.0"))
    assert before - after == 34_252_259_328
    h200 = resolve_gpu("h200", load_gpus())
    assert explain(s, h200, flags, VllmVersion.parse("0.27.0")).stage.weights == after  # CUDA: no such padding


def test_deepseek_v4_rocm_decode_logits_before_0_33_follow_the_batched_tokens() -> None:
    """_max_decode_logits_rows before 0.33's bound: max_num_batched_tokens rows, 8,192 x 228,032 x 4 =
    7,472,152,576 bytes at J025's shape, larger than the indexer gather (482,652,160): plus the 512 MiB logits."""
    from recommender.memory.dsv4_profile import workspace_bytes

    s = resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    shape = {"max_model_len": 912_128, "max_num_batched_tokens": 8_192, "max_num_seqs": 256}
    assert workspace_bytes(s, **shape, rocm=True, decode_rows_bounded=False) == 7_472_152_576 + 536_870_912


def test_deepseek_v4_before_0_33_is_at_risk_within_the_logged_excess() -> None:
    """V4-Flash at TP 2 on GH200, 0.95, 30,000 tokens (field4 J026, ~0.22, failed: 6.66 GiB needed, 5.44 available):
    one request with two batches in flight (16,384 tokens) takes 118 + 2 x 259 + 4,099 + 2,065 = 6,800 blocks of
    0.22's 22 x (37,440 + 8,640 + 1,728) = 1,051,776 bytes (memory/kv_dsv4.py _slot_packing) = 6.66 GiB, the figure
    the log prints, of the 9.99 GiB predicted, 3.33 to spare, under the 5 GiB the earlier releases' logs exceed 0.33's
    accounting by: at risk. On 0.33 the same plan fits."""
    s = resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    gh200 = resolve_gpu("gh200", load_gpus())
    flags = EngineFlags(tensor_parallel_size=2, gpu_memory_utilization=0.95, max_model_len=30_000, block_size=256)
    e = explain(s, gh200, flags, VllmVersion.parse("0.22.0"))
    issue = e.issue(IssueKind.DSV4_RELEASE_MARGIN)
    assert issue is not None and e.at_risk
    block = e.stage.layout.bytes_per_block
    assert block == 1_051_776
    assert e.stage.blocks_per_request(30_000, 16_384, e.prefix_caching) == 6_800
    assert issue.needed_bytes == 6_800 * block
    assert round(issue.needed_bytes / GiB, 2) == 6.66
    assert not explain(s, gh200, flags, V033).has(IssueKind.DSV4_RELEASE_MARGIN)


def test_deepseek_v4_refuses_a_bf16_kv_cache() -> None:
    """The default V4 backends store fp8_ds_mla only: --kv-cache-dtype bfloat16 is vLLM's ValueError."""
    s = resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    h200 = resolve_gpu("h200", load_gpus())
    e = explain(s, h200, EngineFlags(tensor_parallel_size=2, kv_cache_dtype="bfloat16"), V033)
    issue = e.issue(IssueKind.KV_DTYPE_UNSUPPORTED)
    assert issue is not None and not e.fits
    assert issue.message.startswith("DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got bfloat16.")


def test_deepseek_v4_groups_are_global_under_pipeline_parallelism() -> None:
    """PP 2 (layers 0-21 and 22-42): the whole model's five groups stay on both stages (projected, as
    _project_kv_cache_groups_to_worker does); the window group of even layers holds 11 on each stage. Stage 1 has
    11 C4 and 10 C128 layers: its full group is 11 x 37,440 + 10 x 1,728 + 11 x 8,640 = 524,160 bytes a block;
    stage 0 (10 and 10) 478,080."""
    from recommender.memory.kv_dsv4 import dsv4_layout

    s = resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    assert s.compressed_attention is not None
    first, second = (dsv4_layout(s.compressed_attention, r) for r in pp_layer_ranges(s.num_layers, 2))
    assert (first.bytes_per_block, second.bytes_per_block) == (478_080, 524_160)
    assert [g.layers for g in first.groups] == [11, 11, 30, 20, 10]
    assert [g.layers for g in second.groups] == [11, 10, 32, 22, 10]


@pytest.mark.parametrize(
    ("version", "bytes_per_token", "starts"),
    [
        # before MLA caching (v0.4.3-v0.6.6 deepseek_v2.py: Attention(num_local_heads, 256, num_kv_heads=
        # num_local_heads), q/k/v padded to 256): 2 x (128 / 8) x 256 x 2 bytes x 60 layers = 983,040 per token
        ("0.5.4", 983_040, False),
        # v0.7.0 deepseek_v2.py: Attention(num_local_heads, qk_head_dim, ...), v padded to 192: 737,280 per token
        ("0.7.0", 737_280, False),
        # from 0.7.1 (ModelConfig.use_mla): one latent per token, (512 + 64) x 2 bytes x 60 layers = 69,120
        ("0.7.1", 69_120, True),
    ],
)
def test_deepseek_v2_cache_before_mla_is_per_head(version: str, bytes_per_token: int, starts: bool) -> None:
    """DeepSeek-Coder-V2-Instruct, TP 8 on H100 at 0.95, 64,000 tokens, eager: field4 J021 (vllm#4650, 0.5.4 ran out
    of memory for the cache: 17.31 GiB holds 18,896 tokens of 983,040 bytes, below one 64,000-token request)."""
    s = resolve_model("deepseek-ai/DeepSeek-Coder-V2-Instruct")
    flags = EngineFlags(tensor_parallel_size=8, max_model_len=64_000, gpu_memory_utilization=0.95, enforce_eager=True)
    e = explain(s, resolve_gpu("h100", load_gpus()), flags, VllmVersion.parse(version))
    assert e.stages[0].layout.bytes_per_token == bytes_per_token
    assert e.fits is starts


@pytest.mark.parametrize(
    ("version", "prefix_caching", "state_blocks"),
    [
        ("0.27.1", True, 2),  # --enable-prefix-caching: mamba_cache_mode "align", two state blocks a request
        ("0.27.1", None, 1),  # hybrid models keep prefix caching off by default before 0.28
        ("0.28.0", None, 2),  # vllm#50991: on by default for hybrid models from 0.28.0
        ("0.33.0", False, 1),  # --no-enable-prefix-caching: mamba_cache_mode "none", one state block
        ("0.16.0", True, 1),  # before align became the default mode (taken from 0.17): not modelled, one block
    ],
)
def test_hybrid_state_blocks_per_request_follow_mamba_cache_mode(
    version: str, prefix_caching: bool | None, state_blocks: int
) -> None:
    """Qwen3.6-27B-FP8 (16 full-attention layers, 48 Gated DeltaNet layers: one attention group and three state
    groups of 16) at 4,096 tokens on an H100, as field6 L014 ran it on 0.27.1 (--enable-prefix-caching
    --enforce-eager at 0.88). The attention block is 784 tokens (its page grows to the state's page), so a request
    takes cdiv(4096, 784) = 6 attention blocks plus 3 x state_blocks: 12 with "align" (L014 logged 71.42x for 4,096
    tokens, i.e. num_blocks / 12 with its 857 blocks), 9 with one state block (90.9x predicted before)."""
    flags = EngineFlags(
        gpu_memory_utilization=0.88,
        max_model_len=4096,
        max_num_seqs=32,
        max_num_batched_tokens=4096,
        enforce_eager=True,
        enable_prefix_caching=prefix_caching,
    )
    e = explain(resolve_model("Qwen/Qwen3.6-27B-FP8"), H100, flags, VllmVersion.parse(version))
    assert e.stage.layout.block_size == 784
    assert e.max_concurrency == pytest.approx(e.stage.num_blocks / (6 + 3 * state_blocks), rel=1e-6)


def test_cudagraph_estimate_keeps_the_first_capture_and_scales_the_per_graph_part() -> None:
    """vLLM's estimate is "first capture + (graphs - 1) x per graph" (a v0.19 DEBUG line: 186 MiB + (83 - 1) x 6 MiB).
    The fit (0.28 GiB + 17 MiB a layer) saw 51 graphs, of which the first capture is 186 / (186 + 50 x 6) = 38.3 %.
    A 64-layer model at max_num_seqs 2 captures 3 graphs (1, 2, 4): 0.28 GiB + 64 x 17 MiB x (186 + 2 x 6) / 486
    = 300,647,710 + 1,140,850,688 x 198 / 486 = 300,647,710 + 464,791,021 = 765,438,731 bytes (0.71 GiB, where the
    51-graph floor kept 1.34); at 51 graphs the fit is unchanged."""
    from recommender.memory import overheads

    assert overheads.cudagraph_capture_count(4, max_num_batched_tokens=8192) == 3
    assert overheads.cudagraph_bytes(layers_on_gpu=64, enforce_eager=False, graphs=3) == 765_438_731
    assert overheads.cudagraph_bytes(layers_on_gpu=64, enforce_eager=False, graphs=51) == 300_647_710 + 1_140_850_688


def test_cudagraph_estimate_counts_the_full_decode_graphs() -> None:
    """From 0.11.0 (FULL_AND_PIECEWISE by default, vllm-project/vllm#25444) vLLM captures, beside the PIECEWISE list,
    one FULL graph per capture size <= max_num_seqs (capture_model's decode_cudagraph_batch_sizes), and
    profile_cudagraph_memory returns max(first captures) + per_graph x (len(descs) - 1) summed over both modes.
    At the default 256 sequences: [1, 2, 4] + range(8, 256, 8) + [256] = 3 + 31 + 1 = 35 FULL graphs beside the 51
    PIECEWISE ones; the v0.19 sweep (1,024 sequences, the fit) had 51 of each. At 16 sequences: 1, 2, 4, 8, 16 = 5.
    A 40-layer model at 256 sequences: per-graph share (50 + 34) / (50 + 50) = 0.84, so the per-layer part is
    40 x 17 MiB x (186 + 0.84 x 300) / 486 = 713,031,680 x 438 / 486 = 642,608,798 bytes beside the 0.28 GiB base
    (300,647,710): 943,256,508 bytes (0.88 GiB; the PIECEWISE list alone gave 0.94 GiB). Before 0.11 (PIECEWISE only)
    there is no FULL list and the estimate is as before."""
    from recommender.memory import overheads

    assert overheads.cudagraph_decode_count(512, max_num_seqs=256, max_num_batched_tokens=2048) == 35
    assert overheads.cudagraph_decode_count(512, max_num_seqs=1024, max_num_batched_tokens=8192) == 51
    assert overheads.cudagraph_decode_count(32, max_num_seqs=16, max_num_batched_tokens=2048) == 5
    assert (
        overheads.cudagraph_decode_count(512, max_num_seqs=256, max_num_batched_tokens=2048, version=(0, 10, 2)) is None
    )
    assert overheads.cudagraph_bytes(layers_on_gpu=40, enforce_eager=False, graphs=51, full_graphs=35) == 943_256_508
    whole = overheads.cudagraph_bytes(layers_on_gpu=40, enforce_eager=False, graphs=51)
    assert whole == 300_647_710 + 713_031_680
    assert overheads.cudagraph_bytes(layers_on_gpu=40, enforce_eager=False, graphs=51, full_graphs=51) == whole
    assert overheads.cudagraph_bytes(layers_on_gpu=40, enforce_eager=False, graphs=51, full_graphs=None) == whole


def test_v1_profiling_forward_and_sampler_peaks_do_not_add() -> None:
    """V1's profile_run runs the dummy forward over max_num_batched_tokens, then the sampler over max_num_seqs rows,
    so the peak is the larger of the two. The forward's dense gated MLP holds the gate-up output [T, 2 I / TP] and
    SiluAndMul's [T, I / TP] (6 bytes per token and sharded channel in 16 bit) beside hidden states and residual
    [T, H] (4 bytes per hidden channel). Qwen3-14B (I 17,408, H 5,120, vocab 151,936), field12 S003's 8 sequences
    and 8,192 tokens: forward 8,192 x (6 x 17,408 + 4 x 5,120) = 8,192 x 124,928 = 1,023,410,176 B; the fitted side
    8,192 x 47,000 + 13.5 x 8 x 151,936 = 385,024,000 + 16,409,088 = 401,433,088 B, so the forward sets the peak. At
    TP 2: 8,192 x (6 x 8,704 + 20,480) = 595,591,168 B. At vLLM's default 256 sequences and 2,048 tokens the sampler
    side (96,256,000 + 525,090,816 = 621,346,816 B) is above the forward's 2,048 x 124,928 = 255,852,544 B. An MoE
    model keeps the fit (its experts' cache is the MoE term)."""
    from recommender.memory import overheads

    qwen = resolve_model("Qwen/Qwen3-14B")
    assert (qwen.intermediate_size, qwen.hidden_size, qwen.vocab_size) == (17_408, 5_120, 151_936)
    assert overheads.v1_forward_bytes(qwen, 8192, 1) == 1_023_410_176
    assert overheads.v1_forward_bytes(qwen, 8192, 2) == 595_591_168

    def peak(seqs: int, tokens: int) -> int:
        return overheads.activation_peak_bytes(
            qwen, max_num_batched_tokens=tokens, max_num_seqs=seqs, tp=1, last_stage=True, version=(0, 28)
        )

    assert peak(8, 8192) == 1_023_410_176
    assert peak(256, 2048) == 621_346_816
    assert overheads.v1_forward_bytes(resolve_model("Qwen/Qwen3-30B-A3B"), 8192, 1) == 0


def test_cudagraph_estimate_scales_with_the_captured_tokens() -> None:
    """profile_cudagraph_memory captures the two largest sizes of each mode (largest first) and reads the free memory:
    first capture = the largest batch's pool, per graph = max(the second's, 1 MiB). Both hold the captured batches'
    tensors, so they follow those batches' tokens (the fit: 512 and 496), above a 0.12 GiB floor.

    field2 G012 (Qwen3-30B-A3B, 48 layers, 0.22.1, max_num_seqs 64, max_num_batched_tokens 8,192; logged estimate
    0.14 GiB): PIECEWISE [1, 2, 4, 8 .. 128] = 19 graphs (second 120), FULL [1, 2, 4, 8 .. 64] = 11 (second 56).
      floor                                    128,849,018 (int(0.12 GiB))
      base above it x 128 / 512                171,798,692 x 0.25 = 42,949,673
      first-capture share x 128 / 512          48 x 17 MiB = 855,638,016 x 186 / 486 x 0.25 = 81,866,600
      per-graph share by tokens                855,638,016 x 300 / 486 x (18 x 120 + 10 x 56) / (100 x 496)
                                               = 28,964,249, below vLLM's 1 MiB a graph x 28 = 29,360,128: the floor
      total 283,025,419 bytes (0.26 GiB; the graph-count rule gave 0.72).
    field7 M005 (Qwen3-8B, 36 layers, 0.21.0, 256 sequences, 2,048 batched tokens; logged 0.52): PIECEWISE to 512
    (51, second 496), FULL to 256 (35, second 248): 0.28 GiB + 36 x 17 MiB x (186 + 300 x (50 x 496 + 34 x 248) /
    49,600) / 486 = 300,647,710 + 511,006,037 = 811,653,747 bytes (0.76 GiB; by graph count 0.82). At the fit's
    lists (1,024 sequences) the figure is the fit's."""
    from recommender.memory import overheads

    pw = overheads.cudagraph_capture_sizes(128, max_num_batched_tokens=8192, version=(0, 22, 1))
    full = overheads.cudagraph_decode_sizes(128, max_num_seqs=64, max_num_batched_tokens=8192, version=(0, 22, 1))
    assert (len(pw), pw[-2:]) == (19, (120, 128))
    assert full is not None and (len(full), full[-2:]) == (11, (56, 64))
    assert overheads.cudagraph_bytes(layers_on_gpu=48, enforce_eager=False, sizes=pw, full_sizes=full) == 283_025_419

    pw = overheads.cudagraph_capture_sizes(512, max_num_batched_tokens=2048, version=(0, 21, 0))
    full = overheads.cudagraph_decode_sizes(512, max_num_seqs=256, max_num_batched_tokens=2048, version=(0, 21, 0))
    assert overheads.cudagraph_bytes(layers_on_gpu=36, enforce_eager=False, sizes=pw, full_sizes=full) == 811_653_747

    pw = overheads.cudagraph_capture_sizes(512, max_num_batched_tokens=8192, version=(0, 19, 0))
    full = overheads.cudagraph_decode_sizes(512, max_num_seqs=1024, max_num_batched_tokens=8192, version=(0, 19, 0))
    fitted = overheads.cudagraph_bytes(layers_on_gpu=32, enforce_eager=False, graphs=51, full_graphs=51)
    assert overheads.cudagraph_bytes(layers_on_gpu=32, enforce_eager=False, sizes=pw, full_sizes=full) == fitted
