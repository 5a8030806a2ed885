"""The fitted constants of the performance model, as frozen values (pure: the YAML lives in profiles/perf.yaml).

Few global parameters, each with a physical meaning, plus a multiplier per GPU family where the published points
support one. `benchmarks/fit_perf.py` fits them and writes them with the ids of the points they were fitted on;
`vllm-plan calibrate` fits a local override for one GPU from the user's own `vllm bench serve` results.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from recommender.hardware import Gpu


@dataclass(frozen=True, slots=True)
class Efficiency:
    """Multipliers for one GPU family (or one GPU, from a local calibration): 1.0 = the global figure."""

    bandwidth: float = 1.0
    compute: float = 1.0
    overhead: float = 1.0


@dataclass(frozen=True, slots=True)
class SustainedGemm:
    """Sustained / datasheet dense GEMM rate: per GPU key where measured, per class otherwise."""

    by_gpu: Mapping[str, float] = field(default_factory=dict)
    by_class: Mapping[str, float] = field(default_factory=dict)
    default: float = 1.0  # no measurement at all (the built-in PerfParams(): datasheet peaks as they are)

    def fraction(self, gpu: Gpu) -> float:
        """The measured fraction of this card, or its class's median, or the overall one."""
        own = self.by_gpu.get(gpu.key)
        if own is not None:
            return own
        return self.by_class.get(gpu_class(gpu), self.default)


def gpu_class(gpu: Gpu) -> str:
    """Family and board class: 'ampere-geforce', 'hopper', ... (GeForce boards boost past their rated clock).

    AMD's Radeon boards (RDNA: GDDR6 or LPDDR5X) share the vendor's fitted family with the Instinct cards (CDNA, HBM)
    but not their measurements: a streaming ceiling measured on an MI300X's HBM says nothing of a Radeon's GDDR6, so
    they are a class of their own ('cdna-radeon'), which takes no cap until one of them is measured."""
    fam = gpu_family(gpu)
    name = gpu.name.lower()
    if "geforce" in name:
        return f"{fam}-geforce"
    if gpu.vendor.lower() == "amd" and "instinct" not in name:
        return f"{fam}-radeon"
    return fam


