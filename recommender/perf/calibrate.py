"""Fit one GPU's efficiency multipliers from the user's own benchmark results (pure).

Three knobs with a physical meaning (achieved bandwidth, achieved compute, CPU/launch overhead), multipliers on
the bundled constants, fitted by the same compass search as the bundled fit over mean TTFT, mean TPOT and output
throughput of every result given.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from recommender.hardware import Gpu
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.model.spec import ModelSpec
from recommender.perf.bench_result import BenchResult
from recommender.perf.costs import engine_costs
from recommender.perf.facts import EngineFacts
from recommender.perf.fit import Knob, compass_search, huber, log_error
from recommender.perf.params import Efficiency, PerfParams
from recommender.perf.predict import async_default, facts_for, predict_engine, startup

_MEASURED = {"ttft": "mean_ttft_ms", "tpot": "mean_tpot_ms", "throughput": "output_throughput"}


MULTIPLIERS = ("bandwidth", "compute", "overhead")
MULTIPLIER_RANGE = (0.2, 5.0)  # the search's bounds on each multiplier of the bundled constants


@dataclass(frozen=True, slots=True)
class Calibration:
    """The fitted multipliers and the median relative error before and after."""

    gpu: str
    efficiency: Efficiency
    error_before: float
    error_after: float
    runs: int

    def at_bounds(self) -> tuple[str, ...]:
        """The multipliers the fit left at an end of MULTIPLIER_RANGE: the runs do not pin them (too few runs of one
        kind, or flags given here that the server did not run with)."""
        low, high = MULTIPLIER_RANGE
        values = {part: getattr(self.efficiency, part) for part in MULTIPLIERS}
        return tuple(p for p, v in values.items() if v <= low * 1.001 or v >= high * 0.999)

    def summary(self) -> dict[str, object]:
        """A document for --format json/yaml."""
        e = self.efficiency
        return {
            "gpu": self.gpu,
            "efficiency": {"bandwidth": e.bandwidth, "compute": e.compute, "overhead": e.overhead},
            "median_abs_error_before": round(self.error_before, 4),
            "median_abs_error_after": round(self.error_after, 4),
            "runs": self.runs,
        }


@dataclass(frozen=True, slots=True)
class _Case:
    facts: EngineFacts
    result: BenchResult
    overlap: bool


def _predicted(case: _Case, gpu: Gpu, params: PerfParams) -> dict[str, float]:
    r = predict_engine(engine_costs(case.facts, gpu, params, async_scheduling=case.overlap), case.result.load)
    return {"ttft": r.ttft.mean, "tpot": r.tpot.mean, "throughput": r.output_throughput}


def _errors(cases: Sequence[_Case], gpu: Gpu, params: PerfParams) -> list[float]:
    out = []
    for case in cases:
        pred = _predicted(case, gpu, params)
        for name, key in _MEASURED.items():
            real = case.result.measured.get(key)
            if real:
                out.append(log_error(pred[name], real))
    return out


def calibrate_gpu(
    cases: Sequence[tuple[ModelSpec, BenchResult]],
    gpu: Gpu,
    flags: EngineFlags,
    params: PerfParams,
    *,
    version: VllmVersion,
    async_scheduling: bool | None = None,
) -> Calibration:
    """Multipliers for `gpu` that best reproduce `cases` (each a model and a run served with `flags`)."""
    prepared: list[_Case] = []
    for model, result in cases:
        e = startup(model, gpu, flags, version)
        overlap = async_default(version, e.pp) if async_scheduling is None else async_scheduling
        prepared.append(_Case(facts_for(model, gpu, flags, e), result, overlap))
    key = gpu.key

    def objective(p: PerfParams) -> float:
        errs = _errors(prepared, gpu, p)
        return sum(huber(x) for x in errs) / max(1, len(errs))

    knobs = [Knob(f"gpus.{key}.{part}", *MULTIPLIER_RANGE) for part in MULTIPLIERS]
    start = params.with_local(key, Efficiency())
    fitted = compass_search(objective, start, knobs, step=0.3, min_step=0.04, max_evaluations=60)
    before = statistics.median(abs(x) for x in _errors(prepared, gpu, start))
    after = statistics.median(abs(x) for x in _errors(prepared, gpu, fitted.params))
    return Calibration(
        gpu=key,
        efficiency=fitted.params.gpus[key],
        error_before=_relative(before),
        error_after=_relative(after),
        runs=len(prepared),
    )


def _relative(log_err: float) -> float:
    """A median |log error| as a relative error (exp(x) - 1)."""
    return math.exp(log_err) - 1
