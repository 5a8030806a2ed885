"""Fidelity benchmark: run the memory model against every calibration record it can resolve.

    python benchmarks/fidelity.py [path/to/vllm_startup_logs.jsonl]

Prints, per record, predicted vs logged weights, available KV memory, KV tokens and the start/fail verdict,
then median / max relative errors. Records whose model the catalog does not resolve (id, alias, renamed repository) are counted as skipped.
`tests/test_calibration.py` asserts the accuracy targets over the same predictions.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from recommender.catalog import find_model, load_gpus
from recommender.errors import PlanError
from recommender.hardware import Gpu, resolve_gpu
from recommender.memory.budget import Explanation, explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model
from recommender.units import GiB

DATA = Path(__file__).resolve().parent / "data" / "calibration"
DEFAULT = (DATA / "vllm_startup_logs.jsonl", DATA / "vllm_startup_logs_added.jsonl")


@dataclass(frozen=True)
class Compared:
    """One calibration record next to the model's prediction for the same model, GPU, version and flags."""

    record: dict[str, Any]
    model: str
    explanation: Explanation

    @property
    def logged_ok(self) -> bool:
        return str(self.record["status"]).startswith("ok")

    @property
    def quantized(self) -> bool:
        return (self.record.get("quantization") or "none") != "none" or "quantized" in self.model

    @property
    def weights_gib(self) -> float:
        return self.explanation.stage.weights / GiB

    @property
    def kv_gib(self) -> float:
        return self.explanation.stage.available_kv / GiB


def _version(text: str | None) -> VllmVersion | None:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not m:
        return None
    try:
        return VllmVersion.parse(m.group(0))
    except PlanError:
        return None


def _other_flag(r: dict[str, Any], name: str) -> float | None:
    m = re.search(rf"'{name}': ([\d.]+)", r.get("other_flags") or "")
    return float(m.group(1)) if m else None


def load_records(*paths: Path) -> list[dict[str, Any]]:
    """The calibration records, one JSON object per line, from each file in turn."""
    return [json.loads(line) for path in paths for line in path.read_text().splitlines() if line.strip()]


def _gpu(r: dict[str, Any]) -> Gpu:
    """The record's GPU: the catalog's card (compute capability, interconnect) with the total the log printed."""
    total = int(r["gpu_total_gib"] * GiB)
    try:
        card = resolve_gpu(re.sub(r"\s*\(.*\)", "", r["gpu"]), load_gpus())
    except PlanError:
        card = None
    if card is not None:
        return replace(card, total_bytes=total)
    return Gpu(
        key="calibration",
        name=r["gpu"],
        vendor="nvidia",
        total_bytes=total,
        interconnect="NVLink" if re.search(r"H100|H200|A100", r["gpu"]) else "PCIe",
        compute_capability="9.0",
        fp8=True,
    )


def compare(r: dict[str, Any]) -> Compared | None:
    """Predict one record, or None when its model, GPU total or version is unknown."""
    model_id = (r["model"] or "").split(" ")[0].lower()
    version = _version(r["vllm_version"])
    if find_model(model_id) is None or not r.get("gpu_total_gib") or version is None:
        return None
    gpu = _gpu(r)
    quant = r.get("quantization") or "none"
    flags = EngineFlags(
        tensor_parallel_size=r["tp"] or 1,
        pipeline_parallel_size=r["pp"] or 1,
        quantization="fp8" if quant == "fp8" else None,
        dtype=r["dtype"] if r.get("dtype") in ("bfloat16", "float16", "float32") else "auto",
        kv_cache_dtype=r["kv_cache_dtype"] if r["kv_cache_dtype"] in ("auto", "fp8") else "auto",
        gpu_memory_utilization=r["gpu_memory_utilization"],
        max_model_len=r["max_model_len"],
        max_num_seqs=r["max_num_seqs"],
        max_num_batched_tokens=r["max_num_batched_tokens"],
        enforce_eager=bool(r["enforce_eager"]),
        cpu_offload_gb=_other_flag(r, "cpu_offload_gb") or 0.0,
    )
    try:
        e = explain(resolve_model(model_id), gpu, flags, version)
    except PlanError:
        return None
    return Compared(r, model_id, e)


def rel(pred: float, logged: float | None) -> float | None:
    """Relative error, None when the log has no (positive) figure."""
    return abs(pred - logged) / logged if logged and logged > 0 else None


def run(*paths: Path) -> int:
    records = load_records(*paths)
    rows = [c for c in (compare(r) for r in records) if c is not None]
    print(
        f"{'id':5} {'model':52} {'W log':>7} {'W pred':>7} {'KV log':>7} {'KV pred':>7} {'tok log':>9} "
        f"{'tok pred':>9} verdict"
    )
    errs: dict[str, list[float]] = {"weights": [], "kv": [], "tokens": []}
    for c in rows:
        r, e = c.record, c.explanation
        for key, pred, logged in (
            ("weights", c.weights_gib, r["weights_gib"]),
            ("kv", c.kv_gib, r["kv_available_gib"]),
            ("tokens", float(e.kv_cache_tokens), r["kv_cache_tokens"]),
        ):
            err = rel(pred, logged)
            if err is not None:
                errs[key].append(err)
        print(
            f"{r['id']:5} {c.model[:52]:52} {r['weights_gib'] or '-':>7} {c.weights_gib:7.2f} "
            f"{r['kv_available_gib'] or '-':>7} {c.kv_gib:7.2f} {r['kv_cache_tokens'] or '-':>9} "
            f"{e.kv_cache_tokens:9} {'ok' if c.logged_ok else 'FAIL'}/{'ok' if e.fits else 'FAIL'}"
        )
    agree = sum(c.logged_ok == c.explanation.fits for c in rows)
    print(
        f"\nrecords compared: {len(rows)} of {len(records)} (others: model not in the catalog, or no GPU total or "
        "version in the log)"
    )
    for key, values in errs.items():
        if values:
            print(f"{key:8} median error {statistics.median(values):6.2%}   max {max(values):6.2%}   (n={len(values)})")
    if rows:
        print(f"verdict agreement: {agree}/{len(rows)} = {agree / len(rows):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(run(*(Path(a) for a in sys.argv[1:])) if len(sys.argv) > 1 else run(*DEFAULT))
