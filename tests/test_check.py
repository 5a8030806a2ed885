"""`vllm-plan check`: manifests that fit, crash, miss their load or are malformed, with exit codes and messages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ROOT, invoke
from .kube_server import KubeServer, node

DATA = ROOT / "tests" / "data" / "check"


def test_fitting_manifest_passes() -> None:
    out = invoke(["check", str(DATA / "fits.yaml")]).stdout
    assert "PASS" in out and "Deployment/llm/qwen" in out


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("kv_too_small.yaml", "To serve at least one request with the model's max seq len (32768)"),
        ("weights_too_big.yaml", "Failed to load model - not enough GPU memory"),
        ("misses_concurrency.yaml", "below the promised 500"),
        ("removed_flag.yaml", "--swap-space was removed in vLLM 0.18.0"),
        ("tp_mismatch.yaml", "1 GPU(s) requested but TP x PP = 2 x 1 = 2"),
        ("tp_mismatch.yaml", "without a memory-backed /dev/shm"),
    ],
)
def test_failing_manifests_exit_1_with_the_reason(name: str, message: str) -> None:
    result = invoke(["check", str(DATA / name)], exit_code=1)
    assert message in result.stdout
    assert "FAIL" in result.stdout


def test_failures_come_with_computed_fixes() -> None:
    out = invoke(["check", str(DATA / "kv_too_small.yaml"), "--format", "json"], exit_code=1).stdout
    (r,) = json.loads(out)
    assert r["verdict"] == "fail" and r["gpu"] == "NVIDIA GeForce RTX 3090"
    fixes = " ".join(r["suggestions"])
    # fp8 KV alone would not fit one 32k request there, so it is not offered; a shorter context and TP=2 are.
    assert "lower --max-model-len to" in fixes and "-tp 2 (then" in fixes and "fp8" not in fixes
    cmd = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 16384 --gpu-memory-utilization 0.7"
    (r,) = json.loads(invoke(["check", cmd, "--gpu", "rtx3090", "--format", "json"], exit_code=1).stdout)
    assert any(f.startswith("add --kv-cache-dtype fp8 (then") for f in r["suggestions"])
    (r,) = json.loads(invoke(["check", str(DATA / "misses_concurrency.yaml"), "--format", "json"], exit_code=1).stdout)
    assert any("replicas" in f for f in r["suggestions"])


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("malformed.yaml", "malformed YAML at line"),
        ("no_vllm.yaml", "no vLLM server found"),
        ("unknown_kinds.yaml", "no vLLM server found"),
        ("does-not-exist.yaml", "no such file or directory"),
    ],
)
def test_bad_inputs_exit_2(name: str, message: str) -> None:
    result = invoke(["check", str(DATA / name)], exit_code=2)
    assert message in result.stderr and "Traceback" not in result.output


def test_not_evaluated_is_exit_4_and_says_why() -> None:
    result = invoke(["check", str(DATA / "no_gpu.yaml")], exit_code=4)
    assert "NOT EVALUATED" in result.stdout and "no GPU type" in result.stdout


def test_command_stdin_and_slo_options() -> None:
    cmd = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192"
    invoke(["check", cmd, "--gpu", "h100", "--concurrency", "100"])
    r = invoke(["check", cmd, "--gpu", "rtx4090", "--concurrency", "100", "--context", "8192"], exit_code=1)
    assert "below the promised 100" in r.stdout
    r = invoke(["check", "-", "--gpu", "h100", "--context", "16384"], input=cmd + "\n", exit_code=1)
    assert "exceed --max-model-len 8,192" in r.stdout


def test_model_alias_for_container_paths() -> None:
    cmd = "vllm serve /models/qwen --max-model-len 8192"
    r = invoke(["check", cmd, "--gpu", "h100"], exit_code=4)
    assert "/models/qwen does not exist" in r.stdout
    invoke(["check", cmd, "--gpu", "h100", "--model-alias", "/models/qwen=Qwen/Qwen3-8B"])
    assert "expected NAME=MODEL" in invoke(["check", cmd, "--model-alias", "nonsense"], exit_code=2).stderr


def test_every_example_artifact_passes() -> None:
    out = json.loads(invoke(["check", str(ROOT / "examples"), "--format", "json"]).stdout)
    kinds = {r["resource"].split("/")[0] for r in out}
    assert {"Deployment", "LeaderWorkerSet", "plan", "command", "ExecStart", "service", "modelSpec"} <= kinds
    assert all(r["verdict"] == "pass" for r in out)


def test_github_actions_workflow_command(tmp_path: Path) -> None:
    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions.yaml").read_text())
    step = next(s for s in workflow["jobs"]["check"]["steps"] if s.get("name") == "Check vLLM deployments")
    shutil.copytree(ROOT / "examples" / "llama-3.1-70b-on-4xh100", tmp_path / "deploy")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["bash", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "vllm-plan-check.json").read_text())
    assert report and all(r["verdict"] == "pass" for r in report)
    hook = yaml.safe_load((ROOT / "examples" / "ci" / "pre-commit-hooks.yaml").read_text())[0]
    assert hook["entry"].startswith("vllm-plan check")


def _check_with_cluster(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    return subprocess.run(
        [sys.executable, "-m", "recommender", "check", str(DATA / "no_gpu.yaml"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_from_cluster_picks_gpu_and_checks_scheduling(tmp_path: Path) -> None:
    nodes = [
        node("gpu-a", "NVIDIA-H100-80GB-HBM3", 8),
        node("gpu-b", "NVIDIA-H100-80GB-HBM3", 8),
        node("gpu-c", "NVIDIA-L4", 1),
    ]
    with KubeServer(nodes) as server:
        r = _check_with_cluster(server.kubeconfig(tmp_path / "kubeconfig"), "--from-cluster")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "PASS" in r.stdout
        assert ("/api/v1/nodes", "Bearer test-token") in server.requests
    with KubeServer(
        [node("small", "NVIDIA-H100-80GB-HBM3", 1), node("cordoned", "NVIDIA-H100-80GB-HBM3", 8, unschedulable=True)]
    ) as server:
        r = _check_with_cluster(server.kubeconfig(tmp_path / "kubeconfig2"), "--from-cluster", "test")
        assert r.returncode == 1
        assert "no NVIDIA-H100-80GB-HBM3 node has 2 allocatable GPUs (at most 1)" in r.stdout
    with KubeServer(nodes) as server:
        r = _check_with_cluster(server.kubeconfig(tmp_path / "kubeconfig3"), "--from-cluster", "missing-context")
        assert r.returncode == 2 and "cannot load the kubeconfig" in r.stderr


def test_warmup_without_headroom_fails_the_check() -> None:
    # 0.99 x 79.19 GiB leaves 0.79 GiB + vLLM's 150 MiB buffer outside the budget; the sampler warm-up over
    # 1,024 requests x 152,064 logits x 13.5 B needs 1.96 GiB after the KV cache is allocated. explain warns
    # (vLLM reaches that point), check fails the deployment.
    cmd = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192 --gpu-memory-utilization 0.99 --max-num-seqs 1024"
    (r,) = json.loads(invoke(["check", cmd, "--gpu", "h100", "--format", "json"], exit_code=1).stdout)
    assert any("startup may run out of memory" in f for f in r["failures"])
    d = json.loads(invoke(["explain", "--gpu", "h100", "--format", "json", "--", *cmd.split()]).stdout)
    assert d["fits"] is True and d["error_kinds"] == [] and any("may run out of memory" in w for w in d["warnings"])


def test_check_takes_a_command_after_double_dash() -> None:
    out = invoke(
        ["check", "--gpu", "h100", "--format", "json", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--max_model_len=8k"]
    )
    (r,) = json.loads(out.stdout)
    assert r["status"] == "pass" and r["read"]["max_model_len"] == 8000 and r["model"] == "Qwen/Qwen3-8B"


def test_values_of_host_and_port_are_not_the_model() -> None:
    cmd = "vllm serve --host 0.0.0.0 --port 8000 --model Qwen/Qwen3-8B --max-model-len 8192"
    (r,) = json.loads(invoke(["check", cmd, "--gpu", "h100", "--format", "json"]).stdout)
    assert r["model"] == "Qwen/Qwen3-8B" and r["status"] == "pass"


def test_flags_the_target_release_does_not_have_fail_with_their_fix() -> None:
    cmd = "vllm serve Qwen/Qwen3-8B --max-model-len 8192 --kv-cache-memory-bytes 8G"
    r = invoke(["check", cmd, "--gpu", "h100", "--vllm-version", "0.10.1"], exit_code=1)
    assert "--kv-cache-memory-bytes arrived in vLLM 0.10.2 (target 0.10.1)" in r.stdout
    assert "(vLLM's parser: unrecognized arguments: --kv-cache-memory-bytes 8G)" in r.stdout
    r = invoke(["check", "vllm serve Qwen/Qwen3-8B --max-num 8", "--gpu", "h100"], exit_code=1)
    assert "ambiguous option: --max-num could match" in r.stdout


def test_gpu_count_and_shm_failures_have_their_own_fixes(tmp_path: Path) -> None:
    manifest = tmp_path / "d.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: q}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.33.0\n"
        "        args: [Qwen/Qwen3-8B, --tensor_parallel_size, '2', --max-model-len, '8192']\n"
        "        resources: {limits: {nvidia.com/gpu: '1'}}\n"
    )
    (r,) = json.loads(invoke(["check", str(manifest), "--gpu", "h100", "--format", "json"], exit_code=1).stdout)
    assert r["failure_kinds"][:2] == ["gpu-count", "shm"] and r["read"]["tensor_parallel_size"] == 2
    fixes = " ".join(r["suggestions"])
    assert "nvidia.com/gpu: 2" in fixes and "medium: Memory" in fixes and "fp8" not in fixes


def test_more_gpus_than_the_engine_uses_warns_but_passes(tmp_path: Path) -> None:
    """vLLM starts on the first TP x PP GPUs it sees: idle GPUs cost money but do not stop the server."""
    manifest = tmp_path / "d.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: q}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.33.0\n"
        "        args: [Qwen/Qwen3-8B, --max-model-len, '8192']\n"
        "        resources: {limits: {nvidia.com/gpu: '2'}}\n"
    )
    (r,) = json.loads(invoke(["check", str(manifest), "--gpu", "h100", "--format", "json"]).stdout)
    assert r["status"] == "pass" and r["failure_kinds"] == []
    assert any("2 GPU(s) requested but TP x PP = 1 x 1 = 1: 1 GPU(s) idle" in w for w in r["warnings"])
    assert any("nvidia.com/gpu: 1" in w for w in r["warnings"])


def test_compose_entrypoint_interpolation_and_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("TP=2\n")
    (tmp_path / "compose.yaml").write_text(
        "services:\n  llm:\n    image: vllm/vllm-openai:v0.33.0\n    ipc: host\n"
        '    entrypoint: ["vllm", "serve"]\n'
        "    command: Qwen/Qwen3-8B --tensor-parallel-size ${TP} --max-model-len ${LEN:-8192}\n"
        "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 2, capabilities: [gpu]}]}}}\n"
    )
    (r,) = json.loads(invoke(["check", str(tmp_path / "compose.yaml"), "--gpu", "h100", "--format", "json"]).stdout)
    assert r["status"] == "pass" and r["read"]["tensor_parallel_size"] == 2 and r["read"]["max_model_len"] == 8192


def test_a_script_with_an_unset_variable_is_not_evaluated_and_pgrep_is_no_server(tmp_path: Path) -> None:
    script = tmp_path / "serve.sh"
    script.write_text(
        '#!/bin/bash\nMODEL=Qwen/Qwen3-8B\npgrep -f "vllm.entrypoints.openai.api_server" > /dev/null && exit 0\n'
        "nohup vllm serve $MODEL \\\n  --tensor-parallel-size $TP_SIZE > log 2>&1 &\n"
    )
    r = invoke(["check", str(script), "--gpu", "h100", "--format", "json"], exit_code=4)
    (only,) = json.loads(r.stdout)  # the pgrep line is not a server
    assert only["status"] == "not-evaluated" and only["not_evaluated_because"] == ["unresolved $TP_SIZE"]
    assert only["model"] == "Qwen/Qwen3-8B"


def test_non_utf8_and_hostile_shapes_are_one_line_errors(tmp_path: Path) -> None:
    cases = {
        "latin1.yaml": "kind: Deployment\nmetadata: {name: caf\xe9}\n".encode("latin-1"),
        "meta.yaml": b"apiVersion: v1\nkind: Pod\nmetadata: x\nspec: {}\n",
        "cmd.yaml": b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: vllm/vllm-openai, command: 'vllm serve x'}\n",
        "services.yaml": b"services: [a, b]\n",
        "helm.yaml": b"servingEngineSpec:\n  modelSpec:\n  - {name: m, modelURL: Qwen/Qwen3-8B, requestGPU: one}\n",
        "unit.yaml": b"kind: ConfigMap\napiVersion: v1\nmetadata: {name: c}\ndata:\n  unit: |\n    [Service]\n    ExecStart=/bin/true\n",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        r = invoke(["check", str(tmp_path / name), "--gpu", "h100"], exit_code=2)
        assert r.stderr.count("\n") == 1 and name in r.stderr and "Traceback" not in r.output, (name, r.stderr)


def test_a_warmup_crash_is_fixed_by_utilization_not_by_tp() -> None:
    # gpt-oss-20b at 0.95 on vLLM 0.19 runs out of memory in the sampler warm-up (A001); TP=2 crashes the same way
    # (A002), so it is not offered; a lower utilization that clears the warm-up is.
    cmd = "vllm serve openai/gpt-oss-20b --gpu-memory-utilization 0.95 --max-model-len 8192"
    args = ["check", cmd, "--gpu", "h100", "--vllm-version", "0.19", "--format", "json"]
    (r,) = json.loads(invoke(args, exit_code=1).stdout)
    assert any(f.startswith("CUDA out of memory occurred when warming up sampler") for f in r["failures"])
    assert r["suggestions"] and r["suggestions"][0].startswith("lower --gpu-memory-utilization to 0.9")
    assert not any("-tp 2" in f for f in r["suggestions"])


def test_multi_document_yaml_problems_by_kind(tmp_path: Path) -> None:
    # The documents beside a bad one are still read; a syntax error is "malformed YAML" (with its line when the
    # parser knows it), a valid document refused by a bound says so: keyed on the error's kind, not its text.
    good = (DATA / "kv_too_small.yaml").read_text()
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8)
    )
    cases = {"syntax": ("key: [unclosed\n", "malformed YAML at line 1"), "bomb": (bomb, "YAML refused: more than")}
    for name, (bad, expected) in cases.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"{good}\n---\n{bad}")
        out = invoke(["check", str(path), "--format", "json"], exit_code=1).stdout
        rows = json.loads(out)
        assert [r["status"] for r in rows] == ["fail", "not-evaluated"]
        assert expected in rows[1]["not_evaluated_because"][0]


def test_a_trailing_options_hook_the_shell_expands_to_nothing_is_judged_without_it(tmp_path: Path) -> None:
    """`"$@"` (a script run without arguments) and `$EXTRA_ARGS` set nowhere expand to nothing: the server is judged
    as the shell runs it, and says so; the same words in the model's place or as a flag's value still block it."""
    script = tmp_path / "serve.sh"
    script.write_text('vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096 "$@"\n')
    result = invoke(["check", str(script), "--gpu", "h100"])
    assert "PASS" in result.stdout and "$@ taken as empty (the script run without arguments)" in result.stdout
    script.write_text("vllm serve Qwen/Qwen2.5-7B-Instruct $EXTRA_ARGS\n")
    result = invoke(["check", str(script), "--gpu", "h100"])
    assert "$EXTRA_ARGS taken as empty (set nowhere in the file" in result.stdout
    for text in ('vllm serve "$@"\n', "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len $LEN\n"):
        script.write_text(text)
        assert "NOT EVALUATED" in invoke(["check", str(script), "--gpu", "h100"], exit_code=4).stdout
    deployment = tmp_path / "k8s.yaml"  # the kubelet leaves $(EXTRA) as written: vLLM would get it
    container = {"name": "vllm", "image": "vllm/vllm-openai", "args": ["Qwen/Qwen2.5-7B-Instruct", "$(EXTRA)"]}
    deployment.write_text(
        yaml.safe_dump({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [container]}})
    )
    result = invoke(["check", str(deployment), "--gpu", "h100"], exit_code=4)
    assert "unresolved $(EXTRA)" in result.stdout and "taken as empty" not in result.stdout


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("app.py", 'import modal\ncmd = ["vllm", "serve", "m"]\n', "a Modal app that starts vLLM's server: not read"),
        ("serve.py", "from ray import serve\n", "a Ray Serve application: not read"),
        ("sky.yaml.tpl", "run: |\n  {vllm_cmd}\n", "a template ({placeholders} a program fills), not a deployment"),
        ("sky.yaml", "resources:\n  accelerators: A100\n{region_block}\n", "a template ({placeholders}"),
        (
            "backend.yaml",
            "apiVersion: x.io/v1\nkind: BackendRuntime\nmetadata: {name: v}\nspec:\n  command: [python3, -m, "
            "vllm.entrypoints.openai.api_server]\n",
            "BackendRuntime (x.io/v1) holds a vLLM command outside any pod template",
        ),
        ("stop.sh", "pkill -f 'vllm serve org/m' || true\n", "vLLM's server is named only where nothing runs it"),
    ],
)
def test_files_that_name_vllm_but_run_no_server_here_say_what_they_are(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / name).write_text(text)
    result = invoke(["check", str(tmp_path / name)], exit_code=2)
    assert message in result.output and "Traceback" not in result.output
    if name == "app.py":  # in a folder run too: a program that starts vLLM is named, not skipped silently
        assert message in invoke(["check", str(tmp_path)], exit_code=2).output


def test_where_data_parallel_engines_meet_does_not_block_the_verdict() -> None:
    """Kimi-K2's deploy guide: `--data-parallel-address $MASTER_IP --data-parallel-rpc-port $PORT` say where the
    engines meet, not how many GPUs they take: judged; an unknown --data-parallel-size still blocks."""
    cmd = "vllm serve Qwen/Qwen2.5-7B-Instruct --data-parallel-size 2 --data-parallel-address $MASTER_IP"
    result = invoke(["check", cmd + " --data-parallel-rpc-port $PORT", "--gpu", "h100"])
    assert "PASS" in result.stdout and "unresolved" not in result.stdout
    result = invoke(
        ["check", "vllm serve Qwen/Qwen2.5-7B-Instruct --data-parallel-size $DP", "--gpu", "h100"], exit_code=4
    )
    assert "unresolved $DP" in result.stdout


def test_a_config_file_beside_the_script_is_read_as_vllm_reads_it(tmp_path: Path) -> None:
    """PesticideRecipeGen's `nohup vllm serve --config vllm_config.yaml &`, the YAML beside the script (which runs
    from its own folder): its flags are read; checked from another directory, it is still found there."""
    (tmp_path / "vllm_config.yaml").write_text("model: Qwen/Qwen2.5-7B-Instruct\ntensor-parallel-size: 2\n")
    (tmp_path / "serve.sh").write_text(
        "export CUDA_VISIBLE_DEVICES=6,7\nnohup vllm serve --config vllm_config.yaml &\n"
    )
    (r,) = json.loads(invoke(["check", str(tmp_path / "serve.sh"), "--gpu", "h100", "--format", "json"]).stdout)
    assert r["status"] == "pass" and r["model"] == "Qwen/Qwen2.5-7B-Instruct"


def test_what_is_not_modelled_is_not_evaluated_not_failed() -> None:
    """vLLM quantizes a 16-bit checkpoint with per-token/per-channel FP8 at load (ptpc_fp8): a method the memory model
    lacks is no failure (bitsandbytes, the example before, is modelled since field11 R005)."""
    cmd = "vllm serve Qwen/Qwen2.5-7B-Instruct --quantization ptpc_fp8"
    result = invoke(["check", cmd, "--gpu", "h100"], exit_code=4)
    assert "NOT EVALUATED" in result.stdout and "not modelled: online quantization 'ptpc_fp8'" in result.stdout


@pytest.mark.parametrize(
    ("image", "exit_code", "message"),
    [
        # LMCache's image: its tag is LMCache's release, not vLLM's, so a flag some releases lack is not judged
        ("lmcache/vllm-openai:v0.3.14", 0, "the image tag 'v0.3.14' does not say which release it carries"),
        ("vllm/vllm-openai:latest", 1, "--swap-space was removed in vLLM 0.18.0 (target 0.33.0)"),
        ("vllm/vllm-openai:v0.10.1.1", 0, ""),  # 0.10 still had --swap-space
    ],
)
def test_a_flag_of_some_releases_is_judged_only_when_the_image_names_its_vllm_release(
    tmp_path: Path, image: str, exit_code: int, message: str
) -> None:
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(
        f"services:\n  vllm:\n    image: {image}\n"
        "    command: --model Qwen/Qwen2.5-7B-Instruct --swap-space 4 --max-model-len 8192\n",
        encoding="utf-8",
    )
    result = invoke(["check", str(compose), "--gpu", "h100", "--format", "json"], exit_code)
    assert message in result.stdout


def test_a_folder_run_is_not_green_when_a_charts_values_name_a_vllm_server_it_cannot_read(tmp_path: Path) -> None:
    """Values of a chart check does not know, naming a vLLM image and a model (here under images.vllm and in an
    args list), are a server not evaluated: a folder run exits 4, not 0 with a note."""
    (tmp_path / "values.yaml").write_text(
        "images:\n  vllm: {repository: vllm/vllm-openai, tag: v0.4.2}\n"
        "vllm:\n  args: [--model, TheBloke/Mixtral-8x7B-Instruct-v0.1-GPTQ, --quantization, gptq_marlin]\n",
        encoding="utf-8",
    )
    (tmp_path / "cmd.sh").write_text("vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n", encoding="utf-8")
    result = invoke(["check", str(tmp_path), "--gpu", "h100"], 4)
    assert "the values of a chart check does not know (image vllm/vllm-openai, model TheBloke/" in result.stdout


def test_kubeai_models_chart_values_deploy_the_enabled_catalog_entries(tmp_path: Path) -> None:
    """KubeAI's models chart renders a Model for each catalog entry `enabled: true` (or all, with all.enabled)."""
    entry = (
        "    url: hf://Qwen/Qwen2.5-7B-Instruct\n    engine: VLLM\n    resourceProfile: nvidia-gpu-l4:1\n"
        "    args: [--max-model-len=8192, --gpu-memory-utilization=0.9]\n"
    )
    values = tmp_path / "models.yaml"
    values.write_text(f"catalog:\n  qwen-l4:\n    enabled: false\n{entry}", encoding="utf-8")
    assert "enable no catalog entry" in invoke(["check", str(values)], 2).stderr
    values.write_text(f"all:\n  enabled: true\ncatalog:\n  qwen-l4:\n{entry}", encoding="utf-8")
    (row,) = json.loads(invoke(["check", str(values), "--format", "json"], 0).stdout)
    assert (row["resource"], row["gpu"]) == ("Model/default/qwen-l4", "NVIDIA L4")


