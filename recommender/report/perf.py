"""The report of `vllm-plan perf`: the predicted `vllm bench serve` figures, the engine's memory budget, and
throughput and latency against concurrency with the knee marked (no I/O)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from recommender import __version__
from recommender.memory.budget import Explanation
from recommender.perf.load import Load
from recommender.perf.metrics import PerfResult
from recommender.perf.predict import Sweep
from recommender.report.explain import budget_section, describe
from recommender.report.figures import CurveFigure, CurveSeries, knee
from recommender.report.structure import Cell, Report, Section, Table
from recommender.report.svg import Chart, curve_chart

DEFAULT_MAX = 256  # a report's default sweep covers 1, 2, 4, ... up to at least this many requests in flight


def default_concurrencies(load: Load) -> tuple[int, ...]:
    """Powers of two up to twice the requested concurrency (at least DEFAULT_MAX), and that concurrency."""
    wanted = load.max_concurrency or load.num_prompts
    top = max(DEFAULT_MAX, 2 * wanted) if wanted <= DEFAULT_MAX else 2 * DEFAULT_MAX
    powers = {1 << k for k in range(top.bit_length()) if 1 << k <= top}
    return tuple(sorted(powers | ({wanted} if wanted <= top else set())))


def result_table(r: PerfResult) -> Table:
    """Latencies (ms) as `vllm bench serve` prints them."""
    rows = tuple(
        (Cell(name), *(Cell(f"{v:,.1f}", "num") for v in (st.mean, st.median, st.p90, st.p99)))
        for name, st in (("TTFT", r.ttft), ("TPOT", r.tpot), ("ITL", r.itl), ("E2EL", r.e2el))
    )
    return Table(("ms", "mean", "median", "p90", "p99"), rows)


def result_items(r: PerfResult) -> tuple[Cell, ...]:
    """Throughputs and what bounds the run."""
    shares = ", ".join(f"{name} {share:.0%}" for name, share in r.shares)
    return (
        Cell(
            f"{r.request_throughput:,.2f} requests/s, {r.output_throughput:,.0f} output tokens/s "
            f"({r.output_throughput_per_gpu:,.0f} per GPU over {r.gpus}), {r.total_token_throughput:,.0f} total "
            f"tokens/s; {r.output_tokens_per_s_per_user:,.1f} tokens/s per user"
        ),
        Cell(
            f"bound by {r.bound} (engine time: {shares}); {r.preemptions} preemptions, {r.peak_running} requests "
            "running at the peak"
        ),
    )


def sweep_charts(s: Sweep, label: str, requested: int | None) -> tuple[Chart, ...]:
    """Output tokens/s per GPU, TTFT and TPOT against concurrency; the knee from the throughput curve; the
    requested concurrency marked."""
    tput = tuple((float(p.concurrency), p.result.output_throughput_per_gpu) for p in s.points)
    at = knee(tput)
    mark = (float(requested), f"requested: {requested} in flight") if requested else None

    def latency(name: str, pick: str) -> tuple[CurveSeries, ...]:
        mean = tuple((float(p.concurrency), getattr(p.result, pick).mean) for p in s.points)
        p99 = tuple((float(p.concurrency), getattr(p.result, pick).p99) for p in s.points)
        return CurveSeries(f"{name} mean", mean, True, at), CurveSeries(f"{name} p99", p99, False, at)

    return (
        curve_chart(
            CurveFigure("Output tokens/s per GPU", "tokens/s per GPU", (CurveSeries(label, tput, True, at),), (), mark),
            "throughput",
        ),
        curve_chart(CurveFigure("Time to first token (TTFT)", "TTFT ms", latency("TTFT", "ttft"), (), mark), "ttft"),
        curve_chart(CurveFigure("Time per output token (TPOT)", "TPOT ms", latency("TPOT", "tpot"), (), mark), "tpot"),
    )


def perf_report(
    command: Sequence[str], load: Load, e: Explanation, point: PerfResult | None, curve: Sweep | None
) -> Report:
    """The prediction at the requested load (if any), the budget, and the curves over concurrency (if any)."""
    sections = [Section("Command", "command", note=f"Load: {load.describe()}", commands=(shlex.join(command),))]
    if point is not None:
        sections.append(
            Section("Predicted benchmark", "prediction", table=result_table(point), items=result_items(point))
        )
    if curve is not None:
        note = (
            "Closed loop at each --max-concurrency; the ring marks the knee: the fewest requests in flight that reach "
            "90% of the best throughput (more mostly adds latency)."
        )
        sections.append(
            Section(
                "Throughput and latency",
                "curves",
                note=note,
                charts=sweep_charts(curve, describe(e), load.max_concurrency),
            )
        )
    sections.append(budget_section(e, "budget"))
    verdict = f"{point.output_throughput:,.0f} output tokens/s" if point is not None else "curve over concurrency"
    return Report(
        title=f"{e.model} on {e.gpu}",
        subtitle=f"{describe(e)}; {load.describe()}",
        verdict=Cell(verdict, "pass"),
        sections=tuple(sections),
        inputs=(("model", e.model), ("GPU", e.gpu), ("load", load.describe()), ("vLLM version", e.vllm_version)),
        tool_version=__version__,
        vllm_version=e.vllm_version,
        notes=("Performance figures are predictions of `vllm bench serve` from a calibrated model, not measurements.",),
    )
