"""What held-out rounds 6 and 7 (benchmarks/data/check-heldout/README.md) showed `check` misreading, each as the platform
would run it: envsubst templates, LeaderWorkerSet roles, ConfigMaps of the same manifest, `set --`, a vLLM binary
named through a variable, compose services built from a Dockerfile beside them, KServe runtimes, old images' flags.
The expectations are worked out by hand from Kubernetes', LWS', Compose's, Docker's and the shell's rules."""

from __future__ import annotations

import json
from pathlib import Path

from recommender.check import shell
from recommender.check.inputs import load_inputs
from recommender.check.load import read_text
from recommender.serve_args import parse_serve_argv

from .conftest import invoke

_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: {image}
          args: ["--model", "{model}", "--max-model-len", "4096"]
          resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}
"""


def test_a_gpu_count_written_as_a_template_variable_leaves_the_server_unresolved(tmp_path: Path) -> None:
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(_DEPLOYMENT.format(image="${VLLM_IMAGE}", model="${VLLM_MODEL}", gpus="${VLLM_GPU_COUNT}"))
    (found,) = load_inputs((str(manifest),)).found
    assert found.gpus_per_pod is None and "${VLLM_GPU_COUNT}" in found.unresolved
    out = json.loads(invoke(["check", str(manifest), "--gpu", "h100", "--format", "json"], exit_code=4).stdout)
    assert [r["status"] for r in out] == ["not-evaluated"]


def test_a_gpu_count_that_is_not_a_number_names_the_file_and_container(tmp_path: Path) -> None:
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(_DEPLOYMENT.format(image="vllm/vllm-openai:v0.11.0", model="Qwen/Qwen3-8B", gpus="two"))
    (problem,) = load_inputs((str(manifest),)).problems
    assert problem.startswith(f"{manifest} (Deployment/default/vllm, vllm): ") and "'two'" in problem


def _lws(size: int, script: str, leader: bool) -> str:
    worker = f"""    workerTemplate:
      spec:
        containers:
          - name: vllm-worker
            image: vllm/vllm-openai:v0.11.0
            command: ["/bin/sh", "-c"]
            args:
              - |
{script}
            env: [{{name: TP, value: "4"}}]
            resources: {{limits: {{nvidia.com/gpu: "4"}}}}
"""
    lead = """    leaderTemplate:
      spec:
        containers:
          - name: vllm-leader
            image: vllm/vllm-openai:v0.11.0
            args: ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "1"]
            resources: {limits: {nvidia.com/gpu: "1"}}
"""
    return f"""apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {{name: vllm}}
spec:
  leaderWorkerTemplate:
    size: {size}
{lead if leader else ""}{worker}"""


def test_a_leaderworkerset_of_size_one_runs_no_worker_pod() -> None:
    script = "                vllm serve Qwen/Qwen3-8B -tp $TP"
    (found,) = read_text(_lws(1, script, leader=True), "lws.yaml", ".yaml")
    assert found.container == "vllm-leader"
    # without a leaderTemplate the leader itself is made from the worker template
    (found,) = read_text(_lws(1, script, leader=False), "lws.yaml", ".yaml")
    assert found.container == "vllm-worker"


def test_a_branch_on_the_lws_worker_index_is_read_as_both_roles() -> None:
    script = """                if [ "${LWS_WORKER_INDEX:-0}" -eq 0 ]; then
                  exec vllm serve Qwen/Qwen3-8B -tp $TP --data-parallel-start-rank $(( ${LWS_WORKER_INDEX:-0} * 2 ))
                else
                  exec vllm serve Qwen/Qwen3-8B -tp $TP --headless
                fi"""
    leader, worker = read_text(_lws(2, script, leader=False), "lws.yaml", ".yaml")
    assert "--headless" not in leader.argv and worker.argv[-1] == "--headless"
    assert leader.argv[4] == worker.argv[4] == "4"  # -tp from the container's env


def test_env_from_a_configmap_of_the_same_manifest() -> None:
    manifest = """apiVersion: v1
