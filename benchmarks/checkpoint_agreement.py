"""Weights from a checkpoint's tensor list against the architecture formula, over the whole catalog.

For every catalog model, a checkpoint is written from the formula's own tensors the way its format stores them
(tests/checkpoint_headers.py: unfused, per-expert, packed), read back through model/checkpoint_map.py, and the
per-GPU weight bytes of both paths are compared at TP 1, 2, 4, 8, TP 2 x PP 2 and TP 4 with expert parallelism.
Prints the models that disagree by more than 1%, the ones whose tensor list hands back to the formula, the
worst disagreement and the time the mapping took.

python benchmarks/checkpoint_agreement.py
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recommender.catalog import model_files
from recommender.console import run_script
from recommender.errors import PlanError
from recommender.memory.weights import Parallel, weight_bytes_per_gpu
from recommender.model.checkpoint_map import checkpoint_inventory
from recommender.sources.resolve import resolve_model
from tests.checkpoint_headers import formula_checkpoint

PARALLEL = (Parallel(1), Parallel(2), Parallel(4), Parallel(8), Parallel(2, 2), Parallel(4, expert_parallel=True))


def worst_disagreement(model: str) -> tuple[float, str, float] | None:
    """(largest relative difference, fallback reason, mapping seconds); None when the model cannot be read."""
    try:
        spec = resolve_model(model)
    except PlanError:
        return None
    read = replace(spec, checkpoint_tensors=formula_checkpoint(spec))
    start = time.perf_counter()
    inventory = checkpoint_inventory(read)
    took = time.perf_counter() - start
    if not inventory.usable:
        return 0.0, inventory.fallback, took
    worst = 0.0
    for par in PARALLEL:
        if par.pp > spec.num_layers:
            continue
        a, b = (weight_bytes_per_gpu(s, par, dtype_bytes=2, quant=s.quant) for s in (spec, read))
        worst = max(worst, abs(b - a) / a if a else 0.0)
    return worst, "", took


def main() -> int:
    rows = []
    for model in sorted(model_files()):
        result = worst_disagreement(model)
        if result is not None:
            rows.append((model, *result))
    off = [r for r in rows if r[1] > 0.01]
    fallback = [r for r in rows if r[2]]
    print(
        f"{len(rows)} catalog models; tensor path within 1% of the formula for {len(rows) - len(off) - len(fallback)}"
    )
    for model, worst, _, _ in sorted(off, key=lambda r: -r[1]):
        print(f"  off by {worst:6.2%}  {model}")
    for model, _, reason, _ in fallback:
        print(f"  formula used        {model}: {reason}")
    worst_model = max(rows, key=lambda r: r[1])
    slowest = max(rows, key=lambda r: r[3])
    print(f"worst disagreement {worst_model[1]:.4%} ({worst_model[0]})")
    print(f"slowest mapping {slowest[3]:.2f} s ({slowest[0]})")
    return 0


if __name__ == "__main__":
    run_script(main)
