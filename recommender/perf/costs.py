"""Per-GPU cost coefficients of one engine configuration (pure): its `EngineFacts` (facts.py) turned into rates
and fixed costs by the fitted efficiencies and overheads (`PerfParams`) of the GPU's family.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from recommender.hardware import Gpu
from recommender.perf.facts import EngineFacts, KvPool
from recommender.perf.params import PerfParams


@dataclass(frozen=True, slots=True)
class EngineCosts:
    """An engine's facts turned into rates by the fitted efficiencies (flat: the step time reads it often)."""

    tp: int
    pp: int
    dp: int
    layers: int
    dense_bytes: float
    lm_head_bytes: float
    expert_bytes: float
    num_experts: int
    top_k: int
    dense_flops: float
    expert_flops: float
    lm_head_flops: float
    kv_full: float
    kv_window: float
    window: int
    state_bytes: float
    attn_flops_full: float
    attn_flops_window: float
    attn_flops_prefill: float
    allreduces: int
    allreduce_bytes: float
    moe_exchanges: int
    exchange_bytes: float
    expert_ranks: int
    bandwidth: float  # achieved bytes/s
    dense_compute: float  # achieved flop/s of the linear layers
    expert_bandwidth: float
    expert_compute: float
    attention_compute: float
    link_bandwidth: float  # achieved bytes/s of the all-reduce
    link_latency: float  # seconds per all-reduce
    layer_overhead: float  # GPU seconds per step that do not shrink with the batch (kernel latencies, all layers)
    eager_launch: float  # CPU seconds per step launching every layer's kernels without CUDA graphs (0 with graphs)
    step_overhead: float  # CPU seconds per step: scheduler, input preparation, launch
    seq_overhead: float  # CPU seconds per scheduled sequence and step
    async_scheduling: bool  # the CPU part overlaps the GPU part (vLLM --async-scheduling)
    request_overhead: float  # seconds of the API server per request, shared round robin (frontend.py)
    request_latency: float  # seconds every request waits before the engine sees it, in parallel
    pool: KvPool
    max_num_seqs: int
    max_num_batched_tokens: int
    max_model_len: int
    v0_prefill_first: bool = False
    output_overlapped: bool = False
    norm_collectives: int = 0


# NCCL's ring all-reduce passes 2 (n - 1) hops; over PCIe each adds its latency. vLLM's custom all-reduce (one shot
# between two GPUs) is off on more than two PCIe-only GPUs ("Custom allreduce is disabled because it's not supported
# on more than two PCIe-only GPUs", distributed/device_communicators/custom_all_reduce.py in vLLM 0.33) and on
# boards without peer-to-peer access ("platform lacks GPU P2P capability": GeForce RTX 4090s under NVIDIA's driver),
# so those all-reduces are NCCL's. 1.83 us a hop: 8 x RTX 4090 all-reduce 8 bytes in 42 us (NVIDIA/nccl#1530)
# against the two-GPU pcie_allreduce_latency_us (20 us): (42 - 20) / (14 - 2) hops.
PCIE_RING_HOP_US = 1.83


def pcie_allreduce_latency_us(params: PerfParams, tp: int) -> float:
    """Fixed cost of one all-reduce over PCIe among `tp` GPUs: the two-GPU latency plus the ring's extra hops."""
    return params.pcie_allreduce_latency_us + PCIE_RING_HOP_US * 2 * max(0, tp - 2)


# The W8A8 FP8 fused-MoE kernels' share of the 16-bit kernels' roofline, measured per card where one release served
# one MoE checkpoint in both BF16 and FP8 on it; other cards keep params.fp8_moe_efficiency (0.55, from H200 and B200
# runs, where FP8 experts decode barely faster than BF16). GB10 (sm_121): vLLM 0.26.0 runs block-FP8 experts on the
# Triton fused-MoE kernels there (model_executor/layers/fused_moe/oracle/fp8.py in 0.33: FLASHINFER_TRTLLM takes only
# the sm_100 family, FLASHINFER_CUTLASS block FP8 only sm_90, VLLM_CUTLASS only per-tensor/per-channel scales), the
# kernel Hopper also runs; at 273 GB/s its scale and quantization work hides under the weight stream.
# djangodevreng/dgx-spark-benchmarks (commit 435255228956326a55b5d21de3d69c1f5aee046d,
# results/qwen-3.6/qwen-3.6-35b-a3b/{bf16,fp8}/03-long-output.md, llama-benchy 256 in / 4,096 out, vLLM 0.26.0):
# Qwen3.6-35B-A3B decodes 30.35 / 14.26 / 9.97 tok/s a request in BF16 and 51.93 / 24.24 / 17.89 in FP8 at 1 / 5 /
# 10 in flight, FP8 taking 0.58 / 0.59 / 0.56 of BF16's time; with this model's BF16 step at 5 and 10 sequences
# that ratio needs an FP8 efficiency of 0.97 / 1.00 (at 1 sequence the fixed parts dominate: 1.49). Not from the
# eighth blind set's rows of the same repository (tests 08 and 10).
FP8_MOE_EFFICIENCY_MEASURED: dict[str, float] = {"gb10": 1.0}


