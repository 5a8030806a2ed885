"""Shipped command-line paths, each through the CLI: --max-model-len auto, the quality and max-concurrency
objectives, --free-memory-gib in recommend, bf16 checkpoints on pre-Ampere cards, and the internal-error exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from recommender.cli import INTERNAL_ERROR

from .conftest import ROOT, invoke

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
QWEN_7B = "Qwen/Qwen2.5-7B-Instruct"


def _json(args: list[str], exit_code: int = 0) -> dict[str, Any]:
    data = json.loads(invoke([*args, "--format", "json"], exit_code).stdout)
    assert isinstance(data, dict)
    return data


def test_max_model_len_auto_fits_the_longest_length_that_starts() -> None:
    # 131,072 positions do not fit beside 15 GiB of weights on an L4: vLLM's auto-fit takes every KV block but the
    # null block, 16 tokens each (one full-attention group), and logs the reduction with the memory less that block
    # (kv_cache_planning.py: check_memory, passed to _auto_fit_max_model_len).
    d = _json(["explain", LLAMA_8B, "--gpu", "l4", "--max-model-len", "auto"])
    fitted = (d["num_gpu_blocks"] - 1) * d["block_size"]
    assert d["fits"] and d["max_model_len"] == fitted < 131072
    block_gib = d["kv_bytes_per_token"] * d["block_size"] / 2**30
    assert d["warnings"] == [
        f"Auto-fit max_model_len: reduced from 131072 to {fitted} to fit in available KV cache memory "
        f"({d['kv_cache_gib'] - block_gib:.2f} GiB GPU)"
    ]
    # The fitted length is the boundary: it starts as a fixed --max-model-len, one token more does not.
    assert _json(["explain", LLAMA_8B, "--gpu", "l4", "--max-model-len", str(fitted)])["fits"]
    over = _json(["explain", LLAMA_8B, "--gpu", "l4", "--max-model-len", str(fitted + 1)])
    assert not over["fits"] and over["error_kinds"] == ["kv-too-small-for-max-model-len"]
    assert f"the estimated maximum model length is {fitted}." in over["errors"][0]


def test_max_model_len_auto_keeps_the_full_context_when_it_fits() -> None:
    d = _json(["explain", "Qwen/Qwen2.5-0.5B-Instruct", "--gpu", "h100", "--max-model-len", "auto"])
    assert d["fits"] and d["max_model_len"] == 32768 and not any("Auto-fit" in w for w in d["warnings"])


def _recommend(objective: str) -> dict[str, Any]:
    args = ["recommend", "--model", QWEN_7B, "--gpu", "rtx4090", "--concurrency", "60", "--gpus-per-node", "2"]
    return _json([*args, "--objective", objective])


def test_objective_quality_keeps_the_checkpoint_precision() -> None:
    # min-gpus serves 60 on one card with an fp8 KV cache; quality spends the second card to keep bf16 weights and
    # a bf16 KV cache.
    fewest, quality = _recommend("min-gpus"), _recommend("quality")
    assert (fewest["gpus"], fewest["weights"], fewest["kv_cache_dtype"]) == (1, "bfloat16", "fp8")
    assert (quality["gpus"], quality["weights"], quality["kv_cache_dtype"]) == (2, "bfloat16", "auto")
    assert quality["inputs"]["objective"] == "quality" and quality["max_concurrency"] >= 60
    assert "--kv-cache-dtype" not in quality["command"] and "--quantization" not in quality["command"]


def test_objective_max_concurrency_takes_the_most_requests() -> None:
    fewest, most = _recommend("min-gpus"), _recommend("max-concurrency")
    assert most["max_concurrency"] > fewest["max_concurrency"]
    assert all(a["max_concurrency"] <= most["max_concurrency"] for a in most["alternatives"])
    assert most["weights"] != "bfloat16"  # a 4-bit checkpoint leaves the most room for the KV cache


def test_recommend_within_free_memory() -> None:
    # A card shared with 12 GiB free: vLLM refuses a budget above free memory, and the sampler warm-up, the graphs
    # captured after the KV cache and the CUDA context need free memory beyond the budget (~0.9 GiB here, plus the
    # 1 GiB margin), so the plan asks for 0.44 x 23.99 = 10.6 GiB; bf16 weights (14.2 GiB) no longer fit: it quantizes.
    args = ["recommend", "--model", QWEN_7B, "--gpu", "rtx4090", "--concurrency", "8", "--free-memory-gib", "12"]
    d = _json(args)
    command = d["command"]
    util = float(command[command.index("--gpu-memory-utilization") + 1])
    assert util == 0.44 and d["prediction"]["requested_gib"] <= 12 - 1 and d["weights"] != "bfloat16"
    assert (
        "TP=1 PP=1, bfloat16, KV auto: weights 14.2 GiB + overheads exceed the 10.6 GiB budget per GPU" in d["rejected"]
    )
    # The planned command starts with 12 GiB free; with 10.6 the warm-ups run out of memory, below 10.56 vLLM refuses.
    model, flags = command[2], command[3:]  # the planned checkpoint (an FP8 one), as the command names it
    assert _json(["explain", model, "--gpu", "rtx4090", "--free-memory-gib", "12", *flags])["fits"]
    tight = _json(["explain", model, "--gpu", "rtx4090", "--free-memory-gib", "10.6", *flags])
    assert tight["error_kinds"] == ["warmup-out-of-memory"]
    short = _json(["explain", model, "--gpu", "rtx4090", "--free-memory-gib", "10.5", *flags])
    assert short["error_kinds"] == ["free-memory-below-budget"]


def test_bf16_checkpoint_on_pre_ampere_cards() -> None:
    # vLLM's auto dtype falls back to float16 where bfloat16 is unsupported (compute capability < 8.0)...
    t4 = _json(["explain", "Qwen/Qwen2.5-0.5B-Instruct", "--gpu", "t4"])
    assert t4["dtype"] == "float16" and t4["weights_gib"] == pytest.approx(494_032_768 * 2 / 2**30, rel=0.01)
    # ... and refuses an explicit --dtype bfloat16 with platforms/cuda.py's message.
    t4_bf16 = _json(["explain", "Qwen/Qwen2.5-0.5B-Instruct", "--gpu", "t4", "--dtype", "bfloat16"])
    assert not t4_bf16["fits"] and t4_bf16["error_kinds"] == ["bf16-unsupported"]
    assert t4_bf16["errors"] == [
        "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU "
        "has compute capability 7.5. You can use float16 instead by explicitly setting the `dtype` flag in CLI, "
        "for example: --dtype=half."
    ]
    # recommend on a T4 never plans bfloat16.
    plan = _json(["recommend", "--model", QWEN_7B, "--gpu", "t4", "--concurrency", "4"])
    assert plan["prediction"]["dtype"] == "float16" and "bfloat16" not in plan["command"]


def test_an_internal_error_is_one_line_and_exit_70(monkeypatch: pytest.MonkeyPatch) -> None:
    def bug(*_: object, **__: object) -> None:
        raise ZeroDivisionError("injected bug")

    monkeypatch.setattr("recommender.cli.explain_cmd.explain_budget", bug)
    monkeypatch.delenv("VLLM_PLAN_DEBUG", raising=False)
    r = invoke(["explain", QWEN_7B, "--gpu", "l4"], INTERNAL_ERROR)
    assert r.stdout == "" and r.stderr == (
        "Error: internal error (ZeroDivisionError: injected bug); rerun with VLLM_PLAN_DEBUG=1 for a traceback "
        "and please report it\n"
    )


_INJECT = """
import sys
import recommender.cli.explain_cmd as explain_cmd
def bug(*args, **kwargs):
    raise ZeroDivisionError("injected bug")
explain_cmd.explain_budget = bug
from recommender.cli import main
sys.argv = ["vllm-plan", "explain", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "l4"]
main()
"""


def test_vllm_plan_debug_shows_the_traceback_in_a_real_process() -> None:
    env = {**os.environ, "VLLM_PLAN_DEBUG": "1"}
    r = subprocess.run(
        [sys.executable, "-c", _INJECT], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False
    )
    assert r.returncode == 1 and r.stderr.startswith("Traceback (most recent call last):")
    assert r.stderr.rstrip().endswith("ZeroDivisionError: injected bug") and "internal error" not in r.stderr
