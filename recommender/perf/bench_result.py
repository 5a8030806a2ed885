"""Read a `vllm bench serve --save-result` result (a parsed JSON object; untrusted input) into a load and the
figures it measured (pure).

The file records the model (`model_id`), the traffic (`num_prompts`, `request_rate` (a number or "inf"),
`burstiness`, `max_concurrency`) and totals (`completed`, `total_input_tokens`, `total_output_tokens`) from which
the mean lengths follow; the dataset is not recorded (the caller says it: random unless told otherwise).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recommender.errors import InputError
from recommender.perf.load import MAX_LENGTH, Load

LATENCIES = ("ttft", "tpot", "itl", "e2el")
STATS = ("mean", "median", "p90", "p99")
THROUGHPUTS = ("request_throughput", "output_throughput", "total_token_throughput")


@dataclass(frozen=True, slots=True)
class BenchResult:
    """One benchmark run: what was sent and what was measured (the keys vLLM writes, as floats)."""

    origin: str
    model_id: str
    load: Load
    measured: Mapping[str, float]


def _number(doc: Mapping[str, Any], key: str, origin: str, *, required: bool = True) -> float | None:
    value = doc.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{origin}: {key!r} must be a number, got {value!r}")
    return float(value)


def _rate(doc: Mapping[str, Any], origin: str) -> float | None:
    rate = doc.get("request_rate", "inf")
    if rate in ("inf", None) or (isinstance(rate, float) and math.isinf(rate)):
        return None
    if isinstance(rate, bool) or not isinstance(rate, int | float) or rate <= 0:
        raise InputError(f"{origin}: 'request_rate' must be a positive number or \"inf\", got {rate!r}")
    return float(rate)


def _random_lengths(doc: Mapping[str, Any], dataset: str, mean_output: float) -> dict[str, Any]:
    """Exact random-dataset lengths when the file records the requested output length (`output_len`, as benchmark
    scripts that wrap `vllm bench serve` save it): outputs then reach it or stop at EOS (load.py), so a closed loop
    runs in the waves the real one did. Otherwise the load's default spread."""
    value = doc.get("output_len") if dataset == "random" else None  # not a vLLM key: read when it is a clean count
    text = str(value).strip() if isinstance(value, int | str) and not isinstance(value, bool) else ""
    if not text.isdigit() or not 1 <= int(text) <= MAX_LENGTH:
        return {}
    requested = float(text)
    return {"jitter": 0.0, "max_output": requested if requested > mean_output + 0.5 else None}


def read_bench_result(
    doc: Any, origin: str, *, dataset: str = "random", rescaled_arrivals: bool = False
) -> BenchResult:
    """A BenchResult from one saved result object; one-line InputErrors for anything malformed.
    `rescaled_arrivals`: the client was vLLM 0.10.0 or later, whose gamma delays span num_prompts / rate (#21108)."""
    if not isinstance(doc, Mapping):
        raise InputError(f"{origin}: expected a JSON object as `vllm bench serve --save-result` writes")
    model = doc.get("model_id")
    if not isinstance(model, str) or not model:
        raise InputError(f"{origin}: no 'model_id' (is this a `vllm bench serve --save-result` file?)")
    completed = _number(doc, "completed", origin) or 0.0
    if completed < 1:
        raise InputError(f"{origin}: no completed requests to compare with")
    tin = _number(doc, "total_input_tokens", origin) or 0.0
    tout = _number(doc, "total_output_tokens", origin) or 0.0
    prompts = _number(doc, "num_prompts", origin, required=False) or completed
    cap = _number(doc, "max_concurrency", origin, required=False)
    burst = _number(doc, "burstiness", origin, required=False) or 1.0
    mean_output = max(1.0, tout / completed)
    load = Load(
        input_len=max(1.0, tin / completed),
        output_len=mean_output,
        num_prompts=int(prompts),
        max_concurrency=int(cap) if cap else None,
        request_rate=_rate(doc, origin),
        burstiness=burst,
        dataset=dataset,
        rescaled_arrivals=rescaled_arrivals,
        **_random_lengths(doc, dataset, mean_output),
    )
    load.validate()
    measured: dict[str, float] = {}
    for metric in LATENCIES:
        for stat in STATS:
            key = f"{stat}_{metric}_ms"
            value = _number(doc, key, origin, required=False)
            if value is not None:
                measured[key] = value
    for key in THROUGHPUTS:
        value = _number(doc, key, origin, required=False)
        if value is not None:
            measured[key] = value
    if "output_throughput" not in measured:
        raise InputError(f"{origin}: no 'output_throughput' to compare with")
    return BenchResult(origin, model, load, measured)
