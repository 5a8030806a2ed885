"""The documents the tool prints and reads back: explain's JSON contract and the versioned plan (pure)."""

from __future__ import annotations

from typing import Any

from recommender import __version__
from recommender.memory.budget import Explanation
from recommender.search import Evaluation
from recommender.serve_args import build_serve_argv
from recommender.solver import PlanResult
from recommender.units import GiB

PLAN_API_VERSION = "vllm-plan/v1"


def explanation_json(e: Explanation) -> dict[str, Any]:
    """The `explain --format json` contract (sizes in GiB = 2**30 bytes)."""
    st = e.stage

    def g(b: int) -> float:
        return round(b / GiB, 4)

    return {
        "model": e.model,
        "gpu": e.gpu,
        "vllm_version": e.vllm_version,
        "gpu_total_gib": g(e.gpu_total_bytes),
        "free_gib": g(e.free_bytes),
        "gpu_memory_utilization": e.utilization,
        "requested_gib": g(e.requested_bytes),
        "weights_gib": g(st.weights) if st else None,
        "activation_peak_gib": g(st.activation_peak) if st else None,
        "non_torch_gib": g(st.non_torch) if st else None,
        "cudagraph_gib": g(st.cudagraph) if st else None,
        "kv_cache_gib": g(st.available_kv) if st else None,
        "block_size": e.block_size,
        "num_gpu_blocks": e.num_gpu_blocks,
        "kv_bytes_per_token": e.kv_bytes_per_token,
        "kv_cache_tokens": e.kv_cache_tokens,
        "max_concurrency": round(e.max_concurrency, 2),
        "max_model_len": e.max_model_len,
        "max_num_seqs": e.max_num_seqs,
        "max_num_batched_tokens": e.max_num_batched_tokens,
        "tensor_parallel_size": e.tp,
        "pipeline_parallel_size": e.pp,
        "data_parallel_size": e.dp,
        "gpus": e.gpus,
        "dtype": e.weight_dtype,
        "quantization": e.quantization,
        "kv_cache_dtype": e.kv_cache_dtype,
        "kv_cache_groups": len(st.layout.groups) if st else 0,
        "pipeline_stages": [
            {
                "stage": s.stage,
                "layers": s.layers,
                "weights_gib": g(s.weights),
                "kv_cache_gib": g(s.available_kv),
                "num_gpu_blocks": s.num_blocks,
            }
            for s in e.stages
        ],
        "fits": e.fits,
        "errors": list(e.errors),
        "warnings": list(e.warnings),
    }


def _option(e: Evaluation, version: str) -> dict[str, Any]:
    c = e.candidate
    return {
        "command": build_serve_argv(c.weights.model.name, e.flags, version),
        "model": c.weights.model.name,
        "gpus": e.gpus,
        "replicas": e.replicas,
        "tensor_parallel_size": c.tp,
        "pipeline_parallel_size": c.pp,
        "expert_parallel": c.expert_parallel,
        "weights": c.weights.label,
        "kv_cache_dtype": c.kv_cache_dtype,
        "max_model_len": e.max_model_len,
        "max_concurrency": round(e.concurrency, 2),
        "summary": e.reason,
    }


def plan_document(result: PlanResult, *, requested_model: str) -> dict[str, Any]:
    """The complete, versioned plan that `render` and `check` read back."""
    best = result.best
    version = str(result.version)
    hw = result.hardware
    doc: dict[str, Any] = {
        "apiVersion": PLAN_API_VERSION,
        "kind": "Plan",
        "generator": f"vllm-plan {__version__}",
        "inputs": {
            "model": requested_model,
            "gpu": hw.gpu.key,
            "gpu_name": hw.gpu.name,
            "gpu_product_label": hw.gpu.gfd_product_label,
            "gpu_total_gib": round(hw.gpu.total_bytes / GiB, 4),
            "gpus_per_node": hw.gpus_per_node,
            "nodes": hw.nodes,
            "free_memory_gib": round(hw.free_bytes / GiB, 4) if hw.free_bytes else None,
            "concurrency": result.target.concurrency,
            "context": result.target.context,
            "min_context": result.target.min_context if result.target.context is None else None,
            "objective": result.policy.objective,
            "vllm_version": version,
        },
        **_option(best, version),
        "prediction": explanation_json(best.explanation),
        "alternatives": [_option(a, version) for a in result.alternatives],
        "rejected": [e.reason for e in result.rejected],
        "searched": result.searched,
    }
    return doc
