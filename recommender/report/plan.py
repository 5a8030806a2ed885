"""The report of `vllm-plan recommend`: the chosen flags, their budget, capacity against the target, the
alternatives and why the rest was rejected (no I/O)."""

from __future__ import annotations

import shlex

from recommender import __version__
from recommender.report.explain import budget_section, messages
from recommender.report.figures import capacity_figure, capacity_series
from recommender.report.structure import Cell, Report, Section, Table
from recommender.report.svg import capacity_chart
from recommender.search import Evaluation
from recommender.serve_args import build_serve_argv
from recommender.solver import PlanResult
from recommender.units import GiB


def _label(e: Evaluation) -> str:
    return e.candidate.describe() + (f" x {e.replicas} replicas" if e.replicas > 1 else "")


def _command(e: Evaluation, version: str) -> str:
    return shlex.join(build_serve_argv(e.candidate.weights.model.name, e.flags, version))


def _options_table(options: tuple[Evaluation, ...], version: str) -> Table:
    rows = tuple(
        (
            Cell(str(a.candidate.tp), "num"),
            Cell(str(a.candidate.pp), "num"),
            Cell("yes" if a.candidate.expert_parallel else ""),
            Cell(str(a.replicas), "num"),
            Cell(str(a.gpus), "num"),
            Cell(a.candidate.weights.label),
            Cell(a.candidate.kv_cache_dtype),
            Cell(f"{a.max_model_len:,}", "num"),
            Cell(f"{a.concurrency:.1f}", "num"),
            Cell(_command(a, version), "code"),
        )
        for a in options
    )
    headers = ("TP", "PP", "EP", "replicas", "GPUs", "weights", "KV", "max len", "concurrency", "command")
    return Table(headers, rows)


def _inputs(result: PlanResult, requested_model: str) -> tuple[tuple[str, str], ...]:
    hw, t = result.hardware, result.target
    rows = [
        ("model", requested_model),
        ("GPU", f"{hw.gpu.name} ({hw.gpu.total_bytes / GiB:.2f} GiB as CUDA reports it)"),
        ("GPUs", f"{hw.gpus_per_node} per node x {hw.nodes} node(s)"),
        ("concurrency (N)", str(t.concurrency) if t.concurrency is not None else "not given"),
        ("context (S)", f"{t.context:,}" if t.context is not None else f"not given (at least {t.min_context:,})"),
        ("objective", result.policy.objective),
        ("vLLM version", str(result.version)),
    ]
    if hw.free_bytes is not None:
        rows.insert(3, ("free memory per GPU", f"{hw.free_bytes / GiB:.2f} GiB"))
    return tuple(rows)


def plan_report(result: PlanResult, requested_model: str) -> Report:
    """Everything `recommend` decided, with the charts."""
    best, version = result.best, str(result.version)
    target = result.target
    note = ""
    if best.replicas > 1:
        gpus = best.candidate.tp * best.candidate.pp
        note = f"{best.replicas} replicas of this engine (one per {gpus} GPU(s)), behind a load balancer."
    options = (best, *result.alternatives)
    cap = capacity_figure(
        "Capacity: concurrent requests held vs tokens per request",
        [capacity_series(a.explanation, _label(a), replicas=a.replicas, chosen=a is best) for a in options],
        target.concurrency,
        target.context,
    )
    sections = [
        Section("Command", "command", note=note, commands=(_command(best, version),), items=messages(best.explanation)),
        budget_section(best.explanation, "budget"),
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
    sections.append(Section("Plan and alternatives", "alternatives", table=_options_table(options, version)))
    if result.rejected:
        sections.append(
            Section(
                f"Rejected ({len(result.rejected)} of {result.searched})",
                "rejected",
                items=tuple(Cell(e.reason) for e in result.rejected),
            )
        )
    return Report(
        title=f"{requested_model} on {result.hardware.total_gpus} x {result.hardware.gpu.name}",
        subtitle=f"Plan for {target.describe()}: {best.reason}",
        verdict=Cell(f"serves {target.describe()}", "pass"),
        sections=tuple(sections),
        inputs=_inputs(result, requested_model),
        tool_version=__version__,
        vllm_version=version,
    )
