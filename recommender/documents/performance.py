"""The plan document of a latency plan: each option with its `performance` block (pure)."""

from __future__ import annotations

from dataclasses import replace

from recommender import __version__
from recommender.documents.build import option_of, prediction_of
from recommender.documents.plan import (
    PLAN_API_VERSION,
    PLAN_KIND,
    ExpectedError,
    Performance,
    Plan,
    PlanInputs,
    PlanOption,
    TargetCheck,
)
from recommender.hardware import Gpu
from recommender.perf.metrics import PerfResult
from recommender.perf.params import PerfParams
from recommender.planner.service_types import ServiceOption, ServicePlan, ServiceTarget
from recommender.units import GiB


def _r(x: float) -> float:
    return round(x, 2)


def verdict_text(t: TargetCheck) -> str:
    """'met, 67% under' / 'missed, 16% over': the prediction against the target, on the target's base (as the
    rejected options' '> 2,000 ms (+16%)'; the document's `margin` is target / predicted - 1)."""
    off = t.predicted_ms / t.target_ms - 1
    return f"met, {-off:.0%} under" if t.met else f"missed, {off:.0%} over"


def target_checks(target: ServiceTarget, r: PerfResult) -> tuple[TargetCheck, ...]:
    """Each latency target against the predicted percentile."""
    stats = {"ttft": r.ttft, "tpot": r.tpot, "itl": r.itl}
    out = []
    for metric, goal in target.targets():
        value = stats[metric].at(target.percentile)
        out.append(
            TargetCheck(
                metric=metric,
                percentile=target.percentile,
                target_ms=goal,
                predicted_ms=_r(value),
                met=value <= goal,
                margin=round(goal / value - 1, 4) if value > 0 else 1e9,
            )
        )
    return tuple(out)


def performance_of(
    option: ServiceOption, target: ServiceTarget, params: PerfParams, gpu: Gpu, cost: float | None
) -> Performance:
    """The performance block of one option."""
    r, load = option.result, option.load
    errors, basis = params.expected_error(gpu)
    latencies = {
        f"{stat}_{name}_ms": _r(st.mean if stat == "mean" else st.at("p50" if stat == "median" else stat))
        for name, st in (("ttft", r.ttft), ("tpot", r.tpot), ("itl", r.itl), ("e2el", r.e2el))
        for stat in ("mean", "median", "p90", "p99")
    }
    return Performance(
        method=r.method,
        input_len=load.input_len,
        output_len=load.output_len,
        num_prompts=load.num_prompts,
        max_concurrency=load.max_concurrency,
        request_rate=None if load.is_burst else load.request_rate,
        **latencies,
        request_throughput=_r(r.request_throughput),
        output_throughput=_r(r.output_throughput),
        total_token_throughput=_r(r.total_token_throughput),
        output_throughput_per_gpu=_r(option.per_gpu),
        output_tokens_per_s_per_user=_r(r.output_tokens_per_s_per_user),
        bound=r.bound,
        cost_per_million_output_tokens=None if cost is None else round(cost, 4),
        expected_error=ExpectedError(
            ttft=errors.get("ttft", 0.0),
            tpot=errors.get("tpot", 0.0),
            throughput=errors.get("throughput", 0.0),
            basis=basis,
        ),
        targets=target_checks(target, r),
    )


def service_option_of(plan: ServicePlan, option: ServiceOption, params: PerfParams) -> PlanOption:
    """A plan option with its performance block (replicas and GPUs of the option, not of one engine)."""
    base = option_of(replace(option.evaluation, replicas=option.replicas))
    perf = performance_of(option, plan.target, params, plan.hardware.gpu, plan.cost_per_million(option))
    summary = (
        f"{option.describe()}: {option.result.output_throughput:,.0f} output tok/s "
        f"({option.per_gpu:,.0f} per GPU) at {option.load.describe()}"
    )
    x = option.evaluation.explanation  # the engine as seated (its --max-num-seqs may be above the search's)
    held = round(min(x.max_concurrency, x.max_num_seqs) * x.dp * option.replicas, 2)
    return replace(
        base,
        gpus=option.gpus,
        replicas=option.replicas,
        max_concurrency=held,
        performance=perf,
        summary=summary[:4096],
    )


def service_plan_of(plan: ServicePlan, params: PerfParams, *, requested_model: str) -> Plan:
    """The versioned plan document of a latency plan (render and check read it like any plan)."""
    hw, t = plan.hardware, plan.target
    inputs = PlanInputs(
        model=requested_model,
        gpu=hw.gpu.key,
        gpu_name=hw.gpu.name,
        gpu_product_label=hw.gpu.gfd_product_label,
        gpu_total_gib=round(hw.gpu.total_bytes / GiB, 4),
        gpus_per_node=hw.gpus_per_node,
        nodes=hw.nodes,
        free_memory_gib=round(hw.free_bytes / GiB, 4) if hw.free_bytes else None,
        concurrency=t.concurrency,
        context=t.input_len + t.output_len,
        min_context=None,
        objective=plan.objective,
        vllm_version=str(plan.version),
        input_len=t.input_len,
        output_len=t.output_len,
        request_rate=t.request_rate,
        ttft_ms=t.ttft_ms,
        tpot_ms=t.tpot_ms,
        itl_ms=t.itl_ms,
        slo_percentile=t.percentile,
        gpu_hour_cost=plan.gpu_hour_cost,
    )
    return Plan(
        api_version=PLAN_API_VERSION,
        kind=PLAN_KIND,
        generator=f"vllm-plan {__version__}",
        inputs=inputs,
        best=service_option_of(plan, plan.best, params),
        prediction=prediction_of(plan.best.evaluation.explanation),
        alternatives=tuple(service_option_of(plan, a, params) for a in plan.alternatives),
        rejected=plan.rejected,
        searched=plan.searched,
    )
