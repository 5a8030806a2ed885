"""`vllm-plan check`: a CI gate for vLLM deployments (exit 0 pass, 1 fail, 4 not all evaluated, 2 usage error)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click

from recommender.catalog import load_flag_table, load_gpus, load_node_gpu_tables
from recommender.check.chart_inputs import NO_HELM, load_chart
from recommender.check.cluster import GpuNode
from recommender.check.commands import starts_a_command
from recommender.check.evaluate import slo_for, version_for
from recommender.check.found import Found
from recommender.check.gpu_sizes import size_note, smallest_of_name
from recommender.check.inputs import load_inputs
from recommender.check.results import FAIL, NOT_EVALUATED, PASS, Context, Finding, ServerResult
from recommender.check.run import (
    check_server,
    exit_code,
    unknown_release,
    version_source,
)
from recommender.cli import params
from recommender.cli.gpu_option import named_gpu
from recommender.cli.output import format_choice, table
from recommender.cli.report_options import deliver, output_option, plot_option
from recommender.documents import explanation_json, plan_annotations
from recommender.errors import FlagError, InputError, NotEvaluatedError
from recommender.gpu_names import given_card, resolve_gpu
from recommender.hardware import Gpu, mig_slice
from recommender.memory.engine import DEFAULT_VERSION, VllmVersion
from recommender.model.spec import ModelSpec
from recommender.node_gpu import gpu_from_node_labels
from recommender.serve_args import config_args
from recommender.sources.resolve import resolve_model

MAX_CONFIG_BYTES = 1 << 20  # a vLLM --config YAML lists a few dozen flags


def _gpu_for(given: Gpu | None, cluster_product: str | None) -> Callable[[Found], Gpu | None]:
    """--gpu, else a GPU the input names (product, KubeAI profile, Ray accelerator_type), the node labels
    (GFD, GKE, EKS/Karpenter, AKS, instance types), the plan annotation, else the cluster's common product."""
    catalog = load_gpus()

    def lookup(found: Found) -> Gpu | None:
        card = card_of(found)
        # a container given MIG devices runs on one instance of the card (hardware.mig_slice), not the whole card
        return mig_slice(card, found.mig_profile) if card is not None and found.mig_profile else card

    def card_of(found: Found) -> Gpu | None:
        if given is not None:
            return given
        if found.gpu_product:  # written in the file: without a size, the smallest card of that name
            return smallest_of_name(found.gpu_product, resolve_gpu(found.gpu_product, catalog), catalog)
        if found.node_labels:
            hit = gpu_from_node_labels(found.node_labels, load_node_gpu_tables(), catalog)
            if hit is not None:
                written = _written_name(found)  # a label naming a GPU without its size: as for a product
                return smallest_of_name(written, hit.gpu, catalog) if written else hit.gpu
        claimed, _ = plan_annotations.decode(found.annotations)
        for name in (claimed.gpu, cluster_product):
            if name:
                return resolve_gpu(name, catalog)
        return None

    return lookup


def _size_note(found: Found) -> str | None:
    """Said when the GPU a file names without a memory size is judged on the smallest card of that name."""
    written = _written_name(found)
    return size_note(written, load_gpus()) if written else None


def _written_name(found: Found) -> str | None:
    """The GPU name a file writes: its product, else the value of a node label that names a GPU by name
    (`gpu.nvidia.com/model: A100`) when no memory label tells the size."""
    if found.gpu_product:
        return found.gpu_product
    tables = load_node_gpu_tables()
    if not found.node_labels or any(found.node_labels.get(k) for k in tables.memory_labels):
        return None
    hit = gpu_from_node_labels(found.node_labels, tables, load_gpus())
    key, _, value = hit.evidence.partition("=") if hit is not None else ("", "", "")
    return value if any(label.key == key and label.kind == "name" for label in tables.labels) else None


def _read_config(path: str) -> list[str] | None:
    """A `--config` file named by a command, when it exists on this machine (else the server is not evaluated)."""
    from recommender.safe_load import UntrustedDocumentError, load_yaml, path_kind, read_text

    file = Path(path)
    if path_kind(file) != "file":
        return None
    try:
        return config_args(load_yaml(read_text(file, MAX_CONFIG_BYTES)), path)
    except UntrustedDocumentError as exc:
        raise FlagError(f"--config {path}: {exc}") from exc


def result_json(r: ServerResult) -> dict[str, Any]:
    """One object per server for CI annotations (status pass | fail | not-evaluated)."""
    m = r.memory
    return {
        "file": r.found.source,
        "resource": r.found.resource,
        "container": r.found.container,
        "status": r.status,
        "verdict": r.status,
        "model": r.model,
        "gpu": r.gpu,
        "vllm_version": r.vllm_version,
        "read": dict(r.engine),
        "slo": {"concurrency": m.slo.concurrency, "context": m.slo.context, "users": m.slo.users} if m else None,
        "figures": explanation_json(m.explanation) if m and m.explanation else None,
        "failures": [f.message for f in r.findings],
        "failure_kinds": [f.kind for f in r.findings],
        "not_evaluated_because": list(r.reasons),
        "warnings": list(r.warnings),
        "suggestions": list(r.suggestions),
    }


