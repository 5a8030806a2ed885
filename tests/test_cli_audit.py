"""Findings of the new-user audit, each through the CLI: exit code and output."""

from __future__ import annotations

from .conftest import invoke


def test_recommend_plans_for_a_v0_engine_release() -> None:
    """recommend --vllm-version 0.6.3 set the V1 server's --max-num-batched-tokens 2048 on every candidate, which the
    V0 engine refuses below max_model_len: every option was rejected and the message blamed the weights ('needs 1.3
    GiB of weights per GPU, more than the 19.9 GiB budget'). The V0 engine derives the budget itself."""
    args = ["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "a10g", "--concurrency", "16"]
    out = invoke([*args, "--vllm-version", "0.6.3"]).stdout
    assert out.startswith("Plan for 16 concurrent requests on 1 x NVIDIA A10G\n")
    command = next(line for line in out.splitlines() if line.startswith("  vllm serve "))
    assert "--max-num-batched-tokens" not in command  # V0's own budget: max_model_len without chunked prefill
    assert "Verdict: vLLM starts" in out


def test_recommend_on_a_gpu_vllm_runs_with_v0_plans_too() -> None:
    """vLLM 0.9.2 runs the V0 engine on a T4 (compute capability 7.5): the same 2048 budget rejected everything."""
    args = ["recommend", "--model", "Qwen/Qwen2.5-1.5B-Instruct", "--gpu", "t4", "--concurrency", "8"]
    out = invoke([*args, "--vllm-version", "0.9.2"]).stdout
    assert out.startswith("Plan for 8 concurrent requests on 1 x Tesla T4\n")
    assert "Verdict: vLLM starts" in out


def test_v0_plan_with_more_sequences_than_v0_default_sets_a_budget_that_admits_them() -> None:
    """Above V0's 256 sequences the budget is set: at least the sequences and the context."""
    args = ["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "a10g", "--concurrency", "400"]
    out = invoke([*args, "--vllm-version", "0.6.3"]).stdout
    command = next(line for line in out.splitlines() if line.startswith("  vllm serve "))
    words = command.split()
    tokens = int(words[words.index("--max-num-batched-tokens") + 1])
    length = int(words[words.index("--max-model-len") + 1])
    assert tokens >= max(400, length)
    assert "Verdict: vLLM starts" in out


def test_infeasible_recommend_names_what_vllm_refuses_not_the_weights() -> None:
    """gpt-oss-20b on T4s: every option is MXFP4, which vLLM refuses below compute capability 8.0. The message said
    'needs 1.7 GiB of weights per GPU, more than the 13.1 GiB budget; the weights alone need at least 2 such GPUs'."""
    r = invoke(["recommend", "--model", "openai/gpt-oss-20b", "--gpu", "t4", "--concurrency", "1"], exit_code=3)
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("Error: no configuration serves 1 concurrent requests on 8 x Tesla T4; nearest: TP=")
    assert "The quantization method mxfp4 is not supported for the current GPU. Minimum capability: 80." in line
    assert "GiB of weights per GPU" not in line


def test_infeasible_recommend_still_blames_weights_that_fit_nowhere() -> None:
    args = ["recommend", "--model", "deepseek-ai/DeepSeek-R1", "--gpu", "l4", "--concurrency", "1"]
    (line,) = invoke(args, exit_code=3).stderr.strip().splitlines()
    assert "GiB of weights per GPU, more than the" in line
    assert "try --gpus-per-node 8 --nodes 3" in line
