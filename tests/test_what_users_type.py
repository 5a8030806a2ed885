"""What users type that is not a plain model, card or command, through the CLI: GGUF checkpoints, LoRA adapter
folders, deployment files given where a model goes, `org/name:tag`, a GPU with its count, an instance type, a bare
MIG profile, a pasted command behind variables or `nohup` (and its environment), a card too small for anything.
Each is read as the rest of the tool reads it, or refused in one line that says what to give instead."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from huggingface_hub import constants

from .conftest import HF_CONFIGS, invoke

GGUF_NAMES = [
    # a file name as llama.cpp and the GGUF publishers write it, local or not
    ("Qwen3-8B-Q4_K_M.gguf", "the catalog has it: Qwen/Qwen3-8B"),
    ("/models/Meta-Llama-3.1-8B-Instruct.Q4_K_M.gguf", "the catalog has it: meta-llama/Llama-3.1-8B-Instruct"),
    ("qwen2.5-7b-instruct-q8_0-00001-of-00002.gguf", "the catalog has it: Qwen/Qwen2.5-7B-Instruct"),
    # vLLM's repo_id:quant_type (is_remote_gguf), with a custom prefix, and a *-GGUF repository
    ("unsloth/Qwen3-8B-GGUF:Q4_K_M", "Qwen3-8B"),
    ("unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL", "Qwen3-8B"),
    ("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "Meta-Llama-3.1-8B-Instruct"),
]


@pytest.mark.parametrize(("ref", "names"), GGUF_NAMES)
def test_a_gguf_checkpoint_is_named_as_such(ref: str, names: str) -> None:
    """Was: 'not a local directory, a catalog entry or a hub id; closest: Qwen/Qwen3-8B-AWQ' (a file name), or exit
    4 'cannot fetch' (a GGUF repository, whose config would have been sized as 16-bit safetensors)."""
    err = invoke(["explain", ref, "--gpu", "l4"], exit_code=2).stderr
    assert err.startswith(f"Error: model '{ref}' is a GGUF checkpoint: "), err
    assert "are not modelled; plan the model it was converted from" in err
    assert names in err
    assert err.count("\n") == 1


def test_a_gguf_file_is_known_by_its_magic_bytes(tmp_path: Path) -> None:
    """A GGUF file without the suffix was read as config.json: 'not valid JSON'."""
    weights = tmp_path / "model.bin"
    weights.write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(64))
    err = invoke(["show", str(weights)], exit_code=2).stderr
    assert "is a GGUF checkpoint" in err and "JSON" not in err


def test_a_lora_adapter_folder_names_its_base_model_and_the_flags(tmp_path: Path) -> None:
    """Was: 'adapter has no config.json; give a model directory or a config.json file'."""
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(
        json.dumps({"base_model_name_or_path": "Qwen/Qwen3-8B", "peft_type": "LORA", "r": 32})
    )
    err = invoke(["explain", str(adapter), "--gpu", "l4"], exit_code=2).stderr
    assert "is a LoRA adapter (adapter_config.json) of 'Qwen/Qwen3-8B', not a model" in err
    assert "`vllm-plan explain Qwen/Qwen3-8B --enable-lora --max-lora-rank 32`" in err
    # and the command it gives works
    out = invoke(["explain", "Qwen/Qwen3-8B", "--gpu", "l4", "--enable-lora", "--max-lora-rank", "32"]).stdout
    assert "LoRA" in out or "lora" in out


def test_a_folder_with_neither_config_nor_adapter_says_so(tmp_path: Path) -> None:
    err = invoke(["show", str(tmp_path)], exit_code=2).stderr
    assert "has no config.json; give a model directory or a config.json file" in err


@pytest.mark.parametrize("name", ["kubernetes.yaml", "serve.sh"])
def test_a_deployment_file_given_as_the_model_points_to_check(tmp_path: Path, name: str) -> None:
    """Was: 'kubernetes.yaml (config.json): not valid JSON' and nothing more."""
    path = tmp_path / name
    path.write_text("vllm serve Qwen/Qwen3-8B --max-model-len 8192\n")
    err = invoke(["explain", str(path), "--gpu", "l4"], exit_code=2).stderr
    assert "it is not a model's config.json: to judge a deployment file or launch script, run `vllm-plan check" in err


def test_a_missing_file_name_is_not_sent_to_the_hub() -> None:
    """`deploy/plan.yaml` (not written yet) was taken for a hub id: exit 4, 'cannot fetch deploy/plan.yaml'."""
    err = invoke(["explain", "deploy/plan.yaml", "--gpu", "l4"], exit_code=2).stderr
    assert err == "Error: deploy/plan.yaml does not exist\n"


def test_a_tag_after_the_hub_id_says_how_a_revision_is_written() -> None:
    """Was: "'Qwen/Qwen3-8B:main' is not a valid hub repository id" (huggingface_hub's words)."""
    err = invoke(["show", "Qwen/Qwen3-8B:main"], exit_code=2).stderr
    assert err == (
        "Error: model 'Qwen/Qwen3-8B:main': a hub id has no ':main'; a revision is written Qwen/Qwen3-8B@REV "
        "(or --revision REV)\n"
    )


@pytest.mark.parametrize(
    ("gpu", "count", "key"),
    [("h100x8", 8, "h100-sxm"), ("8xH100", 8, "h100-sxm"), ("8 x A100", 8, "a100-80gb"), ("H100:4", 4, "h100-sxm")],
)
def test_a_gpu_written_with_its_count_says_where_the_count_goes(gpu: str, count: int, key: str) -> None:
    """Was: "unknown GPU 'h100x8'; closest: h100-nvl, h100-sxm, h800, h200"."""
    err = invoke(["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", gpu, "--concurrency", "8"], exit_code=2).stderr
    assert f"is {count} x " in err
    assert f"--gpu names one card (--gpu {key}); give the count as --gpus-per-node {count} to `recommend`" in err


def test_a_card_name_ending_in_x_is_still_that_card() -> None:
    out = invoke(["explain", "Qwen/Qwen3-8B", "--gpu", "MI300X", "--format", "json"]).stdout
    assert json.loads(out)["gpu"] == "AMD Instinct MI300X"


def test_an_instance_type_names_its_card_and_count() -> None:
    err = invoke(["explain", "Qwen/Qwen3-8B", "--gpu", "p4d.24xlarge"], exit_code=2).stderr
    assert "'p4d.24xlarge' is a cloud instance type: 8 x NVIDIA A100-SXM4-40GB" in err
    assert "(--gpu a100-40gb)" in err
    err = invoke(["check", "--gpu", "p5.48xlarge", "vllm serve Qwen/Qwen3-8B"], exit_code=2).stderr
    assert "8 x NVIDIA H100 80GB HBM3" in err


@pytest.mark.parametrize("gpu", ["1g.10gb", "MIG 3g.40gb", "mig-1g.10gb"])
def test_a_mig_profile_alone_is_a_mig_slice(gpu: str) -> None:
    """'1g.10gb' was an unknown GPU with 'closest: a10g, a10', 'MIG 3g.40gb' 'names no GPU model'."""
    err = invoke(["explain", "Qwen/Qwen3-8B", "--gpu", gpu], exit_code=2).stderr
    assert "is a MIG slice: its memory is a fraction of the card's; give --gpu-memory-gib" in err


@pytest.mark.parametrize(
    "command",
    [
        "CUDA_VISIBLE_DEVICES=0,1 vllm serve Qwen/Qwen3-8B -tp 2 --max-model-len 8192",
        "nohup vllm serve Qwen/Qwen3-8B -tp 2 --max-model-len 8192 > vllm.log 2>&1 &",
        "uv run vllm serve Qwen/Qwen3-8B -tp 2 --max-model-len 8192",
        "$ vllm serve Qwen/Qwen3-8B -tp 2 --max-model-len 8192",
    ],
)
def test_a_pasted_command_with_what_a_shell_puts_first_is_read_as_check_reads_it(command: str) -> None:
    """Quoted, these were 'model ... is not a local directory, a catalog entry or a hub id'; after `--`, 'two models
    given: CUDA_VISIBLE_DEVICES=0,1 and the command's Qwen/Qwen3-8B' (check read them all)."""
    quoted = invoke(["explain", "--gpu", "h100", command]).stdout
    assert "TP=2 PP=1 DP=1 (2 GPUs)" in quoted and "max_model_len 8,192" in quoted
    if not command.startswith("$"):
        words = command.split(" > ")[0].split()
        after = invoke(["explain", "--gpu", "h100", "--", *words]).stdout
        assert "TP=2 PP=1 DP=1 (2 GPUs)" in after and "max_model_len 8,192" in after


def test_explain_applies_the_environment_of_a_pasted_command_as_check_does() -> None:
    """`VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve M --max-model-len 65536`: check passed it (vLLM only warns), explain
    said 'vLLM FAILS at startup' with the error the variable lifts."""
    command = "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve Qwen/Qwen3-8B --max-model-len 65536"
    out = invoke(["explain", "--gpu", "h100", command]).stdout
    assert "note: VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set, so vLLM only warns: max_model_len 65536" in out
    assert "Verdict: vLLM starts" in out
    doc = json.loads(invoke(["explain", "--gpu", "h100", command, "--format", "json"]).stdout)
    assert doc["verdict"] == "starts" and doc["errors"] == [] and len(doc["environment_notes"]) == 1
    assert "PASS" in invoke(["check", "--gpu", "h100", command]).stdout
    # without the variable both fail
    plain = command.split(" ", 1)[1]
    assert "Verdict: vLLM FAILS at startup" in invoke(["explain", "--gpu", "h100", plain]).stdout
    invoke(["check", "--gpu", "h100", plain], exit_code=1)


def test_explain_reads_vllm_use_v1_from_a_pasted_command() -> None:
    out = invoke(["explain", "--gpu", "h100", "--vllm-version", "0.8.5", "VLLM_USE_V1=0 vllm serve Qwen/Qwen3-8B"])
    assert "note: VLLM_USE_V1=0: vLLM 0.8.5 runs the V0 engine" in out.stdout


def test_a_card_too_small_for_vllms_own_overheads_names_no_gpu_count() -> None:
    """A 0.5 GiB card: 'the weights alone need at least 6,186,680,320 such GPUs; try --gpus-per-node 8 --nodes
    773335040' (a division by a budget that holds nothing beside the overheads)."""
    args = ["recommend", "--model", "Qwen/Qwen3-8B", "--gpu-memory-gib", "0.5", "--concurrency", "10"]
    err = invoke(args, exit_code=3).stderr
    assert "does not hold vLLM's own activation peak, non-torch memory and CUDA graphs" in err
    assert "no number of these GPUs serves it" in err and "--nodes" not in err
    # a card that holds them still gets the count of GPUs and nodes the weights need
    big = ["recommend", "--model", "meta-llama/Llama-3.1-405B-Instruct", "--gpu", "t4", "--concurrency", "1"]
    assert "try --gpus-per-node 8 --nodes" in invoke(big, exit_code=3).stderr


@pytest.mark.parametrize(
    ("name", "starts"),
    [("r.json", "["), ("r.yaml", "- file:"), ("r.html", "<!DOCTYPE html>"), ("r.md", "### "), ("r.txt", "input")],
)
def test_check_writes_o_file_in_the_format_its_name_says(tmp_path: Path, name: str, starts: str) -> None:
    """`check deploy/ -o report.json` wrote the text table into report.json (and report.html, report.md alike)."""
    out = tmp_path / name
    invoke(["check", "--gpu", "l4", "vllm serve Qwen/Qwen3-8B --max-model-len 8192", "-o", str(out)])
    assert out.read_text().startswith(starts)


def test_an_explicit_format_wins_over_the_o_file_name(tmp_path: Path) -> None:
    out = tmp_path / "e.json"
    invoke(["explain", "Qwen/Qwen3-8B", "--gpu", "l4", "--format", "yaml", "-o", str(out)])
    assert out.read_text().startswith("model: Qwen/Qwen3-8B")
    invoke(["explain", "Qwen/Qwen3-8B", "--gpu", "l4", "-o", str(tmp_path / "e2.json")])
    assert json.loads((tmp_path / "e2.json").read_text())["model"] == "Qwen/Qwen3-8B"


def test_render_reads_a_plan_piped_from_recommend() -> None:
    """`recommend ... --format json | render - --emit command` was 'cannot read -: No such file or directory'."""
    plan = invoke(["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "l4", "--concurrency", "4", "--format", "json"])
    out = invoke(["render", "-", "--emit", "command"], input=plan.stdout).stdout
    assert "exec vllm serve Qwen/Qwen3-8B " in out and "--max-num-seqs 4" in out
    err = invoke(["render", "-"], exit_code=2, input="").stderr
    assert err == "Error: <stdin> is not a vllm-plan plan document (apiVersion vllm-plan/v1, kind Plan)\n"


@pytest.mark.parametrize("gpu", ["Intel(R) Arc(TM) A770 Graphics", "Gaudi2", "HL-225", "TPU v5e", "trn1"])
def test_an_accelerator_of_another_platform_is_named_as_such(gpu: str) -> None:
    """Was 'unknown GPU ...; closest: radeon-8060s, radeon-8050s' for an Intel Arc, 'closest: a2' for a Gaudi2."""
    err = invoke(["explain", "Qwen/Qwen3-0.6B", "--gpu", gpu], exit_code=2).stderr
    assert "runs vLLM through another platform than CUDA or ROCm: vllm-plan models NVIDIA and AMD GPUs only" in err
    assert "closest" not in err


def test_a_setting_from_the_environment_or_project_file_is_named_in_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stale `export VLLM_PLAN_GPU=bogus` gave "unknown GPU 'bogus'", a GPU the user never typed on the line."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLLM_PLAN_GPU", "bogus")
    err = invoke(["recommend", "--model", "Qwen/Qwen3-8B", "--concurrency", "4"], exit_code=2).stderr
    assert err.startswith("Error: VLLM_PLAN_GPU: unknown GPU 'bogus'")
    assert invoke(["explain", "Qwen/Qwen3-8B"], exit_code=2).stderr.startswith("Error: VLLM_PLAN_GPU: unknown GPU")
    invoke(["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "l4", "--concurrency", "4"])  # the option wins
    monkeypatch.delenv("VLLM_PLAN_GPU")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # the hub as on a machine without network: not asked
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    (tmp_path / "vllm-plan.yaml").write_text("gpu: l4\nmodel: nope/missing\n")
    err = invoke(["recommend", "--concurrency", "4"], exit_code=4).stderr  # the hub's exit code is kept
    assert err.startswith(f"Error: {tmp_path / 'vllm-plan.yaml'}: model: cannot fetch nope/missing")
    err = invoke(["perf", "--input-len", "10", "--output-len", "10"], exit_code=4).stderr
    assert err.startswith(f"Error: {tmp_path / 'vllm-plan.yaml'}: model: cannot fetch nope/missing")
    # a model given on the line is not the file's
    err = invoke(["explain", "nope/other"], exit_code=4).stderr
    assert err.startswith("Error: cannot fetch nope/other")


def test_a_provider_accelerator_label_is_read_by_its_table() -> None:
    """`--gpu nvidia-tesla-a100` (GKE's and EKS's accelerator value) was read by the name rules as `a100`, the 80 GB
    card, where GKE's value is the 40 GB one: a plan with twice the memory the node has."""
    err = invoke(["explain", "Qwen/Qwen3-0.6B", "--gpu", "nvidia-tesla-a100"], exit_code=2).stderr
    assert "accelerator label value for a100-40gb or a100-80gb" in err
    label = "cloud.google.com/gke-accelerator=nvidia-tesla-a100"
    doc = json.loads(invoke(["explain", "Qwen/Qwen3-0.6B", "--gpu", label, "--format", "json"]).stdout)
    assert doc["gpu"] == "NVIDIA A100-SXM4-40GB"
    # the documented defaults stay: `a100` is the 80 GB card, a provider value naming one card is that card
    for gpu, name in [("a100", "NVIDIA A100-SXM4-80GB"), ("nvidia-l4", "NVIDIA L4"), ("nvidia-tesla-t4", "Tesla T4")]:
        doc = json.loads(invoke(["explain", "Qwen/Qwen3-0.6B", "--gpu", gpu, "--format", "json"]).stdout)
        assert doc["gpu"] == name


@pytest.mark.parametrize(
    "line", ["GPU[0]\t\t: Card Series: \t\tAMD Instinct MI300X OAM", "MARKET_NAME: AMD Instinct MI300X"]
)
def test_a_whole_rocm_smi_or_amd_smi_line_names_its_card(line: str) -> None:
    """README: --gpu takes the name rocm-smi prints; its line pasted whole was 'unknown GPU ...; closest: mi300x'
    (nvidia-smi's lines were read)."""
    doc = json.loads(invoke(["explain", "Qwen/Qwen3-0.6B", "--gpu", line, "--format", "json"]).stdout)
    assert doc["gpu"] == "AMD Instinct MI300X"


@pytest.mark.parametrize(
    "args",
    [
        ["--model", "Qwen/Qwen3-8B", "Qwen/Qwen3-4B"],
        ["--model", "Qwen/Qwen3-8B", "--", "vllm", "serve", "Qwen/Qwen3-4B"],
        ["--model", "Qwen/Qwen3-8B", "vllm serve Qwen/Qwen3-4B"],
    ],
)
def test_two_different_models_are_refused_with_model_too(args: list[str]) -> None:
    """`explain --model A B` and `--model A -- vllm serve B` explained A and dropped B without a word (`explain A
    -- vllm serve B` was already refused)."""
    err = invoke(["explain", "--gpu", "l4", *args], exit_code=2).stderr
    assert err == "Error: two models given: --model Qwen/Qwen3-8B and Qwen/Qwen3-4B; give the model once\n"
    same = [a.replace("Qwen3-4B", "Qwen3-8B") for a in args]
    assert invoke(["explain", "--gpu", "l4", *same]).stdout.startswith("Qwen/Qwen3-8B on NVIDIA L4")


def test_a_quantization_the_model_has_not_lists_those_it_has() -> None:
    """'no weights option matches --quantization gptq' named nothing to pick instead; `FP8` (as vLLM's logs write
    it) matched nothing either."""
    args = ["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--concurrency", "8", "--quantization"]
    err = invoke([*args, "gptq"], exit_code=2).stderr
    assert err == (
        "Error: no weights option matches --quantization gptq (for Qwen/Qwen3-8B on NVIDIA H100 80GB HBM3: "
        "awq, bfloat16, fp8)\n"
    )
    assert "AWQ 4-bit" in invoke([*args, "AWQ"]).stdout


def test_perf_sweep_and_max_concurrency_are_not_given_together() -> None:
    """`--sweep 1,2,4 --max-concurrency 8` printed 'at most 8 in flight' above a curve over 1, 2 and 4."""
    args = ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "100", "--output-len", "10", "--sweep", "1,2"]
    err = invoke([*args, "--max-concurrency", "8"], exit_code=2).stderr
    assert err == "Error: --sweep gives the concurrencies of the curve: drop --max-concurrency (or --sweep)\n"
    assert "at most" not in invoke(args).stdout


def test_a_listing_pattern_does_not_cut_a_number() -> None:
    """`models qwen3` listed DeepSeek-R1-Distill-Qwen-32B (squeezed, 'qwen32b' holds 'qwen3'); `gpus a100` would list
    an RTX A1000 alike."""
    out = invoke(["models", "qwen3"]).stdout
    assert "Qwen/Qwen3-8B" in out and "DeepSeek-R1-Distill-Qwen-32B" not in out
    assert "meta-llama/Llama-3.1-8B-Instruct" in invoke(["models", "llama3"]).stdout
    assert "Qwen/Qwen2.5-7B-Instruct" in invoke(["models", "qwen2"]).stdout  # 2 of 2.5: a decimal, not cut
    keys = [line.split()[0] for line in invoke(["gpus", "a100"]).stdout.splitlines()[2:] if line.strip()]
    assert all(k.startswith("a100") for k in keys[:-1]), keys


def test_a_mig_instance_with_its_total_keeps_its_boards_chip() -> None:
    """`--gpu 'NVIDIA A100-SXM4-80GB MIG 3g.40gb' --gpu-memory-gib 39.5` (torch's name of the instance, the total it
    prints) was a custom card of compute capability 8.0 and no vendor; now the A100's chip, one instance of it."""
    args = ["explain", "Qwen/Qwen3-0.6B", "--gpu-memory-gib", "19.5", "--format", "json", "--gpu"]
    doc = json.loads(invoke([*args, "NVIDIA H100 80GB HBM3 MIG 2g.20gb"]).stdout)
    assert doc["gpu"] == "NVIDIA H100 80GB HBM3 MIG 2g.20gb (19.5 GiB)" and doc["gpu_total_gib"] == 19.5
    assert json.loads(invoke([*args, "bogus MIG 1g.5gb"]).stdout)["gpu"] == "bogus MIG 1g.5gb (19.5 GiB)"
    # the FP8 the H100's chip runs (a custom card of capability 8.0 has none)
    fp8 = json.loads(invoke([*args, "NVIDIA H100 80GB HBM3 MIG 2g.20gb", "--quantization", "fp8"]).stdout)
    assert "FP8" in fp8["quantization"] or "fp8" in fp8["quantization"]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_recommend_emit_with_a_document_format_is_refused(fmt: str) -> None:
    """`recommend --emit command --format json` printed the script and dropped --format without a word."""
    args = ["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "l4", "--concurrency", "4", "--emit", "command"]
    err = invoke([*args, "--format", fmt], exit_code=2).stderr
    assert err.startswith(f"Error: --emit prints the artifacts (with -o DIR, plan.yaml beside them), --format {fmt}")
    assert invoke(args).stdout.startswith("#!/bin/sh")


@pytest.mark.parametrize(
    "args",
    [
        ["check", ""],
        ["check", "--gpu", "l4", ""],
        ["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "l4", "--concurrency", "4", "-o", ""],
        ["render", ""],
        ["explain", "Qwen/Qwen3-8B", "--gpu", "l4", "-o", ""],
        ["explain", "--log", "", "--gpu", "l4"],
        ["perf", "--compare", "", "--gpu", "l4"],
    ],
)
def test_an_empty_file_or_folder_name_is_refused(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check "$DIR"` / `-o "$OUT"` with the variable unset read '' as '.': check judged the whole working directory
    (exit 0 when it passed), recommend -o wrote its artifacts into it."""
    monkeypatch.chdir(tmp_path)
    err = invoke(args, exit_code=2).stderr
    assert "an empty" in err and "(an unset shell variable?)" in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_an_empty_word_inside_a_checked_command_is_still_read() -> None:
    result = invoke(["check", "--gpu", "h100", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--api-key", ""])
    assert "PASS" in result.stdout


def test_a_folder_of_gguf_files_says_gguf_and_a_local_folder_named_gguf_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A llama.cpp download (GGUF files, no config.json) said only 'has no config.json'."""
    monkeypatch.chdir(tmp_path)
    gguf = tmp_path / "qwen-gguf"
    gguf.mkdir()
    (gguf / "qwen3-8b-q4_k_m.gguf").write_bytes(b"GGUF\x03\x00\x00\x00")
    err = invoke(["show", str(gguf)], exit_code=2).stderr
    assert "holds GGUF files ('qwen3-8b-q4_k_m.gguf', ...) and no config.json" in err
    # a local folder whose name ends in -GGUF but holds a config.json is read as any local model
    named = tmp_path / "Qwen3-0.6B-GGUF"
    named.mkdir()
    named.joinpath("config.json").write_text((HF_CONFIGS / "Qwen--Qwen3-0.6B" / "config.json").read_text())
    assert "architecture: Qwen3ForCausalLM" in invoke(["show", "Qwen3-0.6B-GGUF"]).stdout


def test_calibrate_takes_the_servers_command_after_its_result_files() -> None:
    """`calibrate r.json --gpu l40s -- vllm serve M -dp 4` (as perf takes a command) read `vllm`, `serve`, ... as
    result files: 'vllm: cannot read it: No such file or directory'."""
    result = Path(__file__).parent / "data" / "bench_results" / "nerdalert-llama-3.2-3b-4xl40s-10qps.json"
    base = ["calibrate", str(result), "--gpu", "l40s", "--dry-run"]
    by_options = invoke([*base, "-dp", "4"]).stdout
    serve = ["vllm", "serve", "meta-llama/Llama-3.2-3B-Instruct", "-dp", "4"]
    assert invoke([*base, "--", *serve]).stdout == by_options
    assert invoke([*base, " ".join(serve)]).stdout == by_options
    err = invoke(["calibrate", "--gpu", "l40s", "--", *serve], exit_code=2).stderr
    assert "give the result files before the command" in err


def test_a_fifo_or_device_is_refused_not_read(tmp_path: Path) -> None:
    """`render FIFO` blocked forever in open() (no writer); `show /dev/zero` said '/dev/zero does not exist'."""
    fifo = tmp_path / "plan.fifo"
    os.mkfifo(fifo)
    err = invoke(["render", str(fifo)], exit_code=2).stderr
    assert "not a regular file (a device, FIFO or socket), not a plan document" in err
    err = invoke(["show", str(fifo)], exit_code=2).stderr
    assert "is not a regular file (a device, FIFO or socket)" in err


def test_calibrate_says_when_a_multiplier_stops_at_the_fits_bound() -> None:
    """Three light-load runs left compute at x5.000, the search's upper bound, and the profile was written (and used
    by every later `perf` on that GPU) without a word."""
    files = sorted((Path(__file__).parent / "data" / "bench_results").glob("nerdalert-llama-3.2-3b-4xl40s-*.json"))
    args = ["calibrate", *map(str, files), "--gpu", "l40s", "-dp", "4", "--dry-run"]
    result = invoke(args)
    assert "compute x5.000" in result.stdout
    assert "note: compute stopped at the fit's bound (x0.2 or x5)" in result.stderr
    assert json.loads(invoke([*args, "--format", "json"]).stdout)["at_bound"] == ["compute"]
