"""The field points' errors grouped by what may bias them: a diagnosis aid for the performance model.

    python benchmarks/perf_field_groups.py [FILE]

Runs the bundled constants on benchmarks/data/perf/field_points.jsonl (never fitted on) like
`perf_fidelity.py --field`, then groups the signed relative errors (predicted / measured - 1) of mean TTFT, mean
TPOT and output throughput by GPU, GPU family, model kind (dense, MoE, MLA), load type (closed loop, burst of all
prompts at once, Poisson rate), input-length regime, tensor/pipeline parallelism and source. Each cell is the median
signed error and the number of points; benchmarks/data/perf/FIELD-FINDINGS.md reads these tables. FILE: another file
of never-fitted points instead (e.g. benchmarks/data/perf/heldout_points_2.jsonl).
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.perf_fidelity import evaluate
from benchmarks.perf_points import FIELD, METRICS, Point, gpu
from recommender.console import run_script
from recommender.sources.resolve import resolve_model

FAMILIES = {"8.0": "Ampere", "8.6": "Ampere", "8.9": "Ada", "9.0": "Hopper", "10.0": "Blackwell", "12.0": "Blackwell"}


def _family(p: Point) -> str:
    g = gpu(p.gpu)
    return "CDNA" if g.vendor.lower() == "amd" else FAMILIES.get(g.compute_capability, g.compute_capability or "?")


def _kind(p: Point) -> str:
    spec = resolve_model(p.catalog_model or p.model)
    return "MLA MoE" if spec.mla is not None else ("MoE" if spec.is_moe else "dense")


def _load(p: Point) -> str:
    if p.load.max_concurrency is not None:
        return "closed loop"
    return "burst" if p.load.request_rate is None else "Poisson"


def _length(p: Point) -> str:
    regime = "in < 512" if p.load.input_len < 512 else ("in < 8k" if p.load.input_len < 8192 else "in >= 8k")
    return regime + (", out <= 8" if p.load.output_len <= 8 else "")


def _parallel(p: Point) -> str:
    return f"TP{p.flags.tensor_parallel_size or 1} PP{p.flags.pipeline_parallel_size or 1}"


def _source(p: Point) -> str:
    return p.source.split("/")[2] if "github.com" not in p.source else p.source.split("/")[3]


GROUPS: dict[str, Callable[[Point], str]] = {
    "gpu": lambda p: p.gpu,
    "family": _family,
    "kind": _kind,
    "load": _load,
    "length": _length,
    "parallel": _parallel,
    "source": _source,
}


def main() -> int:
    rows, _ = evaluate((Path(sys.argv[1]) if len(sys.argv) > 1 else FIELD,))
    answered = [(p, pred) for p, pred, _ in rows if pred is not None]
    for name, key in GROUPS.items():
        cells: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for p, pred in answered:
            for m in METRICS:
                if m in p.measured:
                    cells[key(p)][m].append(pred[m] / p.measured[m] - 1)
        print(f"\nby {name}: median signed error (points)")
        for group in sorted(cells):
            text = "  ".join(
                f"{m} {statistics.median(cells[group][m]):+6.0%} ({len(cells[group][m]):2})" if cells[group][m] else ""
                for m in METRICS
            )
            print(f"  {group:22} {text}")
    return 0


if __name__ == "__main__":
    run_script(main)
