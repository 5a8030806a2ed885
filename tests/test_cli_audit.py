"""Findings of the new-user audit, each through the CLI: exit code and output."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

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
    assert line.startswith("Error: no configuration serves 1 concurrent request on 8 x Tesla T4; nearest: TP=")
    assert "The quantization method mxfp4 is not supported for the current GPU. Minimum capability: 80." in line
    assert "GiB of weights per GPU" not in line


def test_infeasible_recommend_still_blames_weights_that_fit_nowhere() -> None:
    args = ["recommend", "--model", "deepseek-ai/DeepSeek-R1", "--gpu", "l4", "--concurrency", "1"]
    (line,) = invoke(args, exit_code=3).stderr.strip().splitlines()
    assert "GiB of weights per GPU, more than the" in line
    assert "try --gpus-per-node 8 --nodes 3" in line


def test_gpu_with_gpu_memory_gib_keeps_the_named_chip() -> None:
    """--gpu h100 --gpu-memory-gib 40 made a generic card called 'h100' that then 'has no FP8 tensor cores'."""
    args = ["explain", "Qwen/Qwen3-8B", "--gpu", "h100", "--gpu-memory-gib", "40", "--kv-cache-dtype", "fp8"]
    out = invoke([*args, "--format", "json"]).stdout
    doc = json.loads(out)
    assert doc["gpu"] == "NVIDIA H100 80GB HBM3 (40 GiB)"
    assert doc["gpu_total_gib"] == 40.0
    assert not any("FP8 tensor cores" in w for w in doc["warnings"])


def test_the_memory_given_picks_between_cards_of_one_name() -> None:
    out = invoke(["explain", "Qwen/Qwen3-8B", "--gpu", "A100 PCIe", "--gpu-memory-gib", "39.39"]).stdout
    assert out.startswith("Qwen/Qwen3-8B on NVIDIA A100-PCIE-40GB (39.39 GiB) — vLLM 0.33.0\n")


def test_a_plan_for_a_given_total_is_checked_after_recommend_and_render(tmp_path: Path) -> None:
    """A plan made with --gpu-memory-gib was NOT EVALUATED by check: "unknown GPU 'custom'" (exit 4)."""
    for gpu in (["--gpu", "h100"], []):
        plan = tmp_path / "plan.yaml"
        args = ["recommend", "--model", "Qwen/Qwen3-8B", *gpu, "--gpu-memory-gib", "40", "--concurrency", "8"]
        invoke([*args, "-o", str(plan), "--force"])  # the second plan replaces the first
        assert "PASS" in invoke(["check", str(plan)]).stdout
        invoke(["render", str(plan), "--emit", "k8s", "-o", str(tmp_path / "deploy"), "--force"])
        assert "PASS" in invoke(["check", str(tmp_path / "deploy")]).stdout


def _plan(tmp_path: Path) -> Path:
    plan = tmp_path / "plan.yaml"
    invoke(
        ["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090", "--concurrency", "60", "-o", str(plan)]
    )
    return plan


def test_render_refuses_a_hand_edited_plan_whose_command_vllm_refuses(tmp_path: Path) -> None:
    """A plan edited to add `--swap-space 4` (removed in vLLM 0.18) was rendered into serve.sh (exit 0) while
    `check` on the same plan failed it: render wrote an artifact vLLM 0.33 exits on."""
    plan = _plan(tmp_path)
    doc = yaml.safe_load(plan.read_text())
    doc["command"] += ["--swap-space", "4"]
    plan.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = tmp_path / "deploy"
    r = invoke(["render", str(plan), "--emit", "command", "-o", str(out)], exit_code=2)
    assert r.stderr == (
        "Error: the plan's command would not start: vLLM 0.33.0 refuses it (unrecognized arguments: --swap-space 4); "
        "`vllm-plan check` on the plan names the fix\n"
    )
    assert not out.exists()
    assert "--swap-space was removed in vLLM 0.18.0" in invoke(["check", str(plan)], exit_code=1).stdout


def test_render_refuses_an_image_tag_of_another_release_than_the_plans(tmp_path: Path) -> None:
    """--image-tag v0.6.0 on a plan for 0.33 rendered vllm/vllm-openai:v0.6.0 with the 0.33 annotation, and `check`
    (which trusts the annotation) passed it."""
    plan = _plan(tmp_path)
    r = invoke(["render", str(plan), "--emit", "k8s", "--image-tag", "v0.6.0"], exit_code=2)
    assert r.stderr.startswith("Error: --image-tag v0.6.0 runs vLLM 0.6.0, but the plan was made for vLLM 0.33.0: ")
    ok = invoke(["render", str(plan), "--emit", "k8s", "--image-tag", "v0.33.0-cu130"]).stdout
    assert 'image: "vllm/vllm-openai:v0.33.0-cu130"' in ok
    other = ["--image", "team/llm-server", "--image-tag", "1.4.2"]  # another image's tags are its own
    assert 'image: "team/llm-server:1.4.2"' in invoke(["render", str(plan), "--emit", "k8s", *other]).stdout


def test_perf_takes_vllm_bench_serves_own_length_flags() -> None:
    """`vllm bench serve --random-input-len 100 --random-output-len 100` pasted as perf's flags was 'no such option'."""
    args = ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-concurrency", "4"]
    bench = invoke([*args, "--random-input-len", "100", "--random-output-len", "100", "--format", "json"]).stdout
    ours = invoke([*args, "--input-len", "100", "--output-len", "100", "--format", "json"]).stdout
    assert bench == ours
    assert json.loads(bench)["completed"] == 1000


