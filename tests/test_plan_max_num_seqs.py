"""A plan for N concurrent requests sets --max-num-seqs to at least each replica's share of N (vLLM runs no more than
max_num_seqs at once, whatever its KV cache holds), promises what vLLM runs, and check holds a deployment to that."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recommender.catalog import load_gpus, load_model
from recommender.gpu_names import resolve_gpu
from recommender.memory.engine import VllmVersion
from recommender.planner import Hardware, Target
from recommender.planner.evaluation import evaluate_candidate
from recommender.planner.space import candidates, kv_dtypes, weight_options
from recommender.sources.resolve import resolve_model

from .conftest import invoke

QWEN_7B = "Qwen/Qwen2.5-7B-Instruct"
# 300 requests of 8,000 tokens on RTX 4090s: above vLLM's default max_num_seqs (256) for the card.
MEMORY = ["recommend", "--model", QWEN_7B, "--gpu", "rtx4090", "--concurrency", "300", "--context", "8k"]
LATENCY = ["recommend", "--model", QWEN_7B, "--gpu", "rtx4090", "--concurrency", "300"]


def _json(args: list[str], exit_code: int = 0) -> dict[str, Any]:
    data = json.loads(invoke([*args, "--format", "json"], exit_code).stdout)
    assert isinstance(data, dict)
    return data


def _flag(command: list[str], name: str) -> int:
    return int(command[command.index(name) + 1])


def test_memory_plan_runs_every_promised_request() -> None:
    d = _json(MEMORY)
    seqs = _flag(d["command"], "--max-num-seqs")
    assert seqs * d["replicas"] >= 300, d["command"]
    assert _flag(d["command"], "--max-num-batched-tokens") >= seqs  # vLLM refuses fewer tokens than seqs
    # The promise is what vLLM runs at once: no more than max_num_seqs per replica, however much the KV holds.
    assert 300 <= d["max_concurrency"] <= seqs * d["replicas"]
    assert d["prediction"]["max_concurrency"] >= 300  # and the KV cache holds them (prediction is vLLM's figure)
    for a in d["alternatives"]:
        a_seqs = _flag(a["command"], "--max-num-seqs")
        assert 300 <= a["max_concurrency"] <= a_seqs * a["replicas"], a["summary"]


def test_max_num_seqs_the_limit_is_said() -> None:
    out = invoke(MEMORY).stdout
    assert "300 requests of 8,000 tokens per replica x 1 (--max-num-seqs 300; the KV cache would hold" in out


def test_alternatives_show_what_runs_and_what_the_kv_cache_holds() -> None:
    """The concurrency column is the promise (N for every option that meets it); the KV column tells them apart."""
    lines = invoke(MEMORY).stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("TP  PP"))
    assert lines[header].split()[-3:] == ["concurrency", "KV", "holds"]
    rows = [line.split() for line in lines[header + 2 :] if line[:1].isdigit()]
    assert rows and all(r[-2] == "300.0" and float(r[-1].replace(",", "")) >= 300 for r in rows), rows


def test_max_concurrency_objective_raises_max_num_seqs_to_the_kv_cache() -> None:
    d = _json([*MEMORY, "--objective", "max-concurrency"])
    seqs = _flag(d["command"], "--max-num-seqs")
    assert seqs > 300 and d["max_concurrency"] == seqs * d["replicas"]
    assert d["prediction"]["max_concurrency"] >= seqs  # the KV cache holds every sequence it admits


def test_latency_plan_seats_every_user() -> None:
    d = _json([*LATENCY, "--input-len", "2000", "--output-len", "500"])
    assert _flag(d["command"], "--max-num-seqs") * d["replicas"] >= 300, d["command"]


def test_check_fails_a_plan_whose_max_num_seqs_is_below_the_promise(tmp_path: Path) -> None:
    command = _json(MEMORY)["command"]
    check = ["check", "--gpu", "rtx4090", "--concurrency", "300", "--context", "8000", "--"]
    invoke([*check, *command])  # the plan as printed holds its promise
    short = list(command)
    short[short.index("--max-num-seqs") + 1] = "256"  # the release default the planner used to print
    out = invoke([*check, *short], exit_code=1).stdout
    assert "--max-num-seqs 256 runs at most 256 requests at once, below the promised 300" in out
    assert "fix: raise --max-num-seqs to 300 (316.2 requests of 8,000 tokens fit)" in out
    # The plan document itself (as written with -o) passes the same check.
    invoke([*MEMORY, "--emit", "command", "-o", str(tmp_path / "plan")])
    invoke(["check", str(tmp_path / "plan" / "plan.yaml"), "--concurrency", "300", "--context", "8000"])


def test_latency_plan_splits_users_an_engine_cannot_seat() -> None:
    # A million users: no engine starts with --max-num-seqs 125,000 (the activation peak of that batch), so the
    # plan is refused rather than one that queues all but 256 of each engine's users.
    args = [*LATENCY[:-1], "1000000", "--input-len", "1000", "--output-len", "100"]
    err = invoke(args, exit_code=3).stderr
    assert "125,000 users per engine > --max-num-seqs 256 (the most it starts with)" in err
    assert "no configuration serves 1,000,000 users, 1,000 in / 100 out" in err


def test_large_numbers_have_thousands_separators() -> None:
    big = ["recommend", "--model", QWEN_7B, "--gpu", "rtx4090", "--concurrency", "1000000000"]
    err = invoke(big, exit_code=3).stderr
    assert "no configuration serves 1,000,000,000 concurrent requests on" in err
    assert "holds 1,407 requests of 4,096 tokens on 8 GPUs, below 1,000,000,000;" in err
    # 1,407 requests on 8 GPUs (2 engines of TP 4) is 175.9 a GPU: about 5.7 million GPUs (it said half that, dividing
    # the two engines' figure by one engine's GPUs)
    assert "at that rate 1,000,000,000 requests need about 5,684,815 GPUs" in err
    err = invoke([*big, "--context", "8k"], exit_code=3).stderr
    assert "1,000,000,000 concurrent requests of 8,000-token context" in err
    assert "1000000" not in err
    out = invoke(["recommend", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--concurrency", "2000"])
    assert "Plan for 2,000 concurrent requests" in out.stdout and "2,000.0" in out.stdout  # the alternatives' column


def test_a_larger_max_num_seqs_that_takes_kv_cache_adds_a_replica() -> None:
    # 1,000 requests of 2,000 tokens, TP=2 AWQ: sized at the default 256 sequences, 3 replicas; with
    # --max-num-seqs 334 the larger batch leaves each engine KV for fewer than 334, so 4 replicas (not a rejection).
    model = resolve_model(QWEN_7B)
    entry = load_model(QWEN_7B)
    assert entry is not None
    variants = [resolve_model(v) for v in entry.variants]
    hw = Hardware(resolve_gpu("rtx4090", load_gpus()), gpus_per_node=8)
    options = weight_options(model, variants, hw.gpu, allow_quantization=True, only=None)
    (c,) = [
        c
        for c in candidates(options, model, hw, kv_dtypes(hw.gpu, allow_fp8=True))
        if c.tp == 2 and c.weights.label.startswith("AWQ") and c.kv_cache_dtype == "auto"
    ]
    v = evaluate_candidate(c, Target(concurrency=1000, context=2000), hw, VllmVersion.parse("0.33.0"))
    assert v.feasible and v.replicas == 4, v.reason
    assert v.flags.max_num_seqs == 250 and v.concurrency == 1000


# Qwen2.5-7B at 32k on one L4 holds about 2.6 requests of 32,768 tokens per engine (vLLM's "Maximum concurrency").
L4_32K = ["vllm", "serve", QWEN_7B, "--max-model-len", "32768"]


def _check_l4(concurrency: int, context: int, *flags: str, exit_code: int) -> str:
    args = ["check", "--gpu", "l4", "--concurrency", str(concurrency), "--context", str(context), "--"]
    return invoke([*args, *L4_32K, *flags], exit_code=exit_code).stdout


def test_each_data_parallel_engine_holds_its_own_kv_cache() -> None:
    """-dp 2 runs two engines, each with the whole KV pool of its GPU: five 32k requests fit two engines of 2.6
    each (5.2), not one; six fit neither. The failure names both figures."""
    _check_l4(5, 32768, exit_code=1)
    _check_l4(5, 32768, "-dp", "2", exit_code=0)
    out = _check_l4(6, 32768, "-dp", "2", exit_code=1)
    assert "holds 5.2 concurrent requests of 32,768 tokens (2.6 in each of 2 data-parallel engines)" in out
    assert "run 2 replicas (4 requests of 32,768 tokens each)" in out  # 2 engines x 2 whole requests


def test_a_fix_that_holds_more_requests_also_seats_them() -> None:
    """With --max-num-seqs 8, a shorter --max-model-len that holds 20 requests still runs 8 at once: the fix raises
    --max-num-seqs with it, and the printed fix, applied, passes."""
    out = _check_l4(20, 32768, "--max-num-seqs", "8", exit_code=1)
    fix = next(line for line in out.splitlines() if line.strip().startswith("fix:"))
    shorter = fix.split("lower --max-model-len to ", 1)[1].split(" ", 1)[0]
    assert f"lower --max-model-len to {shorter} and raise --max-num-seqs to 20" in fix
    assert "-tp 4 and raise --max-num-seqs to 20" in fix
    length = shorter.replace(",", "")
    args = ["check", "--gpu", "l4", "--concurrency", "20", "--context", length, "--"]
    invoke([*args, "vllm", "serve", QWEN_7B, "--max-model-len", length, "--max-num-seqs", "20"], exit_code=0)