def fp8_moe_efficiency(params: PerfParams, gpu: Gpu) -> float:
    """The FP8 fused-MoE efficiency on this card: measured where a same-release BF16/FP8 pair exists, else fitted."""
    return FP8_MOE_EFFICIENCY_MEASURED.get(gpu.key, params.fp8_moe_efficiency)


def triton_moe_path(f: EngineFacts, gpu: Gpu) -> bool:
    """Whether the routed experts run vLLM's Triton fused-MoE kernels (model_executor/layers/fused_moe/fused_moe.py,
    fused_experts): NVIDIA GPUs with 16-bit or W8A8 FP8 experts off the TRT-LLM path. Weight-only experts (GPTQ, AWQ,
    MXFP4 or FP8 without FP8 tensor cores) run Marlin's MoE kernels, AMD GPUs ROCm's: no kernel benchmark here."""
    return f.num_experts > 0 and gpu.vendor.lower() == "nvidia" and not f.trtllm_moe and not f.expert_weight_only


def _moe_layer_overhead_us(f: EngineFacts, gpu: Gpu, params: PerfParams, family_overhead: float) -> float:
    """The fixed cost of one MoE layer a step: measured per kernel where a benchmark prices it (TRT-LLM, Triton fused-MoE,
    weight-only experts on Hopper), else fitted."""
    if f.trtllm_moe:
        return params.trtllm_moe_layer_overhead_us
    if triton_moe_path(f, gpu):
        return params.triton_moe_layer_overhead_us
    cc = gpu.cc_major_minor
    if f.expert_weight_only and gpu.vendor.lower() == "nvidia" and cc is not None and cc[0] == 9:
        return params.marlin_moe_layer_overhead_us  # measured on an H200 (params.py), a GPU kernel's time
    return params.moe_layer_overhead_us * family_overhead


_SHARED = tuple(f.name for f in fields(EngineFacts) if f.name in {g.name for g in fields(EngineCosts)})


def engine_costs(f: EngineFacts, gpu: Gpu, params: PerfParams, *, async_scheduling: bool = False) -> EngineCosts:
    """Rates from facts: datasheet figures times the fitted efficiencies of this GPU's family (cheap)."""
    eff = params.efficiency_for(gpu)
    bw = f.hbm_bandwidth * params.bandwidth_fraction(gpu)  # capped by the card's measured streaming rate
    sustained = eff.compute * params.sustained.fraction(gpu)  # of the datasheet peak, before the kernels' own
    comp = params.compute_efficiency * sustained
    dequant = params.dequant_efficiency
    dense = f.peak_dense * comp * (dequant if f.dense_weight_only else 1.0)
    moe = params.moe_efficiency * (fp8_moe_efficiency(params, gpu) if f.fp8_experts else 1.0)
    expert = f.peak_expert * comp * (dequant if f.expert_weight_only else 1.0) * moe
    # FlashInfer's TRT-LLM MoE kernels (trtllm_moe_path): their own streaming rate and fixed cost, measured on
    # Blackwell (params.py), in place of the Triton figures the fit set's rows imply
    expert_bw = f.hbm_bandwidth * params.trtllm_moe_bandwidth_efficiency if f.trtllm_moe else bw * moe
    moe_fixed = _moe_layer_overhead_us(f, gpu, params, eff.overhead)
    attention = params.triton_attention_efficiency if f.triton_attention else params.attention_efficiency
    latency = params.allreduce_latency_us if f.nvlink else pcie_allreduce_latency_us(params, f.tp)
    link = params.link_efficiency if f.nvlink else params.pcie_link_efficiency
    over = eff.overhead
    eager = f.layers * params.eager_layer_overhead_us if f.enforce_eager else 0.0
    return EngineCosts(
        **{name: getattr(f, name) for name in _SHARED},
        bandwidth=bw,
        dense_compute=dense,
        expert_bandwidth=expert_bw,
        expert_compute=expert,
        attention_compute=f.peak_attention * attention * sustained,
        link_bandwidth=f.link_one_way * link,
        link_latency=latency * 1e-6,
        layer_overhead=(f.layers * params.layer_overhead_us * over + f.moe_layers * moe_fixed) * 1e-6,
        eager_launch=eager * 1e-6,  # a CPU cost: not scaled by the GPU family
        step_overhead=params.step_overhead_ms * 1e-3 * over,
        seq_overhead=params.seq_overhead_us * 1e-6 * over,
        async_scheduling=async_scheduling,
        request_overhead=params.request_overhead_ms * 1e-3,
        request_latency=params.request_latency_ms * 1e-3 if f.frontend_latency else 0.0,
    )
