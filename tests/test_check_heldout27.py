"""Readings fixed after held-out round 27 (benchmarks/data/check-heldout/round27: each case a short excerpt of the public
file its SOURCES names), each a general rule of the tool that runs the file, not a rule for that file."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.check.inputs import load_inputs

from .check_support import engine_settings, found_in, serves, write_file, write_files

# OLAF-OSS/gemma4-vllm pod.sh (round 27): podman's own `--pod NAME` takes a value (podman-run(1)), so the image is the
# first word after it that is no option's value, not the pod's name
POD_SH = """#!/bin/bash
set -euo pipefail
POD_NAME="gemma4"
IMAGE="gemma4-vllm:latest"
podman run -d \\
  --pod "$POD_NAME" \\
  --name "${POD_NAME}-vllm" \\
  --device nvidia.com/gpu=all \\
  -e HF_HUB_OFFLINE=1 \\
  "$IMAGE" \\
  --model /model \\
  --quantization bitsandbytes \\
  --max-model-len 8192 \\
  --gpu-memory-utilization 0.90
"""


def test_podmans_pod_option_takes_a_value_and_the_image_follows_it(tmp_path: Path) -> None:
    (found,) = found_in(write_file(tmp_path, "pod.sh", POD_SH))
    settings = engine_settings(found)
    assert (settings["model"], settings["max_model_len"], settings["quantization"]) == ("/model", 8192, "bitsandbytes")
    assert found.container == "gemma4-vllm:latest"
    # without --pod's value the pod's name was the image and nothing ran vLLM
    (found,) = found_in(write_file(tmp_path, "pod.sh", POD_SH.replace("--pod", "--pod-id-file")))
    assert engine_settings(found)["model"] == "/model"


# llm-on-gke/vllm-inference vllm-deploy-lws-deepseek.yaml (round 27): an image in an Artifact Registry project whose ID
# ends in `-tpu`, on pods requesting NVIDIA GPUs on H100 nodes
LWS = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm-dps
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        nodeSelector:
          cloud.google.com/gke-accelerator: nvidia-h100-80gb
        containers:
          - name: vllm-leader
            image: us-east1-docker.pkg.dev/northam-ce-mlai-tpu/gke-llm/vllm-lws:latest
            command:
              - sh
              - -c
              - "/vllm-workspace/ray_init.sh leader --ray_cluster_size=$(LWS_GROUP_SIZE);
                python3 -m vllm.entrypoints.openai.api_server --port 8080 --model /models --tensor-parallel-size 8 --pipeline-parallel-size 2 --trust_remote_code"
            resources:
              limits:
                nvidia.com/gpu: "8"
    workerTemplate:
      spec:
        nodeSelector:
          cloud.google.com/gke-accelerator: nvidia-h100-80gb
        containers:
          - name: vllm-worker
            image: us-east1-docker.pkg.dev/northam-ce-mlai-tpu/gke-llm/vllm-lws:latest
            command:
              - sh
              - -c
              - "/vllm-workspace/ray_init.sh worker --ray_address=$(LWS_LEADER_ADDRESS)"
            resources:
              limits:
                nvidia.com/gpu: "8"
"""


def test_a_google_cloud_project_id_says_nothing_of_the_images_platform(tmp_path: Path) -> None:
    """LOCATION-docker.pkg.dev/PROJECT-ID/REPOSITORY/IMAGE and gcr.io/PROJECT-ID/IMAGE (Google Cloud's registries) name
    the account's project first: its ID is the owner's choice, so a platform word in it is not the image's build."""
    (found,) = found_in(write_file(tmp_path, "lws.yaml", LWS))
    assert found.not_evaluable is None and found.gpus_total == 16
    assert engine_settings(found)["pipeline_parallel_size"] == 2
    # the image's own name (or tag) still says its build, in any project
    tpu = LWS.replace("gke-llm/vllm-lws:latest", "gke-llm/vllm-tpu:latest")
    (found,) = found_in(write_file(tmp_path, "lws.yaml", tpu))
    assert found.not_evaluable is not None and "TPU" in found.not_evaluable


# jose-d/hpc-llm-launcher scripts/sbatch-vllm-serve.sh (round 27): vLLM's CLI is a venv's path, or, when that is not
# executable, the `vllm` PATH finds; either way the command runs vLLM's CLI
SBATCH = """#!/usr/bin/env bash
set -euo pipefail
MODEL_ID="${MODEL_ID:-mistralai/Mistral-Large-3-675B-Instruct-2512-NVFP4}"
VLLM_EXEC="${VLLM_EXEC:-./.venv/bin/vllm}"
GPU_MEMORY_UTILIZATION="${GPU_MEMORY_UTILIZATION:-0.92}"
if [[ ! -x "$VLLM_EXEC" ]] && command -v vllm >/dev/null 2>&1; then
  VLLM_EXEC="$(command -v vllm)"
fi
"$VLLM_EXEC" serve "$MODEL_ID" --gpu-memory-utilization "$GPU_MEMORY_UTILIZATION" &
VLLM_PID=$!
wait "$VLLM_PID"
"""


