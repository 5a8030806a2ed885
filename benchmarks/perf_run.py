"""Run the performance model on one published point (shared by fit_perf.py and perf_fidelity.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from benchmarks.perf_points import Point, gpu
from recommender.errors import PlanError
from recommender.hardware import Gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags
from recommender.model.spec import ModelSpec
from recommender.perf.costs import engine_costs
from recommender.perf.facts import EngineFacts
from recommender.perf.metrics import PerfResult
from recommender.perf.params import PerfParams
from recommender.perf.predict import async_default, check_context, facts_for, flashinfer_by_default, predict_engine
from recommender.sources.resolve import resolve_model


@dataclass(frozen=True)
class Prepared:
    """A point with everything that does not depend on the fitted constants computed once."""

    point: Point
    gpu: Gpu
    facts: EngineFacts
    async_scheduling: bool
    note: str = ""


def prepare(p: Point) -> Prepared | None:
    """Model, GPU, startup prediction and engine facts of a point; None when the model cannot answer it."""
    return prepare_or_reason(p)[0]


def prepare_or_reason(p: Point) -> tuple[Prepared | None, str]:
    """`prepare`, and when the point cannot be answered, why (vLLM's own startup error as the memory model predicts
    it, or the prompts not fitting the context)."""
    if p.catalog_model is None:
        return None, f"{p.model} is not in the catalog"
    try:
        model = resolve_model(p.catalog_model)
        g = gpu(p.gpu)
        refusal = ""
        for flags, note in _readings(model, g, p):
            e = explain(model, g, flags, p.version)
            if not e.fits:
                refusal = refusal or f"the memory model predicts vLLM does not start: {_short(e.errors[0])}"
                continue
            try:
                check_context(p.load, e.max_model_len)  # an auto-fitted context may be shorter than the prompts
            except PlanError as exc:
                refusal = _short(str(exc))
                continue
            facts = facts_for(model, g, flags, e, chunked_prefill=p.chunked_prefill)
            overlap = async_default(p.version, e.pp) if p.async_scheduling is None else p.async_scheduling
            return Prepared(p, g, facts, overlap, note), ""
    except PlanError as exc:
        return None, _short(str(exc))
    return None, refusal


AUTO_FIT = "memory model predicts a startup failure the source did not see; max_model_len auto-fitted"
FLASHINFER = "started only with FlashInfer's sampler (the release's CUDA default where flashinfer is installed)"


def _readings(model: ModelSpec, g: Gpu, p: Point) -> list[tuple[EngineFlags, str]]:
    """The flags as read, then (the source ran them, so vLLM started) the readings under which the memory model
    starts them too: the longest context that fits when the source left --max-model-len to vLLM (its requests are far
    shorter), FlashInfer's sampler where the environment, not the release, chose the sampler; in that order."""
    out = [(p.flags, "")]
    if p.flags.max_model_len is None:
        out.append((replace(p.flags, max_model_len=-1), AUTO_FIT))
    if flashinfer_by_default(model, g, p.flags, p.version):
        out += [(replace(f, flashinfer_sampler=True), "; ".join(filter(None, (n, FLASHINFER)))) for f, n in out]
    return out


def _short(message: str) -> str:
    """The first sentence of an error, for one line of the report."""
    head, dot, _ = message.partition(". ")
    return head + (dot.strip() if dot else "")


def predict_point(prep: Prepared, params: PerfParams) -> PerfResult:
    """The replayed benchmark for a prepared point."""
    costs = engine_costs(prep.facts, prep.gpu, params, async_scheduling=prep.async_scheduling)
    return predict_engine(costs, prep.point.load)


def predicted_metrics(prep: Prepared, params: PerfParams) -> dict[str, float] | None:
    """Mean TTFT (ms), mean TPOT (ms) and output throughput (tok/s) as the point measured them."""
    try:
        r = predict_point(prep, params)
    except PlanError:
        return None
    return {"ttft": r.ttft.mean, "tpot": r.tpot.mean, "throughput": r.output_throughput}
