"""A prediction beside the figures a vLLM startup log printed (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from recommender.memory.explanation import Explanation
from recommender.startup_log import LoggedStartup
from recommender.units import GiB


@dataclass(frozen=True, slots=True)
class LoggedRow:
    """One figure: as the log printed it, as predicted, and the relative error (None when the log's is 0)."""

    name: str
    unit: str  # "GiB", "tokens", "blocks", "x"
    logged: float
    predicted: float

    @property
    def error(self) -> float | None:
        return (self.predicted - self.logged) / self.logged if self.logged else None


@dataclass(frozen=True, slots=True)
class LogComparison:
    rows: tuple[LoggedRow, ...]
    logged_verdict: str  # "started", "failed", "unknown"
    predicted_verdict: str  # "starts", "at risk", "fails"
    notes: tuple[str, ...]  # why a figure is not compared

    @property
    def verdicts_agree(self) -> bool | None:
        """None when the log does not say, or when the prediction is "at risk" (a margin inside the model's stated
        uncertainty is neither a start nor a failure, as benchmarks/fidelity.py counts it)."""
        if self.logged_verdict == "unknown" or self.predicted_verdict == "at risk":
            return None
        return (self.logged_verdict == "started") == (self.predicted_verdict == "starts")


def logged_verdict(logged: LoggedStartup) -> str:
    if logged.error is not None and not logged.started:
        return "failed"
    started = logged.started or logged.figures.kv_cache_tokens is not None or logged.figures.num_gpu_blocks
    return "started" if started else "unknown"


def compare_with_log(e: Explanation, logged: LoggedStartup) -> LogComparison:
    """The figures both the log and the prediction have. The concurrency line is compared only when it is for
    the same tokens per request as predicted; V0's block count only when the log printed no token count."""
    f = logged.figures
    st = e.stage
    rows: list[LoggedRow] = []
    notes: list[str] = []
    pairs: list[tuple[str, str, float | None, float]] = [
        ("model weights", "GiB", f.weights_gib, st.weights / GiB),
        ("available KV cache memory", "GiB", f.available_kv_gib, st.available_kv / GiB),
        ("GPU KV cache size", "tokens", f.kv_cache_tokens, e.kv_cache_tokens),
        ("GPU blocks", "blocks", f.num_gpu_blocks, e.num_gpu_blocks),
        ("CUDA graph memory", "GiB", f.cudagraph_gib, st.cudagraph / GiB),
    ]
    for name, unit, was, now in pairs:
        if was is not None:
            rows.append(LoggedRow(name, unit, float(was), float(now)))
    if f.max_concurrency is not None:
        if f.concurrency_tokens == e.max_model_len:
            rows.append(LoggedRow("maximum concurrency", "x", f.max_concurrency, e.max_concurrency))
        else:
            notes.append(
                f"the log's concurrency is for {f.concurrency_tokens:,} tokens per request, the prediction's for "
                f"{e.max_model_len:,}: not compared"
            )
    predicted = "fails" if not e.fits else "at risk" if e.at_risk else "starts"
    return LogComparison(tuple(rows), logged_verdict(logged), predicted, tuple(notes))
