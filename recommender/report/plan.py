"""The report of `vllm-plan recommend`: the chosen flags, their budget, capacity against the target, the
alternatives and why the rest was rejected (no I/O).

Words come from the typed plan document (the same commands, options and reasons `--format json` writes and
`render` reads); the charts come from the planner's explanations, which hold the KV layout the curves need.
"""

from __future__ import annotations

import shlex

from recommender.documents import Plan, PlanOption
from recommender.planner import Evaluation, PlanResult
from recommender.report.explain import budget_section, messages
from recommender.report.figures import capacity_figure, capacity_series
from recommender.report.structure import Cell, Report, Section, Table
from recommender.report.svg import capacity_chart

OPTION_HEADERS = ("TP", "PP", "EP", "replicas", "GPUs", "weights", "KV", "max len", "concurrency", "command")


def option_label(o: PlanOption) -> str:
    """'TP=1 PP=1, bfloat16, KV fp8' (+ EP, replicas) for legends."""
    ep = ", EP" if o.expert_parallel else ""
    label = f"TP={o.tensor_parallel_size} PP={o.pipeline_parallel_size}{ep}, {o.weights}, KV {o.kv_cache_dtype}"
    return label + (f" x {o.replicas} replicas" if o.replicas > 1 else "")


def fewer_gpus_note(o: PlanOption) -> str:
    """What trading precision saves (Plan.fewer_gpus): the option on fewer GPUs and how to plan it."""
    argv = list(o.command)
    flag = argv[argv.index("--quantization") + 1] if "--quantization" in argv[:-1] else None
    how = f"--quantization {flag}" if flag else f"--model {o.model}"
    gpus = "1 GPU" if o.gpus == 1 else f"{o.gpus} GPUs"
    return f"With lower-precision weights it fits {gpus}: {option_label(o)}, max len {o.max_model_len:,} (plan it with {how})"


def longer_context_note(e: Evaluation) -> str:
    """What the GPUs the plan leaves idle would buy (PlanResult.longer_context) and how to plan it."""
    c = e.candidate
    option = f"TP={c.tp} PP={c.pp}{', EP' if c.expert_parallel else ''}, {c.weights.label}, KV {c.kv_label}"
    return (
        f"With {e.gpus} GPUs it serves {e.concurrency:,.0f} requests of {e.max_model_len:,} tokens: {option} "
        f"(plan it with --context {e.max_model_len})"
    )


def _perf_cells(o: PlanOption) -> tuple[Cell, ...]:
    p = o.performance
    if p is None:
        return (Cell("-"), Cell("-"), Cell("-"))
    pct = p.targets[0].percentile if p.targets else "p90"
    ttft, tpot = getattr(p, f"{pct}_ttft_ms"), getattr(p, f"{pct}_tpot_ms")
    return (
        Cell(f"{p.output_throughput_per_gpu:,.0f}", "num"),
        Cell(f"{ttft:,.0f}", "num"),
        Cell(f"{tpot:,.1f}", "num"),
    )


def options_table(options: tuple[PlanOption, ...]) -> Table:
    """The plan and its alternatives, each with its exact command (and its benchmark figures when planned by
    latency)."""
    with_perf = any(o.performance is not None for o in options)
    rows = tuple(
        (
            Cell(str(o.tensor_parallel_size), "num"),
            Cell(str(o.pipeline_parallel_size), "num"),
            Cell("yes" if o.expert_parallel else ""),
            Cell(str(o.replicas), "num"),
            Cell(str(o.gpus), "num"),
            Cell(o.weights),
            Cell(o.kv_cache_dtype),
            Cell(f"{o.max_model_len:,}", "num"),
            Cell(f"{o.max_concurrency:,.1f}", "num"),
            *(_perf_cells(o) if with_perf else ()),
            Cell(shlex.join(o.command), "code"),
        )
        for o in options
    )
    if not with_perf:
        return Table(OPTION_HEADERS, rows)
    pct = next((o.performance.targets[0].percentile for o in options if o.performance and o.performance.targets), "p90")
    headers = (*OPTION_HEADERS[:-1], "tok/s per GPU", f"TTFT {pct} ms", f"TPOT {pct} ms", OPTION_HEADERS[-1])
    return Table(headers, rows)


def rejected_section(plan: Plan) -> Section:
    """Why each configuration the search tried was not chosen."""
    items = tuple(Cell(reason) for reason in plan.rejected)
    return Section(f"Rejected ({len(plan.rejected)} of {plan.searched})", "rejected", items=items)


def inputs_of(plan: Plan) -> tuple[tuple[str, str], ...]:
    """What the plan was asked for."""
    i = plan.inputs
    rows = [
        ("model", i.model),
        ("GPU", f"{i.gpu_name} ({i.gpu_total_gib:.2f} GiB as CUDA reports it)"),
        ("GPUs", f"{i.gpus_per_node} per node x {i.nodes} node(s)"),
        ("concurrency (N)", str(i.concurrency) if i.concurrency is not None else "not given"),
        ("context (S)", f"{i.context:,}" if i.context is not None else f"not given (at least {i.min_context or 1:,})"),
        ("objective", i.objective),
        ("vLLM version", i.vllm_version),
    ]
    if i.free_memory_gib is not None:
        rows.insert(3, ("free memory per GPU", f"{i.free_memory_gib:.2f} GiB"))
    return tuple(rows)


def plan_report(result: PlanResult, plan: Plan) -> Report:
    """Everything `recommend` decided, with the charts."""
    best = plan.best
    target = result.target
    note = ""
    if best.replicas > 1:
        per = best.tensor_parallel_size * best.pipeline_parallel_size
        note = f"{best.replicas} replicas of this engine (one per {f'{per} GPUs' if per > 1 else 'GPU'}), behind a load balancer."
    if plan.fewer_gpus is not None:
        note = f"{note} {fewer_gpus_note(plan.fewer_gpus)}.".strip()
    options = (best, *plan.alternatives)
    evaluations = (result.best, *result.alternatives)
    cap = capacity_figure(
        "Capacity: concurrent requests held vs tokens per request",
        [
            capacity_series(e.explanation, option_label(o), replicas=o.replicas, chosen=o is best)
            for o, e in zip(options, evaluations, strict=True)
        ],
        target.concurrency,
        target.context,
    )
    sections = [
        Section(
            "Command",
            "command",
            note=note,
            commands=(shlex.join(best.command),),
            items=messages(result.best.explanation),
        ),
        budget_section(result.best.explanation, "budget"),
    ]
    if cap is not None:
        sections.append(
            Section(
                "Capacity",
                "capacity",
                note="Each curve ends at its --max-model-len; the dashed red lines are the target.",
                charts=(capacity_chart(cap, "capacity"),),
            )
        )
    sections.append(Section("Plan and alternatives", "alternatives", table=options_table(options)))
    if plan.rejected:
        sections.append(rejected_section(plan))
    return Report(
        title=f"{plan.inputs.model} on {_gpus(best.gpus, result.hardware.total_gpus, plan.inputs.gpu_name)}",
        subtitle=f"Plan for {target.describe()}: {best.summary}",
        verdict=Cell(f"serves {target.describe()}", "pass"),
        sections=tuple(sections),
        inputs=inputs_of(plan),
        tool_version=plan.generator.removeprefix("vllm-plan "),
        vllm_version=plan.inputs.vllm_version,
    )


def _gpus(used: int, total: int, gpu: str) -> str:
    """The GPUs the plan uses (it said 'on 8 x' for a plan on 1 of 8 given), and of how many when fewer."""
    return f"{used} x {gpu}" + (f" (of {total})" if used < total else "")