@click.command()
@click.argument("inputs", nargs=-1)
@click.option("--gpu", help="GPU type, when the manifests do not select one (nvidia.com/gpu.product).")
@click.option(
    "--gpu-memory-gib",
    type=params.GPU_GIB,
    help="Custom card: total memory in GiB as CUDA reports it (with --gpu: that card with this total).",
)
@click.option("--concurrency", type=params.REQUESTS, help="Concurrent requests the deployment must hold.")
@click.option(
    "--context", type=params.TOKENS, help="Tokens per request for the concurrency promise (default: --max-model-len)."
)
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
@click.option(
    "--chart",
    type=params.path(),
    help="Helm chart folder: render it with helm (INPUTs are its values files, one release each) and check that.",
)
@format_choice("html", "markdown")
@output_option
@plot_option
def check(
    inputs: tuple[str, ...],
    gpu: str | None,
    gpu_memory_gib: float | None,
    concurrency: int | None,
    context: int | None,
    vllm_version: str | None,
    kube_context: str | None,
    aliases: tuple[str, ...],
    chart: Path | None,
    fmt: str,
    output: Path | None,
    force: bool,
    plot: Path | None,
) -> None:
    """Check vLLM deployments before they reach a GPU: will they start, do they hold their load?

    INPUT is a `vllm serve ...` (or `docker run ... IMAGE ...`) command, a file or directory of Kubernetes manifests (Deployment,
    StatefulSet, LeaderWorkerSet, multi-document YAML), production-stack Helm values, a docker compose file,
    a systemd unit, a plan document, or - for stdin.

    \b
    Exit codes: 0 every server was evaluated and passes, 1 at least one fails, 4 none fails but some
    server or input could not be evaluated (unresolved variable, model not fetchable, GPU unknown,
    unreadable file), 2 usage error or nothing to check.

    \b
    Examples:
      vllm-plan check deploy/ --gpu h100
      vllm-plan check "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 32768" --gpu rtx4090
      vllm-plan check --gpu h100 -- vllm serve Qwen/Qwen3-8B -tp 2 --max_model_len=32k
      vllm-plan check deploy/kubernetes.yaml --from-cluster --concurrency 60
      vllm-plan check --chart charts/vllm env/prod.yaml --gpu h100
      vllm-plan check deploy/ --gpu l40s --model-alias /models/llama=meta-llama/Llama-3.1-8B-Instruct
    """
    request = CheckRequest(
        inputs=_command_inputs(inputs),
        aliases=_alias_map(aliases),
        gpu=_given_gpu(gpu, gpu_memory_gib),
        concurrency=concurrency,
        context=context,
        vllm_version=vllm_version,
        kube_context=kube_context,
    )
    loaded = load_chart(chart, inputs) if chart is not None else load_inputs(request.inputs)
    if not loaded.found:
        why = loaded.problems[0] if len(loaded.problems) == 1 else "; ".join(loaded.problems[:3])
        # a chart left unrendered (no helm) may hold servers: not evaluated (4), not "no server" (2)
        unrendered = any(note.endswith(NO_HELM) for note in loaded.notes)
        raise NotEvaluatedError(why) if unrendered else InputError(why)
    results = check_all(loaded.found, request)
    for note in loaded.notes:
        click.echo(f"note: {note}", err=True)
    _print(results, loaded.problems, request.inputs, fmt, output, plot, force)
    code = exit_code(results, loaded.problems)
    if code:
        raise SystemExit(code)


@dataclass(frozen=True, slots=True)
class CheckRequest:
    """What `check` was asked, parsed from its options: the inputs and what they leave open."""

    inputs: tuple[str, ...]
    aliases: Mapping[str, str]  # --model-alias NAME=MODEL
    gpu: Gpu | None  # --gpu / --gpu-memory-gib, before anything the inputs say
    concurrency: int | None
    context: int | None
    vllm_version: str | None
    kube_context: str | None  # --from-cluster: "" for the current context


def _command_inputs(inputs: tuple[str, ...]) -> tuple[str, ...]:
    """`check -- vllm serve MODEL ...`, `check -- docker run ... IMAGE ...` (the command's words as arguments) as
    one command, as in explain (check/commands.py starts_a_command)."""
    if len(inputs) > 1 and starts_a_command(inputs):
        return (shlex.join(inputs),)
    if any(not item.strip() for item in inputs):  # `check "$DIR"` with DIR unset: not the working directory
        raise InputError("an empty input (an unset shell variable?): give a file, a folder, a command or -")
    return inputs


