"""What the charts show, as typed values computed from the core's results (no drawing, no I/O).

A figure holds quantities (bytes, tokens, requests) and the hover texts that quote vLLM's own startup lines;
`recommender.report.svg` turns figures into geometry.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from recommender.memory.budget import Explanation, StageBudget
from recommender.memory.engine import VllmVersion
from recommender.units import GiB

SegmentKind = Literal["weights", "activation", "non_torch", "cudagraph", "kv_cache", "headroom"]
SEGMENT_NAMES: dict[SegmentKind, str] = {
    "weights": "weights",
    "activation": "activation peak",
    "non_torch": "non-torch",
    "cudagraph": "CUDA graphs",
    "kv_cache": "KV cache",
    "headroom": "headroom",
}
CAPACITY_SAMPLES = 48  # points per capacity curve (log-spaced); the curve's end point is always exact


@dataclass(frozen=True, slots=True)
class Segment:
    """One part of a GPU's memory, with the line vLLM prints for it (the hover text)."""

    kind: SegmentKind
    size: int  # bytes
    detail: str


@dataclass(frozen=True, slots=True)
class BudgetBar:
    """One GPU's memory from 0 to the device total: one bar per pipeline stage (or per checked server)."""

    label: str
    segments: tuple[Segment, ...]
    device_bytes: int
    budget_bytes: int | None  # ceil(total x --gpu-memory-utilization); None with a fixed --kv-cache-memory-bytes
    budget_label: str
    fits: bool
    sublabel: str = ""

    @property
    def used_bytes(self) -> int:
        """Everything but the headroom."""
        return sum(s.size for s in self.segments if s.kind != "headroom")


@dataclass(frozen=True, slots=True)
class BudgetFigure:
    """Stacked per-GPU memory bars."""

    title: str
    bars: tuple[BudgetBar, ...]


@dataclass(frozen=True, slots=True)
class CapacitySeries:
    """Concurrent requests the KV cache holds against tokens per request, for one configuration."""

    label: str
    points: tuple[tuple[int, float], ...]  # (tokens per request, requests held), ascending tokens
    chosen: bool
    max_num_seqs: int
    end_detail: str  # hover text of the curve's end (its --max-model-len)


@dataclass(frozen=True, slots=True)
class CapacityFigure:
    """Capacity curves with the target marked."""

    title: str
    series: tuple[CapacitySeries, ...]
    target_concurrency: int | None
    target_context: int | None


def _gib(n: int) -> str:
    return f"{n / GiB:.2f} GiB"


def _kv_detail(e: Explanation, st: StageBudget, tightest: bool) -> str:
    lines = [f"Available KV cache memory: {st.available_kv / GiB:.2f} GiB", f"{st.num_blocks:,} blocks on this GPU"]
    if tightest:
        lines.append(
            f"GPU KV cache size: {e.kv_cache_tokens:,} tokens, Maximum concurrency for {e.max_model_len:,} tokens "
            f"per request: {e.max_concurrency:.2f}x"
        )
    elif e.pp > 1:
        lines.append(f"vLLM sizes every stage by the tightest one ({e.num_gpu_blocks:,} blocks)")
    return "\n".join(lines)


def stage_segments(e: Explanation, st: StageBudget) -> tuple[Segment, ...]:
    """Weights, activation peak, non-torch, CUDA graphs, KV cache and headroom of one stage's GPU."""
    version = VllmVersion.parse(e.vllm_version)
    graphs = Segment(
        "cudagraph",
        st.cudagraph,
        f"Estimated CUDA graph memory: {st.cudagraph / GiB:.2f} GiB"
        + ("" if version.cudagraph_memory_before_kv else " (captured after the KV cache is allocated)"),
    )
    parts = [
        Segment("weights", st.weights, f"Model loading took {st.weights / GiB:.2f} GiB memory ({st.layers} layers)"),
        Segment("activation", st.activation_peak, f"activation peak of the profile run: {_gib(st.activation_peak)}"),
        Segment("non_torch", st.non_torch, f"non-torch memory (CUDA context, NCCL buffers): {_gib(st.non_torch)}"),
    ]
    if version.cudagraph_memory_before_kv:
        parts.append(graphs)
    parts.append(Segment("kv_cache", max(0, st.available_kv), _kv_detail(e, st, st is e.stage)))
    if not version.cudagraph_memory_before_kv:
        parts.append(graphs)
    used = sum(p.size for p in parts)
    if used < e.gpu_total_bytes:
        rest = e.gpu_total_bytes - used
        parts.append(
            Segment(
                "headroom",
                rest,
                f"{_gib(rest)} outside the budget (device total {_gib(e.gpu_total_bytes)}): the sampler warm-up "
                "and other processes use it",
            )
        )
    return tuple(p for p in parts if p.size > 0)


