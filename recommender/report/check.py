"""The report of `vllm-plan check`: one row per server with its verdict, failure and fix (no I/O)."""

from __future__ import annotations

from collections.abc import Sequence

from recommender import __version__
from recommender.check.evaluate import CheckResult
from recommender.memory.engine import DEFAULT_VERSION
from recommender.report.figures import BudgetFigure, tightest_bar
from recommender.report.structure import Cell, Report, Section, Table
from recommender.report.svg import budget_chart

HEADERS = ("verdict", "file", "resource", "model", "GPU", "KV tokens", "concurrency", "max len")


def summary(results: Sequence[CheckResult]) -> str:
    """'2 of 3 servers pass' and the like."""
    passed = sum(r.passed for r in results)
    return f"{passed} of {len(results)} server{'s' if len(results) != 1 else ''} pass"


def row(r: CheckResult) -> tuple[Cell, ...]:
    """One server: where it is, the verdict, vLLM's predicted figures, what fails and how to fix it."""
    e = r.explanation
    return (
        Cell("pass", "pass") if r.passed else Cell("fail", "fail"),
        Cell(r.found.source, "code"),
        Cell(r.found.resource),
        Cell(r.model),
        Cell(r.gpu or "-"),
        Cell(f"{e.kv_cache_tokens:,}" if e else "-", "num"),
        Cell(f"{e.max_concurrency:.2f}" if e else "-", "num"),
        Cell(f"{e.max_model_len:,}" if e else "-", "num"),
    )


def details(r: CheckResult) -> tuple[Cell, ...]:
    """What fails, the fix, and the warnings of one server."""
    lines = [Cell(m, "fail") for m in r.failures]
    if r.suggestions:
        lines.append(Cell("fix: " + ", ".join(r.suggestions)))
    return (*lines, *(Cell(m, "warn") for m in r.warnings))


def check_report(results: Sequence[CheckResult], inputs: Sequence[str]) -> Report:
    """The servers table, their per-GPU budgets side by side, and the warnings."""
    ok = all(r.passed for r in results)
    servers = Table(HEADERS, tuple(row(r) for r in results), tuple(details(r) for r in results))
    sections = [Section("Servers", "servers", note="One row per vLLM server found.", table=servers)]
    bars = [tightest_bar(r.explanation, r.found.source, r.found.resource) for r in results if r.explanation is not None]
    if bars:
        figure = BudgetFigure("Per-GPU memory of each server (tightest pipeline stage)", tuple(bars))
        sections.append(
            Section(
                "Per-GPU memory",
                "budget",
                note="One bar per server; hover a segment for vLLM's own figure.",
                charts=(budget_chart(figure, "budget"),),
            )
        )
    versions = sorted({r.vllm_version for r in results}) or [DEFAULT_VERSION]
    return Report(
        title=f"vllm-plan check: {summary(results)}",
        subtitle=f"{len(results)} vLLM server(s) found in {', '.join(inputs) or 'stdin'}",
        verdict=Cell("every server passes", "pass") if ok else Cell("at least one server fails", "fail"),
        sections=tuple(sections),
        inputs=(("inputs", "\n".join(inputs)), ("vLLM versions", ", ".join(versions))),
        tool_version=__version__,
        vllm_version=", ".join(versions),
    )
