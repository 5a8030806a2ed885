"""What a new user of the CLI tripped on, each pinned by the command they ran (issue: H28's end-to-end pass, H33's
reports)."""

from __future__ import annotations

import importlib.abc
import json
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from huggingface_hub import constants

from recommender.cli import cli

from .conftest import invoke

ROOT = Path(__file__).parent.parent
BENCH = Path(__file__).parent / "data" / "bench_results"
SMALL = ["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090", "--concurrency", "8"]


def test_recommend_o_plan_yaml_writes_the_plan_file_not_a_folder(tmp_path: Path) -> None:
    """`-o plan.yaml` is the plan document (as `explain -o FILE` is its output), not a folder named plan.yaml
    holding every artifact; the suffix picks the format unless --format says otherwise."""
    plan = tmp_path / "plan.yaml"
    assert invoke([*SMALL, "-o", str(plan)]).stdout == ""
    assert plan.is_file() and yaml.safe_load(plan.read_text())["apiVersion"] == "vllm-plan/v1"
    invoke(["render", str(plan), "--emit", "command"])  # and it is the document render reads back
    as_json = tmp_path / "plan.json"
    invoke([*SMALL, "-o", str(as_json)])
    assert json.loads(as_json.read_text())["kind"] == "Plan"
    text = tmp_path / "plan.txt"
    invoke([*SMALL, "-o", str(text)])
    assert text.read_text().startswith("Plan for 8 concurrent requests")
    explicit = tmp_path / "explicit.yaml"
    invoke([*SMALL, "--format", "json", "-o", str(explicit)])
    assert json.loads(explicit.read_text())["kind"] == "Plan"


def test_recommend_o_folder_still_writes_the_artifacts(tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    written = invoke([*SMALL, "-o", str(out)]).stdout
    assert (out / "plan.yaml").is_file() and (out / "serve.sh").is_file() and "written:" in written
    # and what they deploy: the headline and the command (they said only 'written: ...')
    plan = yaml.safe_load((out / "plan.yaml").read_text())
    assert "\nPlan for 8 concurrent requests on 1 x NVIDIA GeForce RTX 4090" in written, written
    assert written.rstrip().endswith(shlex.join(plan["command"])), written
    existing = tmp_path / "site.yaml"  # an existing folder is a folder, whatever its name
    existing.mkdir()
    invoke([*SMALL, "-o", str(existing)])
    assert (existing / "plan.yaml").is_file()


def _ctrl_c(*args: object, **kwargs: object) -> None:
    del args, kwargs
    raise KeyboardInterrupt  # what Python raises when the user presses Ctrl-C while `check -` reads stdin


def test_ctrl_c_exits_130_in_one_line_not_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """click turns Ctrl-C into 'Aborted!' and exit 1, which `check` documents as 'a server fails'."""
    monkeypatch.setattr("recommender.cli.check_cmd.load_inputs", _ctrl_c)
    result = CliRunner().invoke(cli, ["check", "-", "--gpu", "h100"], input="")
    assert result.exit_code == 130, (result.exit_code, result.output)
    assert result.stderr.strip() == "Error: interrupted" and "Aborted" not in result.output


class _InterruptImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: object, target: object = None) -> None:
        del path, target
        if name == "recommender.cli":
            raise KeyboardInterrupt


def test_ctrl_c_while_the_commands_load_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Loading every command takes most of a second: Ctrl-C then raised out of the console script's import."""
    from recommender import console

    monkeypatch.delitem(sys.modules, "recommender.cli")
    monkeypatch.setattr(sys, "meta_path", [_InterruptImport(), *sys.meta_path])
    with pytest.raises(SystemExit) as stop:
        console.main()
    assert stop.value.code == 130 and capsys.readouterr().err.strip() == "Error: interrupted"


