"""Predicted vs measured for every published serving point, with a summary.

    python benchmarks/perf_fidelity.py [--markdown] [--quiet] [--field | --points FILE]

Uses the bundled constants (profiles/perf.yaml; any local calibration is ignored). For each point of
benchmarks/data/perf/: mean TTFT, mean TPOT and output throughput, predicted and measured, and the relative error.
The summary gives the median and 90th-percentile absolute error per metric for the points the constants were
fitted on and, separately, for the held-out model x GPU combinations; points not used say why. `--field` runs on
benchmarks/data/perf/field_points.jsonl alone: published points of model x GPU combinations that neither file above
holds and the fit never reads (the honest estimate of the error on combinations nobody fitted on). `--points FILE`
does the same on another file of never-fitted points (ids F, J, K, M, N, Q, S, T, V, W, X, Y or Z...),
e.g. benchmarks/data/perf/heldout_points_13.jsonl.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.perf_points import ADDED, DATA, FIELD, METRICS, Point, points
from benchmarks.perf_run import predicted_metrics, prepare_or_reason
from recommender.console import run_script
from recommender.perf_profile import load_params


def _p90(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.9 * (len(xs) - 1)))]


def evaluate(
    paths: tuple[Path, ...] = (DATA, ADDED),
) -> tuple[list[tuple[Point, dict[str, float] | None, str]], float]:
    """Every point of the files with its prediction (None when not answered) and why; and the mean seconds per
    point."""
    params = load_params(local=False)
    rows: list[tuple[Point, dict[str, float] | None, str]] = []
    spent, answered = 0.0, 0
    for p in points(paths):
        if p.use == "excluded":
            rows.append((p, None, p.reason))
            continue
        prep, why = prepare_or_reason(p)
        if prep is None:
            rows.append((p, None, why))
            continue
        t = time.perf_counter()
        pred = predicted_metrics(prep, params)
        spent += time.perf_counter() - t
        answered += 1
        rows.append((p, pred, prep.note))
    return rows, spent / max(answered, 1)


def summary(rows: list[tuple[Point, dict[str, float] | None, str]], use: str) -> dict[str, object]:
    """Counts and errors of one split ("fit", "holdout" or "field")."""
    chosen = [(p, pred) for p, pred, _ in rows if p.use == use]
    answered = [(p, pred) for p, pred in chosen if pred is not None]
    out: dict[str, object] = {"points": len(chosen), "answered": len(answered)}
    for m in METRICS:
        errs = [pred[m] / p.measured[m] - 1 for p, pred in answered if pred is not None and m in p.measured]
        if errs:
            absolute = [abs(e) for e in errs]
            out[m] = (len(errs), statistics.median(absolute), _p90(absolute), statistics.median(errs))
    return out


def print_points(rows: list[tuple[Point, dict[str, float] | None, str]]) -> None:
    """One line per point: predicted / measured and the relative error of each metric, or why it was not used."""
    print(f"{'id':5} {'use':8} {'model':40} {'gpu':10} {'load':34} " + " ".join(f"{m:>24}" for m in METRICS))
    for p, pred, why in rows:
        load = p.load.describe()[:34]
        if pred is None:
            print(f"{p.id:5} {p.use:8} {p.model[:40]:40} {p.gpu:10} not used: {why}")
            continue
        cells = []
        for m in METRICS:
            if m in p.measured:
                cells.append(f"{pred[m]:9.1f}/{p.measured[m]:9.1f} {pred[m] / p.measured[m] - 1:+4.0%}")
            else:
                cells.append(f"{pred[m]:9.1f}/{'-':>9} {'':>5}")
        print(f"{p.id:5} {p.use:8} {p.model[:40]:40} {p.gpu:10} {load:34} " + " ".join(cells))


def print_markdown(rows: list[tuple[Point, dict[str, float] | None, str]], splits: tuple[str, ...]) -> None:
    """The README table: median / p90 error of TPOT, TTFT and throughput per split."""
    print("\n| split | points answered | mean TPOT median / p90 error | mean TTFT | output throughput |")
    print("|---|---|---|---|---|")
    labels = {"fit": "fitted on", "holdout": "held out (model x GPU not fitted)", "field": "field (never fitted)"}
    for use in splits:
        label = labels[use]
        s = summary(rows, use)
        cells = []
        for m in ("tpot", "ttft", "throughput"):
            if m in s:
                n, med, p90, _ = s[m]  # type: ignore[misc]
                cells.append(f"{med:.0%} / {p90:.0%} (n={n})")
            else:
                cells.append("-")
        print(f"| {label} | {s['answered']} of {s['points']} | " + " | ".join(cells) + " |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true", help="print the README table")
    ap.add_argument("--quiet", action="store_true", help="summary only")
    ap.add_argument("--field", action="store_true", help="the field points alone (never fitted on)")
    ap.add_argument(
        "--points",
        type=Path,
        metavar="FILE",
        help="another file of never-fitted points (ids F/J/K/M/N/Q/S/T/V/W/X/Y/Z...)",
    )
    args = ap.parse_args()
    blind = (args.points,) if args.points else ((FIELD,) if args.field else None)
    rows, per_point = evaluate(blind or (DATA, ADDED))
    splits = ("field",) if blind else ("fit", "holdout")
    if not args.quiet:
        print_points(rows)
    print(f"\nmean prediction time {per_point * 1000:.0f} ms per point")
    for use in splits:
        s = summary(rows, use)
        print(f"\n{use}: {s['answered']} of {s['points']} points answered")
        for m in METRICS:
            if m in s:
                n, med, p90, bias = s[m]  # type: ignore[misc]
                print(f"  {m:10} n={n:3}  median |error| {med:6.1%}  p90 {p90:6.1%}  median signed {bias:+6.1%}")
    if args.markdown:
        print_markdown(rows, splits)
    return 0


if __name__ == "__main__":
    run_script(main)