def test_a_program_found_on_path_or_by_its_path_is_that_program(tmp_path: Path) -> None:
    (found,) = found_in(write_file(tmp_path, "sbatch-vllm-serve.sh", SBATCH))
    settings = engine_settings(found)
    assert settings["model"] == "mistralai/Mistral-Large-3-675B-Instruct-2512-NVFP4"
    assert settings["gpu_memory_utilization"] == 0.92 and found.unresolved == ()
    # `$(which NAME)` alike, and an interpreter named so runs vLLM's module
    which = '#!/bin/bash\nPY="$(which python3 2>/dev/null)"\n$PY -m vllm.entrypoints.openai.api_server --model org/m\n'
    (found,) = found_in(write_file(tmp_path, "serve.sh", which))
    assert engine_settings(found)["model"] == "org/m"


def test_paths_that_only_share_a_last_component_stay_unknown(tmp_path: Path) -> None:
    """Two model folders of one name are not one model: only a program (vLLM's CLI, a Python interpreter) named by
    PATH or by a path is the same whichever branch ran."""
    script = """#!/bin/bash
MODEL=/data/models/Qwen3-8B
if [ -d /scratch/models/Qwen3-8B ]; then MODEL=/scratch/models/Qwen3-8B; fi
vllm serve "$MODEL" --max-model-len 4096
"""
    (found,) = found_in(write_file(tmp_path, "serve.sh", script))
    assert found.argv[2] == "$MODEL" and found.unresolved == ("$MODEL",)


# vincentdxu/spark-vllm-compose worker1/compose-minimax-m2.1.worker.ray.yaml (swept after round 27): a Ray worker of
# a vLLM cluster on eugr/spark-vllm-docker's locally built `vllm-node` image, whose head's `command: vllm serve ...`
# shows its entrypoint runs the command it is given
RAY_WORKER = """services:
  vllm:
    image: vllm-node
    network_mode: host
    environment:
      - RAY_NODE_IP_ADDRESS=${NODE_IP_ADDRESS}
    command: >
      ray start --block
        --disable-usage-stats
        --address=${HEAD_IP}:6379
"""


def test_a_command_running_another_program_on_an_image_named_after_vllm_is_not_vllms_arguments(
    tmp_path: Path,
) -> None:
    assert found_in(write_file(tmp_path, "compose.yaml", RAY_WORKER)) == []
    python = RAY_WORKER.replace("ray start --block", "python -m mai_vllm_serving.server")
    assert found_in(write_file(tmp_path, "compose.yaml", python)) == []
    # the image's arguments (a model and flags) are still vLLM's server's, and vLLM's own image keeps its entrypoint
    (found,) = found_in(write_file(tmp_path, "compose.yaml", RAY_WORKER.replace("ray start --block", "org/m")))
    assert found.argv[:3] == ("vllm", "serve", "org/m")
    (found,) = found_in(write_file(tmp_path, "compose.yaml", RAY_WORKER.replace("vllm-node", "vllm/vllm-openai")))
    assert found.argv[:3] == ("vllm", "serve", "ray")


# surajssd/llm-k8s configs/deepseek-v2.5-lmcache/k8s/lws.yaml (round 27), its leader's `sh -c` script: the Ray head
# starts, then `sleep inf` never returns, so the `vllm serve` after it never runs (the pod waits for a shell)
LEADER = """set -x;
bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader --ray_cluster_size=$LWS_GROUP_SIZE;
sleep inf;
vllm serve deepseek-ai/DeepSeek-V2.5 --port 8000 --tensor-parallel-size 8 --pipeline-parallel-size 2;
sleep inf;
python3 -m vllm.entrypoints.openai.api_server --port 8000 --model deepseek-ai/DeepSeek-V2.5
"""


def test_nothing_after_a_command_that_never_returns_or_exits_runs() -> None:
    assert serves(LEADER) == []
    assert serves(LEADER.replace("sleep inf;", "tail -f /dev/null;")) == []
    assert serves("exit 0\nvllm serve org/m\n") == []
    # in the background it does not block; the server started before it runs
    assert len(serves("sleep infinity &\nvllm serve org/m\n")) == 1
    assert len(serves("vllm serve org/m &\nsleep infinity\nvllm serve org/n\n")) == 1


