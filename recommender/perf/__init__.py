"""The performance model: step times from a roofline, inside a replay of vLLM V1's scheduler (pure: no I/O).

`predict(model, gpu, flags, load)` answers what `vllm bench serve` would measure; `sweep` gives a curve over
concurrency. The constants it uses (`PerfParams`) are fitted on published benchmark points
(`benchmarks/fit_perf.py`) and stored in `profiles/perf.yaml`.
"""