kind: ConfigMap
metadata: {name: vllm-config}
data: {MODEL_NAME: /models/Qwen2.5-72B-Instruct-AWQ, MAX_LEN: "8192", UTIL: "0.40"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          envFrom: [{configMapRef: {name: vllm-config}}]
          env:
            - {name: UTIL, value: "0.5"}
            - name: MODEL
              valueFrom: {configMapKeyRef: {name: vllm-config, key: MODEL_NAME}}
            - name: TP
              valueFrom: {configMapKeyRef: {name: elsewhere, key: TP}}
          args: ["--model", "$(MODEL)", "--max-model-len", "$(MAX_LEN)", "--gpu-memory-utilization", "$(UTIL)",
                 "-tp", "$(TP)"]
"""
    (found,) = read_text(manifest, "m.yaml", ".yaml")
    # env wins over envFrom; a ConfigMap the file does not hold stays unresolved
    assert found.argv[2:] == (
        "--model",
        "/models/Qwen2.5-72B-Instruct-AWQ",
        "--max-model-len",
        "8192",
        "--gpu-memory-utilization",
        "0.5",
        "-tp",
        "$(TP)",
    )
    assert found.unresolved == ("$(TP)",)


def test_set_builds_the_positional_parameters_a_script_execs() -> None:
    script = """set -eu
set -- serve "$MODEL_ID" --max-model-len 4096
if [ "${TRUST:-}" = "1" ]; then
  set -- "$@" --trust-remote-code
fi
set -- "$@" --gpu-memory-utilization 0.8
exec vllm "$@"
"""
    ((words, _),) = [(c.words, c.unresolved) for c in shell.run_script(script) if c.words[:1] == ("vllm",)]
    assert words == ("vllm", "serve", "$MODEL_ID", "--max-model-len", "4096", "--gpu-memory-utilization", "0.8")


def test_vllm_named_through_a_variable_around_an_unknown_folder() -> None:
    script = """DIR="$(cd "$(dirname "$0")" && pwd)"
VLLM="$DIR/.venv/bin/vllm"
N="${N:-3}"
ARGS=("$DIR/models/m" --max-model-len 8192)
if (( N > 0 )); then
  ARGS+=(--speculative-config '{"num_speculative_tokens": 3}')
fi
exec "$VLLM" serve "${ARGS[@]}"
"""
    (cmd,) = [c for c in shell.run_script(script) if "serve" in c.words]
    assert cmd.words[0] == "$DIR/.venv/bin/vllm" and cmd.words[3:5] == ("--max-model-len", "8192")
    assert cmd.words[-2] == "--speculative-config"  # (( 3 > 0 )) is true
    command = parse_serve_argv(["vllm", *cmd.words[1:]])
    assert command.model == "$DIR/models/m"  # the folder stays unknown, named by its variable


def test_a_compose_service_runs_what_the_dockerfile_it_builds_says(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text(
        'FROM vllm/vllm-openai:v0.11.0\nCMD ["--model", "google/gemma-3-4b-it", "--max-model-len", "2048"]\n'
    )
    (tmp_path / "Dockerfile.app").write_text('FROM python:3.11-slim\nCMD ["uvicorn", "app:app"]\n')
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(
        """services:
  engine: {build: ., image: my-vllm-engine}
  app: {build: {context: ., dockerfile: Dockerfile.app}, image: my-vllm-app}
  cli:
    build: {dockerfile_inline: "FROM python:3.11\\nENTRYPOINT [\\"vllm\\", \\"serve\\"]\\n"}
    command: [Qwen/Qwen3-8B, -tp, "2"]
"""
    )
    engine, cli = load_inputs((str(compose),)).found
    assert engine.argv == ("vllm", "serve", "--model", "google/gemma-3-4b-it", "--max-model-len", "2048")
    assert engine.image_tag == "v0.11.0"
    assert cli.argv == ("vllm", "serve", "Qwen/Qwen3-8B", "-tp", "2")


def test_a_dockerfile_outside_the_compose_folder_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text('FROM python:3.11\nENTRYPOINT ["vllm", "serve", "Qwen/Qwen3-8B"]\n')
    (tmp_path / "deploy").mkdir()
    compose = tmp_path / "deploy" / "compose.yml"
    compose.write_text("services:\n  app: {build: {context: .., dockerfile: Dockerfile}, image: app}\n")
    assert load_inputs((str(compose),)).found == []


def test_a_kserve_inferenceservice_on_a_runtime_of_its_own_is_not_read_as_the_huggingface_server() -> None:
    isvc = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: gpt2}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      runtime: huggingface-cpu-runtime
      storageUri: pvc://model-pvc/gpt2
"""
    assert read_text(isvc, "isvc.yaml", ".yaml") == []
    default = isvc.replace("huggingface-cpu-runtime", "kserve-huggingfaceserver")
    (found,) = read_text(default, "isvc.yaml", ".yaml")
    assert found.argv[2] == "/mnt/models"


def test_an_old_images_option_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("docker run --gpus all vllm/vllm-openai:v0.8.5 --model Qwen/Qwen3-8B --tokenizer-pool-size 56\n")
    (out,) = json.loads(invoke(["check", str(script), "--gpu", "h100", "--format", "json"]).stdout)
    assert out["status"] == "pass"
    assert any("--tokenizer-pool-size" in w and "not judged" in w for w in out["warnings"])
    # the same flag without an image to date it is judged against the newest release, which refuses it
    script.write_text("vllm serve Qwen/Qwen3-8B --tokenizer-pool-size 56\n")
    (out,) = json.loads(invoke(["check", str(script), "--gpu", "h100", "--format", "json"], exit_code=1).stdout)
    assert out["status"] == "fail"


def test_a_double_underscore_placeholder_model_is_unresolved(tmp_path: Path) -> None:
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(_DEPLOYMENT.format(image="vllm/vllm-openai:v0.11.0", model="__MODEL__", gpus="1"))
    (out,) = json.loads(invoke(["check", str(manifest), "--gpu", "h100", "--format", "json"], exit_code=4).stdout)
    assert out["status"] == "not-evaluated" and "__MODEL__" in json.dumps(out)


def test_a_commented_out_line_ending_in_a_backslash_does_not_continue() -> None:
    # bash: the backslash is part of the comment, so the comment ends at its line and the next command runs
    script = """# vllm serve old/model \\
# vllm serve other/model \\
vllm serve new/model \\
    --max-model-len 8K \\
    -tp 4
"""
    ((words, _),) = _serves(script)
    assert words == ("vllm", "serve", "new/model", "--max-model-len", "8K", "-tp", "4")
    command = parse_serve_argv(list(words))
    assert command.values["max_model_len"] == 8192  # vLLM's human-readable ints: K is 1024


def test_a_python_named_by_a_variable_running_the_api_server() -> None:
    script = "$PY -m vllm.entrypoints.openai.api_server --model /models/Qwen3-32B --max-model-len 8192\n"
    (found,) = read_text(script, "job.sbatch", ".sbatch")
    assert found.argv == ("vllm", "serve", "--model", "/models/Qwen3-32B", "--max-model-len", "8192")
    assert not found.serve_form


def test_intels_vllm_image_is_an_xpu_deployment() -> None:
    compose = (
        "services:\n  vllm:\n    image: intel/vllm:0.21.0-ubuntu24.04\n    command: vllm serve openai/gpt-oss-20b\n"
    )
    (found,) = read_text(compose, "compose.yml", ".yml")
    assert found.not_evaluable is not None and "XPU" in found.not_evaluable


def _serves(script: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    return [(c.words, c.unresolved) for c in shell.run_script(script) if c.words[:2] == ("vllm", "serve")]


def test_an_image_built_on_vllms_run_without_arguments_takes_its_model_from_its_cmd() -> None:
    manifest = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
        - {name: vllm, image: "IMAGE", resources: {limits: {nvidia.com/gpu: "1"}}}
"""
    (custom,) = read_text(manifest.replace("IMAGE", "someone/vllm-gptoss:2026"), "m.yaml", ".yaml")
    assert custom.argv[2:] == ("<the CMD of image someone/vllm-gptoss:2026>",)
    assert custom.unresolved == ("<the CMD of image someone/vllm-gptoss:2026>",)
    # vLLM's own image has no CMD: vLLM serves its default model
    (official,) = read_text(manifest.replace("IMAGE", "vllm/vllm-openai:v0.11.0"), "m.yaml", ".yaml")
    assert official.argv == ("vllm", "serve")
    compose = "services:\n  llm: {image: someone/vllm-gptoss:2026}\n"
    (service,) = read_text(compose, "compose.yml", ".yml")
    assert service.argv[2:] == ("<the CMD of image someone/vllm-gptoss:2026>",)


def test_the_values_of_a_chart_check_does_not_know_are_named_as_such(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text("image: {repository: vllm/vllm-openai, tag: v0.11.0}\nmodel: {name: Qwen/Qwen3-4B-AWQ}\n")
    result = invoke(["check", str(values)], exit_code=2)
    assert "the values of a chart check does not know (image vllm/vllm-openai, model Qwen/Qwen3-4B-AWQ)" in (
        result.stderr
    )
    assert "helm template" in result.stderr


def test_parameter_expansion_removes_a_pattern_from_the_front_or_the_back() -> None:
    script = """REPO="${REPO:-Inferact/Qwen3.8-27B-NVFP4}"
F=model.tar.gz
vllm serve "/models/${REPO##*/}" --served-model-name "${F%%.*}" --x "${F%.*}" --y "${REPO#*/}" --z "${UNSET##*/}"
"""
    ((words, unresolved),) = _serves(script)
    assert words[2:9] == ("/models/Qwen3.8-27B-NVFP4", "--served-model-name", "model", "--x", "model.tar", "--y",
                          "Qwen3.8-27B-NVFP4")  # fmt: skip
    assert unresolved == ("${UNSET##*/}",)
