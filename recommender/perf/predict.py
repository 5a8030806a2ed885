"""`predict(model, gpu, flags, load)`: what `vllm bench serve` would measure against `vllm serve` with these flags.

The startup prediction (memory/budget.py `explain`) gives the engine: weights per GPU, KV blocks, the scheduler
limits vLLM picks by default. The replay runs the load against it. With `--data-parallel-size N` the client's
requests are spread evenly over N engines (each replayed with its share; MoE experts see every rank's tokens).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from recommender.errors import InfeasibleError
from recommender.hardware import Gpu
from recommender.memory.budget import Explanation, explain
from recommender.memory.engine import DEFAULT_VERSION, EngineFlags, VllmVersion, runs_v0_engine
from recommender.model.quant import resolve_quant
from recommender.model.spec import ModelSpec
from recommender.perf.costs import EngineCosts, engine_costs
from recommender.perf.facts import EngineFacts, engine_facts
from recommender.perf.kernels import PerfUnavailableError
from recommender.perf.load import Load, make_requests
from recommender.perf.metrics import PerfResult, summarize
from recommender.perf.params import PerfParams
from recommender.perf.replay import replay


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One point of a concurrency sweep."""

    concurrency: int
    result: PerfResult


@dataclass(frozen=True, slots=True)
class Sweep:
    """A curve over concurrency for one configuration (what `perf --sweep` prints and reports plot)."""

    model: str
    gpu: str
    flags: EngineFlags
    load: Load
    points: tuple[SweepPoint, ...]


def refuse_pooling(model: ModelSpec, flags: EngineFlags) -> None:
    """The performance model replays text generation (prefill, then decode steps that sample); a model vLLM serves
    with the pooling runner (embeddings, scores: model/pooling.py) runs one prefill per request and no decode, which
    nothing here is fitted to."""
    if model.pooling or flags.pooling_runner():
        raise PerfUnavailableError(
            f"{model.name} is served with vLLM's pooling runner (embeddings / scores), whose throughput the "
            "performance model does not predict (it is fitted to text generation); `explain` and `recommend` "
            "without --input-len / --output-len plan its memory"
        )


def startup(
    model: ModelSpec, gpu: Gpu, flags: EngineFlags, version: VllmVersion, load: Load | None = None
) -> Explanation:
    """The startup prediction; a configuration vLLM would not start cannot be benchmarked. Where it starts only with
    FlashInfer's sampler (`sampler_note` says so), that startup. With the `load`, the refusal says whether a
    --max-model-len that holds the load's requests would start."""
    refuse_pooling(model, flags)
    e = explain(model, gpu, flags, version)
    if e.fits:
        return e
    alternative = flashinfer_startup(model, gpu, flags, version)
    if alternative is None:
        hint = _context_hint(model, gpu, flags, version, load)
        raise InfeasibleError(f"vLLM would not start with these flags, so nothing can be measured: {e.errors[0]}{hint}")
    return alternative


def _context_hint(model: ModelSpec, gpu: Gpu, flags: EngineFlags, version: VllmVersion, load: Load | None) -> str:
    """When --max-model-len was left to the model's default and the benchmark's requests (input + output tokens, the
    length `recommend` plans for) would start at a --max-model-len that holds them, that flag; else ""."""
    if load is None or flags.max_model_len is not None:
        return ""
    needed = math.ceil(load.input_len + load.output_len)
    if needed >= explain(model, gpu, flags, version).max_model_len:
        return ""
    shorter = replace(flags, max_model_len=needed)
    if not explain(model, gpu, shorter, version).fits and flashinfer_startup(model, gpu, shorter, version) is None:
        return ""
    return f" (the benchmark's requests need {needed:,} tokens: add --max-model-len {needed} and it starts)"


# v1/sample/ops/topk_topp_sampler.py from v0.7.0 (vllm-project/vllm#11394) to v0.11.0: on CUDA with flashinfer >= 0.2.3
# installed, V1 samples top-k/top-p with FlashInfer's kernel unless VLLM_USE_FLASHINFER_SAMPLER=0; v0.11.1 made it
# opt-in (#26859). Which path ran is the environment's, not the release's: the memory model keeps the sort path's
# larger profiling peak (overheads.SAMPLER_BYTES_PER_LOGIT_OLD), the side that never calls a crash safe.
FLASHINFER_SAMPLER_DEFAULT = (VllmVersion(0, 7), VllmVersion(0, 11, 1))