def _docker_run(
    tmp_path: Path, image: str, flags: str, exit_code: int = 0, model: str = "Qwen/Qwen3-8B"
) -> dict[str, Any]:
    script = tmp_path / "run.sh"
    script.write_text(
        f"docker run --gpus 1 vllm/vllm-openai:{image} --model {model} --max-model-len 8192 {flags}\n",
        encoding="utf-8",
    )
    (r,) = json.loads(invoke(["check", str(script), "--gpu", "h100", "--format", "json"], exit_code=exit_code).stdout)
    return dict(r)


@pytest.mark.parametrize(
    ("image", "flags", "message"),
    [  # each release's own parser (its tagged arg_utils.py / config), in argparse's words
        ("v0.8.5", "--block-size 7", "argument --block-size: invalid choice: 7 (choose from 1, 8, 16, 32, 64, 128)"),
        ("v0.6.3", "--block-size 64", "argument --block-size: invalid choice: 64 (choose from 8, 16, 32)"),
        ("v0.6.3", "-dp 2", "-dp arrived in vLLM 0.8.3 (target 0.6.3)"),
        ("latest", "--dtype fp16", "argument --dtype: invalid choice: 'fp16' (choose from 'auto', 'bfloat16'"),
        ("v0.33.0", "--enable-chunked-prefill False", "unrecognized arguments: False"),
        ("v0.5.4", "--limit-mm-per-prompt image=2", "--limit-mm-per-prompt arrived in vLLM 0.5.5 (target 0.5.4)"),
        # v0.10.1's arg_utils.py is the first tag whose parser adds "--runner" / "--convert" (v0.10.0's has neither)
        ("v0.10.0", "--runner pooling", "--runner arrived in vLLM 0.10.1 (target 0.10.0)"),
        ("v0.9.2", "--convert embed", "--convert arrived in vLLM 0.10.1 (target 0.9.2)"),
        (
            "v0.10.2",
            "--kv-cache-dtype bfloat16",
            "argument --kv-cache-dtype: invalid choice: 'bfloat16' (choose from 'auto', 'fp8', 'fp8_e4m3', 'fp8_e5m2'",
        ),
    ],
)
def test_values_and_options_a_release_refuses_fail_in_its_words(
    tmp_path: Path, image: str, flags: str, message: str
) -> None:
    r = _docker_run(tmp_path, image, flags, exit_code=1)
    assert r["status"] == "fail" and any(message in f for f in r["failures"]), r["failures"]


