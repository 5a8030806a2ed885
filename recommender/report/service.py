"""The report of `vllm-plan recommend` with latency targets: the plan's predicted benchmark against the targets,
output tokens/s per GPU, TTFT and TPOT against concurrency for the plan and each alternative (targets as lines,
knees ringed), the engine's budget, and the options with their figures (no I/O)."""

from __future__ import annotations

import shlex

from recommender import __version__
from recommender.documents import Plan
from recommender.documents.performance import verdict_text
from recommender.perf.metrics import PerfResult, Stats
from recommender.perf.params import PerfParams
from recommender.perf.predict import costs_for, predict_engine
from recommender.planner.service_types import ServiceOption, ServicePlan
from recommender.report.explain import budget_section, messages
from recommender.report.figures import CurveFigure, CurveSeries, knee
from recommender.report.perf import result_items, result_table
from recommender.report.plan import inputs_of, options_table, rejected_section
from recommender.report.structure import Cell, Report, Section
from recommender.report.svg import Chart, curve_chart

Curve = tuple[tuple[float, PerfResult], ...]


def concurrencies(sp: ServicePlan) -> tuple[int, ...]:
    """1, 2, 4, ... to four times the target's users (at least 128, at most 512), and the target itself."""
    users = sp.target.concurrency
    top = min(512, max(128, 4 * (users or 32)))
    return tuple(sorted({1 << k for k in range(top.bit_length()) if 1 << k <= top} | ({users} if users else set())))


def option_curve(sp: ServicePlan, o: ServiceOption, params: PerfParams) -> Curve:
    """The option replayed at each concurrency (all its replicas together), as `vllm bench serve` would run it."""
    e = o.evaluation
    costs = costs_for(e.candidate.weights.model, sp.hardware.gpu, e.flags, e.explanation, params)
    return tuple((float(u), predict_engine(costs, sp.target.load(u), replicas=o.replicas)) for u in concurrencies(sp))


def curve_charts(sp: ServicePlan, curves: list[tuple[ServiceOption, Curve]]) -> tuple[Chart, ...]:
    """Throughput per GPU, and each latency the targets name (TTFT and TPOT always) at the target percentile."""
    pct = sp.target.percentile
    mark = (float(sp.target.concurrency), f"target: {sp.target.concurrency:,} users") if sp.target.concurrency else None
    knees = {id(o): knee(tuple((x, r.output_throughput / o.gpus) for x, r in c)) for o, c in curves}

    def value(metric: str, o: ServiceOption, r: PerfResult) -> float:
        if metric == "tput":
            return r.output_throughput / o.gpus
        stats: Stats = getattr(r, metric)
        return stats.at(pct)

    def series(metric: str) -> tuple[CurveSeries, ...]:
        return tuple(
            CurveSeries(
                ("plan: " if o is sp.best else "") + o.describe(),
                tuple((x, value(metric, o, r)) for x, r in c),
                o is sp.best,
                knees[id(o)],
            )
            for o, c in curves
        )

    goals = dict(sp.target.targets())
    charts = [
        CurveFigure("Output tokens/s per GPU", "tokens/s per GPU", series("tput"), (), mark),
        CurveFigure(f"TTFT ({pct})", f"TTFT {pct} ms", series("ttft"), _goal(goals, "ttft", pct), mark),
        CurveFigure(f"TPOT ({pct})", f"TPOT {pct} ms", series("tpot"), _goal(goals, "tpot", pct), mark),
    ]
    if "itl" in goals:
        charts.append(CurveFigure(f"ITL ({pct})", f"ITL {pct} ms", series("itl"), _goal(goals, "itl", pct), mark))
    return tuple(curve_chart(f, name) for f, name in zip(charts, ("throughput", "ttft", "tpot", "itl"), strict=False))


def _goal(goals: dict[str, float], metric: str, pct: str) -> tuple[tuple[float, str], ...]:
    return ((goals[metric], f"{metric.upper()} target {goals[metric]:g} ms ({pct})"),) if metric in goals else ()


def target_items(doc: Plan) -> tuple[Cell, ...]:
    """Each target against the plan's prediction, and the model's expected error."""
    perf = doc.best.performance
    if perf is None:
        return ()
    items = [
        Cell(
            f"{t.metric.upper()} {t.percentile} {t.predicted_ms:,.1f} ms against the {t.target_ms:g} ms target: "
            f"{verdict_text(t)}",
            "pass" if t.met else "fail",
        )
        for t in perf.targets
    ]
    err = perf.expected_error
    items.append(
        Cell(f"expected error ({err.basis}): TTFT {err.ttft:.0%}, TPOT {err.tpot:.0%}, throughput {err.throughput:.0%}")
    )
    return tuple(items)


def service_report(sp: ServicePlan, doc: Plan, params: PerfParams) -> Report:
    """Everything `recommend` decided by latency, with the curves."""
    best = sp.best
    curves = [(o, option_curve(sp, o, params)) for o in (best, *sp.alternatives)]
    note = f"{best.replicas} replicas of this engine, behind a load balancer. " if best.replicas > 1 else ""
    queueing = (Cell(sp.queueing_note()),) if sp.queueing_note() else ()
    sections = [
        Section("Command", "command", note=note + sp.max_len_note(), commands=(shlex.join(doc.best.command),)),
        Section(
            f"Predicted benchmark at {best.load.describe()}",
            "prediction",
            note=sp.steady_state_note(),
            table=result_table(best.result),
            items=target_items(doc) + queueing + result_items(best.result) + messages(best.evaluation.explanation),
        ),
        Section(
            "Throughput and latency",
            "curves",
            note=(
                "Each option replayed at each concurrency (closed loop); dashed red lines are the targets, the grey "
                "line the target load, rings the knees (90% of the option's best throughput)."
            ),
            charts=curve_charts(sp, curves),
        ),
        budget_section(best.evaluation.explanation, "budget"),
        Section("Plan and alternatives", "alternatives", table=options_table((doc.best, *doc.alternatives))),
    ]
    if doc.rejected:
        sections.append(rejected_section(doc))
    return Report(
        title=f"{doc.inputs.model} on {best.gpus} x {doc.inputs.gpu_name}",
        subtitle=f"Plan for {sp.target.describe()}: {best.describe()}",
        verdict=Cell(f"meets {sp.target.describe()}", "pass"),
        sections=tuple(sections),
        inputs=inputs_of(doc),
        tool_version=__version__,
        vllm_version=doc.inputs.vllm_version,
        notes=("Performance figures are predictions of `vllm bench serve` from a calibrated model, not measurements.",),
    )