def test_recommend_headline_counts_the_gpus_the_plan_uses() -> None:
    """With 8 GPUs given and 3 used, the headline said 'on 8 x', and replicas read 'one per 1 GPU(s)'. (The 4-bit
    checkpoint as the model: from the 16-bit one the plan keeps near-lossless weights on 4 GPUs.)"""
    args = ["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "--gpu", "rtx4090"]
    out = invoke([*args, "--concurrency", "200", "--context", "8k", "--gpus-per-node", "8"]).stdout
    assert out.startswith(
        "Plan for 200 concurrent requests of 8,000-token context on 3 x NVIDIA GeForce RTX 4090 (of the 8 given)\n"
    )
    assert "  3 replicas of this engine (one per GPU), behind a load balancer\n" in out
    assert "GPU(s)" not in out


def _usage_error(args: list[str]) -> str:
    result = invoke(args, exit_code=2)
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def test_a_vllm_option_a_command_does_not_take_says_where_it_goes() -> None:
    """vLLM users type serve options by habit: click said 'no such option -t' for `-tp`, and nothing more."""
    err = _usage_error([*SMALL, "-tp", "2"])
    assert err.startswith("Error: no such option -tp: recommend chooses vLLM's flags itself")
    assert "recommend sets --max-model-len from --context" in _usage_error([*SMALL, "--max-model-len", "8k"])
    explain = ["explain", "Qwen/Qwen3-8B", "--gpu", "h100"]
    assert "paste a whole command after `--`" in _usage_error([*explain, "--enable-prefix-caching"])
    serve = ["explain", "--gpu", "h100", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--enable-prefix-caching"]
    assert "Verdict: vLLM starts" in invoke(serve).stdout  # and the form it points to takes it
    assert "check reads vLLM's options from the command" in _usage_error(["check", "--gpu", "h100", "-tp", "2"])
    # a typo of the command's own option keeps its suggestion; an unknown short option is quoted as typed
    assert "did you mean --concurrency?" in _usage_error([*SMALL[:-2], "--concurency", "8"])
    assert "no such option -x (see" in _usage_error([*SMALL, "-x"])


def test_explain_reads_the_api_server_entry_point_command() -> None:
    """Older deployments run `python -m vllm.entrypoints.openai.api_server --model M`: explain refused it as
    'unrecognized arguments: python -m ...' while check reads it."""
    argv = ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "Qwen/Qwen3-8B", "-tp", "2"]
    out = invoke(["explain", "--gpu", "h100", "--", *argv, "--port", "8000"]).stdout
    assert out.startswith("Qwen/Qwen3-8B on NVIDIA H100 80GB HBM3") and "TP=2 PP=1" in out
    same = invoke(["explain", "--gpu", "h100", "--", "vllm", "serve", "Qwen/Qwen3-8B", "-tp", "2"]).stdout
    assert out == same


def test_contradicting_weights_options_are_named() -> None:
    """It said 'no weights option matches --quantization fp8', as if the model had no FP8 option."""
    err = _usage_error([*SMALL, "--quantization", "fp8", "--no-quantization"])
    assert err == "Error: --quantization fp8 and --no-quantization contradict each other: give one\n"


def test_a_failed_command_leaves_no_plot_behind(tmp_path: Path) -> None:
    """--plot was written before the report (or the artifacts) failed: exit 2, yet a fresh SVG on disk."""
    plot = tmp_path / "plan.svg"
    err = _usage_error([*SMALL, "--format", "html", "-o", str(tmp_path / "missing" / "r.html"), "--plot", str(plot)])
    assert "folder" in err and "does not exist" in err
    (tmp_path / "a-file").write_text("")
    _usage_error([*SMALL, "--emit", "command", "-o", str(tmp_path / "a-file"), "--plot", str(plot)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # no plot, no temporary file
    invoke([*SMALL, "--format", "html", "-o", str(tmp_path / "r.html"), "--plot", str(plot)])
    assert plot.read_text().startswith("<?xml") and (tmp_path / "r.html").is_file()


def test_a_result_files_model_id_that_names_a_folder_elsewhere_says_which_file_and_what_to_do(tmp_path: Path) -> None:
    """`vllm bench serve` records the server's model as given, often a folder on the benchmark machine: the
    error was 'Qwen2.5-VL-3B-Instruct does not exist', naming neither the file nor --model. (That folder's name is
    now a catalog model, which resolves; the run is kept with a folder name that names none.)"""
    run = json.loads((BENCH / "ascend-qwen2.5-vl-3b-1qps.json").read_text())
    run["model_id"] = "./qwen2.5-vl-3b-sft-step800"
    result = tmp_path / "ascend-qwen2.5-vl-3b-1qps.json"
    result.write_text(json.dumps(run))
    for command in (["perf", "--gpu", "l40s", "--compare"], ["calibrate", "--dry-run", "--gpu", "l40s"]):
        err = _usage_error([*command, str(result)])
        assert err.startswith(f"Error: {result}: its model_id './qwen2.5-vl-3b-sft-step800': ")
        assert err.endswith("; pass --model with the model the server ran\n")


def test_explain_says_when_the_cuda_graphs_are_outside_the_budget() -> None:
    """Before vLLM 0.21 the graphs are captured after the KV cache: the table's terms added up to 72.25 GiB
    against a 71.27 GiB budget with nothing saying why (Llama-3.1-8B, H100, 0.9, vLLM 0.11)."""
    base = ["explain", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--gpu-memory-utilization", "0.9"]
    old = invoke([*base, "--vllm-version", "0.11"]).stdout
    (graphs,) = [line for line in old.splitlines() if line.startswith("  G CUDA graphs")]
    assert graphs.endswith("GiB  (captured after the KV cache, outside the budget)")
    terms = [float(line.split()[-2]) for line in old.splitlines() if line[:4] in ("  W ", "  A ", "  N ", "  K ")]
    budget = next(float(line.split()[1]) for line in old.splitlines() if line.startswith("    budget"))
    assert abs(sum(terms) - budget) <= 0.02  # the four terms inside the budget fill it
    assert "outside the budget" not in invoke(base).stdout  # 0.33 estimates them into the budget


def test_the_pre_commit_hook_passes_a_commit_that_touches_manifests_without_a_server(tmp_path: Path) -> None:
    """With pass_filenames the hook checked a touched Service or kustomization.yaml on its own and failed the
    commit (exit 4, exit 2); it checks deploy/ as a whole, as the GitHub workflow does."""
    hook = yaml.safe_load((ROOT / "examples" / "ci" / "pre-commit-hooks.yaml").read_text())[0]
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    (deploy / "kubernetes.yaml").write_text(
        (ROOT / "examples" / "qwen2.5-7b-on-rtx4090" / "kubernetes.yaml").read_text()
    )
    (deploy / "service.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: llm\nspec:\n  ports: [{port: 80}]\n"
    )
    (deploy / "kustomization.yaml").write_text("resources: [kubernetes.yaml, service.yaml]\n")
    touched = ["deploy/service.yaml", "deploy/kustomization.yaml"]
    assert all(re.search(hook["files"], name) for name in touched)
    argv = shlex.split(hook["entry"]) + (touched if hook.get("pass_filenames", True) else [])
    assert argv[0] == "vllm-plan"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        out = invoke(argv[1:]).stdout
    assert "PASS" in out


def test_models_and_gpus_take_a_pattern() -> None:
    """324 lines of models and 80 of GPUs, and `vllm-plan models qwen` said 'unexpected extra argument'."""
    rows = [line.split()[0] for line in invoke(["models", "Qwen3-8B"]).stdout.split("\n\n")[0].splitlines()[2:]]
    assert rows == [
        "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B",
        "Qwen/Qwen3-8B",
        "Qwen/Qwen3-8B-AWQ",
        "Qwen/Qwen3-8B-FP8",
        "RedHatAI/Qwen3-8B-FP8-dynamic",
        "unsloth/Qwen3-8B",
        "unsloth/Qwen3-8B-bnb-4bit",
    ]
    keys = [g["key"] for g in json.loads(invoke(["gpus", "h100", "--format", "json"]).stdout)]
    assert set(keys) == {"h100-pcie", "h100-sxm", "h100-nvl"}
    assert "rtx4090" in {g["key"] for g in json.loads(invoke(["gpus", "RTX 4090", "--format", "json"]).stdout)}
    assert _usage_error(["models", "no-such-model"]) == (
        "Error: no catalog model matches 'no-such-model' (run `vllm-plan models` for them all)\n"
    )


def test_perf_reads_a_whole_command_after_dashes_as_explain_does() -> None:
    """The README says perf takes vLLM's serve flags 'as for explain', but `-- vllm serve ...` was 'unexpected
    extra arguments'; the command's --no-async-scheduling counts, its other options are read and ignored."""
    load = ["--gpu", "h100", "--input-len", "1000", "--output-len", "100", "--max-concurrency", "8", "--format", "json"]
    as_options = json.loads(invoke(["perf", "Qwen/Qwen3-8B", "-tp", "2", "--no-async-scheduling", *load]).stdout)
    serve = ["vllm", "serve", "Qwen/Qwen3-8B", "-tp", "2", "--no-async-scheduling", "--enable-prefix-caching"]
    as_command = json.loads(invoke(["perf", *load, "--", *serve]).stdout)
    assert as_command == as_options
    with_async = json.loads(invoke(["perf", *load, "--", *serve[:5]]).stdout)  # the default from 0.12: on
    assert with_async["mean_tpot_ms"] < as_command["mean_tpot_ms"]


def test_what_h41_tripped_on_as_a_new_operator(tmp_path: Path) -> None:
    """One GPU is '1 GPU'; a met latency target reads as the rejected ones do (how far from the target, on the
    target's base: '+202% margin' for 662 ms against 2,000 ms was target / predicted - 1); check's table names
    its columns as recommend's ('KV holds' requests of max len, and the --max-num-seqs vLLM runs at most)."""
    assert invoke(["gpus", "NVIDIA H100 80GB HBM3"]).stdout.splitlines()[-1].startswith("1 GPU; ")
    listed = invoke(["models", "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8"]).stdout
    assert "\n1 model; " in listed and " 32,768 " in listed  # max len with separators, as every command prints it
    args = ["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--concurrency", "16"]
    out = invoke([*args, "--input-len", "1000", "--output-len", "200", "--tpot-ms", "30", "--format", "yaml"]).stdout
    doc = yaml.safe_load(out)
    tpot = doc["performance"]["targets"][0]
    plan = tmp_path / "plan.yaml"
    plan.write_text(out)
    html = invoke(["check", str(plan), "--format", "html"]).stdout
    assert "<th>KV holds</th>" in html and "<th>max-num-seqs</th>" in html, html[:2000]
    table_text = invoke(["check", str(plan)]).stdout.splitlines()
    assert table_text[0].split() == [
        "input",
        "resource",
        "verdict",
        "KV",
        "tokens",
        "KV",
        "holds",
        "max-num-seqs",
        "max",
        "len",
    ]
    assert table_text[2].split()[-2] == f"{doc['prediction']['max_num_seqs']:,}"
    under = 1 - tpot["predicted_ms"] / tpot["target_ms"]
    report = invoke(["render", str(plan), "--emit", "command"]).stdout  # the plan still renders
    assert shlex.join(doc["command"]) in report
    text = invoke([*args, "--input-len", "1000", "--output-len", "200", "--tpot-ms", "30"]).stdout
    assert f"<= 30 (met, {under:.0%} under)" in text, text


def test_explain_says_what_would_make_a_failing_start_work() -> None:
    """vLLM's own error names two knobs; explain now prints the changes check computes, each re-checked:
    Llama-3.1-70B at TP=2 on A100-80GB holds 21,152 tokens of KV, below --max-model-len 32k."""
    args = ["explain", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "NVIDIA A100-SXM4-80GB", "-tp", "2"]
    out = invoke([*args, "--max-model-len", "32k"]).stdout
    fix = out.splitlines()[-1]
    assert fix.startswith("  fix: lower --max-model-len to 21,152, add --kv-cache-dtype fp8 (then "), out
    assert "-tp 4 (then " in fix
    doc = json.loads(invoke([*args, "--max-model-len", "32k", "--format", "json"]).stdout)
    assert len(doc["fixes"]) == 3 and ", ".join(doc["fixes"]) == fix.removeprefix("  fix: ")
    assert json.loads(invoke([*args, "--max-model-len", "8k", "--format", "json"]).stdout)["fixes"] == []
    # never above the model's own limit (it offered 117,968 tokens of KV room for a 32,768-token model)
    qwen = ["explain", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090", "--max-model-len", "200k"]
    assert invoke(qwen).stdout.splitlines()[-1] == "  fix: lower --max-model-len to 32,768 (the model's limit)"


def test_explain_and_perf_judge_the_card_recommend_plans_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A GitOps repository with `gpu:` in vllm-plan.yaml (or VLLM_PLAN_GPU): `recommend` read it, `explain` and
    `perf` said 'no GPU given'. Command line over environment over file, as for recommend."""
    monkeypatch.delenv("VLLM_PLAN_GPU", raising=False)
    monkeypatch.chdir(tmp_path)
    model = ["Qwen/Qwen2.5-7B-Instruct"]
    assert "VLLM_PLAN_GPU" in CliRunner().invoke(cli, ["explain", *model]).stderr
    (tmp_path / "vllm-plan.yaml").write_text("gpu: NVIDIA GeForce RTX 4090\n")
    assert invoke(["explain", *model]).stdout.startswith(f"{model[0]} on NVIDIA GeForce RTX 4090 ")
    perf = ["perf", *model, "--input-len", "100", "--output-len", "10", "--max-concurrency", "2", "--num-prompts", "4"]
    assert invoke(perf).stdout.startswith(f"{model[0]} on NVIDIA GeForce RTX 4090 ")
    monkeypatch.setenv("VLLM_PLAN_GPU", "l4")
    assert invoke(["explain", *model]).stdout.startswith(f"{model[0]} on NVIDIA L4 ")
    assert invoke(["explain", *model, "--gpu", "h100"]).stdout.startswith(f"{model[0]} on NVIDIA H100 80GB HBM3 ")


def test_catalog_suggestions_are_spelled_as_the_catalog_spells_them() -> None:
    r = invoke(["show", "llama-3.1-8b"], 2)
    assert "closest in the catalog: " in r.stderr and "meta-llama/Meta-Llama-3.1-8B" in r.stderr, r.stderr
    assert "meta-llama/meta-llama" not in r.stderr
    several = invoke(["show", "Llama-3.2-1B"], 2).stderr
    assert "(meta-llama/Llama-3.2-1B, unsloth/Llama-3.2-1B)" in several, several


@pytest.fixture
def offline_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """huggingface_hub offline with an empty cache: the hub cannot be asked whether a repository exists."""
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))


@pytest.mark.usefixtures("offline_hub")
def test_a_hub_id_that_cannot_be_fetched_names_close_catalog_ids() -> None:
    r = invoke(["explain", "meta-llama/Llama-3-8B", "--gpu", "h100"], 4)
    assert "cannot fetch meta-llama/Llama-3-8B" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "; closest in the catalog: " in r.stderr and "meta-llama/Meta-Llama-3-8B" in r.stderr, r.stderr
    # the name written is part of the entry's name: that entry first, not Llama-3.2-1B (closer as a whole id)
    assert "closest in the catalog: meta-llama/Meta-Llama-3-8B, " in r.stderr, r.stderr
    far = invoke(["explain", "acme/zzzz-qqqq", "--gpu", "h100"], 4).stderr
    assert "closest in the catalog" not in far, far  # a hint only when something is close


def test_check_names_the_unknown_option_with_its_value_as_vllm_does() -> None:
    r = invoke(["check", "--gpu", "h100", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--bogus-flag", "3"], 1)
    assert "unrecognized arguments: --bogus-flag 3" in r.stdout, r.stdout


def test_rendered_headers_count_gpus_and_tokens_readably() -> None:
    target = ["--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--context", "8192"]
    k8s = invoke(["recommend", *target, "--emit", "k8s", "--replicas", "2"]).stdout
    assert k8s.splitlines()[0].startswith("# Qwen/Qwen3-8B on 2 replicas x 1 GPU: "), k8s.splitlines()[0]
    script = invoke(["recommend", *target, "--emit", "command"]).stdout
    predicted = next(line for line in script.splitlines() if line.startswith("# Predicted: "))
    assert " requests of 8,192 tokens; vLLM runs at most " in predicted, predicted
    kv = predicted.split()[2]
    assert "," in kv and int(kv.replace(",", "")) > 8192, predicted


def test_perf_reads_lengths_as_recommend_does() -> None:
    load = ["--gpu", "h100", "--input-len", "2k", "--output-len", "256", "--max-concurrency", "8"]
    out = invoke(["perf", "Qwen/Qwen3-8B", *load]).stdout
    assert "load: 2,000 in / 256 out" in out, out
    binary = invoke(["perf", "Qwen/Qwen3-8B", *load[:3], "2K", *load[4:]]).stdout
    assert "load: 2,048 in / 256 out" in binary, binary


def test_show_says_what_it_reads_for_an_mla_model() -> None:
    out = invoke(["show", "deepseek-ai/DeepSeek-R1"]).stdout
    assert "read_as: Llama-style decoder + MLA + MoE" in out, out
    assert "head_dim: 56" not in out and "kv_heads:" not in out
    # DeepSeek-R1's config: kv_lora_rank 512 + qk_rope_head_dim 64 = 576 cached a token and layer; 128 + 64 = 192
    assert "kv_cache_dim=576" in out and "qk_head_dim=192" in out and "qk_rope_head_dim=64" in out, out
    dense = invoke(["show", "Qwen/Qwen3-8B"]).stdout
    assert "head_dim: 128" in dense and "read_as: Qwen3-style decoder (q/k norms)\n" in dense, dense
