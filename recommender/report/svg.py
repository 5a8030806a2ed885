"""SVG geometry: shapes with coordinates computed here, so templates only place them (no I/O, no Jinja).

Every shape carries its hover text (`title`, an SVG <title> child) and a `role` the browser tests look for.
Text widths are estimated (0.6 em per character), which is enough to lay out labels and legends.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from recommender.report.figures import (
    KNEE_SHARE,
    SEGMENT_NAMES,
    BudgetBar,
    BudgetFigure,
    CapacityFigure,
    CurveFigure,
    SegmentKind,
)
from recommender.units import GiB

INK = "#222222"
MUTED = "#666666"
GRID = "#e3e3e3"
ALERT = "#c0392b"
SEGMENT_COLORS: dict[SegmentKind, str] = {
    "weights": "#4e79a7",
    "activation": "#f28e2b",
    "non_torch": "#9c9590",
    "cudagraph": "#76b7b2",
    "kv_cache": "#59a14f",
    "headroom": "#ececec",
}
# No red among the series: the targets are red.
SERIES_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#9c755f", "#edc948", "#79706e")
WIDTH = 760
OVERFLOW_CUT = 1.3  # budget bars are drawn up to this multiple of the largest device


def _r(v: float) -> float:
    return round(v, 1)


@dataclass(frozen=True, slots=True)
class Rect:
    kind: ClassVar[str] = "rect"
    x: float
    y: float
    w: float
    h: float
    fill: str
    title: str = ""
    role: str = ""
    stroke: str = "none"


@dataclass(frozen=True, slots=True)
class Line:
    kind: ClassVar[str] = "line"
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    width: float = 1.0
    dash: str = ""
    title: str = ""
    role: str = ""


@dataclass(frozen=True, slots=True)
class Polyline:
    kind: ClassVar[str] = "polyline"
    points: str  # "x,y x,y ..."
    stroke: str
    width: float = 1.5
    dash: str = ""
    title: str = ""
    role: str = ""


@dataclass(frozen=True, slots=True)
class Circle:
    kind: ClassVar[str] = "circle"
    cx: float
    cy: float
    r: float
    fill: str
    title: str = ""
    role: str = ""
    stroke: str = "none"


@dataclass(frozen=True, slots=True)
class Text:
    kind: ClassVar[str] = "text"
    x: float
    y: float
    text: str
    size: float = 12
    anchor: Literal["start", "middle", "end"] = "start"
    fill: str = INK
    weight: str = "normal"
    rotate: float = 0.0


Shape = Rect | Line | Polyline | Circle | Text
Scale = Callable[[float], float]  # data value -> pixel coordinate


@dataclass(frozen=True, slots=True)
class Chart:
    """One SVG image: a viewBox of width x height and its shapes in drawing order."""

    id: str
    title: str
    width: int
    height: int
    shapes: tuple[Shape, ...]


def text_width(text: str, size: float) -> float:
    """Estimated rendered width of `text` at `size` px."""
    return len(text) * size * 0.6


def nice_step(span: float, ticks: int = 6) -> float:
    """1, 2 or 5 x 10^k, so that about `ticks` steps cover `span`."""
    raw = span / max(1, ticks)
    mag = 10.0 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)


def nice_bound(v: float, *, up: bool) -> float:
    """The nearest 1, 2 or 5 x 10^k at or above (`up`) or at or below `v` (> 0)."""
    mag = 10.0 ** math.floor(math.log10(v))
    steps = [m * mag for m in (1, 2, 5, 10)]
    return next(s for s in steps if s >= v) if up else max(s for s in steps if s <= v)


def _legend(items: Sequence[tuple[str, str, str]], x0: float, y: float, width: float) -> tuple[list[Shape], float]:
    """Swatches (color, label, kind 'box' or 'line') in rows; returns the shapes and the y below them."""
    shapes: list[Shape] = []
    x = x0
    for color, label, style in items:
        span = 18 + text_width(label, 12) + 18
        if x + span > x0 + width and x > x0:
            x, y = x0, y + 20
        if style == "box":
            shapes.append(Rect(x, y - 10, 12, 12, color, role="legend"))
        elif style == "ring":
            shapes.append(Circle(x + 7, y - 4, 6, "none", role="legend", stroke=color))
        else:
            shapes.append(Line(x, y - 4, x + 14, y - 4, color, width=3, role="legend"))
        shapes.append(Text(x + 18, y, label, 12))
        x += span
    return shapes, y + 20


def budget_chart(fig: BudgetFigure, chart_id: str) -> Chart:
    """Horizontal stacked bars from 0 to the device total; budget and device lines; GiB axis; legend."""
    left, right, top, bar_h, gap = 190.0, 24.0, 58.0, 26.0, 18.0
    plot_w = WIDTH - left - right
    # A bar far past the device (weights that cannot fit) is cut at 1.3 x the device so the others stay readable.
    limit = int(max(b.device_bytes for b in fig.bars) * OVERFLOW_CUT)
    top_x = min(limit, max(b.used_bytes for b in fig.bars)) / GiB
    top_x = max(top_x, max(b.device_bytes for b in fig.bars) / GiB)
    step = nice_step(top_x)
    axis_max = math.ceil(top_x / step) * step

    def sx(size: float) -> float:
        return left + plot_w * (size / GiB) / axis_max

    shapes: list[Shape] = [Text(12, 24, _clip(fig.title, 82), 15, weight="bold")]
    bottom = top + len(fig.bars) * (bar_h + gap) - gap
    for i in range(int(axis_max / step) + 1):
        x = _r(left + plot_w * i * step / axis_max)
        shapes.append(Line(x, top - 6, x, bottom + 6, GRID))
        shapes.append(Text(x, bottom + 22, f"{i * step:g}", 11, anchor="middle", fill=MUTED))
    shapes.append(Text(left + plot_w, bottom + 38, "GiB per GPU", 11, anchor="end", fill=MUTED))
    same_device = len({b.device_bytes for b in fig.bars}) == 1
    for row, bar in enumerate(fig.bars):
        y = top + row * (bar_h + gap)
        shapes += _bar_shapes(bar, y, bar_h, sx, with_device=not same_device, limit=int(axis_max * GiB))
        dx = _r(sx(bar.device_bytes))
        shapes.append(
            Line(dx, y - 5, dx, y + bar_h + 5, INK, 2, title=f"device total {bar.device_bytes / GiB:.2f} GiB")
        )
        if bar.budget_bytes is not None:
            bx = _r(sx(bar.budget_bytes))
            shapes.append(Line(bx, y - 3, bx, y + bar_h + 3, INK, 1.5, "5,3", bar.budget_label, role="budget"))
    if same_device:
        device = fig.bars[0].device_bytes
        shapes.append(Text(_r(sx(device)), top - 12, f"device {device / GiB:.2f} GiB", 11, anchor="end"))
    budget = fig.bars[0].budget_bytes
    kinds = [k for k in SEGMENT_NAMES if any(s.kind == k for b in fig.bars for s in b.segments)]
    items = [(SEGMENT_COLORS[k], SEGMENT_NAMES[k], "box") for k in kinds]
    if budget is not None:
        items.append((INK, fig.bars[0].budget_label if len(fig.bars) == 1 else "--gpu-memory-utilization", "dash"))
    legend, end = _legend(items, 12, bottom + 60, WIDTH - 24)
    return Chart(chart_id, fig.title, WIDTH, int(end), tuple(shapes + legend))


def _bar_shapes(bar: BudgetBar, y: float, h: float, sx: Scale, *, with_device: bool, limit: int) -> list[Shape]:
    shapes: list[Shape] = []
    label_fill = INK if bar.fits else ALERT
    below = [bar.sublabel] if bar.sublabel else []
    below += [f"device {bar.device_bytes / GiB:.2f} GiB"] if with_device else []
    below += [] if bar.fits or bar.sublabel else ["vLLM fails at startup"]
    label = _clip_left(bar.label, 24) if bar.fits else "✗ " + _clip_left(bar.label, 22)
    shapes.append(Text(182, y + h / 2 + (0 if below else 4), label, 12, anchor="end", fill=label_fill))
    if below:
        shapes.append(Text(182, y + h / 2 + 13, _clip_left(" · ".join(below), 29), 10, anchor="end", fill=label_fill))
    offset = 0
    for seg in bar.segments:
        x0, x1 = sx(min(offset, limit)), sx(min(offset + seg.size, limit))
        offset += seg.size
        if x1 <= x0:
            continue
        name = SEGMENT_NAMES[seg.kind]
        title = f"{bar.label} {bar.sublabel}".strip() + f" · {name}: {seg.size / GiB:.2f} GiB\n{seg.detail}"
        stroke = "#bbbbbb" if seg.kind == "headroom" else "none"
        shapes.append(Rect(_r(x0), _r(y), _r(max(0.5, x1 - x0)), h, SEGMENT_COLORS[seg.kind], title, "segment", stroke))
        value = f"{seg.size / GiB:.1f}"
        if x1 - x0 > text_width(value, 11) + 6 and seg.kind != "headroom":
            shapes.append(Text(_r((x0 + x1) / 2), _r(y + h / 2 + 4), value, 11, anchor="middle", fill="#ffffff"))
    if offset > limit:
        end = sx(limit)
        shapes.append(Rect(_r(end - 6), _r(y - 2), 4, h + 4, "#ffffff", role="cut"))
        shapes.append(Text(_r(end - 10), _r(y - 4), f"{bar.used_bytes / GiB:.1f} GiB →", 10, anchor="end", fill=ALERT))
    return shapes


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _clip_left(text: str, n: int) -> str:
    """Keep the end (a file name, a resource name): '…/deploy/qwen.yaml'."""
    return text if len(text) <= n else "…" + text[len(text) - n + 1 :]


def _tokens(n: float) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{int(n) >> 20}M"
    if n >= 1024 and n % 1024 == 0:
        return f"{int(n) >> 10}k"
    return f"{n:,.0f}"


def _log_ticks(lo: float, hi: float) -> list[float]:
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    mults = (1,) if len(decades) > 4 else (1, 2, 5)
    values = (round(m * 10.0**d, 9) for d in decades for m in mults)
    return [v for v in values if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)]


def capacity_chart(fig: CapacityFigure, chart_id: str) -> Chart:
    """Log-log curves of requests held vs tokens per request; targets as dashed lines; legend below."""
    left, right, top, plot_h = 70.0, 28.0, 48.0, 270.0
    plot_w = WIDTH - left - right
    xs = [p[0] for s in fig.series for p in s.points] + ([fig.target_context] if fig.target_context else [])
    ys = [p[1] for s in fig.series for p in s.points if p[1] > 0]
    ys += [fig.target_concurrency] if fig.target_concurrency else []
    x_lo, x_hi = 2 ** math.floor(math.log2(min(xs))), 2 ** math.ceil(math.log2(max(xs)))
    x_hi = max(x_hi, x_lo * 2)
    y_lo = max(0.1, nice_bound(min(ys), up=False))
    y_hi = max(nice_bound(max(ys) * 1.05, up=True), y_lo * 10)

    def sx(v: float) -> float:
        return _r(left + plot_w * math.log(v / x_lo) / math.log(x_hi / x_lo))

    def sy(v: float) -> float:
        return _r(top + plot_h - plot_h * math.log(max(v, y_lo) / y_lo) / math.log(y_hi / y_lo))

    shapes: list[Shape] = [Text(12, 24, _clip(fig.title, 82), 15, weight="bold")]
    shapes += _capacity_axes(x_lo, x_hi, y_lo, y_hi, sx, sy, left, top, plot_w, plot_h)
    chosen = next((s for s in fig.series if s.chosen), None)
    if chosen is not None and y_lo <= chosen.max_num_seqs <= y_hi:
        y = sy(chosen.max_num_seqs)
        shapes.append(Line(left, y, left + plot_w, y, MUTED, 1, "2,3", f"--max-num-seqs {chosen.max_num_seqs}"))
        shapes.append(Text(left + 6, y - 4, f"--max-num-seqs {chosen.max_num_seqs}", 10, fill=MUTED))
    shapes += _targets(fig, sx, sy, left, top, plot_w, plot_h)
    items: list[tuple[str, str, str]] = []
    ordered = sorted(fig.series, key=lambda s: not s.chosen)
    for i, s in enumerate(ordered):
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        points = " ".join(f"{sx(x)},{sy(y)}" for x, y in s.points)
        shapes.append(Polyline(points, color, 3.0 if s.chosen else 1.6, "" if s.chosen else "6,3", s.label, "series"))
        end_x, end_y = s.points[-1]
        shapes.append(Circle(sx(end_x), sy(end_y), 4.5 if s.chosen else 3.5, color, s.end_detail, "series-end"))
        items.append((color, ("plan: " if s.chosen else "") + s.label, "line"))
    legend, end = _legend(items, 12, top + plot_h + 62, WIDTH - 24)
    return Chart(chart_id, fig.title, WIDTH, int(end), tuple(shapes + legend))


def _capacity_axes(
    x_lo: float, x_hi: float, y_lo: float, y_hi: float, sx: Scale, sy: Scale, *box: float
) -> list[Shape]:
    left, top, plot_w, plot_h = box
    shapes: list[Shape] = [Rect(left, top, plot_w, plot_h, "#ffffff", stroke="#cccccc", role="plot")]
    powers = [2.0**k for k in range(round(math.log2(x_lo)), round(math.log2(x_hi)) + 1)]
    stride = max(1, math.ceil(len(powers) / 10))
    for v in powers[::stride]:
        shapes.append(Line(sx(v), top, sx(v), top + plot_h, GRID))
        shapes.append(Text(sx(v), top + plot_h + 16, _tokens(v), 11, anchor="middle", fill=MUTED))
    for v in _log_ticks(y_lo, y_hi):
        shapes.append(Line(left, sy(v), left + plot_w, sy(v), GRID))
        shapes.append(Text(left - 6, sy(v) + 4, f"{v:g}", 11, anchor="end", fill=MUTED))
    shapes.append(
        Text(left + plot_w / 2, top + plot_h + 36, "tokens per request (prompt + output)", 12, "middle", MUTED)
    )
    shapes.append(Text(18, top + plot_h / 2, "concurrent requests held", 12, "middle", MUTED, rotate=-90))
    return shapes


def _targets(fig: CapacityFigure, sx: Scale, sy: Scale, *box: float) -> list[Shape]:
    left, top, plot_w, plot_h = box
    shapes: list[Shape] = []
    n, s = fig.target_concurrency, fig.target_context
    if n is not None:
        shapes.append(
            Line(left, sy(n), left + plot_w, sy(n), ALERT, 1.5, "6,4", f"target: {n} concurrent requests", "target")
        )
        shapes.append(Text(left + plot_w - 4, sy(n) - 5, f"target {n} requests", 11, "end", ALERT))
    if s is not None:
        shapes.append(
            Line(sx(s), top, sx(s), top + plot_h, ALERT, 1.5, "6,4", f"target: {s:,} tokens per request", "target")
        )
        shapes.append(Text(sx(s) + 4, top + 14, f"target {s:,} tokens", 11, fill=ALERT))
    if n is not None and s is not None:
        shapes.append(Circle(sx(s), sy(n), 5, ALERT, f"target: {n} requests of {s:,} tokens", "target"))
    return shapes


def _value(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.3g}"


def curve_chart(fig: CurveFigure, chart_id: str) -> Chart:
    """Values against concurrency (log2 x, linear y from 0); targets as dashed red lines; knees ringed."""
    left, right, top, plot_h = 70.0, 28.0, 48.0, 230.0
    plot_w = WIDTH - left - right
    xs = [x for s in fig.series for x, _ in s.points] + ([fig.marker[0]] if fig.marker else [])
    ys = [y for s in fig.series for _, y in s.points] + [t for t, _ in fig.targets]
    x_lo, x_hi = 2 ** math.floor(math.log2(min(xs))), 2 ** math.ceil(math.log2(max(xs)))
    x_hi = max(x_hi, x_lo * 2)
    step = nice_step(max(ys) * 1.05 if max(ys) > 0 else 1.0, 5)
    y_hi = math.ceil(max(ys) * 1.05 / step) * step if max(ys) > 0 else step

    def sx(v: float) -> float:
        return _r(left + plot_w * math.log(v / x_lo) / math.log(x_hi / x_lo))

    def sy(v: float) -> float:
        return _r(top + plot_h - plot_h * v / y_hi)

    shapes: list[Shape] = [Text(12, 24, _clip(fig.title, 82), 15, weight="bold")]
    shapes.append(Rect(left, top, plot_w, plot_h, "#ffffff", stroke="#cccccc", role="plot"))
    powers = [2.0**k for k in range(round(math.log2(x_lo)), round(math.log2(x_hi)) + 1)]
    for v in powers[:: max(1, math.ceil(len(powers) / 12))]:
        shapes.append(Line(sx(v), top, sx(v), top + plot_h, GRID))
        shapes.append(Text(sx(v), top + plot_h + 16, f"{v:g}", 11, anchor="middle", fill=MUTED))
    for i in range(round(y_hi / step) + 1):
        shapes.append(Line(left, sy(i * step), left + plot_w, sy(i * step), GRID))
        shapes.append(Text(left - 6, sy(i * step) + 4, _value(i * step), 11, anchor="end", fill=MUTED))
    shapes.append(Text(left + plot_w / 2, top + plot_h + 36, "concurrent requests", 12, "middle", MUTED))
    shapes.append(Text(18, top + plot_h / 2, fig.y_label, 12, "middle", MUTED, rotate=-90))
    if fig.marker is not None:
        at, label = fig.marker
        shapes.append(Line(sx(at), top, sx(at), top + plot_h, MUTED, 1.5, "3,3", label, "marker"))
        shapes.append(Text(sx(at) + 4, top + 14, label, 11, fill=MUTED))
    for value, label in fig.targets:
        shapes.append(Line(left, sy(value), left + plot_w, sy(value), ALERT, 1.5, "6,4", label, "target"))
        shapes.append(Text(left + plot_w - 4, sy(value) - 5, label, 11, "end", ALERT))
    items: list[tuple[str, str, str]] = []
    for i, s in enumerate(sorted(fig.series, key=lambda s: not s.chosen)):
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        points = " ".join(f"{sx(x)},{sy(y)}" for x, y in s.points)
        shapes.append(Polyline(points, color, 3.0 if s.chosen else 1.6, "" if s.chosen else "6,3", s.label, "series"))
        for x, y in s.points:
            shapes.append(Circle(sx(x), sy(y), 3.0, color, f"{s.label}\n{x:g} requests: {_value(y)} {fig.y_label}"))
            if x == s.knee:
                title = f"knee of {s.label}: {x:g} requests ({_value(y)} {fig.y_label})"
                shapes.append(Circle(sx(x), sy(y), 7.0, "none", title, "knee", stroke=color))
        items.append((color, s.label, "line"))
    if any(s.knee is not None for s in fig.series):
        items.append((INK, f"knee: {KNEE_SHARE:.0%} of the best throughput", "ring"))
    legend, end = _legend(items, 12, top + plot_h + 62, WIDTH - 24)
    return Chart(chart_id, fig.title, WIDTH, int(end), tuple(shapes + legend))