def flashinfer_startup(model: ModelSpec, gpu: Gpu, flags: EngineFlags, version: VllmVersion) -> Explanation | None:
    """The startup with FlashInfer's sampler where that is the release's default on this GPU and the flags leave the
    path open; None elsewhere, or when that does not start either."""
    if not flashinfer_by_default(model, gpu, flags, version):
        return None
    e = explain(model, gpu, replace(flags, flashinfer_sampler=True), version)
    return e if e.fits else None


def flashinfer_by_default(model: ModelSpec, gpu: Gpu, flags: EngineFlags, version: VllmVersion) -> bool:
    """Whether V1 of this release samples with FlashInfer wherever flashinfer is installed on this GPU, and the flags
    do not say which sampler ran."""
    first, after = FLASHINFER_SAMPLER_DEFAULT
    if flags.flashinfer_sampler is not None or gpu.vendor != "nvidia" or not first <= version < after:
        return False
    return not runs_v0_engine(version, gpu, model.architecture, flags.use_v1)


def sampler_note(model: ModelSpec, gpu: Gpu, flags: EngineFlags, version: VllmVersion) -> str | None:
    """Why a prediction holds only with FlashInfer's sampler, or None when the flags start either way."""
    e = explain(model, gpu, flags, version)
    if e.fits or flashinfer_startup(model, gpu, flags, version) is None:
        return None
    return (
        f"vLLM {version} starts this only where it samples with FlashInfer (flashinfer installed, "
        "VLLM_USE_FLASHINFER_SAMPLER not 0): the figures are for that engine. With PyTorch's sort-based sampler the "
        f"memory model predicts: {e.errors[0]}"
    )


# The first release whose TTFT carries params.request_latency_ms and whose steps carry params.seq_overhead_us in
# series (see PerfParams): the fit's rows are all 0.10+; earlier V0 and V1 engines' light-load TTFT is their prefill
# step plus the serialized request_overhead_ms, and earlier V1 engines overlap the per-sequence share (step.py).
FRONTEND_LATENCY_FROM = VllmVersion(0, 10)
ASYNC_SCHEDULING_DEFAULT_FROM = VllmVersion(0, 12)  # vllm-project/vllm#27614 made --async-scheduling the default


def async_default(version: VllmVersion, pp: int) -> bool:
    """Whether vLLM schedules asynchronously without the flag (never with pipeline parallelism: config/vllm.py)."""
    return version >= ASYNC_SCHEDULING_DEFAULT_FROM and pp == 1


def v0_prefill_first(
    model: ModelSpec, gpu: Gpu, flags: EngineFlags, e: Explanation, chunked_prefill: bool | None = None
) -> bool:
    """Whether the engine is V0 scheduling without chunked prefill (prefill-only steps first). `chunked_prefill` (else
    the flags' own) is --enable-chunked-prefill / --no-enable-chunked-prefill when given; V0's default switches it on only for long
    contexts (memory/scheduler.py v0_batched_tokens), which is exactly when its token budget is below the context:
    without chunked prefill V0 refuses a budget below --max-model-len."""
    if not runs_v0_engine(VllmVersion.parse(e.vllm_version), gpu, model.architecture, flags.use_v1):
        return False
    if chunked_prefill is None:
        chunked_prefill = flags.enable_chunked_prefill
    if chunked_prefill is not None:
        return not chunked_prefill
    return e.max_num_batched_tokens >= e.max_model_len


def facts_for(
    model: ModelSpec, gpu: Gpu, flags: EngineFlags, e: Explanation, *, chunked_prefill: bool | None = None
) -> EngineFacts:
    """What the engine `explain` accepted moves and computes per step (no fitted constant involved)."""
    quant = resolve_quant(model, flags.quantization)
    facts = engine_facts(
        model, gpu, e, quant=quant, expert_parallel=flags.enable_expert_parallel, enforce_eager=flags.enforce_eager
    )
    version = VllmVersion.parse(e.vllm_version)
    v1 = not runs_v0_engine(version, gpu, model.architecture, flags.use_v1)
    return replace(
        facts,
        v0_prefill_first=v0_prefill_first(model, gpu, flags, e, chunked_prefill),
        frontend_latency=version >= FRONTEND_LATENCY_FROM,
        output_overlapped=v1 and version < FRONTEND_LATENCY_FROM,
    )


