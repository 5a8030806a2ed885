"""The report of `vllm-plan explain`: one configuration's budget, capacity and verdict (no I/O)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from recommender import __version__
from recommender.memory.budget import Explanation
from recommender.memory.engine import EngineFlags
from recommender.report.figures import BudgetFigure, budget_bars, capacity_figure, capacity_series
from recommender.report.structure import Cell, Report, Section, Table
from recommender.report.svg import budget_chart, capacity_chart
from recommender.serve_argv_builder import build_serve_argv
from recommender.units import GiB


def describe(e: Explanation) -> str:
    """'TP=1 PP=1 DP=1, bfloat16 / none, KV auto' and the like."""
    return f"TP={e.tp} PP={e.pp} DP={e.dp}, weights {e.weight_dtype} / {e.quantization}, KV {e.kv_cache_dtype}"


def verdict(e: Explanation) -> Cell:
    """vLLM starts or fails, as a styled cell."""
    if not e.fits:
        return Cell("vLLM fails at startup", "fail")
    return Cell("at risk: vLLM may fail at startup", "warn") if e.at_risk else Cell("vLLM starts", "pass")


def budget_section(e: Explanation, chart_id: str, title: str = "Per-GPU memory budget") -> Section:
    """The stacked bars (one per pipeline stage) and vLLM's startup figures."""
    charts = (budget_chart(BudgetFigure(f"Per-GPU memory: {e.model} on {e.gpu}", budget_bars(e)), chart_id),)
    return Section(
        title, chart_id, note="Hover a segment for vLLM's own figure.", charts=charts, table=figures_table(e)
    )


def figures_table(e: Explanation) -> Table:
    """The numbers vLLM prints at startup (per GPU, tightest stage)."""
    st = e.stage
    rows: list[tuple[str, str]] = [("device total", f"{e.gpu_total_bytes / GiB:.2f} GiB")]
    if e.free_bytes != e.gpu_total_bytes:
        rows.append(("free at startup", f"{e.free_bytes / GiB:.2f} GiB"))
    rows.append(("budget (--gpu-memory-utilization)", f"{e.requested_bytes / GiB:.2f} GiB ({e.utilization})"))
    rows += [
        ("Model loading took", f"{st.weights / GiB:.2f} GiB"),
        ("activation peak", f"{st.activation_peak / GiB:.2f} GiB"),
        ("non-torch memory", f"{st.non_torch / GiB:.2f} GiB"),
        ("Estimated CUDA graph memory", f"{st.cudagraph / GiB:.2f} GiB"),
    ]
    if e.no_kv_cache:  # encoder-only attention: no KV lines (memory/no_kv.py)
        rows += [
            ("KV cache", "none (encoder-only attention)"),
            (f"requests of {e.max_model_len:,} tokens a step", f"{min(e.max_num_seqs, int(e.max_concurrency)):,}"),
        ]
        return Table(("figure", "value"), tuple((Cell(k), Cell(v, "num")) for k, v in rows))
    rows.append(("Available KV cache memory", f"{st.available_kv / GiB:.2f} GiB"))
    rows += [
        ("KV bytes per token", f"{e.kv_bytes_per_token:,}"),
        ("block size / blocks", f"{e.block_size} / {e.num_gpu_blocks:,}"),
        ("GPU KV cache size", f"{e.kv_cache_tokens:,} tokens"),
        (f"Maximum concurrency for {e.max_model_len:,} tokens per request", f"{e.max_concurrency:.2f}x"),
    ]
    return Table(("figure", "value"), tuple((Cell(k), Cell(v, "num")) for k, v in rows))


def messages(e: Explanation) -> tuple[Cell, ...]:
    """vLLM's errors, then warnings."""
    return tuple(Cell(m, "fail") for m in e.errors) + tuple(Cell(m, "warn") for m in e.warnings)


def explain_report(e: Explanation, flags: EngineFlags, model_ref: str, notes: Sequence[str] = ()) -> Report:
    """Budget, capacity up to --max-model-len, the command, vLLM's messages and how the model was resolved."""
    command = shlex.join(build_serve_argv(model_ref, flags))
    cap = capacity_figure(
        "Capacity: concurrent requests held vs tokens per request",
        [capacity_series(e, describe(e), chosen=True)],
        None,
        None,
    )
    sections = [
        Section("Command", "command", commands=(command,), items=messages(e) + tuple(Cell(n) for n in notes)),
        budget_section(e, "budget"),
    ]
    if cap is not None:
        note = "The curve ends at --max-model-len; vLLM's 'Maximum concurrency' is its end point."
        sections.append(Section("Capacity", "capacity", note=note, charts=(capacity_chart(cap, "capacity"),)))
    inputs = (
        ("model", model_ref),
        ("GPU", e.gpu),
        ("GPUs", f"{e.gpus} (TP {e.tp} x PP {e.pp} x DP {e.dp})"),
        ("max_model_len", f"{e.max_model_len:,}"),
        ("max_num_seqs", f"{e.max_num_seqs:,}"),
        ("max_num_batched_tokens", f"{e.max_num_batched_tokens:,}"),
        ("vLLM version", e.vllm_version),
    )
    return Report(
        title=f"{e.model} on {e.gpu}",
        subtitle=describe(e),
        verdict=verdict(e),
        sections=tuple(sections),
        inputs=inputs,
        tool_version=__version__,
        vllm_version=e.vllm_version,
    )