def test_one_request_is_singular() -> None:
    out = invoke(["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "l4", "--concurrency", "1"]).stdout
    assert out.startswith("Plan for 1 concurrent request on 1 x NVIDIA L4\n")
    assert "KV auto: 1 request of " in out  # the plan's reason line, as the headline


def test_explain_and_perf_read_a_quoted_command_as_check_does() -> None:
    """`check --gpu l4 "vllm serve M ..."` reads the quoted command; explain and perf said the whole string 'is not a
    local directory, a catalog entry or a hub id'."""
    quoted = "vllm serve Qwen/Qwen3-8B --max-model-len 8192"
    out = invoke(["explain", "--gpu", "l4", quoted]).stdout
    assert out == invoke(["explain", "--gpu", "l4", "--", *quoted.split()]).stdout
    assert "max_model_len 8,192" in out
    perf = ["perf", "--gpu", "l4", quoted, "--input-len", "100", "--output-len", "10", "--max-concurrency", "2"]
    assert "  vllm serve Qwen/Qwen3-8B --max-model-len 8192\n" in invoke(perf).stdout
    r = invoke(["explain", "--gpu", "l4", "vllm serve 'Qwen/Qwen3-8B"], exit_code=2)
    assert r.stderr == 'Error: cannot read the command "vllm serve \'Qwen/Qwen3-8B": No closing quotation\n'


def test_explain_says_when_a_commands_option_left_vllm() -> None:
    """`explain -- vllm serve M --swap-space 4` said only 'unrecognized arguments: --swap-space 4' where check says
    the release that removed it."""
    r = invoke(["explain", "--gpu", "l4", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--swap-space", "4"], exit_code=2)
    assert r.stderr == (
        "Error: --swap-space is not an option of vLLM 0.33.0 (removed in vLLM 0.18.0): vllm serve would exit with "
        "'unrecognized arguments: --swap-space'\n"
    )
    unknown = invoke(["explain", "--gpu", "l4", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--max-model-length", "8"], 2)
    assert unknown.stderr == "Error: unrecognized arguments: --max-model-length 8\n"


def test_one_request_per_engine_is_singular_in_a_rejection() -> None:
    """The golden plan of examples/llama-3.1-70b-on-4xh100 rejects a TP 2 option holding one request per engine."""
    text = (Path(__file__).parent.parent / "examples" / "llama-3.1-70b-on-4xh100" / "plan.yaml").read_text()
    assert "= 1 request at 32,768 per engine" in text and "= 1 requests" not in text