def costs_for(
    model: ModelSpec,
    gpu: Gpu,
    flags: EngineFlags,
    e: Explanation,
    params: PerfParams,
    *,
    async_scheduling: bool | None = None,
    chunked_prefill: bool | None = None,
) -> EngineCosts:
    """The engine's cost coefficients for a configuration `explain` accepted (`chunked_prefill`: see
    `v0_prefill_first`; only the V0 engine reads it)."""
    refuse_pooling(model, flags)
    version = VllmVersion.parse(e.vllm_version)
    overlap = async_default(version, e.pp) if async_scheduling is None else async_scheduling and e.pp == 1
    facts = facts_for(model, gpu, flags, e, chunked_prefill=chunked_prefill)
    return engine_costs(facts, gpu, params, async_scheduling=overlap)


def share_of(load: Load, engines: int) -> Load:
    """One engine's share of the client's load when `engines` identical engines split it evenly."""
    if engines == 1:
        return load
    rate = None if load.is_burst or load.request_rate is None else load.request_rate / engines
    cap = None if load.max_concurrency is None else max(1, math.ceil(load.max_concurrency / engines))
    prompts = max(1, math.ceil(load.num_prompts / engines))
    return replace(load, num_prompts=prompts, request_rate=rate, max_concurrency=cap)


def predict_engine(costs: EngineCosts, load: Load, *, replicas: int = 1) -> PerfResult:
    """Replay `load` against an engine whose costs are known.

    Data-parallel ranks (`--data-parallel-size`) and `replicas` (independent engines behind a load balancer)
    each take an even share of the requests; the figures are for all of them together."""
    load.validate()
    engines = costs.dp * replicas
    share = share_of(load, engines)
    reqs = make_requests(share, costs.max_model_len)
    timeline = replay(costs, reqs, share.max_concurrency)
    warmup = min(share.num_prompts - 1, math.ceil(load.warmup / engines))
    return summarize(
        timeline, gpus=costs.tp * costs.pp, replicas=engines, offered_rate=share.request_rate, warmup=warmup
    )


def check_context(load: Load, max_model_len: int) -> None:
    """vLLM refuses a prompt that fills the whole context ("your prompt contains N input tokens, which exceeds this
    limit even without any output tokens", renderers/params.py in 0.33) and clamps max_tokens to what is left: a
    random-dataset load whose prompts do not fit cannot be benchmarked (ShareGPT prompts are clipped per request)."""
    if load.dataset == "random" and load.input_len >= max_model_len:
        raise InfeasibleError(
            f"--input-len {load.input_len:,.0f} does not fit the engine's --max-model-len {max_model_len:,}: vLLM "
            "rejects every such prompt"
        )


def predict(
    model: ModelSpec,
    gpu: Gpu,
    flags: EngineFlags,
    load: Load,
    *,
    params: PerfParams,
    version: VllmVersion | None = None,
    async_scheduling: bool | None = None,
    chunked_prefill: bool | None = None,
) -> PerfResult:
    """What `vllm bench serve` would report for `load` against `vllm serve` with `flags` on `gpu`."""
    v = version or VllmVersion.parse(DEFAULT_VERSION)
    e = startup(model, gpu, flags, v, load)
    check_context(load, e.max_model_len)
    costs = costs_for(model, gpu, flags, e, params, async_scheduling=async_scheduling, chunked_prefill=chunked_prefill)
    return predict_engine(costs, load)


def sweep(
    model: ModelSpec,
    gpu: Gpu,
    flags: EngineFlags,
    load: Load,
    concurrencies: tuple[int, ...],
    *,
    params: PerfParams,
    version: VllmVersion | None = None,
    async_scheduling: bool | None = None,
    chunked_prefill: bool | None = None,
) -> Sweep:
    """The same load at each `--max-concurrency` of `concurrencies` (one startup prediction for all)."""
    v = version or VllmVersion.parse(DEFAULT_VERSION)
    e = startup(model, gpu, flags, v, load)
    check_context(load, e.max_model_len)
    costs = costs_for(model, gpu, flags, e, params, async_scheduling=async_scheduling, chunked_prefill=chunked_prefill)
    points = tuple(SweepPoint(c, predict_engine(costs, replace(load, max_concurrency=c))) for c in concurrencies)
    return Sweep(model.name, gpu.name, flags, load, points)