def test_an_exit_the_script_may_not_reach_does_not_end_it() -> None:
    for script in (
        'die() { echo "$*" >&2; exit 1; }\n[ -n "$MODEL" ] || die need MODEL\nvllm serve org/m\n',
        '[ -n "$MODEL" ] || { echo need MODEL; exit 1; }\nvllm serve org/m\n',
        'if [ -z "$MODEL" ]; then\n  exit 1\nfi\nvllm serve org/m\n',
        "for m in a b; do\n  exit 0\ndone\nvllm serve org/m\n",
        '[ -z "$MODEL" ] && exit 1\nvllm serve org/m\n',
    ):
        assert len(serves(script)) == 1, script


# benhurjoel/vllm-deployment-ocp-helm (round 27's repository): the chart is charts/vllm-hf, and examples/*-values.yaml
# beside it are its values for one model each (`helm install R charts/vllm-hf -f examples/qwen3-6-35b-a3b-values.yaml`);
# likewise surajssd/llm-k8s's configs/<model>/values.yaml for configs/chart. Excerpts, the chart cut to what it reads.
CHART = {
    "charts/vllm-hf/Chart.yaml": "apiVersion: v2\nname: vllm-hf\nversion: 0.1.1\n",
    "charts/vllm-hf/values.yaml": (
        "image:\n  repository: vllm/vllm-openai\n  tag: v0.8.5\nmodel:\n  repoId: TinyLlama/TinyLlama-1.1B-Chat-v1.0\n"
        "vllm:\n  tensorParallelSize: 1\n  maxModelLen: ''\nresources:\n  limits:\n    nvidia.com/gpu: '1'\n"
    ),
    "charts/vllm-hf/templates/deployment.yaml": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-vllm-hf
spec:
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      containers:
        - name: vllm
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          args:
            - --model
            - {{ .Values.model.repoId | quote }}
            - --tensor-parallel-size
            - {{ .Values.vllm.tensorParallelSize | quote }}
            {{- if .Values.vllm.maxModelLen }}
            - --max-model-len
            - {{ .Values.vllm.maxModelLen | quote }}
            {{- end }}
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
""",
    "examples/qwen3-6-35b-a3b-values.yaml": (
        "model:\n  repoId: Qwen/Qwen3.6-35B-A3B\nimage:\n  repository: vllm/vllm-openai\n  tag: v0.19.0\n"
        'vllm:\n  tensorParallelSize: 1\n  maxModelLen: "262144"\n'
    ),
}


def test_values_kept_outside_their_charts_folder_are_rendered_with_that_chart(tmp_path: Path) -> None:
    from recommender.check import helm_charts

    if helm_charts.find_helm() is None:
        pytest.skip("helm is not installed")
    write_files(tmp_path, CHART)
    (found,) = found_in(tmp_path / "examples/qwen3-6-35b-a3b-values.yaml")
    settings = engine_settings(found)
    assert (settings["model"], settings["max_model_len"], found.gpus_per_pod) == ("Qwen/Qwen3.6-35B-A3B", 262144, 1)
    # a key the chart's values.yaml does not have: not that chart's values, not read as them
    write_files(tmp_path, {"examples/other.yaml": "model:\n  repoId: org/m\nreplicas: 2\n"})
    loaded = load_inputs((str(tmp_path / "examples/other.yaml"),))
    assert loaded.found == [] and "vllm-hf" not in " ".join(loaded.problems)


def test_a_folder_run_renders_values_kept_outside_their_charts_folder_with_it(tmp_path: Path) -> None:
    from recommender.check import helm_charts

    if helm_charts.find_helm() is None:
        pytest.skip("helm is not installed")
    write_files(tmp_path, CHART)
    models = sorted(str(engine_settings(f)["model"]) for f in load_inputs((str(tmp_path),)).found)
    assert models == ["Qwen/Qwen3.6-35B-A3B", "TinyLlama/TinyLlama-1.1B-Chat-v1.0"]
    # a folder run never looks above the folder checked for the chart
    assert load_inputs((str(tmp_path / "examples"),)).found == []


def test_one_plain_key_is_too_little_to_take_a_file_for_a_charts_values(tmp_path: Path) -> None:
    from recommender.check import helm_charts

    write_files(
        tmp_path, {**CHART, "examples/config.yaml": "model: org/m\n", "examples/one.yaml": "model:\n  repoId: org/m\n"}
    )
    assert helm_charts.values_chart(tmp_path / "examples/config.yaml") is None
    assert helm_charts.values_chart(tmp_path / "examples/one.yaml") == tmp_path / "charts/vllm-hf"
