"""The report of `vllm-plan check`: one row per server with its verdict, failures and their fixes (no I/O)."""

from __future__ import annotations

from collections.abc import Sequence

from recommender import __version__
from recommender.check.results import FAIL, PASS, ServerResult
from recommender.memory.engine import DEFAULT_VERSION
from recommender.report.figures import BudgetFigure, tightest_bar
from recommender.report.structure import Cell, Report, Section, Style, Table
from recommender.report.svg import budget_chart

HEADERS = ("verdict", "file", "resource", "model", "GPU", "KV tokens", "KV holds", "max-num-seqs", "max len")
STATUS: dict[str, tuple[str, Style]] = {PASS: ("pass", "pass"), FAIL: ("fail", "fail")}
NOT_EVALUATED: tuple[str, Style] = ("not evaluated", "warn")


def summary(results: Sequence[ServerResult], problems: Sequence[str] = ()) -> str:
    """'2 of 3 servers pass, 1 not evaluated' and the like."""
    passed = sum(r.status == PASS for r in results)
    skipped = sum(r.status not in STATUS for r in results) + len(problems)
    text = f"{passed} of {len(results)} server{'s' if len(results) != 1 else ''} pass"
    return text + (f", {skipped} not evaluated" if skipped else "")


def verdict(r: ServerResult) -> Cell:
    """pass / fail / not evaluated, styled."""
    text, style = STATUS.get(r.status, NOT_EVALUATED)
    return Cell(text, style)


def where(r: ServerResult) -> str:
    """The document and container of a server."""
    return ", ".join(p for p in (r.found.resource, r.found.container) if p)


def row(r: ServerResult) -> tuple[Cell, ...]:
    """One server: where it is, the verdict and vLLM's predicted figures."""
    e = r.memory.explanation if r.memory else None
    return (
        verdict(r),
        Cell(r.found.source, "code"),
        Cell(where(r)),
        Cell(r.model or "-"),
        Cell(r.gpu or "-"),
        Cell(f"{e.kv_cache_tokens:,}" if e and not e.no_kv_cache else "-", "num"),
        Cell(f"{e.max_concurrency:.2f}" if e and not e.no_kv_cache else "-", "num"),
        Cell(f"{e.max_num_seqs:,}" if e else "-", "num"),
        Cell(f"{e.max_model_len:,}" if e else "-", "num"),
    )


def details(r: ServerResult) -> tuple[Cell, ...]:
    """What fails, the fixes, why it was not evaluated, and the warnings of one server."""
    # the memory verdict's failures are among the findings already (kind "startup", check/run.py)
    lines = [Cell(f.message, "fail") for f in r.findings]
    lines += [Cell(f"fix: {fix}") for fix in r.suggestions]
    lines += [Cell(f"not evaluated: {m}", "warn") for m in r.reasons]
    return (*lines, *(Cell(m, "warn") for m in r.warnings))


def check_report(results: Sequence[ServerResult], problems: Sequence[str], inputs: Sequence[str]) -> Report:
    """The servers table, their per-GPU budgets side by side, and the inputs that could not be read."""
    servers = Table(HEADERS, tuple(row(r) for r in results), tuple(details(r) for r in results))
    sections = [Section("Servers", "servers", note="One row per vLLM server found.", table=servers)]
    bars = [
        tightest_bar(r.memory.explanation, r.found.source, where(r))
        for r in results
        if r.memory is not None and r.memory.explanation is not None
    ]
    if bars:
        figure = BudgetFigure("Per-GPU memory of each server (tightest pipeline stage)", tuple(bars))
        note = "One bar per server evaluated; hover a segment for vLLM's own figure."
        sections.append(Section("Per-GPU memory", "budget", note=note, charts=(budget_chart(figure, "budget"),)))
    if problems:
        sections.append(Section("Not read", "not-read", items=tuple(Cell(p, "warn") for p in problems)))
    versions = sorted({r.vllm_version for r in results if r.vllm_version}) or [DEFAULT_VERSION]
    failed = any(r.status == FAIL for r in results)
    complete = not problems and all(r.status in STATUS for r in results)
    return Report(
        title=f"vllm-plan check: {summary(results, problems)}",
        subtitle=f"{len(results)} vLLM server(s) found in {', '.join(inputs) or 'stdin'}",
        verdict=(
            Cell("at least one server fails", "fail")
            if failed
            else Cell("every server passes", "pass")
            if complete
            else Cell("not every server could be evaluated", "warn")
        ),
        sections=tuple(sections),
        inputs=(("inputs", "\n".join(inputs) or "stdin"), ("vLLM versions", ", ".join(versions))),
        tool_version=__version__,
        vllm_version=", ".join(versions),
    )
