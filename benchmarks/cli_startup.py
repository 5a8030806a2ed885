"""Cold start of the CLI: time `vllm-plan --help` and `vllm-plan gpus` in fresh processes.

    python benchmarks/cli_startup.py [runs]

Prints the median and worst wall time per command, and which heavy modules `--help` imported
(huggingface_hub, kubernetes, jinja2 must stay out of start-up).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from recommender.console import run_script

HEAVY = ("huggingface_hub", "kubernetes", "jinja2", "httpx2")


def main(runs: int) -> int:
    for args in (["--help"], ["gpus"], ["explain", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090"]):
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "recommender", *args], capture_output=True, check=True)
            times.append(time.perf_counter() - start)
        print(
            f"vllm-plan {' '.join(args):48} median {statistics.median(times) * 1000:7.1f} ms   "
            f"max {max(times) * 1000:7.1f} ms   (n={runs})"
        )
    code = f"import sys, recommender.cli; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    print(f"heavy modules imported at start-up: {loaded or 'none'}")
    return 0


if __name__ == "__main__":
    run_script(lambda: main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
