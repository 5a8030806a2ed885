"""The plan document (`apiVersion: vllm-plan/v1`, `kind: Plan`) and explain's prediction, declared once (pure).

`recommend --format json|yaml` writes these classes with `schema.dump`; `render` and `check` read them back with
`documents.parse` (every field typed and bounded). The bounds are far above any real deployment and low enough
that the work done with a value stays small: a plan with 10^7 replicas or TP once made `render` hang (#12).
"""

from __future__ import annotations

from dataclasses import dataclass

from recommender.documents.schema import MAX_TEXT, count, flag, items, nested, real, text
from recommender.memory.engine import KV_CACHE_DTYPES, MODEL_DTYPES
from recommender.perf.metrics import BOUNDS
from recommender.planner.service_types import PERCENTILES, SERVICE_OBJECTIVES
from recommender.planner.types import OBJECTIVES
from recommender.serve_args import parse_serve_argv

PLAN_API_VERSION = "vllm-plan/v1"
PLAN_KIND = "Plan"

MAX_PARALLEL = 1024  # TP, PP or DP degree
MAX_GPUS = 1 << 20  # GPUs in one plan (replicas x TP x PP)
MAX_REPLICAS = 10_000
MAX_NODES = 10_000
MAX_GPUS_PER_NODE = 1024
MAX_TOKENS = 1 << 30  # context / max-model-len (the catalog's longest context is 10M tokens)
MAX_REQUESTS = 1 << 30  # concurrency targets and vLLM's max-num-seqs
MAX_COUNT = 1 << 53  # blocks, tokens, bytes: exact in a JSON (float64) number
MAX_GIB = float(1 << 20)  # GiB per GPU (memory figures may be negative: a budget that does not fit)
MAX_WORDS = 512  # words of one `vllm serve` command
MAX_OPTIONS = 256  # alternatives
MAX_REASONS = 100_000  # rejected candidates, vLLM errors and warnings
MAX_MS = 1e12  # latencies in milliseconds
MAX_RATE = 1e12  # requests or tokens per second

