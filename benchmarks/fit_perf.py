"""Fit the performance model's constants on the published points and write profiles/perf.yaml.

    python benchmarks/fit_perf.py [--max-evaluations N] [--dry-run] [--warm]
    python benchmarks/fit_perf.py --cross-validate source|family [--max-evaluations N]
    python benchmarks/fit_perf.py --only KNOB[,KNOB...] [--max-evaluations N]

Fits only on the points `benchmarks/perf_points.py` marks "fit"; the held-out model x GPU combinations are
predicted with the fitted constants and reported (and by `benchmarks/perf_fidelity.py`), never fitted on.
The loss is a Huber loss of log(predicted / measured) over mean TTFT, mean TPOT and output throughput. Reproducible:
the same data and starting values give the same constants. `--cross-validate` checks that the held-out figures are
not an accident of one split: it leaves each publisher (or GPU family) of the fit points out in turn, refits on the
rest and reports the errors on the points left out. `--only` refits the named knobs alone from profiles/perf.yaml,
every other constant fixed, and prints them with the loss (writes nothing: a rule that changes one part of the model
is refitted where it acts without moving the constants fitted before it).
"""

from __future__ import annotations

import argparse
import datetime
import math
import multiprocessing
import statistics
import sys
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.perf_points import points
from benchmarks.perf_run import Prepared, predicted_metrics, prepare
from recommender.console import run_script
from recommender.perf.fit import FitResult, Knob, compass_search, get_value, huber, log_error, set_value
from recommender.perf.params import PerfParams, gpu_family
from recommender.perf_profile import bundled_params, read_ceiling, sustained_gemm
from recommender.resources import profiles_dir

# Families with published points besides the reference (ampere: the global constants are its own). Their
# multipliers are pulled towards 1 (a prior) so one source cannot drag a whole family far from the datasheet.
FITTED_FAMILIES = ("hopper", "blackwell", "cdna")
FAMILY_PRIOR = 0.02
MIN_FAMILY_POINTS = 8  # a family's own expected error needs at least this many measurements of a metric
KNOBS = (
    Knob("bandwidth_efficiency", 0.3, 0.95),  # no GPU streams its datasheet bandwidth
    Knob("compute_efficiency", 0.1, 0.9),
    Knob("attention_efficiency", 0.05, 0.8),  # FlashAttention reaches at most ~75% of the tensor-core peak
    Knob("triton_attention_efficiency", 0.05, 0.8),  # fitted on gpt-oss (attention sinks) on A100
    Knob("moe_efficiency", 0.1, 1.5),
    Knob("dequant_efficiency", 0.1, 1.5),
    Knob("step_overhead_ms", 0.05, 30.0),
    Knob("layer_overhead_us", 0.5, 200.0),
    Knob("moe_layer_overhead_us", 0.5, 300.0),
    Knob("seq_overhead_us", 0.5, 500.0),
    Knob("request_overhead_ms", 0.01, 50.0),
    Knob("request_latency_ms", 0.5, 200.0),
    Knob("allreduce_latency_us", 3.0, 30.0),  # NVLink custom all-reduce to NCCL small-message latencies
    Knob("link_efficiency", 0.2, 0.9),
    *(
        Knob(f"families.{fam}.{part}", 0.25, 4.0)
        for fam in FITTED_FAMILIES
        for part in ("bandwidth", "compute", "overhead")
    ),
)
METRIC_WEIGHTS = {"ttft": 0.7, "tpot": 1.0, "throughput": 1.0}

_PREPARED: list[Prepared] = []


