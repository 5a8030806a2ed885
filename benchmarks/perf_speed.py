"""Speed of the performance model: one prediction, a 10-point sweep and `recommend` by latency (targets: <= 50 ms,
<= 1 s and <= 1 s).

    python benchmarks/perf_speed.py

Times the core (startup prediction included, CLI start-up excluded) on typical loads, best of 3 runs each, in
CPU time of this process (what a dedicated core would take; wall time on a shared machine is longer).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from recommender.catalog import load_gpus
from recommender.console import run_script
from recommender.gpu_names import resolve_gpu
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.perf.load import Load
from recommender.perf.predict import predict, sweep
from recommender.perf_profile import load_params
from recommender.planner.service import plan_service
from recommender.planner.service_types import ServiceTarget
from recommender.planner.types import Hardware
from recommender.sources.resolve import resolve_model

CASES = (
    ("Qwen/Qwen3-8B", "h100", EngineFlags(), Load(2000, 256, max_concurrency=64)),
    ("Qwen/Qwen3-14B", "h100", EngineFlags(), Load(217, 202, dataset="sharegpt")),
    ("meta-llama/Llama-3.1-70B-Instruct", "h100", EngineFlags(tensor_parallel_size=4), Load(1000, 500)),
    ("openai/gpt-oss-120b", "a100-80gb", EngineFlags(max_model_len=32768), Load(1000, 1000, max_concurrency=4)),
    ("Qwen/Qwen3-30B-A3B-FP8", "l40s", EngineFlags(max_model_len=16384), Load(4000, 200, request_rate=5.0)),
)
SWEEP = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
PLANS = (
    ("Qwen/Qwen3-32B", "h100", ServiceTarget(2000, 500, concurrency=60, ttft_ms=2000, tpot_ms=50)),
    ("meta-llama/Llama-3.1-70B-Instruct", "h100", ServiceTarget(2000, 500, concurrency=32, ttft_ms=3000, tpot_ms=60)),
    ("Qwen/Qwen3-30B-A3B", "h100", ServiceTarget(1000, 200, request_rate=10, ttft_ms=500, tpot_ms=30)),
)


def best_of(fn: Callable[[], object], runs: int = 3) -> float:
    """Fastest CPU time of `runs` calls, in seconds."""
    times = []
    for _ in range(runs):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main() -> int:
    params = load_params(local=False)
    gpus = load_gpus()
    v = VllmVersion(0, 33)
    print(f"{'model':36} {'gpu':10} {'load':60} {'one point':>10}")
    for model_id, gpu_key, flags, load in CASES:
        model, gpu = resolve_model(model_id), resolve_gpu(gpu_key, gpus)
        t = best_of(lambda m=model, g=gpu, f=flags, ld=load: predict(m, g, f, ld, params=params, version=v))
        print(f"{model_id:36} {gpu_key:10} {load.describe()[:60]:60} {t * 1000:8.0f} ms")
    model, gpu = resolve_model("Qwen/Qwen3-8B"), resolve_gpu("h100", gpus)
    load = Load(2000, 256)
    t = best_of(lambda: sweep(model, gpu, EngineFlags(), load, SWEEP, params=params, version=v))
    print(f"\n10-point sweep (concurrency {SWEEP[0]}..{SWEEP[-1]}, 1,000 prompts each): {t * 1000:.0f} ms")
    print()
    for model_id, gpu_key, target in PLANS:
        m, g = resolve_model(model_id), resolve_gpu(gpu_key, gpus)
        t = best_of(
            lambda m=m, g=g, tg=target: plan_service(m, [], Hardware(g), tg, version=v, params=params, fixed_gpus=False)
        )
        print(f"recommend {model_id} on {gpu_key}, {target.describe()}: {t * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    run_script(main)
