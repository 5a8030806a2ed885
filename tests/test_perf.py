"""The performance model's core: engine facts from the memory model, the roofline step time, the scheduler
replay and the benchmark metrics. Numbers are derived by hand in the comments."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from recommender.catalog import load_gpus
from recommender.errors import InfeasibleError, InputError
from recommender.gpu_names import resolve_gpu
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.perf.bench_result import read_bench_result
from recommender.perf.closed_form import estimate
from recommender.perf.costs import EngineCosts, engine_costs
from recommender.perf.facts import KvPool
from recommender.perf.kernels import trtllm_moe_path
from recommender.perf.load import Load, make_requests
from recommender.perf.metrics import percentile, summarize
from recommender.perf.params import Efficiency, PerfParams, gpu_family
from recommender.perf.predict import facts_for, predict, predict_engine, startup, sweep
from recommender.perf.replay import replay
from recommender.perf.step import Batch, expected_experts, step_time
from recommender.sources.resolve import resolve_model

V33 = VllmVersion(0, 33)
# Round constants so hand computations stay readable; no overheads unless a test adds them.
PLAIN = PerfParams(
    bandwidth_efficiency=1.0,
    compute_efficiency=1.0,
    attention_efficiency=1.0,
    moe_efficiency=1.0,
    dequant_efficiency=1.0,
    step_overhead_ms=0.0,
    layer_overhead_us=0.0,
    moe_layer_overhead_us=0.0,
    triton_moe_layer_overhead_us=0.0,
    marlin_moe_layer_overhead_us=0.0,
    seq_overhead_us=0.0,
    request_overhead_ms=0.0,
    request_latency_ms=0.0,
    allreduce_latency_us=0.0,
    pcie_allreduce_latency_us=0.0,
    link_efficiency=1.0,
    pcie_link_efficiency=1.0,
    eager_layer_overhead_us=0.0,
)


def _gpu(name: str):  # type: ignore[no-untyped-def]
    return resolve_gpu(name, load_gpus())


def _costs(model: str, gpu: str, params: PerfParams = PLAIN, **flags: object) -> EngineCosts:
    m, g = resolve_model(model), _gpu(gpu)
    f = EngineFlags(**flags)  # type: ignore[arg-type]
    e = startup(m, g, f, V33)
    return engine_costs(facts_for(m, g, f, e), g, params)


def test_llama_8b_facts_come_from_the_memory_model() -> None:
    c = _costs("meta-llama/Llama-3.1-8B-Instruct", "h100", max_model_len=8192)
    # 32 layers x (q,k,v 4096x6144 + o 4096x4096 + gate/up/down 3x4096x14336 + 2 norms of 4096) x 2 bytes
    per_layer = 4096 * 6144 + 4096 * 4096 + 3 * 4096 * 14336 + 2 * 4096
    assert c.dense_bytes == 32 * per_layer * 2 == 13_959_168_000
    assert c.lm_head_bytes == 128256 * 4096 * 2  # untied lm_head; the embedding is a gather, not read per step
    assert c.kv_full == 32 * 8 * 128 * 2 * 2  # layers x KV heads x head dim x (K, V) x bf16
    assert c.attn_flops_full == 32 * 2 * 32 * (128 + 128)  # 2 x heads x (q.k + p.v widths) per layer
    assert c.pool.block_size == 16 and c.pool.full_groups == 1 and c.pool.num_blocks > 0


def test_tp_halves_weights_and_adds_two_all_reduces_per_layer() -> None:
    one = _costs("meta-llama/Llama-3.1-8B-Instruct", "h100", max_model_len=8192)
    two = _costs("meta-llama/Llama-3.1-8B-Instruct", "h100", max_model_len=8192, tensor_parallel_size=2)
    assert two.dense_bytes == pytest.approx(one.dense_bytes / 2, rel=1e-3)
    assert (one.allreduces, two.allreduces) == (0, 64)
    assert two.allreduce_bytes == 4096 * 2 * 2 * (2 - 1) / 2  # hidden x bf16 x ring factor 2(n-1)/n
    # NVLink 4.0, 900 GB/s both ways -> 450 GB/s one way (link efficiency 1 here)
    assert two.link_bandwidth == 450e9


def test_pcie_all_reduce_has_its_own_efficiency_and_latency() -> None:
    params = replace(PLAIN, link_efficiency=0.2, pcie_link_efficiency=0.6, pcie_allreduce_latency_us=20.0)
    c = _costs("Qwen/Qwen2.5-7B-Instruct", "a100-80gb-pcie", params, max_model_len=4096, tensor_parallel_size=2)
    # PCIe Gen4 x16: 32 GB/s one way x 0.6 (not NVLink's 0.2); 20 us per all-reduce, 2 x 28 layers of them
    assert c.link_bandwidth == pytest.approx(32e9 * 0.6)
    assert c.link_latency == pytest.approx(20e-6)
    assert c.allreduces == 56
    st = step_time(c, Batch(decodes=32, decode_context=32 * 1000, sampled=32))
    # 56 x (20 us + 32 tokens x 3584 hidden x 2 B x 2 (n-1)/n / 19.2e9 B/s) = 56 x (20 + 11.95) us = 1.789 ms
    assert st.communication == pytest.approx(56 * (20e-6 + 32 * 3584 * 2 / 19.2e9), rel=1e-9)
    assert st.communication == pytest.approx(1.789e-3, rel=1e-3)
    nv = _costs("Qwen/Qwen2.5-7B-Instruct", "a100-80gb", params, max_model_len=4096, tensor_parallel_size=2)
    assert nv.link_bandwidth == pytest.approx(300e9 * 0.2)  # NVLink 3.0 600 GB/s both ways keeps link_efficiency
    # NCCL's ring over 8 PCIe GPUs: 14 hops, 12 more than two GPUs' 2, at 1.83 us: 42 us (NVIDIA/nccl#1530)
    tp8 = _costs("meta-llama/Llama-3.1-8B-Instruct", "rtx4090", params, max_model_len=4096, tensor_parallel_size=8)
    assert tp8.link_latency == pytest.approx((20.0 + 12 * 1.83) * 1e-6)
    nv8 = _costs("meta-llama/Llama-3.1-8B-Instruct", "a100-80gb", params, max_model_len=4096, tensor_parallel_size=8)
    assert nv8.link_latency == pytest.approx(params.allreduce_latency_us * 1e-6)  # NVLink: custom all-reduce


def test_enforce_eager_pays_a_launch_cost_per_layer_and_step() -> None:
    params = replace(PLAIN, eager_layer_overhead_us=340.0)
    graphs = _costs("Qwen/Qwen3-14B-AWQ", "a100-80gb", params, max_model_len=16384)
    eager = _costs("Qwen/Qwen3-14B-AWQ", "a100-80gb", params, max_model_len=16384, enforce_eager=True)
    assert graphs.eager_launch == 0.0
    assert eager.eager_launch == pytest.approx(40 * 340e-6)  # 40 decoder layers x 340 us = 13.6 ms a step
    b = Batch(decodes=1, decode_context=16000, sampled=1)  # memory-bound decode: no compute hides the launches
    assert step_time(graphs, b).compute == 0.0
    assert step_time(eager, b).total - step_time(graphs, b).total == pytest.approx(13.6e-3)
    chunk = Batch(prefill_tokens=8192, prefill_pairs=8192 * 4096, prefills=1)  # compute-bound: launches hidden
    assert step_time(graphs, chunk).compute > 13.6e-3
    assert step_time(eager, chunk).total == pytest.approx(step_time(graphs, chunk).total)


def test_decode_step_is_the_weight_stream_plus_the_kv_read() -> None:
    c = _costs("meta-llama/Llama-3.1-8B-Instruct", "h100", max_model_len=8192)
    st = step_time(c, Batch(decodes=1, decode_context=1000, sampled=1))
    # memory-bound: (13.96e9 weights + 1.05e9 lm_head + 1001 tokens x 131,072 B of KV) / 3.35e12 B/s
    expected = (13_959_168_000 + 128256 * 4096 * 2 + 1001 * 131_072) / 3.35e12
    assert st.total == pytest.approx(expected, rel=1e-9)
    assert st.memory == pytest.approx(st.total) and st.compute == 0


def test_prefill_step_is_compute_bound() -> None:
    c = _costs("meta-llama/Llama-3.1-8B-Instruct", "h100", max_model_len=8192)
    pairs = 4096 * 4097 / 2
    st = step_time(c, Batch(prefill_tokens=4096, prefill_pairs=pairs, prefills=1, sampled=1))
    gemm = (4096 * 13_959_168_000 + 128256 * 4096 * 2) / 989e12  # 2 flops per weight per token, lm_head once
    attention_compute = pairs * 524_288 / 989e12
    attention_memory = 4096 * 131_072 / 3.35e12  # the new tokens' KV written
    assert st.total == pytest.approx(gemm + max(attention_compute, attention_memory), rel=1e-9)
    assert st.compute > st.memory


def test_expected_experts_touched() -> None:
    assert expected_experts(8, 2, 1) == pytest.approx(2)
    assert expected_experts(8, 2, 2) == pytest.approx(8 * (1 - 0.75**2))  # 3.5
    assert expected_experts(128, 8, 10_000) == pytest.approx(128)
    assert expected_experts(0, 0, 5) == 0


def test_moe_reads_only_the_experts_a_small_batch_touches() -> None:
    c = _costs("Qwen/Qwen3-30B-A3B", "h100", max_model_len=8192)
    one = step_time(c, Batch(decodes=1, decode_context=100, sampled=1))
    many = step_time(c, Batch(decodes=256, decode_context=25_600, sampled=256))
    # 1 token touches 8 of 128 experts (1/16 of the expert bytes); 256 tokens touch nearly all of them
    assert c.expert_bytes / 16 / c.expert_bandwidth < one.total < c.expert_bytes / 4 / c.expert_bandwidth
    assert many.memory > c.expert_bytes * 0.99 / c.expert_bandwidth


def test_datacenter_blackwell_moe_runs_the_flashinfer_trtllm_kernels_from_vllm_0_15_mxfp4_from_0_11_1() -> None:
    # vLLM 0.33's MoE oracles pick FLASHINFER_TRTLLM on sm100 for 16-bit, FP8, NVFP4 and MXFP4 experts; the priority
    # oracle arrived in 0.15.0; Hopper, sm120 cards and weight-only INT4 experts (Marlin) keep the Triton figures
    new, old = VllmVersion(0, 21), VllmVersion(0, 14)
    b200, h200, rtx5090 = _gpu("b200"), _gpu("h200"), _gpu("rtx5090")
    for model in ("MiniMaxAI/MiniMax-M2.5", "nvidia/MiniMax-M2.5-NVFP4", "openai/gpt-oss-120b", "Qwen/Qwen3-30B-A3B"):
        m = resolve_model(model)
        assert trtllm_moe_path(m, b200, m.quant, new), model
        assert not trtllm_moe_path(m, h200, m.quant, new) and not trtllm_moe_path(m, rtx5090, m.quant, new), model
        if m.quant is None or m.quant.method != "mxfp4":
            assert not trtllm_moe_path(m, b200, m.quant, old), model
    # MXFP4 experts (gpt-oss) took FlashInfer's TRT-LLM MoE on sm100 wherever flashinfer was installed, and flashinfer
    # is a default dependency from 0.11.1 (get_mxfp4_backend in quantization/mxfp4.py; vllm-project/vllm#26443)
    oss = resolve_model("openai/gpt-oss-120b")
    assert trtllm_moe_path(oss, b200, oss.quant, old) and trtllm_moe_path(oss, b200, oss.quant, VllmVersion(0, 11, 1))
    assert not trtllm_moe_path(oss, b200, oss.quant, VllmVersion(0, 11, 0))
    assert not trtllm_moe_path(oss, h200, oss.quant, old)
    kimi, llama = resolve_model("moonshotai/Kimi-K2.5"), resolve_model("meta-llama/Llama-3.1-8B-Instruct")
    assert not trtllm_moe_path(kimi, b200, kimi.quant, new)  # INT4 experts (GPTQ-style pack): Marlin
    assert not trtllm_moe_path(llama, b200, None, new)  # no experts


def test_the_flashinfer_trtllm_moe_path_has_its_own_fixed_cost_and_streaming_rate() -> None:
    params = replace(
        PLAIN,
        moe_efficiency=0.5,
        moe_layer_overhead_us=100.0,
        triton_moe_layer_overhead_us=25.0,
        trtllm_moe_layer_overhead_us=40.0,
        trtllm_moe_bandwidth_efficiency=0.93,
    )
    m, flags = resolve_model("Qwen/Qwen3-30B-A3B"), EngineFlags(max_model_len=8192)

    def costs(gpu: str, version: VllmVersion) -> EngineCosts:
        g = _gpu(gpu)
        return engine_costs(facts_for(m, g, flags, startup(m, g, flags, version)), g, params)

    flashinfer, triton = costs("b200", V33), costs("b200", VllmVersion(0, 11))
    # 48 MoE layers: 40 us each on the FlashInfer path, 25 us on the Triton one (PLAIN has no per-layer cost else)
    assert flashinfer.layer_overhead == pytest.approx(48 * 40e-6)
    assert triton.layer_overhead == pytest.approx(48 * 25e-6)
    # experts stream at 0.93 of the B200's catalogued 7,700 GB/s, against 1.0 x 0.5 (moe_efficiency) with Triton
    assert flashinfer.expert_bandwidth == pytest.approx(7700e9 * 0.93)
    assert triton.expert_bandwidth == pytest.approx(7700e9 * 0.5)
    assert flashinfer.bandwidth == triton.bandwidth  # attention and dense weights keep the engine's rate


def test_only_moe_kernels_without_a_benchmark_take_the_fitted_moe_layer_overhead() -> None:
    # Triton fused-MoE (NVIDIA, 16-bit or FP8 experts) costs triton_moe_layer_overhead_us a layer (kernel benchmarks,
    # params.py); Marlin's weight-only experts and AMD GPUs keep moe_layer_overhead_us, times the family's overhead
    # multiplier (1.0 here: PLAIN has no families). Qwen3-30B-A3B: 48 MoE layers of 48; PLAIN adds no other cost.
    params = replace(PLAIN, moe_layer_overhead_us=100.0, triton_moe_layer_overhead_us=25.0)
    triton = _costs("Qwen/Qwen3-30B-A3B", "h100", params, max_model_len=8192)
    fp8 = _costs("Qwen/Qwen3-30B-A3B-FP8", "h100", params, max_model_len=8192)
    amd = _costs("Qwen/Qwen3-30B-A3B", "mi300x", params, max_model_len=8192)
    marlin = _costs("Qwen/Qwen3-30B-A3B-FP8", "a100", params, max_model_len=8192)  # FP8 without FP8 cores: Marlin
    assert triton.layer_overhead == pytest.approx(48 * 25e-6) and fp8.layer_overhead == triton.layer_overhead
    assert amd.layer_overhead == pytest.approx(48 * 100e-6) and marlin.layer_overhead == amd.layer_overhead


def test_weight_only_experts_on_hopper_take_the_measured_marlin_figure() -> None:
    # MXFP4 / INT4 experts run Marlin's (or OpenAI's Triton) weight-only MoE kernels: on Hopper the figure from
    # published kernel timings (params.py, 50 us), not scaled by the family; Ampere keeps the fitted figure
    params = replace(
        PLAIN, moe_layer_overhead_us=100.0, triton_moe_layer_overhead_us=25.0, marlin_moe_layer_overhead_us=50.0
    )
    hopper = _costs("openai/gpt-oss-20b", "h100", params, max_model_len=8192)
    ampere = _costs("openai/gpt-oss-20b", "a100", params, max_model_len=8192)
    triton = _costs("Qwen/Qwen3-30B-A3B", "h100", params, max_model_len=8192)  # 16-bit experts: Triton fused-MoE
    assert hopper.layer_overhead == pytest.approx(24 * 50e-6)  # 24 MoE layers, no other per-layer cost in PLAIN
    assert ampere.layer_overhead == pytest.approx(24 * 100e-6)
    assert triton.layer_overhead == pytest.approx(48 * 25e-6)


def test_fp8_experts_keep_the_16_bit_roofline_share_on_the_gb10_only() -> None:
    # the FP8 fused-MoE penalty (0.55 here) applies on an H100; the GB10's measured BF16/FP8 pair gives 1.0 there
    # (costs.FP8_MOE_EFFICIENCY_MEASURED), so its FP8 experts stream at bandwidth x moe_efficiency alone
    params = replace(PLAIN, moe_efficiency=0.5, fp8_moe_efficiency=0.55)
    gb10 = _costs("Qwen/Qwen3-30B-A3B-FP8", "gb10", params, max_model_len=8192, gpu_memory_utilization=0.8)
    h100 = _costs("Qwen/Qwen3-30B-A3B-FP8", "h100", params, max_model_len=8192)
    bf16 = _costs("Qwen/Qwen3-30B-A3B", "gb10", params, max_model_len=8192, gpu_memory_utilization=0.8)
    assert gb10.expert_bandwidth == pytest.approx(gb10.bandwidth * 0.5)
    assert h100.expert_bandwidth == pytest.approx(h100.bandwidth * 0.5 * 0.55)
    assert bf16.expert_bandwidth == gb10.expert_bandwidth  # the same share as the 16-bit experts on the GB10
    assert gb10.expert_bytes == pytest.approx(bf16.expert_bytes / 2, rel=0.01)  # half the bytes: half the time


def test_sliding_window_caps_the_kv_read() -> None:
    c = _costs("openai/gpt-oss-20b", "h100", max_model_len=8192)
    assert c.window == 128 and c.kv_window > 0 and c.kv_full > 0
    short = step_time(c, Batch(decodes=1, decode_context=128, sampled=1))
    long = step_time(c, Batch(decodes=1, decode_context=4128, sampled=1))
    # 4,000 more context tokens are read only by the full-attention layers
    assert long.total - short.total == pytest.approx(4000 * c.kv_full / c.bandwidth, rel=1e-6)


def test_sparse_mla_reads_topk_latents_and_the_indexer_scores_every_token() -> None:
    """DeepSeek-V3.2 on 8 x H200: the MLA latent (512 + 64 bf16 per token and layer) is read for the index_topk = 2048
    keys the indexer picks; the indexer's K cache (128 fp8 bytes + 4 scale bytes) is read for every context token
    and its logits cost 64 heads x 128 x 2 FLOPs per pair on every rank at the FP8 rate (half the 16-bit time)."""
    c = _costs("deepseek-ai/DeepSeek-V3.2", "h200", tensor_parallel_size=8, max_model_len=32768)
    g = _gpu("h200")
    assert c.window == 2048
    assert c.kv_window == 61 * (512 + 64) * 2 and c.kv_full == 61 * (128 + 4)
    assert c.attn_flops_window == 61 * 2 * (128 // 8) * (2 * 512 + 64)
    assert c.attn_flops_full == pytest.approx(61 * 2 * 64 * 128 * g.bf16_tflops / g.fp8_tflops)
    short = step_time(c, Batch(decodes=1, decode_context=2048, sampled=1))
    long = step_time(c, Batch(decodes=1, decode_context=32768, sampled=1))
    assert long.total - short.total == pytest.approx(30720 * c.kv_full / c.bandwidth, rel=1e-6)


def test_dense_mla_decodes_absorbed_and_prefills_unabsorbed() -> None:
    """DeepSeek-R1 at TP 8: decode attends over the 576-wide latent with 512-wide values (absorbed MQA); a prefill
    chunk runs vLLM's forward_mha, q.k over 128 + 64 and p.v over 128 per head: 320 / 1088 of the decode FLOPs."""
    c = _costs("deepseek-ai/DeepSeek-R1", "h200", tensor_parallel_size=8, max_model_len=32768)
    assert c.attn_flops_full == 61 * 2 * (128 // 8) * (512 + 64 + 512)
    assert c.attn_flops_prefill == 61 * 2 * (128 // 8) * (128 + 64 + 128)
    llama = _costs("meta-llama/Llama-3.1-8B-Instruct", "h100", max_model_len=8192)
    assert llama.attn_flops_prefill == llama.attn_flops_full  # plain attention: one width for both
    pairs = 4096 * 4097 / 2
    one = step_time(c, Batch(prefill_tokens=4096, prefill_pairs=pairs, prefills=1))
    bare = step_time(replace(c, attn_flops_prefill=0.0), Batch(prefill_tokens=4096, prefill_pairs=pairs, prefills=1))
    assert one.compute - bare.compute == pytest.approx(pairs * c.attn_flops_prefill / c.attention_compute)


def test_async_scheduling_overlaps_the_cpu_side() -> None:
    params = replace(PLAIN, step_overhead_ms=2.0)
    c = _costs("meta-llama/Llama-3.1-8B-Instruct", "h100", params, max_model_len=8192)
    sync = step_time(c, Batch(decodes=1, decode_context=10, sampled=1))
    overlapped = step_time(replace(c, async_scheduling=True), Batch(decodes=1, decode_context=10, sampled=1))
    assert sync.total == pytest.approx(overlapped.total + 0.002)  # the GPU part (4.5 ms) hides the 2 ms


def _synthetic(step_s: float = 0.01, **changes: object) -> EngineCosts:
    """An engine whose every step takes `step_s` (all in the per-step overhead), with a big KV pool."""
    c = _costs("meta-llama/Llama-3.1-8B-Instruct", "h100", max_model_len=8192)
    zero = dict.fromkeys(
        (
            "dense_bytes",
            "lm_head_bytes",
            "dense_flops",
            "lm_head_flops",
            "kv_full",
            "attn_flops_full",
            "attn_flops_prefill",
        ),
        0.0,
    )
    return replace(c, **zero, step_overhead=step_s, **changes)  # type: ignore[arg-type]


def test_closed_loop_one_request_at_a_time() -> None:
    c = _synthetic()
    r = predict_engine(c, Load(100, 11, num_prompts=5, max_concurrency=1, jitter=0))
    # one prefill step (first token after 10 ms), then 10 decode steps of 10 ms each
    assert r.ttft.mean == pytest.approx(10.0)
    assert r.tpot.mean == pytest.approx(10.0)
    assert r.e2el.mean == pytest.approx(110.0)
    assert r.output_throughput == pytest.approx(11 / 0.110)
    assert r.peak_running == 1 and r.preemptions == 0


def test_burst_is_limited_by_max_num_seqs() -> None:
    c = _synthetic(max_num_seqs=4)
    r = predict_engine(c, Load(100, 10, num_prompts=8, jitter=0))
    assert r.peak_running == 4
    # the second wave of 4 waits for the first (one prefill step + 9 decode steps) before its prefill
    assert r.ttft.median == pytest.approx(55.0, abs=5.1)


def test_chunked_prefill_spreads_a_long_prompt_over_steps() -> None:
    c = _synthetic(max_num_batched_tokens=2048)
    r = predict_engine(c, Load(8000, 2, num_prompts=1, jitter=0))
    assert r.ttft.mean == pytest.approx(40.0)  # ceil(8,000 / 2,048) = 4 steps of 10 ms


def test_a_cached_prompt_computes_only_its_last_block() -> None:
    """With every prompt in the prefix cache a request computes only the tokens past its last full cached block, and
    at least one (vLLM recomputes the last prompt token for its logits)."""
    c = _synthetic(max_num_batched_tokens=2048)
    fresh = predict_engine(c, Load(8000, 2, num_prompts=1, jitter=0))
    cached = predict_engine(c, Load(8000, 2, num_prompts=1, jitter=0, cached_prompts=True))
    assert (fresh.ttft.mean, cached.ttft.mean) == pytest.approx((40.0, 10.0))  # 4 chunks of 2,048 against 1 step
    assert make_requests(Load(8000, 2, cached_prompts=True), 8192).cached
    # a compute-bound engine: the step is priced by the tokens computed, 16 of a 4,096-token prompt (4,080 cached),
    # while the cached prefix's KV is still read
    real = _costs("meta-llama/Llama-3.1-8B-Instruct", "h100", max_model_len=8192)
    full = predict_engine(real, Load(4096, 2, num_prompts=1, jitter=0)).ttft.mean
    tail = predict_engine(real, Load(4096, 2, num_prompts=1, jitter=0, cached_prompts=True)).ttft.mean
    one = predict_engine(real, Load(16, 2, num_prompts=1, jitter=0)).ttft.mean
    assert tail < full / 10
    assert tail > one  # the 4,080 cached tokens' KV is read by the 16 computed


def test_chunk_stretches_sum_the_steps_they_replace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Long prompts chunked by a small token budget beside running decodes: the closed-form chunk stretches give the
    figures of the step-by-step replay: within 1% (a stretch's step times are taken as linear in the prefix, while
    the roofline's max of memory and compute bends where attention turns compute-bound), ITL p99 within 5%."""
    from recommender.perf import replay as replay_module

    c = _costs("meta-llama/Llama-3.1-8B-Instruct", "a100-80gb", max_num_batched_tokens=512)
    load = Load(4000, 100, num_prompts=60, max_concurrency=8)
    fast = predict_engine(c, load)
    monkeypatch.setattr(replay_module._Engine, "chunk_stretch", lambda *_: False)
    slow = predict_engine(c, load)
    assert fast.ttft.mean == pytest.approx(slow.ttft.mean, rel=0.01)
    assert fast.tpot.mean == pytest.approx(slow.tpot.mean, rel=0.01)
    assert fast.output_throughput == pytest.approx(slow.output_throughput, rel=0.01)
    assert fast.itl.mean == pytest.approx(slow.itl.mean, rel=0.01)
    assert fast.itl.p99 == pytest.approx(slow.itl.p99, rel=0.05)


def test_v0_without_chunked_prefill_runs_prefill_only_steps_while_decodes_wait() -> None:
    """vLLM V0's _schedule_default (core/scheduler.py, 0.4-0.7): waiting prompts first, whole, as many as the token
    budget holds; the running decodes wait through that step. Three 100-token prompts at once, 4 output tokens,
    a 200-token budget (for two prompts), every step 10 ms:
      V0: step 1 prefills A, B (first tokens at 10 ms); step 2 prefills C alone (20 ms) while A, B wait; steps 3-5
          decode all three (30, 40, 50 ms). TTFT 10, 10, 20; TPOT A, B (50 - 10) / 3 = 13.33, C (50 - 20) / 3 = 10;
          ITL: A and B wait 20 ms for their second token, every other gap is 10 ms: (2 x 20 + 7 x 10) / 9.
      V1: step 2 decodes A, B and prefills C in the same step (198 tokens left), so A and B finish at 40 ms, C at
          50 ms: TPOT 10 for all three."""
    v1 = _synthetic(max_num_batched_tokens=200, max_model_len=200)
    v0 = replace(v1, v0_prefill_first=True)
    load = Load(100, 4, num_prompts=3, jitter=0)
    r0, r1 = predict_engine(v0, load), predict_engine(v1, load)
    assert r0.ttft.mean == pytest.approx(40 / 3) and r1.ttft.mean == pytest.approx(40 / 3)
    assert r0.tpot.mean == pytest.approx((2 * 40 / 3 + 10) / 3)
    assert r0.itl.mean == pytest.approx(110 / 9) and r0.itl.p99 == pytest.approx(20.0)
    assert r0.e2el.mean == pytest.approx(50.0) and r0.output_throughput == pytest.approx(12 / 0.050)
    assert r1.tpot.mean == pytest.approx(10.0) and r1.e2el.mean == pytest.approx((40 + 40 + 50) / 3)


def test_v0_decodes_wait_through_consecutive_prefill_steps() -> None:
    """A budget for one 100-token prompt a step (the context, 150 tokens, bounds V0's budget from below), three
    prompts at once, 3 output tokens, 10 ms steps: prefills of A, B, C at 10, 20, 30 ms, then two decode steps at 40
    and 50 ms. Gaps: A 30 then 10, B 20 then 10, C 10 then 10: ITL mean 90 / 6 = 15 ms, max 30 ms; TPOT A (50 - 10)
    / 2 = 20, B 15, C 10: mean 15 ms (ITL and TPOT agree when the outputs are equal)."""
    v0 = _synthetic(max_num_batched_tokens=100, max_model_len=150, v0_prefill_first=True)
    r = predict_engine(v0, Load(100, 3, num_prompts=3, jitter=0))
    assert r.ttft.mean == pytest.approx(20.0) and r.tpot.mean == pytest.approx(15.0)
    assert r.itl.mean == pytest.approx(15.0) and r.itl.p99 == pytest.approx(30.0)


def test_v0_prefill_first_is_vllm_before_0_8_without_chunked_prefill() -> None:
    """V0 switches chunked prefill on by default only above a 32K context (then it schedules decodes first, as V1)."""
    m, g = resolve_model("meta-llama/Llama-3.1-8B-Instruct"), _gpu("h100")

    def prefill_first(version: VllmVersion, max_model_len: int, chunked: bool | None = None) -> bool:
        f = EngineFlags(max_model_len=max_model_len)
        return facts_for(m, g, f, startup(m, g, f, version), chunked_prefill=chunked).v0_prefill_first

    v063 = VllmVersion(0, 6, 3)
    assert prefill_first(v063, 8192)
    assert not prefill_first(v063, 8192, chunked=True)
    assert not prefill_first(v063, 65536)  # long context: chunked prefill by default
    assert prefill_first(v063, 65536, chunked=False)
    assert not prefill_first(V33, 8192)


def test_the_fixed_request_latency_starts_with_vllm_0_10() -> None:
    """request_latency_ms is what the 0.10+ front end adds to every TTFT; V0 and V1 before 0.10 do not pay it."""
    m, g = resolve_model("meta-llama/Llama-3.1-8B-Instruct"), _gpu("h100")
    params = replace(PLAIN, request_latency_ms=40.0, request_overhead_ms=3.0)

    def costs(version: VllmVersion) -> EngineCosts:
        f = EngineFlags(max_model_len=8192)
        return engine_costs(facts_for(m, g, f, startup(m, g, f, version)), g, params)

    for version in (VllmVersion(0, 4), VllmVersion(0, 8, 5), VllmVersion(0, 9, 2)):
        assert costs(version).request_latency == 0.0
        assert costs(version).request_overhead == pytest.approx(0.003)  # the API server's serialized share stays
    assert costs(VllmVersion(0, 10)).request_latency == pytest.approx(0.040)
    assert costs(V33).request_latency == pytest.approx(0.040)


def test_v1_before_0_10_runs_the_per_sequence_share_beside_the_engine_core() -> None:
    """From 0.10 the per-sequence cost adds to the step (as fitted); V1 before 0.10 overlaps it (the API server's
    output handler), so a step takes the slower of the core's part and the sequences' part; V0 adds it."""
    m, g = resolve_model("meta-llama/Llama-3.1-8B-Instruct"), _gpu("h100")
    params = replace(PLAIN, step_overhead_ms=2.0, seq_overhead_us=100.0)
    batch = Batch(decodes=60, decode_context=60 * 400, sampled=60)

    def step(version: VllmVersion) -> float:
        f = EngineFlags(max_model_len=8192)
        return step_time(engine_costs(facts_for(m, g, f, startup(m, g, f, version)), g, params), batch).total

    serial, overlapped, v0 = step(VllmVersion(0, 10)), step(VllmVersion(0, 8, 5)), step(VllmVersion(0, 6, 3))
    assert serial == pytest.approx(overlapped + 0.006)  # the core (GPU 5.4 ms + 2 ms) hides 60 x 100 us
    assert v0 == pytest.approx(serial)
    many = Batch(decodes=200, decode_context=200 * 400, sampled=200)  # 20 ms of output work: now it sets the pace
    f = EngineFlags(max_model_len=8192)
    c = engine_costs(facts_for(m, g, f, startup(m, g, f, VllmVersion(0, 8, 5))), g, params)
    assert step_time(c, many).total == pytest.approx(0.020)


def test_a_sliding_window_group_holds_only_the_window() -> None:
    """vLLM's SlidingWindowManager frees the blocks that fall out of the window: a request of ~1,000 tokens holds
    ~63 blocks of 16 in its full-attention group and cdiv(127, 16) + 1 = 9 in a 128-token window group, so a pool
    of 720 blocks runs 10 of them at once (not the ~5 it would if the window group grew with the context)."""
    pool = KvPool(num_blocks=720, block_size=16, full_groups=1, window_groups=1, window_blocks=137, state_groups=0)
    c = _synthetic(pool=pool, window=128)
    r = predict_engine(c, Load(900, 100, num_prompts=40, jitter=0))
    assert r.peak_running == 10 and r.preemptions == 0


def test_a_group_whose_block_vllm_scaled_up_grows_at_its_own_block_size() -> None:
    """vLLM unifies page sizes by scaling a group's block size (Gemma 4's 512-wide global layers: 32 tokens a block
    beside 16-token sliding blocks). With the full-attention group at 32 tokens a block, a 900-token prompt takes
    900 / 32 + 0.5 + 9 = 37.6 of the 720 blocks, so 19 are admitted (not the 10 of 16-token blocks), and their
    decodes then outgrow the 5 blocks left: preemptions."""
    pool = KvPool(720, 16, full_groups=1, window_groups=1, window_blocks=137, state_groups=0, full_block_size=32)
    r = predict_engine(_synthetic(pool=pool, window=128), Load(900, 100, num_prompts=40, jitter=0))
    assert r.peak_running == 19 and r.preemptions > 0 and r.completed == 40


def test_a_small_kv_pool_preempts() -> None:
    small = KvPool(num_blocks=200, block_size=16, full_groups=1, window_groups=0, window_blocks=0, state_groups=0)
    c = _synthetic(pool=small)
    r = predict_engine(c, Load(500, 600, num_prompts=4, jitter=0))
    # 4 x 1,100 tokens need 275+ blocks of 16: decodes run out of the 200 blocks
    assert r.preemptions > 0 and r.bound == "kv-capacity"
    assert r.completed == 4


def test_request_rate_far_below_capacity_leaves_the_engine_idle() -> None:
    c = _synthetic()
    r = predict_engine(c, Load(100, 5, num_prompts=50, request_rate=1.0, jitter=0))
    assert r.bound == "arrival-rate"
    assert r.ttft.p99 == pytest.approx(10.0, abs=10.1)  # at most a step of waiting, then its own prefill step
    assert r.request_throughput == pytest.approx(1.0, rel=0.35)


def test_replay_is_deterministic_and_seeded() -> None:
    c = _costs("Qwen/Qwen3-8B", "h100", params=PerfParams())
    load = Load(500, 200, num_prompts=200, max_concurrency=16, dataset="sharegpt")
    a, b = predict_engine(c, load), predict_engine(c, load)
    assert a == b
    assert predict_engine(c, replace(load, seed=1)) != a


def test_sharegpt_lengths_keep_the_requested_means() -> None:
    reqs = make_requests(Load(217, 200, num_prompts=1000, dataset="sharegpt"), 40960)
    assert sum(reqs.prompt) / 1000 == pytest.approx(217, rel=0.02)
    assert sum(reqs.output) / 1000 == pytest.approx(200, rel=0.02)
    assert max(reqs.prompt) <= 1024 and min(reqs.prompt) >= 4
    fixed = make_requests(Load(1000, 100, num_prompts=100, jitter=0.05), 40960)
    assert all(950 <= p <= 1050 for p in fixed.prompt) and len(set(fixed.prompt)) > 1


def test_outputs_stopping_at_eos_keep_their_mean_and_the_rest_reach_the_cap() -> None:
    # 800 requested, 796.8 generated on average (dstack's R1 rows): a constant per-token EOS rate h with
    # (1 - (1 - h)^800) / h = 796.8 gives h ~ 1e-5: about 0.8% of the requests stop early, the rest generate 800
    reqs = make_requests(Load(3200, 796.8, num_prompts=2000, jitter=0, max_output=800), 40960)
    assert sum(reqs.output) / 2000 == pytest.approx(796.8, rel=0.01)
    assert max(reqs.output) == 800 and 0.97 < reqs.output.count(800) / 2000 < 1.0
    assert set(reqs.prompt) == {3200}  # exact prompt lengths: the random dataset's default
    # ~100 of 128 generated (no --ignore-eos on a chat model): a quarter or more stop early, spread below the cap
    short = make_requests(Load(256, 100, num_prompts=2000, jitter=0, max_output=128), 4096)
    assert sum(short.output) / 2000 == pytest.approx(100, rel=0.03)
    assert len(set(short.output)) > 50 and short.output.count(128) / 2000 > 0.3


def test_a_result_recording_its_requested_output_is_replayed_with_exact_lengths() -> None:
    # nerdalert's saved result (llm-d, Llama-3.2-3B): "output_len": "500" requested, 270 generated on average
    path = Path(__file__).parent / "data" / "bench_results" / "nerdalert-llama-3.2-3b-4xl40s-10qps.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    load = read_bench_result(doc, "r").load
    assert (load.jitter, load.max_output) == (0.0, 500.0)
    assert load.output_len == pytest.approx(270.17, abs=0.01)
    # not a vLLM key: anything but a clean count leaves the default spread, without an error
    for odd in ("five hundred", True, -3, 2.5, None):
        assert (read_bench_result({**doc, "output_len": odd}, "r").load.max_output) is None
    assert read_bench_result(doc, "r", dataset="sharegpt").load.max_output is None


def test_poisson_arrivals_have_the_requested_rate() -> None:
    reqs = make_requests(Load(10, 10, num_prompts=2000, request_rate=5.0), 4096)
    assert reqs.arrival[-1] / 1999 == pytest.approx(0.2, rel=0.06)


def test_gemma4_e_models_gather_their_per_layer_embeddings_and_share_kv_reads() -> None:
    # gemma-4-E2B: the tied lm_head is embed_tokens alone (262,144 x 1,536 bf16); the per-layer input table
    # (262,144 x 35 x 256) is a row lookup per token (gemma4.py get_per_layer_inputs), not read every step
    c = _costs("google/gemma-4-E2B-it", "h100", max_model_len=8192)
    assert c.lm_head_bytes == 262144 * 1536 * 2
    # 35 layers, full attention at 4, 9, ..., 34 (512-wide heads), sliding elsewhere (256); one KV head; the last 20
    # layers (15-34) store no cache but attend over their target's, so every layer reads: 7 full x (512 + 512) x 2 B
    # and 28 sliding x (256 + 256) x 2 B a context token (only 3 and 12 of them before layer 15)
    assert c.kv_full == 7 * 1024 * 2 == 14336
    assert c.kv_window == 28 * 512 * 2 == 28672


def test_a_short_run_that_keeps_up_is_bound_by_its_arrivals() -> None:
    # 10 requests of 100 decode steps of 10 ms (~1 s each) at 4 req/s, the last sent at exactly 10 / 4 = 2.5 s: the
    # run ends ~1 s later, so it delivers 10 / 3.5 s, below 90% of the offered rate, yet nothing ever queues
    c = _synthetic(max_num_seqs=64)
    load = Load(100, 100, num_prompts=10, request_rate=4.0, jitter=0, rescaled_arrivals=True)
    r = predict_engine(c, load)
    assert r.request_throughput < 0.9 * 4.0
    assert r.bound == "arrival-rate"
    # at 400 req/s the same engine cannot keep up: one 10 ms step serves ~64 at a time, the queue grows
    assert predict_engine(c, replace(load, request_rate=400.0, num_prompts=400)).bound != "arrival-rate"


def test_rescaled_arrivals_end_at_num_prompts_over_rate() -> None:
    # vLLM 0.10.0+ (serve.py get_request): request i waits the sum of i + 1 gamma draws, all scaled so that the last
    # is sent at num_prompts / rate = 40 / 4 = 10 s; the older client sends request 0 at once, then one draw apart
    old = make_requests(Load(10, 10, num_prompts=40, request_rate=4.0, burstiness=0.7), 4096)
    new = make_requests(Load(10, 10, num_prompts=40, request_rate=4.0, burstiness=0.7, rescaled_arrivals=True), 4096)
    assert old.arrival[0] == 0.0 and new.arrival[0] > 0.0
    assert new.arrival[-1] == pytest.approx(10.0)
    assert all(b > a for a, b in zip(new.arrival, new.arrival[1:], strict=False))
    # the same draws, one scale: the rescaled run's first delay is the older run's first gap times the factor
    factor = new.arrival[0] / old.arrival[1]
    assert 1e-3 < factor < 1e3
    for i in (1, 2, 20, 38):
        assert new.arrival[i] - new.arrival[i - 1] == pytest.approx(factor * (old.arrival[i + 1] - old.arrival[i]))


def test_percentile_is_numpys_linear() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 99) == pytest.approx(3.97)
    assert percentile([5.0], 50) == 5.0
    assert percentile([1.0, 3.0], 50) == 2.0


def test_summary_follows_vllm_bench_definitions() -> None:
    c = _synthetic()
    reqs = make_requests(Load(100, 3, num_prompts=2, max_concurrency=1, jitter=0), 8192)
    tl = replay(c, reqs, 1)
    r = summarize(tl, gpus=1)
    assert tl.first_token[0] == pytest.approx(0.01) and tl.finish[0] == pytest.approx(0.03)
    assert r.tpot.mean == pytest.approx((30 - 10) / (3 - 1))  # (latency - ttft) / (output - 1)
    assert r.total_output_tokens == 6 and r.total_input_tokens == 200
    assert set(r.bench_json()) >= {
        "mean_ttft_ms",
        "median_ttft_ms",
        "p99_ttft_ms",
        "mean_tpot_ms",
        "median_tpot_ms",
        "p99_tpot_ms",
        "mean_itl_ms",
        "median_itl_ms",
        "p99_itl_ms",
        "mean_e2el_ms",
        "median_e2el_ms",
        "p99_e2el_ms",
        "request_throughput",
        "output_throughput",
        "total_token_throughput",
    }


def test_data_parallel_replicas_multiply_throughput() -> None:
    m, g = resolve_model("Qwen/Qwen3-8B"), _gpu("h100")
    load = Load(1000, 200, num_prompts=400, max_concurrency=64)
    one = predict(m, g, EngineFlags(), load, params=PerfParams())
    two = predict(m, g, EngineFlags(data_parallel_size=2), load, params=PerfParams())
    assert two.gpus == 2 and two.output_throughput > 1.4 * one.output_throughput


def test_flags_that_do_not_start_cannot_be_benchmarked() -> None:
    with pytest.raises(InfeasibleError, match="would not start"):
        predict(
            resolve_model("meta-llama/Llama-3.1-70B-Instruct"), _gpu("l4"), EngineFlags(), Load(10, 10), params=PLAIN
        )


def test_bad_loads_are_input_errors() -> None:
    for bad in (Load(0, 10), Load(10, 10, num_prompts=0), Load(10, 10, request_rate=-1.0), Load(10, 10, dataset="x")):
        with pytest.raises(InputError):
            bad.validate()


def test_sweep_shares_one_startup_and_rises_with_concurrency() -> None:
    s = sweep(
        resolve_model("Qwen/Qwen3-8B"),
        _gpu("h100"),
        EngineFlags(),
        Load(1000, 200, num_prompts=200),
        (1, 8, 64),
        params=PerfParams(),
    )
    tput = [p.result.output_throughput for p in s.points]
    tpot = [p.result.tpot.mean for p in s.points]
    assert tput == sorted(tput) and tpot == sorted(tpot)


def test_families_and_local_multipliers() -> None:
    h100, a100, mi300 = _gpu("h100"), _gpu("a100-80gb"), _gpu("mi300x")
    assert (gpu_family(h100), gpu_family(a100), gpu_family(mi300)) == ("hopper", "ampere", "cdna")
    p = PerfParams(families={"hopper": Efficiency(bandwidth=0.9)}).with_local(h100.key, Efficiency(bandwidth=0.5))
    assert p.efficiency_for(h100).bandwidth == pytest.approx(0.45)
    assert p.efficiency_for(a100) == Efficiency()
    assert math.isclose(p.efficiency_for(mi300).compute, 1.0)


def test_expert_parallel_pays_for_the_busiest_gpu() -> None:
    tp = _costs("Qwen/Qwen3-30B-A3B", "h100", max_model_len=8192, tensor_parallel_size=4)
    ep = _costs("Qwen/Qwen3-30B-A3B", "h100", max_model_len=8192, tensor_parallel_size=4, enable_expert_parallel=True)
    assert ep.expert_ranks == 4 and tp.expert_ranks == 1
    # 48 layers, two all-reduces each with TP; EP inside the TP group changes no communication (tokens are
    # replicated after attention, the MoE output is all-reduced as with TP)
    assert tp.allreduces == ep.allreduces == 96 and ep.moe_exchanges == 0
    one_tp = step_time(tp, Batch(decodes=1, decode_context=100, sampled=1))
    one_ep = step_time(ep, Batch(decodes=1, decode_context=100, sampled=1))
    assert one_ep.memory > one_tp.memory  # one token's 8 experts land unevenly on 4 GPUs
    big_tp = step_time(tp, Batch(decodes=512, decode_context=51_200, sampled=512))
    big_ep = step_time(ep, Batch(decodes=512, decode_context=51_200, sampled=512))
    assert big_ep.memory == pytest.approx(big_tp.memory, rel=0.02)  # every expert touched: balanced again


def test_data_parallel_moe_exchanges_tokens() -> None:
    dp = _costs(
        "Qwen/Qwen3-30B-A3B",
        "h100",
        max_model_len=8192,
        tensor_parallel_size=2,
        data_parallel_size=2,
        enable_expert_parallel=True,
    )
    assert dp.moe_exchanges == 96 and dp.expert_ranks == 4
    assert dp.exchange_bytes == 2048 * 2 * 2 * (2 - 1) / 2  # hidden x bf16 x DP ranks x (D - 1)/D


@pytest.mark.parametrize(
    "load",
    [
        Load(2000, 256, max_concurrency=1),
        Load(2000, 256, max_concurrency=16),
        Load(1000, 500, request_rate=2.0),
        Load(500, 300, num_prompts=2000),
    ],
)
def test_closed_form_screen_tracks_the_replay(load: Load) -> None:
    c = _costs("Qwen/Qwen3-8B", "h100", params=PerfParams(), max_model_len=8192)
    quick, full = estimate(c, load), predict_engine(c, load)
    assert quick.method == "closed-form" and full.method == "replay"
    assert quick.tpot.mean == pytest.approx(full.tpot.mean, rel=0.15)
    assert quick.output_throughput == pytest.approx(full.output_throughput, rel=0.15)


def test_compass_search_starts_inside_the_bounds() -> None:
    """A start outside a knob's bounds (an older perf.yaml, narrower bounds) is moved to the nearest bound before the
    search; the search then finds the objective's minimum inside them."""
    from recommender.perf.fit import Knob, compass_search

    knobs = (Knob("link_efficiency", 0.5, 0.95), Knob("step_overhead_ms", 1.0, 10.0))
    start = replace(PerfParams(), link_efficiency=0.24, step_overhead_ms=4.0)

    def objective(p: PerfParams) -> float:  # minimum at link 0.3 (outside) and overhead 2.0 (inside)
        return (math.log(p.link_efficiency / 0.3)) ** 2 + (math.log(p.step_overhead_ms / 2.0)) ** 2

    result = compass_search(objective, start, knobs, max_evaluations=200)
    assert result.params.link_efficiency == 0.5
    assert result.params.step_overhead_ms == pytest.approx(2.0, rel=0.03)


def test_prompts_longer_than_the_context_are_refused() -> None:
    """vLLM 0.33 rejects a prompt that fills --max-model-len (renderers/params.py): no run to predict."""
    model, gpu = resolve_model("meta-llama/Llama-3.1-8B-Instruct"), resolve_gpu("h100", load_gpus())
    flags = EngineFlags(max_model_len=4096)
    with pytest.raises(InfeasibleError, match="does not fit the engine's --max-model-len 4,096"):
        predict(model, gpu, flags, Load(5000, 100, num_prompts=10), params=PerfParams(), version=VllmVersion(0, 33))
    r = predict(model, gpu, flags, Load(4000, 500, num_prompts=10), params=PerfParams(), version=VllmVersion(0, 33))
    assert r.total_output_tokens < 10 * 500  # max_tokens clamped to the context left


def test_compass_search_refines_every_knob_while_another_still_moves() -> None:
    """Each knob halves its own step: a knob whose optimum lies within one large step of its start is refined even
    while another knob is still walking a long way (one shared step left it at its start until the budget ran out)."""
    from recommender.perf.fit import Knob, compass_search

    knobs = (Knob("step_overhead_ms", 0.01, 1e6), Knob("seq_overhead_us", 0.5, 500.0))
    start = replace(PerfParams(), step_overhead_ms=1.0, seq_overhead_us=100.0)

    def objective(p: PerfParams) -> float:  # far optimum e^10 for one knob, 10% off the start for the other
        return (math.log(p.step_overhead_ms) - 10.0) ** 2 + (math.log(p.seq_overhead_us / 110.0)) ** 2

    result = compass_search(objective, start, knobs, max_evaluations=80)
    assert result.params.seq_overhead_us == pytest.approx(110.0, rel=0.03)


def test_a_burst_is_admitted_together_after_the_api_servers_work() -> None:
    """The API server shares its event loop among the requests it admits (frontend.py): 8 prompts sent at once with
    1 ms of server work each all reach the engine at 8 ms and are prefilled in one 10 ms step: every first token at
    18 ms. One at a time they would have entered at 1..8 ms: the first alone in a step (11 ms), the others in the
    next (21 ms)."""
    c = replace(_synthetic(), request_overhead=0.001, request_latency=0.0)
    r = predict_engine(c, Load(100, 2, num_prompts=8, jitter=0))
    assert (r.ttft.mean, r.ttft.median, r.ttft.p99) == pytest.approx((18.0, 18.0, 18.0))
    assert r.duration_s == pytest.approx(0.028)  # then one decode step for the second token