def _alias_map(aliases: tuple[str, ...]) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for item in aliases:
        name, sep, target = item.partition("=")
        if not sep or not name or not target:
            raise InputError(f"--model-alias {item!r}: expected NAME=MODEL")
        mapping[name] = target
    return mapping


def _given_gpu(gpu: str | None, gpu_memory_gib: float | None) -> Gpu | None:
    if gpu_memory_gib:
        return given_card(gpu, gpu_memory_gib, load_gpus())
    return named_gpu(gpu) if gpu else None


def check_all(found: list[Found], request: CheckRequest) -> list[ServerResult]:
    """Every server judged on its own, then (with --from-cluster) whether its pods can be scheduled."""
    if request.vllm_version:
        VllmVersion.parse(request.vllm_version)  # a bad --vllm-version is a usage error
    nodes = None
    cluster_product = None
    if request.kube_context is not None:
        from recommender.check.cluster import common_product, read_gpu_nodes

        nodes = read_gpu_nodes(request.kube_context or None)
        cluster_product = common_product(nodes)
    flag_table = load_flag_table()
    gpu_for = _gpu_for(request.gpu, cluster_product)

    def resolve(ref: str) -> ModelSpec:
        return resolve_model(request.aliases.get(ref, ref))

    results: list[ServerResult] = []
    for f in found:
        claimed, _ = plan_annotations.decode(f.annotations)
        stated = version_source(f, request.vllm_version, claimed.vllm_version)
        unknown = unknown_release(f, stated)
        ctx = Context(
            flag_table,
            resolve,
            gpu_for,
            version_for(f, request.vllm_version, DEFAULT_VERSION),
            stated is not None and unknown is None,
            slo_for(f, request.concurrency, request.context),
            _read_config,
            unknown,
            None if request.gpu else _size_note,
        )
        r = check_server(f, ctx)
        results.append(_scheduled(r, nodes) if nodes is not None else r)
    return results


def _scheduled(r: ServerResult, nodes: list[GpuNode]) -> ServerResult:
    """The result with a `schedule` failure when no node of the cluster can take its pods."""
    if r.gpu is None:
        return r
    from recommender.check.cluster import schedulable

    product = next((g.gfd_product_label for g in load_gpus() if g.name == r.gpu), None) or r.found.gpu_product
    problem = schedulable(nodes, product, r.found.gpus_per_pod or 1)
    if not problem:
        return r
    return replace(r, status=FAIL, findings=(*r.findings, Finding("schedule", problem)))


def _print(
    results: list[ServerResult],
    problems: list[str],
    inputs: tuple[str, ...],
    fmt: str,
    output: Path | None,
    plot: Path | None,
    force: bool,
) -> None:
    """The results in the format asked for; inputs that could not be read are rows of their own."""
    from recommender.report.check import check_report
    from recommender.report.markdown import check_markdown

    unread = [{"file": p.split(":", 1)[0], "status": NOT_EVALUATED, "not_evaluated_because": [p]} for p in problems]
    deliver(
        fmt,
        output=output,
        plot=plot,
        table=lambda: table_text(results, problems),
        document=lambda: [*(result_json(r) for r in results), *unread],
        report=lambda: check_report(results, problems, inputs),
        markdown=lambda: check_markdown(results, problems),
        force=force,
    )


def table_text(results: list[ServerResult], problems: list[str]) -> str:
    """The servers table, then each failure with its fix, what was not evaluated and why, and the warnings."""
    rows = []
    for r in results:
        e = r.memory.explanation if r.memory else None
        rows.append(
            (
                r.found.source,
                ", ".join(p for p in (r.found.resource, r.found.container) if p),
                {PASS: "PASS", FAIL: "FAIL"}.get(r.status, "NOT EVALUATED"),
                f"{e.kv_cache_tokens:,}" if e and not e.no_kv_cache else "-",
                f"{e.max_concurrency:.2f}" if e and not e.no_kv_cache else "-",
                f"{e.max_num_seqs:,}" if e else "-",
                f"{e.max_model_len:,}" if e else "-",
            )
        )
    # "KV holds": requests of max len the KV cache holds (vLLM's "Maximum concurrency"), as recommend's column;
    # vLLM runs at most max-num-seqs of them at once
    lines = [table(["input", "resource", "verdict", "KV tokens", "KV holds", "max-num-seqs", "max len"], rows)]
    for r in results:
        lines += [f"FAIL {r.found.where}: {finding.message}" for finding in r.findings]
        if r.suggestions:
            lines.append(f"  fix: {', '.join(r.suggestions)}")
        lines += [f"NOT EVALUATED {r.found.where}: {reason}" for reason in r.reasons]
        lines += [f"warn {r.found.where}: {m}" for m in r.warnings]
    lines += [f"NOT EVALUATED {p}" for p in problems]
    return "\n".join(lines)
