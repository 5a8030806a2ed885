"""`vllm-plan recommend`: the best feasible launch flags for a target load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from recommender.catalog import find_model
from recommender.cli.explain_cmd import render_table, resolve_hardware
from recommender.cli.output import emit, format_option, table
from recommender.cli.render_cmd import EMIT_HELP, emit_artifacts, options_from, render_options
from recommender.documents import Plan, dump, plan_of
from recommender.errors import InputError
from recommender.memory.engine import DEFAULT_VERSION, VllmVersion
from recommender.planner import OBJECTIVES, Hardware, PlanResult, SearchPolicy, Target, plan
from recommender.project import merge_settings, require
from recommender.serve_args import convert
from recommender.sources.resolve import resolve_model
from recommender.units import GiB


def render_plan(result: PlanResult, plan: Plan) -> str:
    """Human output: the chosen command and budget, alternatives, and why the rest was rejected."""
    import shlex

    best = result.best
    lines = [
        f"Plan for {result.target.describe()} on {result.hardware.total_gpus} x {result.hardware.gpu.name}",
        f"  {best.reason}",
        "",
        "  " + shlex.join(plan.best.command),
        "",
    ]
    if best.replicas > 1:
        lines.insert(
            3,
            f"  {best.replicas} replicas of this engine (one per {best.candidate.tp * best.candidate.pp} "
            "GPU(s)), behind a load balancer",
        )
    lines.append(render_table(best.explanation))
    if result.alternatives:
        rows = [
            (
                a.candidate.tp,
                a.candidate.pp,
                a.replicas,
                a.gpus,
                a.candidate.weights.label,
                a.candidate.kv_cache_dtype,
                f"{a.max_model_len:,}",
                f"{a.concurrency:.1f}",
            )
            for a in result.alternatives
        ]
        lines += [
            "",
            "Alternatives:",
            table(["TP", "PP", "replicas", "GPUs", "weights", "KV", "max len", "concurrency"], rows),
        ]
    if result.rejected:
        lines += ["", f"Rejected ({len(result.rejected)} of {result.searched}):"]
        lines += [f"  - {e.reason}" for e in result.rejected]
    return "\n".join(lines)


@click.command()
@click.option("--model", help="Model: catalog id, local directory, or hub id.  [env VLLM_PLAN_MODEL]")
@click.option("--gpu", help="GPU type (see `vllm-plan gpus`).  [env VLLM_PLAN_GPU]")
@click.option("--gpus-per-node", type=int, help="GPUs per node (default 1).")
@click.option("--nodes", type=int, help="Nodes (default 1); more than one adds pipeline parallelism across nodes.")
@click.option("--gpu-memory-gib", type=float, help="Custom card: total memory in GiB as CUDA reports it.")
@click.option("--free-memory-gib", type=float, help="Free memory per GPU at startup when GPUs are shared.")
@click.option("--concurrency", type=int, help="Concurrent requests to serve (N).")
@click.option("--context", help="Tokens per request, prompt + output (S); accepts 8k / 8K.")
@click.option(
    "--min-context",
    default="4096",
    show_default=True,
    help="With --concurrency alone: the shortest context worth promising.",
)
@click.option("--objective", type=click.Choice(OBJECTIVES), help="Ranking (default min-gpus).")
@click.option("--quantization", help="Only this weights option (fp8, awq, gptq, ...).")
@click.option("--no-quantization", is_flag=True, help="Keep the model's own weights (no online FP8, no variants).")
@click.option("--no-fp8-kv", is_flag=True, help="Keep the KV cache in the model dtype.")
@click.option("--vllm-version", help=f"vLLM release to plan for (default {DEFAULT_VERSION}).")
@click.option(
    "--config",
    "config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Project file (default ./vllm-plan.yaml).",
)
@click.option("--emit", "emit_spec", help=EMIT_HELP + " With -o, plan.yaml is written beside them.")
@render_options
@format_option
def recommend(
    config: Path | None,
    fmt: str,
    no_quantization: bool,
    no_fp8_kv: bool,
    emit_spec: str | None,
    output_dir: Path | None,
    force: bool,
    min_context: str,
    **options: Any,
) -> None:
    """Find the best feasible vLLM launch flags for a model, hardware and target load.

    Model and hardware come from the options, VLLM_PLAN_* environment variables, or ./vllm-plan.yaml.
    Exits 3 with the nearest option when no configuration serves the target.

    \b
    Examples:
      vllm-plan recommend --model Qwen/Qwen2.5-7B-Instruct --gpu rtx4090 --concurrency 60
      vllm-plan recommend --concurrency 60 --context 8k        # model and GPU from vllm-plan.yaml
      vllm-plan recommend --model meta-llama/Llama-3.1-70B-Instruct --gpu h100 --gpus-per-node 4 --context 32k
    """
    render_kw = {
        k: options.pop(k)
        for k in (
            "name",
            "namespace",
            "port",
            "replicas",
            "image",
            "image_tag",
            "storage_class",
            "storage_gib",
            "hf_token_secret",
            "runtime_class",
            "vllm_bin",
        )
    }
    opts = options_from(render_kw)
    s = merge_settings(options, config)
    model_ref = require(s, "model")
    if s.get("gpu_memory_gib") is None:
        require(s, "gpu")
    context = s.get("context")
    floor = convert("--min-context", "hint", min_context)
    if floor < 1:
        raise InputError(f"--min-context must be at least 1 token, got {floor}")
    target = Target(
        concurrency=s.get("concurrency"),
        context=convert("--context", "hint", str(context)) if context is not None else None,
        min_context=floor,
    )
    gpu = resolve_hardware(s.get("gpu"), s.get("gpu_memory_gib"))
    free = s.get("free_memory_gib")
    hw = Hardware(
        gpu,
        gpus_per_node=s.get("gpus_per_node") or 1,
        nodes=s.get("nodes") or 1,
        free_bytes=int(free * GiB) if free is not None else None,
    )
    model = resolve_model(model_ref)
    match = find_model(model.name)
    entry = match.entry if match and match.same_model else None  # a base model's variants are not the instruct's
    variants = [resolve_model(v) for v in entry.variants] if entry else []
    policy = SearchPolicy(
        objective=s.get("objective") or "min-gpus",
        allow_quantization=not no_quantization,
        only_quantization=s.get("quantization"),
        allow_fp8_kv=not no_fp8_kv,
    )
    result = plan(
        model, variants, hw, target, version=VllmVersion.parse(s.get("vllm_version") or DEFAULT_VERSION), policy=policy
    )
    doc = plan_of(result, requested_model=model_ref)
    if emit_spec or output_dir:
        import yaml

        plan_yaml = yaml.safe_dump(dump(doc), sort_keys=False, width=120)
        emit_artifacts(doc, emit_spec or "all", opts, output_dir, force, extra_files={"plan.yaml": plan_yaml})
        return
    if fmt == "table":
        click.echo(render_plan(result, doc))
    else:
        emit(dump(doc), fmt)
