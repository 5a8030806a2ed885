"""Documents from the core's results: explain's prediction and the plan (pure)."""

from __future__ import annotations

from recommender import __version__
from recommender.documents.plan import PLAN_API_VERSION, PLAN_KIND, Plan, PlanInputs, PlanOption, Prediction
from recommender.documents.plan import StagePrediction as Stage
from recommender.memory.budget import Explanation
from recommender.memory.startup_issues import IssueKind
from recommender.planner import Evaluation, PlanResult
from recommender.serve_argv_builder import build_serve_argv
from recommender.units import GiB


def _gib(n: int) -> float:
    return round(n / GiB, 4)


def prediction_of(e: Explanation) -> Prediction:
    """The figures vLLM prints at startup for one command (sizes in GiB per GPU, tightest stage)."""
    st = e.stage
    approximate = tuple(i.message for i in e.issues if i.kind is IssueKind.APPROXIMATE_MODEL)
    return Prediction(
        model=e.model,
        gpu=e.gpu,
        vllm_version=e.vllm_version,
        gpu_total_gib=_gib(e.gpu_total_bytes),
        free_gib=_gib(e.free_bytes),
        gpu_memory_utilization=e.utilization,
        requested_gib=_gib(e.requested_bytes),
        weights_gib=_gib(st.weights),
        activation_peak_gib=_gib(st.activation_peak),
        non_torch_gib=_gib(st.non_torch),
        cudagraph_gib=_gib(st.cudagraph),
        kv_cache_gib=_gib(st.available_kv),
        block_size=e.block_size,
        num_gpu_blocks=e.num_gpu_blocks,
        kv_bytes_per_token=e.kv_bytes_per_token,
        kv_cache_tokens=e.kv_cache_tokens,
        max_concurrency=round(e.max_concurrency, 2),
        max_model_len=e.max_model_len,
        max_num_seqs=e.max_num_seqs,
        max_num_batched_tokens=e.max_num_batched_tokens,
        tensor_parallel_size=e.tp,
        pipeline_parallel_size=e.pp,
        data_parallel_size=e.dp,
        gpus=e.gpus,
        dtype=e.weight_dtype,
        quantization=e.quantization,
        kv_cache_dtype=e.kv_cache_dtype,
        kv_cache_groups=len(st.layout.groups),
        pipeline_stages=tuple(
            Stage(
                stage=s.stage,
                layers=s.layers,
                weights_gib=_gib(s.weights),
                kv_cache_gib=_gib(s.available_kv),
                num_gpu_blocks=s.num_blocks,
            )
            for s in e.stages
        ),
        fits=e.fits,
        at_risk=e.at_risk,
        errors=e.errors,
        warnings=e.warnings,
        approximate=approximate or None,
    )


def option_of(e: Evaluation) -> PlanOption:
    """One evaluated configuration as a plan option."""
    c = e.candidate
    return PlanOption(
        command=tuple(build_serve_argv(c.weights.model.name, e.flags)),
        model=c.weights.model.name,
        gpus=e.gpus,
        replicas=e.replicas,
        tensor_parallel_size=c.tp,
        pipeline_parallel_size=c.pp,
        expert_parallel=c.expert_parallel,
        weights=c.weights.label,
        kv_cache_dtype=c.kv_cache_dtype,
        max_model_len=e.max_model_len,
        max_concurrency=round(e.concurrency, 2),
        summary=e.reason,
    )


def plan_of(result: PlanResult, *, requested_model: str) -> Plan:
    """The complete, versioned plan that `render` and `check` read back."""
    version = str(result.version)
    hw = result.hardware
    target = result.target
    inputs = PlanInputs(
        model=requested_model,
        gpu=hw.gpu.key,
        gpu_name=hw.gpu.name,
        gpu_product_label=hw.gpu.gfd_product_label,
        gpu_total_gib=_gib(hw.gpu.total_bytes),
        gpus_per_node=hw.gpus_per_node,
        nodes=hw.nodes,
        free_memory_gib=_gib(hw.free_bytes) if hw.free_bytes else None,
        concurrency=target.concurrency,
        context=target.context,
        min_context=target.min_context if target.context is None else None,
        objective=result.policy.objective,
        vllm_version=version,
    )
    return Plan(
        api_version=PLAN_API_VERSION,
        kind=PLAN_KIND,
        generator=f"vllm-plan {__version__}",
        inputs=inputs,
        best=option_of(result.best),
        prediction=prediction_of(result.best.explanation),
        alternatives=tuple(option_of(a) for a in result.alternatives),
        rejected=tuple(e.reason for e in result.rejected),
        searched=result.searched,
        fewer_gpus=option_of(result.fewer_gpus) if result.fewer_gpus else None,
    )
