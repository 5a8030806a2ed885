"""`vllm-plan check`: a CI gate for vLLM deployments (exit 0 pass, 1 fail, 2 usage or parse error)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click

from recommender.catalog import load_gpus
from recommender.check.evaluate import ANN, CheckResult, evaluate, slo_for, version_for
from recommender.check.found import Found
from recommender.check.load import load_inputs
from recommender.cli.output import emit, format_option, table
from recommender.documents import explanation_json
from recommender.errors import InputError, UnknownGpuError
from recommender.hardware import Gpu, custom_gpu, resolve_gpu
from recommender.memory.engine import DEFAULT_VERSION
from recommender.model.spec import ModelSpec
from recommender.serve_args import convert
from recommender.sources.resolve import resolve_model


def _flag_table() -> dict[str, Any]:
    import yaml

    from recommender.resources import profiles_dir

    data = yaml.safe_load((profiles_dir() / "vllm-flags.yaml").read_text(encoding="utf-8"))
    return dict(data["flags"])


def _gpu_for(found: Found, given: Gpu | None, cluster_product: str | None) -> Gpu | None:
    if given is not None:
        return given
    for name in (found.gpu_product, found.annotations.get(ANN + "gpu"), cluster_product):
        if name:
            try:
                return resolve_gpu(name, load_gpus())
            except UnknownGpuError:
                continue
    return None


def result_json(r: CheckResult) -> dict[str, Any]:
    """One result per input for CI annotations."""
    return {
        "file": r.found.source,
        "resource": r.found.resource,
        "verdict": "pass" if r.passed else "fail",
        "model": r.model,
        "gpu": r.gpu,
        "vllm_version": r.vllm_version,
        "slo": {"concurrency": r.slo.concurrency, "context": r.slo.context},
        "figures": explanation_json(r.explanation) if r.explanation else None,
        "failures": list(r.failures),
        "warnings": list(r.warnings),
        "suggestions": list(r.suggestions),
    }


@click.command()
@click.argument("inputs", nargs=-1)
@click.option("--gpu", help="GPU type, when the manifests do not select one (nvidia.com/gpu.product).")
@click.option("--gpu-memory-gib", type=float, help="Custom card: total memory in GiB as CUDA reports it.")
@click.option("--concurrency", type=int, help="Concurrent requests the deployment must hold.")
@click.option("--context", help="Tokens per request for the concurrency promise (default: --max-model-len).")
@click.option("--vllm-version", help=f"vLLM release (default: plan annotation, image tag, else {DEFAULT_VERSION}).")
@click.option(
    "--from-cluster",
    "kube_context",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[CONTEXT]",
    help="Read GPU nodes from the cluster (current kubeconfig context, or CONTEXT) to pick the GPU type "
    "and check the pods can be scheduled.",
)
@click.option(
    "--model-alias",
    "aliases",
    multiple=True,
    metavar="NAME=MODEL",
    help="Read the model NAME (e.g. a path inside the container) as MODEL (catalog id, hub id or local "
    "directory). Repeatable.",
)
@format_option
def check(
    inputs: tuple[str, ...],
    gpu: str | None,
    gpu_memory_gib: float | None,
    concurrency: int | None,
    context: str | None,
    vllm_version: str | None,
    kube_context: str | None,
    aliases: tuple[str, ...],
    fmt: str,
) -> None:
    """Check vLLM deployments before they reach a GPU: will they start, do they hold their load?

    INPUT is a `vllm serve ...` command, a file or directory of Kubernetes manifests (Deployment,
    StatefulSet, LeaderWorkerSet, multi-document YAML), production-stack Helm values, a docker compose file,
    a systemd unit, a plan document, or - for stdin.

    \b
    Exit codes: 0 every input passes, 1 at least one fails, 2 usage or parse error.

    \b
    Examples:
      vllm-plan check deploy/ --gpu h100
      vllm-plan check "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 32768" --gpu rtx4090
      vllm-plan check deploy/kubernetes.yaml --from-cluster --concurrency 60
      vllm-plan check deploy/ --gpu l40s --model-alias /models/llama=meta-llama/Llama-3.1-8B-Instruct
    """
    found, notes = load_inputs(inputs)
    mapping: dict[str, str] = {}
    for item in aliases:
        name, sep, target = item.partition("=")
        if not sep or not name or not target:
            raise InputError(f"--model-alias {item!r}: expected NAME=MODEL")
        mapping[name] = target

    def resolve(ref: str) -> ModelSpec:
        return resolve_model(mapping.get(ref, ref))

    given = (
        custom_gpu(gpu_memory_gib, name=gpu or "custom")
        if gpu_memory_gib
        else (resolve_gpu(gpu, load_gpus()) if gpu else None)
    )
    nodes = None
    cluster_product = None
    if kube_context is not None:
        from recommender.check.cluster import common_product, read_gpu_nodes

        nodes = read_gpu_nodes(kube_context or None)
        cluster_product = common_product(nodes)
    length = convert("--context", "hint", context) if context else None
    table_flags = _flag_table()
    results: list[CheckResult] = []
    for f in found:
        hw = _gpu_for(f, given, cluster_product)
        if hw is None:
            raise InputError(
                f"{f.source} ({f.resource}): no GPU type; pass --gpu NAME, select nodes with "
                "nvidia.com/gpu.product in the manifest, or use --from-cluster"
            )
        if nodes is not None:
            from recommender.check.cluster import schedulable

            problem = schedulable(nodes, hw.gfd_product_label or f.gpu_product, f.gpus_per_pod or 1)
            if problem:
                f = replace(f, problems=(*f.problems, problem))
        version = version_for(f, vllm_version, DEFAULT_VERSION)
        results.append(
            evaluate(
                f, resolve=resolve, gpu=hw, version=version, flag_table=table_flags, slo=slo_for(f, concurrency, length)
            )
        )
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if fmt == "table":
        rows = []
        for r in results:
            e = r.explanation
            rows.append(
                (
                    r.found.source,
                    r.found.resource,
                    "PASS" if r.passed else "FAIL",
                    f"{e.kv_cache_tokens:,}" if e else "-",
                    f"{e.max_concurrency:.2f}" if e else "-",
                    f"{e.max_model_len:,}" if e else "-",
                )
            )
        click.echo(table(["input", "resource", "verdict", "KV tokens", "concurrency", "max len"], rows))
        for r in results:
            for m in r.failures:
                click.echo(f"FAIL {r.found.source} {r.found.resource}: {m}")
            if r.suggestions:
                click.echo(f"  fix: {', '.join(r.suggestions)}")
            for m in r.warnings:
                click.echo(f"warn {r.found.source} {r.found.resource}: {m}")
    else:
        emit([result_json(r) for r in results], fmt)
    if not all(r.passed for r in results):
        raise SystemExit(1)