def _loss_of(index_params: tuple[int, PerfParams]) -> float:
    index, params = index_params
    prep = _PREPARED[index]
    pred = predicted_metrics(prep, params)
    if pred is None:
        return 3.0
    return sum(
        METRIC_WEIGHTS[k] * huber(log_error(pred[k], v)) for k, v in prep.point.measured.items() if k in METRIC_WEIGHTS
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-evaluations", type=int, default=300)
    ap.add_argument("--dry-run", action="store_true", help="print the constants, do not write profiles/perf.yaml")
    ap.add_argument("--warm", action="store_true", help="start from profiles/perf.yaml instead of the code defaults")
    ap.add_argument("--errors-only", action="store_true", help="only recompute expected_error for the current file")
    ap.add_argument(
        "--cross-validate",
        choices=sorted(FOLDS),
        help="leave one source / GPU family of the fit points out at a time: refit on the rest (from the code "
        "defaults), predict the left-out points, print their errors; writes nothing",
    )
    ap.add_argument(
        "--only",
        metavar="KNOBS",
        help="refit these knobs alone (comma-separated, name=start to start elsewhere), from profiles/perf.yaml",
    )
    args = ap.parse_args()
    if args.only:
        return refit_only(args.only.split(","), args.max_evaluations)
    if args.errors_only:
        return write_errors()
    if args.cross_validate:
        return cross_validate(args.cross_validate, args.max_evaluations)
    start = bundled_params() if args.warm else _defaults()
    prepared = _prepared()
    print(f"fitting on {len(prepared)} points marked 'fit'")
    result = fit(prepared, start, args.max_evaluations)
    print(f"loss {result.start_loss:.4f} -> {result.loss:.4f} in {result.evaluations} evaluations")
    doc = document(result.params, [p.point.id for p in prepared])
    doc["expected_error"] = expected_errors(result.params)
    print(yaml.safe_dump({k: doc[k] for k in ("global", "families", "expected_error")}, sort_keys=False))
    if not args.dry_run:
        write(doc)
    return 0


def _defaults() -> PerfParams:
    """The fit's starting point: the code defaults, on the measured sustained GEMM and streaming rates (not
    fitted)."""
    return replace(PerfParams(), sustained=sustained_gemm(), read_ceiling=read_ceiling())


def _prepared() -> list[Prepared]:
    """The fit points the model can answer, prepared once."""
    out = []
    for p in points():
        if p.use == "fit":
            prep = prepare(p)
            if prep is not None:
                out.append(prep)
    return out


def refit_only(knobs: list[str], max_evaluations: int) -> int:
    """Refit the knobs alone from the bundled constants (`name=value` starts it there instead); print them and the
    loss (writes nothing)."""
    by_name = {k.name: k for k in KNOBS}
    start = bundled_params()
    names = []
    for item in knobs:
        name, _, value = item.partition("=")
        if name not in by_name:
            raise SystemExit(f"unknown knob {name!r}; knobs: {', '.join(by_name)}")
        names.append(name)
        if value:
            start = set_value(start, name, float(value))
    prepared = _prepared()
    print(f"refitting {', '.join(names)} alone on {len(prepared)} points marked 'fit'")
    result = fit(prepared, start, max_evaluations, knobs=tuple(by_name[n] for n in names))
    print(f"loss {result.start_loss:.5f} -> {result.loss:.5f} in {result.evaluations} evaluations")
    for n in names:
        print(f"  {n}: {get_value(result.params, n):.4g}")
    return 0


def fit(
    prepared: list[Prepared],
    start: PerfParams,
    max_evaluations: int,
    *,
    verbose: bool = True,
    knobs: tuple[Knob, ...] = KNOBS,
) -> FitResult:
    """Compass search of `knobs` on `prepared` (two worker processes forked with the points)."""
    _PREPARED[:] = prepared
    t0 = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(2) as pool:

        def objective(params: PerfParams) -> float:
            losses = pool.map(_loss_of, [(i, params) for i in range(len(_PREPARED))])
            if any(params.bandwidth_efficiency * eff.bandwidth > 1.0 for eff in params.families.values()):
                return math.inf  # no GPU streams more than its datasheet bandwidth
            prior = sum(
                math.log(getattr(eff, part)) ** 2
                for eff in params.families.values()
                for part in ("bandwidth", "compute", "overhead")
            )
            return sum(losses) / len(losses) + FAMILY_PRIOR * prior

        def progress(evals: int, loss: float, _params: PerfParams) -> None:
            if verbose:
                print(f"  {evals:4d} evaluations, loss {loss:.4f} ({time.perf_counter() - t0:.0f} s)", flush=True)

        return compass_search(objective, start, knobs, max_evaluations=max_evaluations, progress=progress)


def _source_owner(prep: Prepared) -> str:
    """Who published a point: the GitHub owner, or the web host."""
    url = urllib.parse.urlparse(prep.point.source)
    parts = url.path.strip("/").split("/")
    return parts[0] if url.hostname == "github.com" and parts else url.hostname or "unknown"


FOLDS: dict[str, Callable[[Prepared], str]] = {
    "source": _source_owner,
    "family": lambda prep: gpu_family(prep.gpu),
}


def cross_validate(by: str, max_evaluations: int) -> int:
    """Leave-one-fold-out errors over the fit points: every point predicted by constants fitted without its fold."""
    prepared = _prepared()
    key = FOLDS[by]
    pooled: dict[str, list[float]] = {m: [] for m in METRIC_WEIGHTS}
    print(f"leave one {by} out: {len(prepared)} fit points, at most {max_evaluations} evaluations per fold")
    for fold in sorted({key(p) for p in prepared}):
        train = [p for p in prepared if key(p) != fold]
        test = [p for p in prepared if key(p) == fold]
        params = fit(train, _defaults(), max_evaluations, verbose=False).params
        errs: dict[str, list[float]] = {m: [] for m in METRIC_WEIGHTS}
        for prep in test:
            pred = predicted_metrics(prep, params)
            for m, real in prep.point.measured.items():
                if pred is not None and m in errs:
                    errs[m].append(abs(pred[m] / real - 1))
        cells = "  ".join(f"{m} {statistics.median(v):6.1%} (n={len(v)})" for m, v in errs.items() if v)
        print(f"  {fold:14} fitted on {len(train):3}, predicts {len(test):3}: {cells}", flush=True)
        for m, v in errs.items():
            pooled[m] += v
    print("pooled: " + "  ".join(f"{m} median {statistics.median(v):.1%} (n={len(v)})" for m, v in pooled.items() if v))
    return 0


def write(doc: dict[str, object]) -> None:
    path = profiles_dir() / "perf.yaml"
    with path.open("w", encoding="utf-8") as fh:
        fh.write(HEADER)
        yaml.safe_dump(doc, fh, sort_keys=False, width=120)
    print(f"wrote {path}")


def expected_errors(params: PerfParams) -> dict[str, dict[str, float]]:
    """Median |relative error| per metric: on the held-out points ("all"), and per GPU family over every answered
    point of that family (fitted and held out) where it has at least MIN_FAMILY_POINTS of a metric."""
    per: dict[str, dict[str, list[float]]] = {}
    for p in points():
        if p.use == "excluded":
            continue
        prep = prepare(p)
        pred = predicted_metrics(prep, params) if prep is not None else None
        if prep is None or pred is None:
            continue
        groups = [gpu_family(prep.gpu)] + (["all"] if p.use == "holdout" else [])
        for group in groups:
            for m, real in p.measured.items():
                per.setdefault(group, {}).setdefault(m, []).append(abs(pred[m] / real - 1))
    out: dict[str, dict[str, float]] = {}
    for group, metrics in sorted(per.items()):
        keep = {
            m: round(statistics.median(v), 3)
            for m, v in metrics.items()
            if group == "all" or len(v) >= MIN_FAMILY_POINTS
        }
        if len(keep) == 3:
            out[group] = keep
    return out


def write_errors() -> int:
    """Recompute the expected_error section of profiles/perf.yaml for its current constants, leaving the rest of
    the file as it is (its header notes say how the constants were re-expressed since the fit)."""
    path = profiles_dir() / "perf.yaml"
    text = path.read_text(encoding="utf-8")
    errors = expected_errors(bundled_params())
    print(yaml.safe_dump(errors, sort_keys=False))
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("expected_error:"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:1] not in (" ", "-", "#", "\n")), len(lines))
    section = yaml.safe_dump({"expected_error": errors}, sort_keys=False, width=120)
    path.write_text("".join(lines[:start]) + section + "".join(lines[end:]), encoding="utf-8")
    print(f"wrote {path}")
    return 0


