"""Cross-check the KV-cache arithmetic against vLLM 0.33's own code (shared/tools/vllm-oracle).

    python benchmarks/oracle_crosscheck.py            # needs the oracle venv (shared/tools/vllm-oracle/oracle_setup.sh)

With --kv-cache-memory-bytes fixed, vLLM's blocks, tokens and concurrency are pure arithmetic over the
model's layer specs, so ours must equal the oracle's exactly. Prints one row per case and a summary.
Development aid only: each oracle call imports vLLM (~20-50 s), so tests use the hand-checked cases instead.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from recommender.catalog import load_gpus
from recommender.console import run_script
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind
from recommender.sources.resolve import resolve_model

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
ORACLE = SHARED / "tools" / "vllm-oracle" / "vllm_oracle.py"
VENV = Path(os.environ.get("VLLM_ORACLE_VENV", Path.home() / ".cache" / "vllm-plan" / "oracle-venv"))
GIB = 1 << 30

# (config folder, kv bytes, max_model_len, tp, pp, kv_cache_dtype)
CASES = [
    ("meta-llama--Llama-3.1-8B-Instruct", 6 * GIB, 8192, 1, 1, "auto"),
    ("meta-llama--Llama-3.1-8B-Instruct", 6 * GIB, 10000, 2, 1, "fp8"),
    ("Qwen--Qwen2.5-7B-Instruct", 3 * GIB, 32768, 4, 1, "auto"),  # 4 KV heads: one per rank
    ("Qwen--Qwen3-8B", 6442450944, 8192, 1, 1, "auto"),
    ("Qwen--Qwen3-30B-A3B", 10 * GIB, 40960, 1, 2, "auto"),
    ("openai--gpt-oss-120b", 20 * GIB, 131072, 2, 1, "auto"),
    ("deepseek-ai--DeepSeek-R1", 20 * GIB, 65536, 8, 1, "auto"),
    ("moonshotai--Kimi-K2-Instruct", 20 * GIB, 32768, 8, 1, "fp8"),
    ("microsoft--phi-4", 4 * GIB, 16384, 1, 1, "auto"),
    ("Qwen--Qwen3-VL-8B-Instruct", 8 * GIB, 32768, 1, 1, "auto"),
    ("mistralai--Mixtral-8x7B-v0.1", 8 * GIB, 32768, 2, 1, "auto"),
    ("meta-llama--Meta-Llama-3.1-405B", 30 * GIB, 131072, 8, 2, "fp8"),
    ("meta-llama--Llama-3.1-8B-Instruct", 1 * GIB, 131072, 1, 1, "auto"),  # does not fit: error text + estimate
]


def oracle(folder: str, kv: int, length: int, tp: int, pp: int, kv_dtype: str) -> dict[str, object]:
    cmd = [
        str(VENV / "bin" / "python"),
        str(ORACLE),
        "--config",
        str(SHARED / "reference" / "hf-configs" / folder),
        "--kv-cache-memory-bytes",
        str(kv),
        "--max-model-len",
        str(length),
        "--tp",
        str(tp),
        "--pp",
        str(pp),
        "--kv-cache-dtype",
        kv_dtype,
    ]
    out = subprocess.run(
        cmd, capture_output=True, text=True, env={**os.environ, "VLLM_TARGET_DEVICE": "cpu"}, check=False, timeout=600
    )
    start = out.stdout.find("{")
    if start < 0:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1:]}
    return json.loads(out.stdout[start:])  # type: ignore[no-any-return]


def main() -> int:
    if not (VENV / "bin" / "python").exists():
        print(f"oracle venv not found at {VENV}: run shared/tools/vllm-oracle/oracle_setup.sh first")
        return 1
    h100 = resolve_gpu("h100", load_gpus())
    same = 0
    for folder, kv, length, tp, pp, kv_dtype in CASES:
        o = oracle(folder, kv, length, tp, pp, kv_dtype)
        spec = resolve_model(str(SHARED / "reference" / "hf-configs" / folder))
        e = explain(
            spec,
            h100,
            EngineFlags(
                tensor_parallel_size=tp,
                pipeline_parallel_size=pp,
                kv_cache_dtype=kv_dtype,
                kv_cache_memory_bytes=kv,
                max_model_len=length,
            ),
            VllmVersion.parse("0.33"),
        )
        # The oracle checks only the KV admission (it never loads weights), so compare that verdict.
        kv_ok = not e.has(IssueKind.KV_TOO_SMALL, IssueKind.NO_CACHE_MEMORY, IssueKind.TP_HEADS)
        ours = (e.block_size, e.num_gpu_blocks, e.kv_cache_tokens, round(e.max_concurrency, 2), kv_ok)
        theirs = (
            o.get("block_size"),
            o.get("num_gpu_blocks"),
            o.get("kv_cache_tokens"),
            o.get("max_concurrency"),
            o.get("fits"),
        )
        ok = ours == theirs
        if o.get("error") and not kv_ok:  # both refuse: the admission error must read the same
            ok = str(o["error"]) in e.errors
        same += ok
        print(
            f"{'OK  ' if ok else 'DIFF'} {folder:40} tp={tp} pp={pp} kv={kv_dtype:4} L={length:<7} "
            f"ours={ours} oracle={theirs}"
        )
        if not ok and o.get("error"):
            print(f"     oracle error: {o.get('error')}\n     ours: {e.errors}")
    print(f"\n{same}/{len(CASES)} cases equal to vLLM 0.33's own computation")
    return 0 if same == len(CASES) else 1


if __name__ == "__main__":
    run_script(main)
