"""`vllm-plan recommend`: the best feasible launch flags for a target load."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from recommender.catalog import find_model
from recommender.cli import params
from recommender.cli.explain_cmd import free_bytes, render_table, resolve_hardware
from recommender.cli.output import format_choice, table
from recommender.cli.render_cmd import EMIT_HELP, emit_artifacts, options_from, render_options
from recommender.cli.report_options import deliver, plot_option, plotted
from recommender.cli.setting_origin import origin_of, said_from
from recommender.documents import Plan, dump, plan_from_data, plan_of
from recommender.documents.performance import service_plan_of, verdict_text
from recommender.errors import InfeasibleError, InputError
from recommender.hardware import Gpu
from recommender.memory.architecture_support import architecture_issues
from recommender.memory.engine import DEFAULT_VERSION, VllmVersion
from recommender.model.spec import ModelSpec
from recommender.perf.load import DATASETS
from recommender.perf_profile import load_params
from recommender.planner import (
    OBJECTIVES,
    Hardware,
    PlanResult,
    SearchPolicy,
    Target,
    plan,
    plan_fewest_gpus,
)
from recommender.planner.service import plan_service
from recommender.planner.service_types import PERCENTILES, SERVICE_OBJECTIVES, ServicePlan, ServiceTarget
from recommender.planner.space import gpu_budgets
from recommender.project import merge_settings, require
from recommender.sources.resolve import resolve_model

if TYPE_CHECKING:
    from recommender.render.options import RenderOptions
    from recommender.report.structure import Report

# Columns of the alternatives table after TP (which says EP where rows differ by expert parallelism).
ALTERNATIVE_COLUMNS = ("PP", "replicas", "GPUs", "weights", "KV", "max len", "concurrency", "KV holds")


def gpus_used(used: int, total: int, gpu: str, *, given: bool) -> str:
    """`4 x NVIDIA H100 80GB HBM3`, saying how many of the GPUs given (or of the node searched) stay idle."""
    if used >= total:
        return f"{used} x {gpu}"
    return f"{used} x {gpu} (of the {total} given)" if given else f"{used} x {gpu} (of a node of {total} searched)"


def _searched(gpu: Gpu) -> str:
    budgets = gpu_budgets(gpu)
    if len(budgets) == 1:
        return "a single-GPU system: more GPUs are more nodes, --nodes N"
    return f"the fewest of {', '.join(map(str, budgets))} GPUs that meet it"


def per_engine(gpus: int) -> str:
    return "one per GPU" if gpus == 1 else f"one per {gpus} GPUs"


def render_plan(result: PlanResult, plan: Plan, *, given_gpus: bool) -> str:
    """Human output: the chosen command and budget, alternatives, and why the rest was rejected."""
    import shlex

    best = result.best
    hw = result.hardware
    lines = [
        f"Plan for {result.target.describe()} on {gpus_used(best.gpus, hw.total_gpus, hw.gpu.name, given=given_gpus)}",
        f"  {best.reason}",
        "",
        "  " + shlex.join(plan.best.command),
        "",
    ]
    if best.replicas > 1:
        engine = per_engine(best.candidate.tp * best.candidate.pp)
        lines.insert(3, f"  {best.replicas} replicas of this engine ({engine}), behind a load balancer")
    if plan.fewer_gpus is not None:
        from recommender.report.plan import fewer_gpus_note

        lines.insert(2, f"  {fewer_gpus_note(plan.fewer_gpus)}")
    if result.longer_context is not None and given_gpus:
        from recommender.report.plan import longer_context_note

        lines.insert(2, f"  {longer_context_note(result.longer_context)}")
    lines.append(render_table(best.explanation))
    if result.alternatives:
        with_ep = any(a.candidate.expert_parallel for a in result.alternatives)
        rows = [
            (
                f"{a.candidate.tp}{' EP' if a.candidate.expert_parallel else ''}" if with_ep else a.candidate.tp,
                a.candidate.pp,
                a.replicas,
                a.gpus,
                a.candidate.weights.label,
                a.candidate.kv_label,
                f"{a.max_model_len:,}",
                f"{a.concurrency:,.1f}",
                "-" if a.explanation.no_kv_cache else f"{a.explanation.max_concurrency * a.replicas:,.1f}",
            )
            for a in result.alternatives
        ]
        lines += [
            "",
            "Alternatives (concurrency: what the flags run at once; KV holds: requests of max len the KV cache holds):",
            table(
                ["TP (EP: experts split)" if with_ep else "TP", *ALTERNATIVE_COLUMNS],
                rows,
            ),
        ]
    if result.rejected:
        lines += ["", f"Rejected ({len(result.rejected)} of {result.searched}):"]
        lines += [f"  - {e.reason}" for e in result.rejected]
    return "\n".join(lines)


def render_service_plan(sp: ServicePlan, doc: Plan, *, searched_budgets: bool) -> str:
    """Human output of a latency plan: the command, the predicted benchmark against the targets, alternatives."""
    import shlex

    best = sp.best
    if searched_budgets:
        where = f"{best.gpus} x {sp.hardware.gpu.name} ({_searched(sp.hardware.gpu)})"
    else:
        where = gpus_used(best.gpus, sp.hardware.total_gpus, sp.hardware.gpu.name, given=True)
    lines = [f"Plan for {sp.target.describe()} on {where}", f"  {best.describe()}", ""]
    lines.append("  " + shlex.join(doc.best.command))
    if best.replicas > 1:
        lines.append(f"  {best.replicas} replicas of this engine, behind a load balancer")
    lines.append(f"  {sp.max_len_note()}")
    lines += _predicted(sp, doc)
    lines += [sp.queueing_note()] if sp.queueing_note() else []
    cost = sp.cost_per_million(best)
    if cost is not None:
        lines.append(f"Cost: ${cost:,.3f} per million output tokens at ${sp.gpu_hour_cost:g} per GPU-hour")
    if sp.alternatives:
        alt = [
            (
                a.describe(),
                a.gpus,
                f"{a.per_gpu:,.0f}",
                f"{a.result.ttft.at(sp.target.percentile):,.0f}",
                f"{a.result.tpot.at(sp.target.percentile):,.1f}",
            )
            for a in sp.alternatives
        ]
        pct = sp.target.percentile
        lines += ["", "Alternatives:", table(("option", "GPUs", "tok/s/GPU", f"TTFT {pct}", f"TPOT {pct}"), alt)]
    if sp.rejected:
        lines += ["", f"Rejected ({len(sp.rejected)}):"] + [f"  - {r}" for r in sp.rejected]
    return "\n".join(lines)


def _predicted(sp: ServicePlan, doc: Plan) -> list[str]:
    """The plan's predicted benchmark against each target, its throughput and the model's expected error."""
    best, perf = sp.best, doc.best.performance
    assert perf is not None
    goals = {t.metric: t for t in perf.targets}
    rows = []
    for name in ("ttft", "tpot", "itl", "e2el"):
        st = getattr(best.result, name)
        check = goals.get(name)
        verdict = f"<= {check.target_ms:,.0f} ({verdict_text(check)})" if check else ""
        rows.append((name.upper(), f"{st.mean:,.1f}", f"{st.median:,.1f}", f"{st.p90:,.1f}", f"{st.p99:,.1f}", verdict))
    err = perf.expected_error
    return [
        "",
        f"Predicted at {best.load.describe()} ({best.method} of vLLM's scheduler)"
        + (f"; {sp.steady_state_note()}:" if sp.steady_state_note() else ":"),
        table(("ms", "mean", "median", "p90", "p99", f"target ({sp.target.percentile})"), rows),
        "",
        f"Throughput: {best.result.output_throughput:,.0f} output tok/s, {best.per_gpu:,.0f} per GPU, "
        f"{best.result.output_tokens_per_s_per_user:,.1f} per user; bound by {best.result.bound}",
        f"Expected error ({err.basis}): TTFT {err.ttft:.0%}, TPOT {err.tpot:.0%}, throughput {err.throughput:.0%}",
    ]


@click.command()
@click.option("--model", help="Model: catalog id, local directory, or hub id.  [env VLLM_PLAN_MODEL]")
@click.option("--gpu", help="GPU type (see `vllm-plan gpus`).  [env VLLM_PLAN_GPU]")
@click.option("--gpus-per-node", type=params.GPUS_PER_NODE, help="GPUs per node (default 1).")
@click.option(
    "--nodes", type=params.NODES, help="Nodes (default 1); more than one adds pipeline parallelism across nodes."
)
@click.option(
    "--gpu-memory-gib",
    type=params.GPU_GIB,
    help="Custom card: total memory in GiB as CUDA reports it (with --gpu: that card with this total).",
)
@click.option("--free-memory-gib", type=params.FREE_GIB, help="Free memory per GPU at startup when GPUs are shared.")
@click.option("--concurrency", type=params.REQUESTS, help="Concurrent requests to serve (N).")
@click.option("--context", type=params.TOKENS, help="Tokens per request, prompt + output (S); accepts 8k / 8K.")
@click.option(
    "--min-context",
    type=params.TOKENS,
    default="4096",
    show_default=True,
    help="With --concurrency alone: the shortest context worth promising.",
)
@click.option(
    "--objective",
    type=click.Choice(OBJECTIVES + SERVICE_OBJECTIVES),
    help="Ranking (default min-gpus: 8/16-bit weights on the fewest GPUs; max-throughput when latency targets are given).",
)
@click.option("--input-len", type=params.TOKENS, help="Prompt tokens per request: plan by latency and throughput.")
@click.option("--output-len", type=params.TOKENS, help="Output tokens per request.")
@click.option("--ttft-ms", type=params.MILLISECONDS, help="Time-to-first-token target (ms) at --slo-percentile.")
@click.option("--tpot-ms", type=params.MILLISECONDS, help="Time-per-output-token target (ms).")
@click.option("--itl-ms", type=params.MILLISECONDS, help="Inter-token-latency target (ms).")
@click.option("--slo-percentile", type=click.Choice(PERCENTILES), help="Percentile the targets hold at (p90).")
@click.option("--request-rate", type=params.RATE, help="Load as requests/s (Poisson) instead of --concurrency users.")
@click.option("--gpu-hour-cost", type=params.PRICE, help="Price of one GPU-hour: min-cost ranks by $ per token.")
@click.option("--dataset-name", type=click.Choice(DATASETS), default="random", show_default=True)
@click.option("--quantization", help="Only this weights option (fp8, awq, gptq, ...).")
@click.option("--no-quantization", is_flag=True, help="Keep the model's own weights (no online FP8, no variants).")
@click.option("--no-fp8-kv", is_flag=True, help="Keep the KV cache in the model dtype.")
@click.option("--vllm-version", help=f"vLLM release to plan for (default {DEFAULT_VERSION}).")
@click.option(
    "--config",
    "config",
    type=params.path(dir_okay=False),
    help="Project file (default ./vllm-plan.yaml).",
)
@click.option("--emit", "emit_spec", help=EMIT_HELP + " With -o, plan.yaml is written beside them.")
@render_options
@format_choice("html")
@plot_option
def recommend(
    config: Path | None,
    fmt: str,
    no_quantization: bool,
    no_fp8_kv: bool,
    emit_spec: str | None,
    output_dir: Path | None,
    force: bool,
    min_context: int,
    plot: Path | None,
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
    opts = options_from(options)  # the rendering options, consumed
    dataset = options.pop("dataset_name")
    fmt_given = click.get_current_context().get_parameter_source("fmt") != ParameterSource.DEFAULT
    if emit_spec and fmt in ("json", "yaml"):  # it printed the artifacts and dropped the format without a word
        raise InputError(
            f"--emit prints the artifacts (with -o DIR, plan.yaml beside them), --format {fmt} the plan document: "
            "give one of them"
        )
    file_fmt = output_file_format(output_dir, fmt, fmt_given) if output_dir and not emit_spec else None
    origins = {key: origin_of(key, config) for key in ("model", "gpu") if options.get(key) in (None, "")}
    settings = merge_settings(options, config)
    request = planning_request(settings, dataset, min_context, no_quantization, no_fp8_kv, origins)
    outcome = latency_plan(request) if request.service is not None else memory_plan(request)
    if emit_spec or (output_dir and file_fmt is None):  # artifacts (with --format html, report.html beside them)
        _emit(outcome, emit_spec, opts, output_dir, force, fmt, plot)
        return
    doc = outcome.doc
    deliver(
        file_fmt or fmt,
        output=output_dir,
        plot=plot,
        table=lambda: outcome.text,
        document=lambda: dump(doc),
        report=outcome.report,
        force=force,
    )


# -o FILE without --emit: the output itself, in the format the name says (plan.yaml, plan.json, plan.html)
OUTPUT_SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".html": "html", ".htm": "html", ".txt": "table"}


def output_file_format(path: Path, fmt: str, fmt_given: bool) -> str | None:
    """The format `recommend -o PATH` writes when PATH names one file (an explicit --format wins over the
    suffix); None when PATH is the folder for the artifacts and plan.yaml (an existing folder, or no such suffix)."""
    if fmt == "html":
        return "html"  # the report page, as always
    by_suffix = OUTPUT_SUFFIXES.get(path.suffix.lower())
    if path.is_dir() or not path.suffix:
        return None
    if by_suffix is None:  # `-o plan.yamll` or `-o plan.exe` made a folder of artifacts under that name
        names = ", ".join(sorted(OUTPUT_SUFFIXES))
        raise InputError(
            f"-o {path}: not a plan file name (ending in {names}) and not an existing folder; "
            f"for artifacts in a new folder, name it with --emit (`--emit all -o {path}`)"
        )
    return fmt if fmt_given else by_suffix


@dataclass(frozen=True, slots=True)
class PlanningRequest:
    """What `recommend` was asked, from the options, the environment and the project file, resolved."""

    model_ref: str  # as the user named it (the plan document keeps it)
    model: ModelSpec
    variants: tuple[ModelSpec, ...]  # the catalog's quantized variants of the same model
    hardware: Hardware
    fixed_gpus: bool  # --gpus-per-node or --nodes given: no search over GPU counts
    version: VllmVersion
    policy: SearchPolicy
    memory: Target
    service: ServiceTarget | None  # latency / throughput targets, when any was given
    objective: str | None
    gpu_hour_cost: float | None


@dataclass(frozen=True, slots=True)
class PlanOutcome:
    """The plan document, its text, and its report (built only when asked)."""

    doc: Plan
    text: str
    report: Callable[[], Report]


def planning_request(
    s: dict[str, Any],
    dataset: str,
    min_context: int,
    no_quantization: bool,
    no_fp8_kv: bool,
    origins: Mapping[str, str | None] | None = None,
) -> PlanningRequest:
    """The merged settings resolved: the model and its variants, the hardware, the targets and the policy (an error
    about the model or the GPU names the environment variable or project file it came from, `origins`)."""
    origins = origins or {}
    model_ref = require(s, "model")
    if no_quantization and s.get("quantization"):
        raise InputError(f"--quantization {s['quantization']} and --no-quantization contradict each other: give one")
    if s.get("gpu_memory_gib") is None:
        require(s, "gpu")
    with said_from(origins.get("gpu")):
        gpu = resolve_hardware(s.get("gpu"), s.get("gpu_memory_gib"))
    hw = Hardware(
        gpu,
        gpus_per_node=s.get("gpus_per_node") or 1,
        nodes=s.get("nodes") or 1,
        free_bytes=free_bytes(s.get("free_memory_gib"), gpu),
    )
    with said_from(origins.get("model")):
        model = resolve_model(model_ref)
    match = find_model(model.name)
    entry = match.entry if match and match.same_model else None  # a base model's variants are not the instruct's
    variants = tuple(resolve_model(v) for v in entry.variants) if entry else ()
    version = VllmVersion.parse(s.get("vllm_version") or DEFAULT_VERSION)
    for issue in architecture_issues(model.first_release, version):
        if issue.fatal:  # no flag helps: say why rather than name a "nearest" configuration
            raise InfeasibleError(f"no configuration of {model_ref} starts on vLLM {version}: {issue.message}")
    service = service_target(s, dataset)
    objective = s.get("objective")
    policy = SearchPolicy(
        objective=objective if objective in OBJECTIVES and service is None else "min-gpus",
        allow_quantization=not no_quantization,
        only_quantization=s.get("quantization"),
        allow_fp8_kv=not no_fp8_kv,
    )
    fixed = s.get("gpus_per_node") is not None or s.get("nodes") is not None
    return PlanningRequest(
        model_ref,
        model,
        variants,
        hw,
        fixed,
        version,
        policy,
        memory_target(s, min_context),
        service,
        objective,
        s.get("gpu_hour_cost"),
    )


def memory_plan(r: PlanningRequest) -> PlanOutcome:
    """The plan for a memory target (concurrency x context), on the fewest GPUs unless their count is fixed."""
    if r.fixed_gpus:
        result = plan(r.model, r.variants, r.hardware, r.memory, version=r.version, policy=r.policy)
    else:
        result = plan_fewest_gpus(r.model, r.variants, r.hardware, r.memory, version=r.version, policy=r.policy)
    doc = plan_of(result, requested_model=r.model_ref)

    def report() -> Report:
        from recommender.report.plan import plan_report

        return plan_report(result, doc)

    return PlanOutcome(doc, render_plan(result, doc, given_gpus=r.fixed_gpus), report)


def latency_plan(r: PlanningRequest) -> PlanOutcome:
    """The plan document, its text and its report (built when asked) for latency and throughput targets."""
    assert r.service is not None
    if r.objective is not None and r.objective not in SERVICE_OBJECTIVES:
        raise InputError(
            f"--objective {r.objective} ranks memory-only plans; with latency targets choose "
            f"{', '.join(SERVICE_OBJECTIVES)}"
        )
    if r.objective == "min-cost" and r.gpu_hour_cost is None:  # else ranked as max-throughput, with no cost shown
        raise InputError("--objective min-cost needs --gpu-hour-cost (the price of one GPU-hour, e.g. 2.5)")
    params = load_params()
    sp = plan_service(
        r.model,
        list(r.variants),
        r.hardware,
        r.service,
        version=r.version,
        params=params,
        policy=r.policy,
        objective=r.objective or "max-throughput",
        gpu_hour_cost=r.gpu_hour_cost,
        fixed_gpus=r.fixed_gpus,
    )
    doc = service_plan_of(sp, params, requested_model=r.model_ref)

    def report() -> Report:
        from recommender.report.service import service_report

        return service_report(sp, doc, params)

    return PlanOutcome(doc, render_service_plan(sp, doc, searched_budgets=not r.fixed_gpus), report)


def _emit(
    outcome: PlanOutcome,
    emit_spec: str | None,
    opts: RenderOptions,
    output_dir: Path | None,
    force: bool,
    fmt: str,
    plot: Path | None,
) -> None:
    """The artifacts, with plan.yaml (and report.html for --format html) beside them when written to a directory."""
    import yaml

    data = dump(outcome.doc)
    extra = {"plan.yaml": yaml.safe_dump(data, sort_keys=False, width=120)}
    # the checks `render plan.yaml` applies, so both render from the same, bounded plan
    checked = plan_from_data(data, "the recommended plan")
    built = outcome.report() if fmt == "html" or plot is not None else None
    if built is not None and fmt == "html":
        from recommender.report.html import html_page

        extra["report.html"] = html_page(built)
    with plotted(plot, built):
        emit_artifacts(checked, emit_spec or "all", opts, output_dir, force, extra_files=extra)
    if output_dir is not None:  # the files went to a folder: say what they deploy (stdout is free for it)
        click.echo("\n" + "\n".join(outcome.text.splitlines()[:4]))


def memory_target(s: dict[str, Any], min_context: int) -> Target:
    """--concurrency / --context / --min-context (typed and bounded where they entered) as the memory target."""
    return Target(concurrency=s.get("concurrency"), context=s.get("context"), min_context=min_context)


def service_target(s: dict[str, Any], dataset: str) -> ServiceTarget | None:
    """The latency target when any latency option is given (None: plan by memory alone)."""
    keys = ("input_len", "output_len", "ttft_ms", "tpot_ms", "itl_ms", "request_rate", "slo_percentile")
    if all(s.get(k) is None for k in keys) and s.get("objective") not in ("max-throughput", "min-cost"):
        return None
    if s.get("input_len") is None or s.get("output_len") is None:
        raise InputError("planning by latency or throughput needs --input-len and --output-len (tokens per request)")
    if s.get("context") is not None:
        raise InputError("--context is the memory target; with --input-len/--output-len it is their sum: drop it")
    target = ServiceTarget(
        input_len=s["input_len"],
        output_len=s["output_len"],
        concurrency=s.get("concurrency"),
        request_rate=s.get("request_rate"),
        ttft_ms=s.get("ttft_ms"),
        tpot_ms=s.get("tpot_ms"),
        itl_ms=s.get("itl_ms"),
        percentile=s.get("slo_percentile") or "p90",
        dataset=dataset,
    )
    target.validate()
    return target