HEADER = """\
# Constants of the performance model (recommender/perf/), fitted by `python benchmarks/fit_perf.py` on the
# published vLLM serving points in benchmarks/data/perf/ (ids below; sources in that file). Do not edit by hand:
# re-run the script. Meanings: recommender/perf/params.py. Held-out errors: `python benchmarks/perf_fidelity.py`.
# Not fitted (published figures, each with its source in recommender/perf/params.py): pcie_allreduce_latency_us,
# fp8_moe_efficiency, pcie_link_efficiency, eager_layer_overhead_us, trtllm_moe_layer_overhead_us,
# trtllm_moe_bandwidth_efficiency, triton_moe_layer_overhead_us, marlin_moe_layer_overhead_us.
# Compute efficiencies are fractions of each card's sustained GEMM rate (profiles/gemm_measured.yaml), not of
# the datasheet peak. Bandwidth is capped, not fitted, by each card's measured streaming rate where the card or its
# class has one (profiles/bandwidth_measured.yaml).
"""


def document(params: PerfParams, ids: list[str]) -> dict[str, object]:
    """The perf.yaml document for fitted `params`."""
    g = {k.name: round(float(getattr(params, k.name)), 4) for k in KNOBS if "." not in k.name}
    g["pcie_allreduce_latency_us"] = round(params.pcie_allreduce_latency_us, 4)
    g["fp8_moe_efficiency"] = round(params.fp8_moe_efficiency, 4)  # from published runs, not fitted (params.py)
    g["pcie_link_efficiency"] = round(params.pcie_link_efficiency, 4)  # likewise
    g["eager_layer_overhead_us"] = round(params.eager_layer_overhead_us, 4)  # likewise
    g["trtllm_moe_layer_overhead_us"] = round(params.trtllm_moe_layer_overhead_us, 4)  # a kernel benchmark's
    g["trtllm_moe_bandwidth_efficiency"] = round(params.trtllm_moe_bandwidth_efficiency, 4)  # likewise
    g["triton_moe_layer_overhead_us"] = round(params.triton_moe_layer_overhead_us, 4)  # likewise
    g["marlin_moe_layer_overhead_us"] = round(params.marlin_moe_layer_overhead_us, 4)  # likewise
    fams = {
        k: {"bandwidth": round(v.bandwidth, 4), "compute": round(v.compute, 4), "overhead": round(v.overhead, 4)}
        for k, v in params.families.items()
    }
    return {
        "fitted": datetime.date.today().isoformat(),
        "method": "compass search, Huber loss of log(predicted/measured) over mean TTFT, mean TPOT, output throughput",
        "global": g,
        "families": fams,
        "fitted_on": sorted(ids),
        "held_out": sorted(p.id for p in points() if p.use == "holdout"),
    }


if __name__ == "__main__":
    run_script(main)
