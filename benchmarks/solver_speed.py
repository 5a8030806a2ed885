"""Speed of a full `recommend` search, in-process, per model and GPU type (the target: well under a second).

python benchmarks/solver_speed.py [repeats]
"""

from __future__ import annotations

import statistics
import sys
import time

from recommender.catalog import load_gpus, load_model
from recommender.console import run_script
from recommender.errors import InfeasibleError
from recommender.gpu_names import resolve_gpu
from recommender.memory.engine import VllmVersion
from recommender.planner import Hardware, Target, plan
from recommender.sources.resolve import resolve_model

CASES = [
    ("Qwen/Qwen2.5-7B-Instruct", "rtx4090", 1, 1, Target(60, 8192)),
    ("Qwen/Qwen2.5-7B-Instruct", "rtx4090", 1, 1, Target(concurrency=64)),
    ("meta-llama/Llama-3.1-70B-Instruct", "h100", 8, 1, Target(32, 32768)),
    ("deepseek-ai/DeepSeek-R1", "h200", 8, 2, Target(16, 32768)),
    ("Qwen/Qwen3-30B-A3B", "l40s", 4, 1, Target(concurrency=100)),
]


def main(repeats: int) -> int:
    version = VllmVersion.parse("0.33.0")
    for model_id, gpu, per_node, nodes, target in CASES:
        model = resolve_model(model_id)
        entry = load_model(model_id)
        variants = [resolve_model(v) for v in entry.variants] if entry else []
        hw = Hardware(resolve_gpu(gpu, load_gpus()), gpus_per_node=per_node, nodes=nodes)
        times = []
        searched = 0
        for _ in range(repeats):
            start = time.perf_counter()
            try:
                searched = plan(model, variants, hw, target, version=version).searched
            except InfeasibleError:
                searched = -1
            times.append(time.perf_counter() - start)
        print(
            f"{model_id:36} {per_node * nodes:>2} x {gpu:8} {target.describe():40} "
            f"median {statistics.median(times) * 1000:7.1f} ms  max {max(times) * 1000:7.1f} ms  "
            f"({searched} candidates)"
        )
    return 0


if __name__ == "__main__":
    run_script(lambda: main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