# Patterns for the strings that reach artifacts verbatim (besides the command, which is quoted for each target).
VERSION = r"v?\d{1,4}\.\d{1,4}(\.\d{1,4})?([.+-][0-9A-Za-z.+-]{1,32})?"
GPU_KEY = r"[a-z0-9][a-z0-9._-]{0,62}"
LABEL_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?"  # a Kubernetes label value (GFD product label)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanInputs:
    """What the plan was asked for: the model, the hardware, the target load and the ranking."""

    model: str = text()
    gpu: str = text(pattern=GPU_KEY)
    gpu_name: str = text(200)
    gpu_product_label: str | None = text(63, pattern=LABEL_VALUE)
    gpu_total_gib: float = real(0, MAX_GIB, above=True)
    gpus_per_node: int = count(1, MAX_GPUS_PER_NODE)
    nodes: int = count(1, MAX_NODES)
    free_memory_gib: float | None = real(0, MAX_GIB, above=True)
    concurrency: int | None = count(1, MAX_REQUESTS)
    context: int | None = count(1, MAX_TOKENS)
    min_context: int | None = count(1, MAX_TOKENS)
    objective: str = text(choices=OBJECTIVES + SERVICE_OBJECTIVES)
    vllm_version: str = text(pattern=VERSION)
    # Latency planning (`recommend --input-len ... --tpot-ms ...`); omitted from memory-only plans.
    input_len: int | None = count(1, MAX_TOKENS, default=None, omit_none=True)
    output_len: int | None = count(1, MAX_TOKENS, default=None, omit_none=True)
    request_rate: float | None = real(0, MAX_RATE, above=True, default=None, omit_none=True)
    ttft_ms: float | None = real(0, MAX_MS, above=True, default=None, omit_none=True)
    tpot_ms: float | None = real(0, MAX_MS, above=True, default=None, omit_none=True)
    itl_ms: float | None = real(0, MAX_MS, above=True, default=None, omit_none=True)
    slo_percentile: str | None = text(choices=PERCENTILES, default=None, omit_none=True)
    gpu_hour_cost: float | None = real(0, 1e6, above=True, default=None, omit_none=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetCheck:
    """One latency target against the prediction: met or not, and the margin (target / predicted - 1)."""

    metric: str = text(choices=("ttft", "tpot", "itl"))
    percentile: str = text(choices=PERCENTILES)
    target_ms: float = real(0, MAX_MS, above=True)
    predicted_ms: float = real(0, MAX_MS)
    met: bool = flag()
    margin: float = real(-1.0, 1e9)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectedError:
    """The performance model's median relative error on held-out published points (for this GPU's family
    where it has enough of them)."""

    ttft: float = real(0, 100)
    tpot: float = real(0, 100)
    throughput: float = real(0, 100)
    basis: str = text(200)


@dataclass(frozen=True, slots=True, kw_only=True)
class Performance:
    """What `vllm bench serve` would report for this option at the planned load (`vllm-plan perf`'s keys)."""

    method: str = text(choices=("replay", "closed-form"))
    input_len: float = real(0, MAX_TOKENS, above=True)
    output_len: float = real(0, MAX_TOKENS, above=True)
    num_prompts: int = count(1, MAX_REQUESTS)
    max_concurrency: int | None = count(1, MAX_REQUESTS)
    request_rate: float | None = real(0, MAX_RATE, above=True)
    mean_ttft_ms: float = real(0, MAX_MS)
    median_ttft_ms: float = real(0, MAX_MS)
    p90_ttft_ms: float = real(0, MAX_MS)
    p99_ttft_ms: float = real(0, MAX_MS)
    mean_tpot_ms: float = real(0, MAX_MS)
    median_tpot_ms: float = real(0, MAX_MS)
    p90_tpot_ms: float = real(0, MAX_MS)
    p99_tpot_ms: float = real(0, MAX_MS)
    mean_itl_ms: float = real(0, MAX_MS)
    median_itl_ms: float = real(0, MAX_MS)
    p90_itl_ms: float = real(0, MAX_MS)
    p99_itl_ms: float = real(0, MAX_MS)
    mean_e2el_ms: float = real(0, MAX_MS)
    median_e2el_ms: float = real(0, MAX_MS)
    p90_e2el_ms: float = real(0, MAX_MS)
    p99_e2el_ms: float = real(0, MAX_MS)
    request_throughput: float = real(0, MAX_RATE)
    output_throughput: float = real(0, MAX_RATE)
    total_token_throughput: float = real(0, MAX_RATE)
    output_throughput_per_gpu: float = real(0, MAX_RATE)
    output_tokens_per_s_per_user: float = real(0, MAX_RATE)
    bound: str = text(choices=BOUNDS)
    cost_per_million_output_tokens: float | None = real(0, 1e12, default=None, omit_none=True)
    expected_error: ExpectedError = nested()
    targets: tuple[TargetCheck, ...] = items(8)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanOption:
    """One launch configuration: the `vllm serve` argv and what it serves."""

    command: tuple[str, ...] = items(MAX_WORDS)
    model: str = text()
    gpus: int = count(1, MAX_GPUS)
    replicas: int = count(1, MAX_REPLICAS)
    tensor_parallel_size: int = count(1, MAX_PARALLEL)
    pipeline_parallel_size: int = count(1, MAX_PARALLEL)
    expert_parallel: bool = flag()
    weights: str = text(200)
    kv_cache_dtype: str = text(choices=KV_CACHE_DTYPES)
    max_model_len: int = count(1, MAX_TOKENS)
    max_concurrency: float = real(0, float(MAX_COUNT))  # over all replicas, at max_model_len
    summary: str = text()
    # Throughput and latency at the planned load (latency planning); omitted from memory-only plans.
    performance: Performance | None = nested(default=None, omit_none=True)

    @property
    def data_parallel_size(self) -> int:
        """The command's --data-parallel-size (1 without it)."""
        value = parse_serve_argv(list(self.command)).values.get("data_parallel_size", 1)
        return value if isinstance(value, int) else 1

    @property
    def gpus_per_engine(self) -> int:
        """GPUs one engine (one replica) holds: TP x PP x DP."""
        return self.tensor_parallel_size * self.pipeline_parallel_size * self.data_parallel_size


@dataclass(frozen=True, slots=True, kw_only=True)
class StagePrediction:
    """One pipeline stage's per-GPU figures."""

    stage: int = count(0, MAX_PARALLEL)
    layers: int = count(0, 1 << 20)
    weights_gib: float = real(0, MAX_GIB)
    kv_cache_gib: float = real(-MAX_GIB, MAX_GIB)
    num_gpu_blocks: int = count(0, MAX_COUNT)


@dataclass(frozen=True, slots=True, kw_only=True)
class Prediction:
    """What vLLM prints at startup for one command: `explain --format json`, and the plan's `prediction`.

    Sizes in GiB (2**30 bytes) per GPU, for the tightest pipeline stage.
    """

    model: str = text()
    gpu: str = text(200)
    vllm_version: str = text(pattern=VERSION)
    gpu_total_gib: float = real(0, MAX_GIB)
    free_gib: float = real(0, MAX_GIB)
    gpu_memory_utilization: float = real(0, 1, above=True)
    requested_gib: float = real(0, MAX_GIB)
    weights_gib: float | None = real(0, MAX_GIB)
    activation_peak_gib: float | None = real(0, MAX_GIB)
    non_torch_gib: float | None = real(0, MAX_GIB)
    cudagraph_gib: float | None = real(0, MAX_GIB)
    kv_cache_gib: float | None = real(-MAX_GIB, MAX_GIB)
    block_size: int = count(1, 1 << 20)
    num_gpu_blocks: int = count(0, MAX_COUNT)
    kv_bytes_per_token: int = count(0, MAX_COUNT)
    kv_cache_tokens: int = count(0, MAX_COUNT)
    max_concurrency: float = real(0, float(MAX_COUNT))
    max_model_len: int = count(1, MAX_TOKENS)
    max_num_seqs: int = count(1, MAX_REQUESTS)
    max_num_batched_tokens: int = count(1, MAX_COUNT)
    tensor_parallel_size: int = count(1, MAX_PARALLEL)
    pipeline_parallel_size: int = count(1, MAX_PARALLEL)
    data_parallel_size: int = count(1, MAX_PARALLEL)
    gpus: int = count(1, MAX_GPUS)
    dtype: str = text(choices=MODEL_DTYPES)
    quantization: str = text(200)
    kv_cache_dtype: str = text(choices=KV_CACHE_DTYPES)
    kv_cache_groups: int = count(0, 1 << 16)
    pipeline_stages: tuple[StagePrediction, ...] = items(MAX_PARALLEL)
    fits: bool = flag()
    # vLLM starts by the figures, but the margin is inside the model's stated uncertainty for that class (the
    # warnings say which and by how much): check fails on it, recommend does not pick it. Absent in older plans.
    at_risk: bool = flag(default=False)
    errors: tuple[str, ...] = items(MAX_REASONS, max_len=4 * MAX_TEXT)
    warnings: tuple[str, ...] = items(MAX_REASONS, max_len=4 * MAX_TEXT)
    # Only when the architecture is estimated, not modelled exactly (model/families.py): why, one reason per item.
    approximate: tuple[str, ...] | None = items(MAX_REASONS, max_len=4 * MAX_TEXT, default=None, omit_none=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The versioned plan: inputs, the chosen option (its keys at the top level), the prediction for it,
    the runners-up and why the rest was rejected."""

    api_version: str = text(key="apiVersion", choices=(PLAN_API_VERSION,))
    kind: str = text(choices=(PLAN_KIND,))
    generator: str = text(200)
    inputs: PlanInputs = nested()
    best: PlanOption = nested(flatten=True)
    prediction: Prediction = nested()
    alternatives: tuple[PlanOption, ...] = items(MAX_OPTIONS)
    rejected: tuple[str, ...] = items(MAX_REASONS, max_len=4 * MAX_TEXT)
    searched: int = count(0, MAX_COUNT)
    # The option on fewer GPUs that lower-precision (4-bit) weights allow, when the plan keeps 8/16-bit weights
    # (planner/types.py NEAR_LOSSLESS_RANK). Absent otherwise and in older plans.
    fewer_gpus: PlanOption | None = nested(default=None, omit_none=True)