@dataclass(frozen=True, slots=True)
class PerfParams:
    """Everything the step-time model takes from measurements rather than from datasheets.

    bandwidth_efficiency: achieved fraction of the datasheet HBM bandwidth when streaming weights and KV.
    compute_efficiency: achieved fraction of the dense tensor-core peak in the linear layers (GEMMs).
    attention_efficiency: achieved fraction of the 16-bit peak in attention (FlashAttention prefill).
    triton_attention_efficiency: the same for vLLM's Triton attention backend, which serves models with attention
        sinks (gpt-oss) or with layers of different head sizes (Gemma 4) on CUDA GPUs below compute capability
        9.0 (costs.triton_attention_backend). Fitted on the gpt-oss rows only.
    fp8_moe_efficiency: fraction of the 16-bit fused-MoE kernels' roofline (bandwidth and compute) the W8A8 FP8
        fused-MoE kernels reach. Not fitted (no FP8 W8A8 MoE point on sm >= 89 in the fit set); 0.55 from
        published FP8 vs BF16 MoE runs: tuned H200 Qwen3-MoE configs 10-17% faster in FP8 at batch >= 4 with
        half the bytes (vllm-project/vllm#35457: 0.5/0.87 = 0.57), Qwen3-235B FP8 on H200 "barely any
        improvement" at TP 8 (vllm-project/llm-compressor#2069), FP8 W8A8 MoE decode 7-10% slower than BF16 on
        B200 (sgl-project/sglang-omni#760: 0.46).
    moe_efficiency: fused-MoE kernels reach this fraction of the dense roofline (routing, gather, uneven experts).
    dequant_efficiency: weight-only quantized GEMMs (W4A16, W8A16 Marlin) reach this fraction of the 16-bit peak.
    step_overhead_ms: per engine step: scheduler, input preparation, launch, sampler (CUDA graphs hide the rest).
    layer_overhead_us: per decoder layer and step: kernel latencies a graph replay still pays.
    moe_layer_overhead_us: per MoE layer and step on top: routing, token sorting, the grouped GEMMs' start-up.
        Fitted (it kept its start value, 100), and used only where no kernel benchmark prices the MoE layer: the
        Marlin MoE kernels of weight-only experts and AMD GPUs. NVIDIA's other paths take the figures below.
    triton_moe_layer_overhead_us: the same for vLLM's Triton fused-MoE kernels (topk, token alignment, the two
        grouped GEMMs, activation, sum; `triton_moe_path` in costs.py: NVIDIA GPUs, 16-bit or FP8 experts, not the
        TRT-LLM path). Not fitted: 26, the fixed part of published batch-1 timings of that kernel under a CUDA graph
        (benchmark_moe.py / sglang's tuning script), each minus its touched experts' bytes at the kernel's own
        streaming rate (from its batch 1 -> 4 or 8 slope): Qwen3-235B FP8 TP8 on H200 31.70 us at batch 1, 66.87 at 8,
        fixed 25.2 us, streaming at 0.61 of 4.8 TB/s (sgl-project/sglang#11730); Qwen3-Omni-30B-A3B BF16 on B200
        39.61 / 73.18 us at 1 / 4, fixed 26.9 us at 0.74 of 8 TB/s (vllm-project/vllm#31448); Qwen3-Next-80B FP8 TP4
        on H100 29.45 us at 1 (10 experts, 7.9 MB), fixed 25.6-26.2 us at 0.61-0.74 (vllm-project/vllm#44830).
        Not scaled by the family's overhead multiplier (a GPU kernel's time, measured on each family).
    marlin_moe_layer_overhead_us: the same for the weight-only experts' kernels (MXFP4, INT4/INT8: Marlin's fused MoE,
        or OpenAI's triton_kernels for gpt-oss without VLLM_MXFP4_USE_MARLIN) on Hopper (`_moe_layer_overhead_us` in
        costs.py), in place of the fitted moe_layer_overhead_us x the family's multiplier (84 us on Hopper). Not fitted:
        50, the sum of published parts. vLLM's Marlin MoE GEMMs at one token under CUDA-graph replay on an H200, W4A16
        H2688 / I2048, 128 experts, top-8: 27.0 us gate-up and 19.9 us down (inclusionAI/humming#57), minus their eight
        experts' 68 MB at the model's own H200 stream rate for these experts (4.8 TB/s x 0.95 x 0.71, 21 us): 26 us; plus
        vLLM's `moe_align_block_size`, which fused_marlin_moe calls once a layer: 20-27 us a call on an H100
        (vllm-project/vllm#55225), 24. Top-k, activation and the final sum (a few us each) are not counted. Set 14's
        async H100 runs at TP8 imply about 55 us (FIELD-FINDINGS, 'Fourteenth blind set'). Other families keep the
        fitted figure (no measurement here).
    seq_overhead_us: per scheduled sequence and step: input/output processing, detokenization, streaming.
        Fitted (rows of vLLM 0.10+ only) as a cost in series with the step. V1 before 0.10 measures none in series:
        1.5B-14B models at 30-60 running sequences decode 26-54% faster than that (set 5, vLLM 0.8.5 on H100 PCIe and
        RTX 4090; V002, V003, V006, V011, V019), and Llama-3.2-3B on L40S under vLLM 0.9 (held-out A001/A002: TPOT
        +14% / +26% in series, +4% / -2% overlapped): there the share runs beside the engine core (step.py).
    request_overhead_ms: per request on the API server's event loop (validation, chat template, tokenization,
        admission), shared round robin among the requests being admitted (frontend.py): a burst of N reaches the
        engine together after N x this. Fitted alone under that rule (`fit_perf.py --only request_overhead_ms`: 2.25-2.36
        at one loss, 0.0743, against 0.0816 for the bundled 3.5 served one at a time). The runs' own figure is host-, template- and endpoint-dependent: a burst's
        first tokens start at 2 x mean - p99 TTFT, 1.6-2.3 ms a request for gpt-oss (harmony, Rust) on gpustack's
        chat client, 5-17 ms for Jinja templates (Qwen3, GLM, DeepSeek) there, 2.2 ms on /v1/completions (N016).
    request_latency_ms: fixed latency every request adds to its TTFT (HTTP, queues, detokenization), in parallel.
        Only from vLLM 0.10 (`FRONTEND_LATENCY_FROM` in predict.py): every fit row is a 0.10+ release, and earlier
        engines measure no such floor. vLLM 0.4 V0 at 10 req/s (T002: 243-token ShareGPT prompts on an A10G, TTFT
        42.7 ms) and 0.8.5 V1 at 4-32 req/s (V001-V021: ~206-token prompts, 21-57 ms) are their prefill steps plus
        the API server's request_overhead_ms; vllm-project/vllm#21983 reports TTFT at batch size 1 rising 33-97%
        from 0.9.2 to 0.10.0 on the same models and GPUs, the gap closing by batch size 10 (a per-request cost).
    allreduce_latency_us: fixed cost of one all-reduce over NVLink / Infinity Fabric (custom all-reduce).
    pcie_allreduce_latency_us: the same over PCIe (NCCL). Not fitted: 20, the top of NCCL's small-message
        all-reduce latency between two PCIe GPUs (a few us per hop plus the launch; 8 ranks over PCIe take ~40 us,
        NVIDIA/nccl#1530). The former 40 was fitted on TP2 runs over an undescribed link, since excluded.
    link_efficiency: achieved fraction of the NVLink / Infinity Fabric bandwidth in an all-reduce.
    pcie_link_efficiency: the same over PCIe (cards without NVLink). Not fitted (the fit set has no PCIe TP run
        with a stated topology); 0.6 from NCCL's ring all-reduce over PCIe Gen4 x16, whose bus bandwidth reaches
        roughly 13-24 GB/s of the 32 GB/s one-way link (nccl-tests on A100 PCIe, RTX 4090 and A40 servers,
        NVIDIA/nccl#841, #1530, NVIDIA/nccl-tests#74): bounded physically to [0.4, 0.75].
    trtllm_moe_layer_overhead_us: per MoE layer and step when the routed experts run FlashInfer's TRT-LLM MoE
        kernels (`trtllm_moe_path` in kernels.py: datacenter Blackwell, vLLM >= 0.15), replacing moe_layer_overhead_us,
        which was fitted on vLLM 0.10-0.11 rows that ran the Triton fused-MoE kernels. Not fitted: 40, from the
        published kernel benchmark of one DeepSeek-V3 MoE layer (hidden 7168, 2048-wide experts, 32 local of 256,
        top-8) on a B300, routing, activation quantization, experts and finalize timed together
        (flashinfer-ai/flashinfer#5301, TRTLLM NVFP4 / MXFP8 / BF16 at 1-128 tokens): latency = fixed + expert bytes /
        bandwidth fits a fixed part of 41 / 45 / 59 us (least squares; 33-39 us from the 1- and 128-token rows alone).
    trtllm_moe_bandwidth_efficiency: the fraction of the datasheet HBM bandwidth those kernels stream the touched
        experts at, replacing bandwidth_efficiency x moe_efficiency (x fp8_moe_efficiency) on that path. Not fitted:
        0.93, the MXFP8 arm of the same benchmark (7.2 TB/s against the B300's catalogued 7.75 TB/s); NVFP4 streams at
        0.85, BF16 at about 1.0.
    eager_layer_overhead_us: per decoder layer and step with `--enforce-eager`: no CUDA graph replays the
        forward, so the worker launches every kernel of every layer from Python (and V1 skips torch.compile's
        fusions). Not fitted (no eager run in the fit set); 340 from a published eager-vs-graph pair of one
        model and GPU: Qwen2.5-Omni-7B's thinker (Qwen2.5-7B, 28 layers) on A800, TPOT ~22.5 ms eager against
        ~13 ms with CUDA graphs (vllm-project/vllm-omni#7960): 9.5 ms / 28 layers.
    families: multipliers per GPU family ("ampere", "ada", "hopper", "blackwell", "cdna", "older").
    sustained: the fraction of its datasheet tensor-core peak each card sustains in a dense GEMM, measured
        (profiles/gemm_measured.yaml, recommender/perf/sustained.py): the compute efficiencies apply on top.
    read_ceiling: the fraction of its datasheet memory bandwidth a streaming kernel measures on each card
        (profiles/bandwidth_measured.yaml): weight and KV streams run at bandwidth_efficiency x the family's
        multiplier, but never faster than this (`bandwidth_fraction`). Not fitted. The fitted 0.95 came from
        rows where decode is not only a weight stream (bursts of hundreds of sequences); alone it says an A100
        streams 1.94 TB/s where no kernel reaches more than 1.80 (88%), so one-request decode on Ampere read too
        fast (set 7: X001/X002, X005-X009; set 2: N001-N014; fit P075/P076: TPOT -10% to -27%).
    gpus: local multipliers per GPU key (`vllm-plan calibrate`), applied on top of the family's.
    fitted_on: ids of the published points the constants were fitted on.
    """

    # Defaults are the fit's starting point (benchmarks/fit_perf.py starts here, so the fit is reproducible).
    bandwidth_efficiency: float = 0.95
    compute_efficiency: float = 0.39
    attention_efficiency: float = 0.8
    triton_attention_efficiency: float = 0.3
    fp8_moe_efficiency: float = 0.55
    moe_efficiency: float = 0.71
    dequant_efficiency: float = 0.8
    step_overhead_ms: float = 3.4
    layer_overhead_us: float = 0.85
    moe_layer_overhead_us: float = 100.0
    triton_moe_layer_overhead_us: float = 26.0
    marlin_moe_layer_overhead_us: float = 50.0
    seq_overhead_us: float = 65.0
    request_overhead_ms: float = 3.5
    request_latency_ms: float = 38.0
    allreduce_latency_us: float = 8.5
    pcie_allreduce_latency_us: float = 20.0
    link_efficiency: float = 0.24
    pcie_link_efficiency: float = 0.6
    eager_layer_overhead_us: float = 340.0
    trtllm_moe_layer_overhead_us: float = 40.0
    trtllm_moe_bandwidth_efficiency: float = 0.93
    families: Mapping[str, Efficiency] = field(default_factory=dict)
    sustained: SustainedGemm = field(default_factory=SustainedGemm)
    read_ceiling: SustainedGemm = field(default_factory=SustainedGemm)  # default 1.0: no cap but the datasheet
    gpus: Mapping[str, Efficiency] = field(default_factory=dict)
    fitted_on: tuple[str, ...] = ()
    source: str = "built-in defaults"
    # Median relative error on held-out published points: "all", or a family with enough points of its own.
    expected_errors: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def expected_error(self, gpu: Gpu) -> tuple[Mapping[str, float], str]:
        """The expected error for predictions on this GPU, and what it is based on."""
        fam = gpu_family(gpu)
        if fam in self.expected_errors:
            return self.expected_errors[fam], f"{fam} GPUs in the published points"
        if "all" in self.expected_errors:
            return self.expected_errors["all"], "held-out published points, all GPUs"
        return {}, "not measured"

    def efficiency_for(self, gpu: Gpu) -> Efficiency:
        """The family multipliers times any local calibration of this GPU."""
        fam = self.families.get(gpu_family(gpu), Efficiency())
        local = self.gpus.get(gpu.key)
        if local is None:
            return fam
        return Efficiency(
            bandwidth=fam.bandwidth * local.bandwidth,
            compute=fam.compute * local.compute,
            overhead=fam.overhead * local.overhead,
        )

    def bandwidth_fraction(self, gpu: Gpu) -> float:
        """The achieved fraction of the datasheet bandwidth: the fitted efficiency times the family's multiplier,
        capped by the card's measured streaming bandwidth, then any local calibration of this GPU."""
        fam = self.families.get(gpu_family(gpu), Efficiency())
        local = self.gpus.get(gpu.key)
        fitted = min(self.bandwidth_efficiency * fam.bandwidth, self.read_ceiling.fraction(gpu))
        return fitted * (local.bandwidth if local is not None else 1.0)

    def with_local(self, key: str, eff: Efficiency) -> PerfParams:
        """A copy with a local calibration for GPU `key`."""
        return replace(self, gpus={**self.gpus, key: eff})


FAMILIES = ("ampere", "ada", "hopper", "blackwell", "cdna", "older")  # ampere is the reference: the global
# constants are ampere's, the other families multipliers on them


def gpu_family(gpu: Gpu) -> str:
    """The architecture family the efficiencies are fitted per: by compute capability, or the vendor for AMD."""
    if gpu.vendor.lower() == "amd":
        return "cdna"
    cc = gpu.cc_major_minor
    if cc is None:
        return "older"
    if cc >= (10, 0):
        return "blackwell"
    if cc >= (9, 0):
        return "hopper"
    if cc >= (8, 9):
        return "ada"
    if cc >= (8, 0):
        return "ampere"
    return "older"
