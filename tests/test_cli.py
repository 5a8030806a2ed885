"""The CLI through click's runner: exit codes, output, no tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recommender.cli import cli

from .conftest import HF_CONFIGS, invoke

CONTRACT = (
    "model",
    "gpu",
    "vllm_version",
    "gpu_total_gib",
    "requested_gib",
    "weights_gib",
    "activation_peak_gib",
    "non_torch_gib",
    "cudagraph_gib",
    "kv_cache_gib",
    "block_size",
    "num_gpu_blocks",
    "kv_bytes_per_token",
    "kv_cache_tokens",
    "max_concurrency",
    "max_model_len",
    "fits",
    "errors",
    "warnings",
)


def test_gpus_and_models_list() -> None:
    assert len(json.loads(invoke(["gpus", "--format", "json"]).stdout)) >= 25
    assert "h100-sxm" in invoke(["gpus"]).stdout
    models = json.loads(invoke(["models", "--format", "json"]).stdout)
    assert len(models) >= 40 and all(m["source"] for m in models)


def test_show_reports_architecture() -> None:
    out = invoke(["show", "deepseek-ai/DeepSeek-V3", "--format", "json"]).stdout
    d = json.loads(out)
    assert d["mla"]["kv_lora_rank"] == 512 and d["moe"]["experts"] == 256 and d["parameters"]["total"] > 6e11


@pytest.mark.parametrize("folder", sorted(p for p in HF_CONFIGS.glob("*") if p.is_dir()), ids=lambda p: p.name)
def test_show_every_reference_dir(folder: Path) -> None:
    result = CliRunner().invoke(cli, ["show", str(folder)])
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        assert "not modelled" in result.stderr and result.stderr.count("\n") == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_explain_json_contract_and_serve_form() -> None:
    out = invoke(
        [
            "explain",
            "--gpu",
            "h100",
            "--format",
            "json",
            "--",
            "vllm",
            "serve",
            "meta-llama/Llama-3.1-8B-Instruct",
            "-tp",
            "2",
            "--max-model-len",
            "8k",
        ]
    ).stdout
    d = json.loads(out)
    assert set(CONTRACT) <= set(d)
    assert d["max_model_len"] == 8000 and d["tensor_parallel_size"] == 2 and d["fits"] is True


def test_explain_does_not_fit_still_exits_zero() -> None:
    d = json.loads(invoke(["explain", "meta-llama/Meta-Llama-3.1-405B", "--gpu", "rtx4090", "--format", "json"]).stdout)
    assert d["fits"] is False and d["errors"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["explain", "Qwen/Qwen3-8B", "--gpu", "h1000"], "unknown GPU 'h1000'"),
        (["explain", "no-such-model", "--gpu", "h100"], "not a local directory, a catalog entry or a hub id"),
        (["explain", "Qwen/Qwen3-8B", "--gpu", "h100", "--gpu-memory-utilization", "0"], "gpu-memory-utilization"),
        (
            ["explain", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-model-len", "lots"],
            "--max-model-len: 'lots' is not a whole number",
        ),
        (["explain", "Qwen/Qwen3-8B"], "no GPU given"),
        (["explain", "--gpu", "h100", "--vllm-version", "banana", "Qwen/Qwen3-8B"], "not a version"),
    ],
)
def test_bad_input_one_line_exit_2(args: list[str], message: str) -> None:
    result = invoke(args, exit_code=2)
    assert message in result.stderr
    assert "Traceback" not in result.output and result.stderr.strip().count("\n") == 0


def test_recommend_readme_example_names_why_options_were_rejected() -> None:
    # The README's main job: bf16 weights with a 16-bit KV cache on a 24 GiB card cannot hold 60 requests of the
    # default 4,096-token floor; the rejection says how many it holds and how long 60 requests could be.
    out = invoke(["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090", "--concurrency", "60"]).stdout
    line = next(x for x in out.splitlines() if "bfloat16, KV auto" in x)
    assert "below 60 (60 requests fit only up to" in line and "--min-context lowers the floor" in line


def test_explain_takes_model_and_then_the_whole_command() -> None:
    """`explain MODEL --gpu G -- vllm serve MODEL FLAGS` (the model written twice, as people paste a command) reads
    the command's flags; two different models are refused in one line (exit 2), not parsed as stray arguments."""
    model = "google/gemma-3-4b-it"
    both = invoke(["explain", model, "--gpu", "h100", "--", "vllm", "serve", model, "--max-model-len", "8192"])
    alone = invoke(["explain", "--gpu", "h100", "--", "vllm", "serve", model, "--max-model-len", "8192"])
    assert both.stdout == alone.stdout and "max_model_len 8,192" in both.stdout
    out = invoke(["explain", model, "--gpu", "h100", "--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"], exit_code=2)
    assert "two models given: google/gemma-3-4b-it and the command's Qwen/Qwen2.5-7B-Instruct" in out.output
    perf = ["perf", model, "--gpu", "h100", "--input-len", "500", "--output-len", "50", "--max-concurrency", "2"]
    ran = invoke([*perf, "--", "vllm", "serve", model, "--max-model-len", "8192"]).stdout  # was: unrecognized arguments
    assert f"vllm serve {model} --max-model-len 8192" in ran


@pytest.mark.parametrize("towers", [["--language-model-only"], ["--limit-mm-per-prompt", '{"image": 0, "video": 0}']])
def test_check_and_explain_read_the_flags_that_leave_the_towers_unloaded(towers: list[str]) -> None:
    """Qwen2.5-VL-7B on an L4 at 8k: without its vision tower (vLLM 0.33 skips loading and profiling it) the KV
    cache holds 83,216 tokens instead of 32,896 (the L4 at its deviceQuery total, 22,518 MiB; the MRotaryEmbedding's
    4 x max_position cos/sin cache counted since field16, 34,624 and 84,928 before); check rebuilt the
    command without these flags and explain dropped them, so both judged the tower as loaded."""
    serve = ["--", "vllm", "serve", "Qwen/Qwen2.5-VL-7B-Instruct", "--max-model-len", "8192"]
    for cmd in (["explain", "--gpu", "l4"], ["check", "--gpu", "l4"]):
        assert "32,896" in invoke([*cmd, *serve]).stdout
        assert "83,216" in invoke([*cmd, *serve, *towers]).stdout