# latest (0.33) parses any size, and 48 is one its CUDA attention backends take (a multiple of 16); 7 parses but
# leaves no backend, a startup failure (tests/test_cli_leftovers.py)
@pytest.mark.parametrize(("image", "block"), [("v0.8.5", 128), ("v0.11.1", 256), ("v0.20.0", 7), ("latest", 48)])
def test_block_sizes_a_release_accepts_or_is_not_known_for_are_not_refused(
    tmp_path: Path, image: str, block: int
) -> None:
    r = _docker_run(tmp_path, image, f"--block-size {block}")
    assert not any("--block-size" in f for f in r["failures"]), r["failures"]


def test_chunked_prefill_false_is_off_where_vllm_read_a_value_after_it(tmp_path: Path) -> None:
    r = _docker_run(tmp_path, "v0.8.4", "--enable-chunked-prefill False")
    assert r["status"] == "pass" and not r["failures"] and not any("False" in w for w in r["warnings"]), r


def test_a_build_from_a_commit_after_a_release_is_not_judged_by_that_releases_options(tmp_path: Path) -> None:
    """aibrix/vllm-openai:v0.6.1-edb07092-20250118 (tests/data/deployments/aibrix) is built from a commit of
    2025-01-18, months after 0.6.1: --disable-fastapi-docs (0.6.2) is not refused, and the 0.6.1 tag alone is."""
    qwen2 = "Qwen/Qwen2.5-7B-Instruct"  # an architecture 0.6.1 loads
    r = _docker_run(tmp_path, "v0.6.1-edb07092-20250118", "--disable-fastapi-docs", model=qwen2)
    assert not r["failures"] and any("does not say which release" in w for w in r["warnings"]), r
    r = _docker_run(tmp_path, "v0.6.1", "--disable-fastapi-docs", exit_code=1, model=qwen2)
    assert any("--disable-fastapi-docs arrived in vLLM 0.6.2 (target 0.6.1)" in f for f in r["failures"])
