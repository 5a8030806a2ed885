"""A new user scripting on this session's additions: the "AT RISK" verdict as `explain --format json` reports it, and
a single-GPU system (DGX Spark) planned as what it is. Through the CLI, as a user runs it."""

from __future__ import annotations

import json

from click.testing import CliRunner

from recommender.cli import cli

# Qwen3.8-27B-FP8 on one RTX PRO 6000 Max-Q with vLLM 0.26's defaults: 1,122 Mamba blocks predicted for 1,024
# sequences (tests/test_at_risk.py works the figures), within the ~25 % uncertainty: the table says AT RISK.
AT_RISK = ["explain", "Qwen/Qwen3.8-27B-FP8", "--gpu", "rtx-pro-6000-maxq", "--vllm-version", "0.26"]


def test_explain_json_says_at_risk_as_the_table_does() -> None:
    table = CliRunner().invoke(cli, AT_RISK)
    assert table.exit_code == 0 and "Verdict: AT RISK" in table.output
    result = CliRunner().invoke(cli, [*AT_RISK, "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    # `fits` alone (true: no startup error) let a script gate this as a start
    assert doc["fits"] is True and doc["at_risk"] is True and doc["verdict"] == "at-risk"
    assert doc["risk_kinds"] == ["mamba-blocks-margin"] and doc["error_kinds"] == []


def test_explain_json_verdict_for_a_start_and_a_failure() -> None:
    starts = json.loads(
        CliRunner().invoke(cli, ["explain", "Qwen/Qwen3-8B", "--gpu", "h100", "--format", "json"]).stdout
    )
    assert (starts["verdict"], starts["at_risk"], starts["risk_kinds"]) == ("starts", False, [])
    args = ["explain", "Qwen/Qwen3-32B", "--gpu", "rtx4090", "--format", "json"]
    fails = json.loads(CliRunner().invoke(cli, args).stdout)
    assert (fails["verdict"], fails["fits"], fails["at_risk"]) == ("fails", False, False) and fails["error_kinds"]


def test_a_dgx_spark_is_planned_as_one_gpu_a_node() -> None:
    # DeepSeek-V4-Flash's 146 GiB of weights do not fit one GB10: the plan was `-tp 2` on "2 x NVIDIA GB10" in one
    # node, a command no DGX Spark can run (it has one GPU); now the search stops at the one GPU and names --nodes.
    args = ["recommend", "--model", "deepseek-ai/DeepSeek-V4-Flash", "--gpu", "NVIDIA GB10", "--concurrency", "8"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 3, result.output
    assert "on 1 x NVIDIA GB10" in result.stderr and "try --gpus-per-node 1 --nodes 2" in result.stderr
    two = CliRunner().invoke(cli, [*args, "--gpus-per-node", "1", "--nodes", "2", "--format", "json"])
    assert two.exit_code == 0, two.output
    doc = json.loads(two.stdout)
    assert (doc["gpus"], doc["tensor_parallel_size"], doc["pipeline_parallel_size"]) == (2, 1, 2)


def test_fixes_on_a_dgx_spark_offer_no_second_gpu_in_the_box() -> None:
    # Nemotron-3-Super NVFP4 at 0.88 on a GB10 (tests/test_at_risk.py): the host's share is the fix; "-tp 2" was too.
    args = ["explain", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4", "--gpu", "NVIDIA GB10", "--vllm-version"]
    args += ["0.24", "--max-model-len", "131072", "--max-num-seqs", "4", "--gpu-memory-utilization", "0.88"]
    doc = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).stdout)
    assert doc["verdict"] == "at-risk" and doc["fixes"][0].startswith("lower --gpu-memory-utilization to 0.86")
    assert not any("-tp " in fix for fix in doc["fixes"]), doc["fixes"]


def test_a_latency_plan_on_a_dgx_spark_searches_one_gpu() -> None:
    args = ["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "gb10", "--input-len", "1000", "--output-len", "200"]
    result = CliRunner().invoke(cli, [*args, "--concurrency", "4"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Plan for 4 users, 1,000 in / 200 out on 1 x NVIDIA GB10 (a single-GPU system")


def test_min_cost_without_a_price_is_one_line_not_a_throughput_plan() -> None:
    # It ranked by throughput per GPU and printed no cost: the user asked for a cost and got no word of it.
    args = ["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "1000", "--output-len", "200"]
    result = CliRunner().invoke(cli, [*args, "--concurrency", "8", "--objective", "min-cost"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "Error: --objective min-cost needs --gpu-hour-cost (the price of one GPU-hour, e.g. 2.5)\n"
    priced = CliRunner().invoke(cli, [*args, "--concurrency", "8", "--objective", "min-cost", "--gpu-hour-cost", "2.5"])
    assert priced.exit_code == 0 and "per million output tokens at $2.5 per GPU-hour" in priced.stdout


def test_a_fractional_latency_target_is_printed_as_given() -> None:
    # --tpot-ms 0.5 was echoed as "TPOT p90 <= 0 ms" and the miss as "> 0 ms": a target nobody gave.
    args = ["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "200", "--output-len", "50"]
    result = CliRunner().invoke(cli, [*args, "--concurrency", "4", "--tpot-ms", "0.5", "--gpus-per-node", "1"])
    assert result.exit_code == 3
    assert "TPOT p90 <= 0.5 ms on 1 x" in result.stderr and "ms > 0.5 ms (+" in result.stderr, result.stderr
