"""Fidelity benchmark: run the memory model against every calibration record it can resolve.

    python benchmarks/fidelity.py [path/to/vllm_startup_logs.jsonl]

Prints, per record, predicted vs logged weights, available KV memory, KV tokens and the start/fail verdict,
then median / max relative errors. Records whose model is not in the catalog are listed as skipped.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

from recommender.catalog import load_models
from recommender.errors import PlanError
from recommender.hardware import Gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model
from recommender.units import GiB

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "calibration" / "vllm_startup_logs.jsonl"


def _version(text: str | None) -> VllmVersion | None:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not m:
        return None
    try:
        return VllmVersion.parse(m.group(0))
    except PlanError:
        return None


def run(path: Path) -> int:
    models = load_models()
    rows, skipped = [], []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        model_id = (r["model"] or "").split(" ")[0].lower()
        version = _version(r["vllm_version"])
        if model_id not in models or not r.get("gpu_total_gib") or version is None:
            skipped.append(r["id"])
            continue
        gpu = Gpu(key="cal", name=r["gpu"], vendor="nvidia", total_bytes=int(r["gpu_total_gib"] * GiB),
                  interconnect="NVLink" if re.search(r"H100|H200|A100", r["gpu"]) else "PCIe",
                  compute_capability="9.0", fp8=True)
        quant = r.get("quantization") or "none"
        flags = EngineFlags(
            tensor_parallel_size=r["tp"] or 1, pipeline_parallel_size=r["pp"] or 1,
            quantization="fp8" if quant == "fp8" else None,
            dtype=r["dtype"] if r.get("dtype") in ("bfloat16", "float16", "float32") else "auto",
            kv_cache_dtype=r["kv_cache_dtype"] if r["kv_cache_dtype"] in ("auto", "fp8") else "auto",
            gpu_memory_utilization=r["gpu_memory_utilization"], max_model_len=r["max_model_len"],
            max_num_seqs=r["max_num_seqs"], max_num_batched_tokens=r["max_num_batched_tokens"],
            enforce_eager=bool(r["enforce_eager"]),
        )
        try:
            e = explain(resolve_model(model_id), gpu, flags, version)
        except PlanError as exc:
            skipped.append(f"{r['id']} ({exc})")
            continue
        st = e.stage
        assert st is not None
        ok_logged = str(r["status"]).startswith("ok")
        rows.append((r["id"], model_id, r["weights_gib"], st.weights / GiB, r["kv_available_gib"],
                     st.available_kv / GiB, r["kv_cache_tokens"], e.kv_cache_tokens, ok_logged, e.fits))
    print(f"{'id':5} {'model':52} {'W log':>7} {'W pred':>7} {'KV log':>7} {'KV pred':>7} {'tok log':>9} "
          f"{'tok pred':>9} verdict")
    errs: dict[str, list[float]] = {"weights": [], "kv": [], "tokens": []}
    agree = 0
    for rid, mid, wl, wp, kl, kp, tl, tp_, okl, okp in rows:
        for key, logged, pred in (("weights", wl, wp), ("kv", kl, kp), ("tokens", tl, tp_)):
            if logged and logged > 0:
                errs[key].append(abs(pred - logged) / logged)
        agree += okl == okp
        print(f"{rid:5} {mid[:52]:52} {wl or '-':>7} {wp:7.2f} {kl or '-':>7} {kp:7.2f} {tl or '-':>9} {tp_:9} "
              f"{'ok' if okl else 'FAIL'}/{'ok' if okp else 'FAIL'}")
    print(f"\nrecords compared: {len(rows)}; skipped (model not in catalog, no GPU total or version): {len(skipped)}")
    for key, values in errs.items():
        if values:
            print(f"{key:8} median error {statistics.median(values):6.2%}   max {max(values):6.2%}   (n={len(values)})")
    if rows:
        print(f"verdict agreement: {agree}/{len(rows)} = {agree / len(rows):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT))