def budget_bars(e: Explanation, label: str | None = None, sublabel: str = "") -> tuple[BudgetBar, ...]:
    """One bar per pipeline stage (every TP rank of a stage is alike)."""
    fixed_kv = e.kv_cache_memory_bytes is not None
    budget: int | None = None if fixed_kv else e.requested_bytes
    budget_label = (
        f"--kv-cache-memory-bytes {e.requested_bytes:,} (fixed KV cache)"
        if fixed_kv
        else f"--gpu-memory-utilization {e.utilization} = {_gib(e.requested_bytes)}"
    )
    bars = []
    for st in e.stages:
        name = label or "GPU"
        if e.pp > 1:
            name = f"{name} stage {st.stage}" if label else f"stage {st.stage}"
        bars.append(BudgetBar(name, stage_segments(e, st), e.gpu_total_bytes, budget, budget_label, e.fits, sublabel))
    return tuple(bars)


def tightest_bar(e: Explanation, label: str, sublabel: str = "") -> BudgetBar:
    """The bar of the stage vLLM sizes the cache by (for one-bar-per-server charts)."""
    bars = budget_bars(e, label, sublabel)
    return next((bar for bar, st in zip(bars, e.stages, strict=True) if st is e.stage), bars[0])


def _lengths(lo: int, hi: int) -> list[int]:
    if hi <= lo:
        return [hi]
    ratio = math.log(hi / lo)
    out = {round(lo * math.exp(ratio * i / (CAPACITY_SAMPLES - 1))) for i in range(CAPACITY_SAMPLES)}
    return sorted(out | {hi})


def capacity_series(e: Explanation, label: str, *, replicas: int = 1, chosen: bool = False) -> CapacitySeries | None:
    """Requests held (over all replicas) for request lengths up to the configuration's --max-model-len."""
    if not e.stage.layout.groups or e.max_model_len <= 0:
        return None
    hi = e.max_model_len
    lo = max(16, min(1024, hi // 16))
    points = tuple((n, e.concurrency_for(n) * replicas) for n in _lengths(lo, hi) if e.fits_one_request(n))
    if not points:
        return None
    per = f" x {replicas} replicas" if replicas > 1 else ""
    end = (
        f"--max-model-len {hi:,}: {points[-1][1]:.2f} requests held{per}\n"
        f"GPU KV cache size: {e.kv_cache_tokens:,} tokens, Maximum concurrency for {hi:,} tokens per request: "
        f"{e.max_concurrency:.2f}x"
    )
    return CapacitySeries(label, points, chosen, e.max_num_seqs, end)


def capacity_figure(
    title: str, series: Sequence[CapacitySeries | None], concurrency: int | None, context: int | None
) -> CapacityFigure | None:
    """None when no configuration holds a request."""
    kept = tuple(s for s in series if s is not None)
    return CapacityFigure(title, kept, concurrency, context) if kept else None


KNEE_SHARE = 0.9  # the knee: the lowest concurrency reaching this share of the sweep's best throughput


@dataclass(frozen=True, slots=True)
class CurveSeries:
    """One configuration's values against concurrency (throughput or a latency)."""

    label: str
    points: tuple[tuple[float, float], ...]  # (concurrency, value), ascending concurrency
    chosen: bool
    knee: float | None = None  # the concurrency marked as the knee


@dataclass(frozen=True, slots=True)
class CurveFigure:
    """Curves against concurrency, with the latency targets as horizontal lines."""

    title: str
    y_label: str
    series: tuple[CurveSeries, ...]
    targets: tuple[tuple[float, str], ...] = ()  # (value, label)
    marker: tuple[float, str] | None = None  # a concurrency to mark (the requested load) and its label


def knee(points: Sequence[tuple[float, float]]) -> float | None:
    """The lowest concurrency whose throughput reaches KNEE_SHARE of the best: past it, more requests in flight
    mostly add latency."""
    if not points:
        return None
    best = max(y for _, y in points)
    return next(x for x, y in points if y >= KNEE_SHARE * best) if best > 0 else None
