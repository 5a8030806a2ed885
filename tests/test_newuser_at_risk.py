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
